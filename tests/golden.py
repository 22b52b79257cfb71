"""The fixed set of commands whose JSON must not change when the code behind them moves.

Each entry of `COMMANDS` is one medvqa command, run through click's `CliRunner` in one temporary
folder and in order (later commands read the runs earlier ones wrote): on the bundled JMed48k
sample with the `random` and `constant:1` baselines, on IgakuQA's block 116A with `random`, on
MIR's published answers (2026's nine models, 2024's GPT-4 without and with the image) and on
WorldMedQA-V's Japan tables (GPT-4o, Japanese and English, with and without the image). Each
gives one JSON document: its `--json` stdout as printed, or for `view` the data the page embeds,
laid out as `--json` lays one out. The document, normalised, is kept as
`tests/fixtures/golden/<name>.json`; `tests/test_golden.py` runs the set again and compares
byte for byte.

The normalisation removes only what varies between runs and machines, and nothing else:

- paths: the temporary folder, the response and item cache folder, the real data folder
  (`../shared/data`) and the repository, wherever the text holds them, become `<tmp>`,
  `<cache>`, `<data>` and `<repo>`;
- in `view`'s page, an embedded image (a data URL Pillow wrote) becomes `<image>`: its bytes are
  Pillow's and its version's, not medvqa's.

No document of the set holds a timestamp, a duration or latency, a version or the command line
(the manifest keeps those, and no command of the set prints it; the baselines and imports send
no request): nothing else is removed. Should a command start printing one, its document changes
and the test fails, as it should; remove such a value here only once it is known to vary.

Update the golden files only when an output is meant to change, and say so in the commit:

    python -m tests.golden --update
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any
from unittest.mock import patch

from tests.conftest import REPO, shared_data

GOLDEN = REPO / "tests" / "fixtures" / "golden"
_DATA_URL = re.compile(r"data:image/[a-z+.-]+;base64,[A-Za-z0-9+/=]+")

# name: argv, with {tmp} the temporary folder and {data} ../shared/data; a `view` entry's JSON is
# the page it writes (at the path after --html), every other entry's its stdout.
SAMPLE = ("--sample", "--seed", "0")
RESAMPLES = ("--resamples", "200", "--seed", "0")
COMMANDS: dict[str, list[str]] = {
    # the bundled JMed48k sample, two baselines under every condition
    "sample-run-random": [
        "run",
        "jmed48k",
        *SAMPLE,
        "--model",
        "random",
        "--conditions",
        "C,C+Q,C+I,C+Q+I",
        "--run-dir",
        "{tmp}/sample/random",
        "--json",
    ],
    "sample-run-constant": [
        "run",
        "jmed48k",
        *SAMPLE,
        "--model",
        "constant:1",
        "--conditions",
        "C,C+Q,C+I,C+Q+I",
        "--run-dir",
        "{tmp}/sample/constant",
        "--json",
    ],
    "sample-report": ["report", "{tmp}/sample/random", "--json"],
    "sample-report-table-jmed48k": ["report", "{tmp}/sample/random", "--table", "jmed48k", "--json"],
    "sample-report-pass": ["report", "{tmp}/sample/random", "--pass", "--json"],
    "sample-audit": ["audit", "{tmp}/sample/random", *RESAMPLES, "--json"],
    "sample-compare": ["compare", "{tmp}/sample/random", "{tmp}/sample/constant", *RESAMPLES, "--json"],
    "sample-view": ["view", "{tmp}/sample/random", "{tmp}/sample/constant", "--html", "{tmp}/sample/view.html"],
    "sample-score": ["score", "{tmp}/sample/random", "--json"],
    # IgakuQA, one exam block (116A), random
    "igakuqa-run-random": [
        "run",
        "igakuqa",
        "--data",
        "{data}/igakuqa",
        "--select",
        "block=116A",
        "--model",
        "random",
        "--seed",
        "0",
        "--run-dir",
        "{tmp}/igakuqa/random",
        "--json",
    ],
    "igakuqa-report": ["report", "{tmp}/igakuqa/random", "--json"],
    "igakuqa-report-table-igakuqa": ["report", "{tmp}/igakuqa/random", "--table", "igakuqa", "--json"],
    "igakuqa-report-pass": ["report", "{tmp}/igakuqa/random", "--pass", "--json"],
    "igakuqa-audit": ["audit", "{tmp}/igakuqa/random", *RESAMPLES, "--json"],
    "igakuqa-view": ["view", "{tmp}/igakuqa/random", "--html", "{tmp}/igakuqa/view.html"],
    "igakuqa-score": ["score", "{tmp}/igakuqa/random", "--json"],
    # MIR: 2026's nine published models; 2024's GPT-4 without the image and GPT-4 Vision with it
    "mir-import-2026": [
        "import",
        "mir",
        "{data}/mir/2026/MIR26.xlsx",
        "--data",
        "{data}/mir",
        "--run-dir",
        "{tmp}/mir26",
        "--json",
    ],
    "mir-import-2024-gpt4": [
        "import",
        "mir",
        "{data}/mir/2024/MIR24GPT_final.xlsx",
        "--data",
        "{data}/mir",
        "--response-column",
        " GPT-4",
        "--condition",
        "C+Q",
        "--model",
        "gpt-4",
        "--run-dir",
        "{tmp}/mir24/gpt4",
        "--json",
    ],
    "mir-import-2024-gpt4v": [
        "import",
        "mir",
        "{data}/mir/2024/MIR24GPT_vision_answered_v2.xlsx",
        "--data",
        "{data}/mir",
        "--response-column",
        " GPT-4 Vision",
        "--model",
        "gpt-4-vision",
        "--model-name",
        "gpt-4",
        "--run-dir",
        "{tmp}/mir24/gpt4v",
        "--json",
    ],
    "mir-report": ["report", "{tmp}/mir26/gpt52", "--json"],
    "mir-report-table-mir": ["report", "{tmp}/mir26/gpt52", "--table", "mir", "--json"],
    "mir-report-table-mir-2024": ["report", "{tmp}/mir24/gpt4", "--table", "mir", "--json"],
    "mir-report-pass": ["report", "{tmp}/mir26/gpt52", "--pass", "--json"],
    "mir-audit-2024": ["audit", "{tmp}/mir24/gpt4", "{tmp}/mir24/gpt4v", *RESAMPLES, "--json"],
    "mir-compare-2026": ["compare", "{tmp}/mir26/gpt52", "{tmp}/mir26/o3", *RESAMPLES, "--json"],
    "mir-view-2026": ["view", "{tmp}/mir26/gpt52", "{tmp}/mir26/o3", "--html", "{tmp}/mir26/view.html"],
    "mir-score": ["score", "{tmp}/mir26/gpt52", "--json"],
    # WorldMedQA-V Japan: GPT-4o's four published tables
    **{
        f"worldmedqa_v-import-{lang}-{cond}": [
            "import",
            "worldmedqa_v",
            f"{{data}}/worldmedqa-v-japan/visuals/outputs_{folder}/GPT4o/GPT4o_japan_{lang}_gpt-4o-mini_result.xlsx",
            "--data",
            "{data}/worldmedqa-v-japan",
            "--run-dir",
            f"{{tmp}}/wmv/{lang}-{cond}",
            "--json",
        ]
        for lang in ("local", "english")
        for cond, folder in (("image", "w_images"), ("blind", "blind"))
    },
    "worldmedqa_v-report": ["report", "{tmp}/wmv/local-image", "--json"],
    "worldmedqa_v-report-table-worldmedqa_v": ["report", "{tmp}/wmv/local-image", "--table", "worldmedqa_v", "--json"],
    "worldmedqa_v-report-pass": ["report", "{tmp}/wmv/local-image", "--pass", "--json"],
    "worldmedqa_v-audit": [
        "audit",
        "{tmp}/wmv/local-image",
        "{tmp}/wmv/local-blind",
        "{tmp}/wmv/english-image",
        "{tmp}/wmv/english-blind",
        *RESAMPLES,
        "--json",
    ],
    "worldmedqa_v-compare": [
        "compare",
        "{tmp}/wmv/local-image",
        "{tmp}/wmv/local-blind",
        "{tmp}/wmv/english-image",
        "{tmp}/wmv/english-blind",
        *RESAMPLES,
        "--json",
    ],
    "worldmedqa_v-view": ["view", "{tmp}/wmv/local-image", "{tmp}/wmv/local-blind", "--html", "{tmp}/wmv/view.html"],
    "worldmedqa_v-score": ["score", "{tmp}/wmv/local-image", "--json"],
    # one headline table across the four benchmarks
    "cross-benchmark-compare": [
        "compare",
        "{tmp}/sample/random",
        "{tmp}/igakuqa/random",
        "{tmp}/mir26/gpt52",
        "{tmp}/wmv/local-image",
        *RESAMPLES,
        "--json",
    ],
    # an eval set of both baselines on the sample and on IgakuQA 116A, planned only
    "eval-dry-run": ["eval", "{tmp}/set.toml", "--dry-run", "--json"],
}
EVAL_SET = """study_dir = "study"
[[models]]
model = "random"
[[models]]
model = "constant:1"
[[benchmarks]]
benchmark = "jmed48k"
sample = true
[[benchmarks]]
benchmark = "igakuqa"
data = "{data}/igakuqa"
select = {{ block = ["116A"] }}
"""


def normalise(text: str, roots: dict[str, str]) -> str:
    """`text` without what varies between runs and machines (the module's docstring lists it):
    each root path replaced by its placeholder, embedded images elided."""
    for path, name in roots.items():  # longest first: the cache folder lies in the temporary one
        text = text.replace(path, name)
    return _DATA_URL.sub("<image>", text)


def page_data(html_file: Path) -> str:
    """The JSON document a `view` page embeds (`<script type="application/json" id="view-data">`),
    laid out as `--json` prints one (indent 1, UTF-8), so that a difference is a line of its own."""
    text = html_file.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="view-data">(.*?)</script>', text, re.S)
    if found is None:
        raise AssertionError(f"{html_file}: no embedded view data")
    return json.dumps(json.loads(found.group(1)), ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def produce(tmp: Path) -> dict[str, bytes]:
    """Run every command of `COMMANDS` in order under `tmp`; {name: the bytes of its JSON document,
    as printed, normalised}."""
    from click.testing import CliRunner

    from medvqa.cli.main import cli

    data = shared_data()
    cache = tmp / "cache"
    roots = dict(
        sorted(
            {str(cache): "<cache>", str(tmp): "<tmp>", str(data): "<data>", str(REPO): "<repo>"}.items(),
            key=lambda kv: -len(kv[0]),
        )
    )
    (tmp / "set.toml").write_text(EVAL_SET.format(data=data), encoding="utf-8")
    out = {}
    with patch.dict(os.environ, {"MEDVQA_CACHE_DIR": str(cache)}):
        for name, argv in COMMANDS.items():
            args = [a.format(tmp=tmp, data=data) for a in argv]
            result = CliRunner().invoke(cli, args, catch_exceptions=False)
            if result.exit_code != 0:
                raise AssertionError(f"{name}: medvqa {' '.join(args)} exited {result.exit_code}:\n{result.output}")
            text = page_data(Path(args[args.index("--html") + 1])) if argv[0] == "view" else result.stdout
            json.loads(text)  # one JSON document, nothing else
            out[name] = normalise(text, roots).encode("utf-8")
    return out


def where_differs(got: bytes, want: bytes) -> str:
    """Where a produced document differs from its golden file: the first JSON path that differs,
    else (the same JSON laid out otherwise) the first line that does."""
    if (path := first_difference(json.loads(got), json.loads(want))) is not None:
        return path
    lines = list(zip(got.splitlines(), want.splitlines()))
    line = next((i for i, (a, b) in enumerate(lines, 1) if a != b), len(lines) + 1)
    return f"the same JSON laid out otherwise, from line {line}"


def first_difference(got: Any, want: Any, path: str = "$") -> str | None:
    """The JSON path of the first place where `got` and `want` differ, with both values; None if equal."""
    if type(got) is not type(want):
        return f"{path}: {_shown(got)} != golden {_shown(want)}"
    if isinstance(got, dict):
        for key in dict.fromkeys([*want, *got]):
            if key not in got or key not in want:
                return f"{path}.{key}: {'missing' if key not in got else 'not in the golden file'}"
            if (diff := first_difference(got[key], want[key], f"{path}.{key}")) is not None:
                return diff
        return None if list(got) == list(want) else f"{path}: keys in another order: {list(got)} != golden {list(want)}"
    if isinstance(got, list):
        for i, (a, b) in enumerate(zip(got, want)):
            if (diff := first_difference(a, b, f"{path}[{i}]")) is not None:
                return diff
        return None if len(got) == len(want) else f"{path}: {len(got)} elements != golden {len(want)}"
    return None if got == want else f"{path}: {_shown(got)} != golden {_shown(want)}"


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:200]


def update() -> None:
    """Write every golden file afresh, and remove those of commands no longer in the set."""
    from medvqa.core.files import write_atomic

    with tempfile.TemporaryDirectory(prefix="medvqa-golden-") as tmp:
        produced = produce(Path(tmp).resolve())
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for stale in set(GOLDEN.glob("*.json")) - {GOLDEN / f"{n}.json" for n in produced}:
        stale.unlink()
    for name, content in produced.items():
        write_atomic(GOLDEN / f"{name}.json", content)
    print(f"wrote {len(produced)} golden files under {GOLDEN.relative_to(REPO)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python -m tests.golden --update   (only when an output is meant to change)")
    update()

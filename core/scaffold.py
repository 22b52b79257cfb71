"""`medvqa new-adapter NAME`: a new, installable adapter package that passes its own tests and
the conformance kit as written — a loader for a JSON Lines release, prompts and answer phrases
in the exam's language, a validator, a three-item fixture with one image, tests that use the
kit, and a README. docs/adding-an-exam.md walks through what to change next.
"""

from __future__ import annotations

import io
import json
import keyword
import pprint
import re
from dataclasses import dataclass
from pathlib import Path

NAME = re.compile(r"^[a-z][a-z0-9_]{1,39}$")
LANGUAGE = re.compile(r"^[a-z]{2,3}$")


@dataclass(frozen=True)
class Scaffold:
    root: Path  # the package folder written
    name: str
    module: str
    language: str
    phrasebook: bool  # False: the language has no phrasebook entry, prompts are in English
    files: tuple[Path, ...]


def _phrases(language: str) -> tuple[dict, bool]:
    from medvqa._phrasebook import PHRASES

    if language in PHRASES:
        return PHRASES[language], True
    return PHRASES["en"], False  # the default language of a Benchmark


FIXTURE_ITEMS = [
    {"id": "q1", "question": "Which organ secretes insulin?",
     "options": {"A": "Liver", "B": "Pancreas", "C": "Kidney", "D": "Spleen"}, "answer": "B",
     "subject": "endocrinology"},
    {"id": "q2", "question": "Which two vessels carry oxygenated blood in an adult?",
     "options": {"A": "Pulmonary vein", "B": "Pulmonary artery", "C": "Aorta", "D": "Superior vena cava"},
     "answer": ["A", "C"], "subject": "cardiology"},
    {"id": "q3", "question": "The image shows one round cell on a plain background. What shape is the cell?",
     "options": {"A": "Square", "B": "Triangle", "C": "Round", "D": "Star-shaped"}, "answer": "C",
     "subject": "haematology", "images": ["images/q3.png"]},
]


def _png() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (96, 96), "white")
    ImageDraw.Draw(image).ellipse((24, 24, 72, 72), fill=(200, 40, 60), outline="black")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


PYPROJECT = '''[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "medvqa-__DIST__"
version = "0.1.0"
description = "medvqa adapter for __TITLE__"
requires-python = ">=3.11"
dependencies = ["medvqa"]

[project.entry-points.medvqa]
__NAME__ = "__MODULE__.plugin"

[tool.setuptools]
packages = ["__MODULE__"]

[tool.setuptools.package-data]
__MODULE__ = ["fixture/*.jsonl", "fixture/images/*.png"]
'''

INIT = '''"""medvqa adapter for __TITLE__ (written by `medvqa new-adapter`)."""
'''

PLUGIN = '''"""Registers the benchmark and its language's answer phrases with medvqa (the `medvqa` entry
point in pyproject.toml names this module)."""

import medvqa


@medvqa.hookimpl
def register_benchmarks(register):
    from .benchmark import __CLASS__

    register(__CLASS__())
__PATTERNS_HOOK__'''

PATTERNS_HOOK = '''

@medvqa.hookimpl
def register_answer_patterns(register):
    from .prompts import PATTERNS

    register(PATTERNS)
'''

PROMPTS = '''"""The words around an item, and how answers are phrased, in __LANGNAME__.
Adjust them to the exam's own wording; the template's hash lands in every run manifest."""

import medvqa
__PATTERN_IMPORT__
TEMPLATE = medvqa.Template(
    name="__NAME__-__LANG__",
    question_header=__QUESTION_HEADER__,
    options_header=__OPTIONS_HEADER__,
    instruction=__INSTRUCTION__,
    image_instruction=__IMAGE_INSTRUCTION__,
)

FORCED_GUESS = __FORCED_GUESS__
__PATTERNS__'''

BENCHMARK = '''"""__TITLE__: the loader, its strata and its validator.

The release is a folder holding `items.jsonl`, one JSON object a line:
    {"id": "q1", "question": "...", "options": {"A": "...", "B": "..."}, "answer": "B",
     "subject": "...", "images": ["images/q1.png"]}
`answer` is a key, a list of keys (all of them required) or a list of lists (accepted
alternatives); `images` are paths inside the folder. The bundled fixture (`fixture/`) is the
default source until you point `load` at the real release (a download, see
docs/adding-an-exam.md).
"""

from __future__ import annotations

from pathlib import Path

import medvqa

from . import prompts

FIXTURE = Path(__file__).parent / "fixture"
ITEMS = "items.jsonl"


class __CLASS__(medvqa.Benchmark):
    name = "__NAME__"
    title = "__TITLE__"
    language = "__LANG__"
    # The languages the items exist in, the exam's own first (`medvqa run --language CODE`). To
    # offer a translation, ship `items.<code>.jsonl` beside `items.jsonl` (the same ids, gold and
    # strata; the question and options translated) and add its code here: runs in the two
    # languages then pair item by item (`medvqa audit RUN_A RUN_B` reports Δlang).
    languages = ("__LANG__",)
    splits = ("full", "sample")
    default_split = "full"
    strata = ("subject", "has_image")
    default_strata = ("subject",)
    forced_guess_instruction = prompts.FORCED_GUESS

    def load(self, path=None, split=None, *, select=None, **options):
        """Items of `split` from the release folder `path` (the bundled fixture when None).
        `select` keeps the items whose strata hold one of the accepted values:
        {"subject": ["cardiology"]}; older callers pass plural keywords (`years=[2024]`)."""
        split = self.checked_split(split)
        select = dict(select or {})
        for key, values in options.items():
            if values and key.endswith("s"):
                select.setdefault(key[:-1], values)
        root = Path(path) if path is not None and split != "sample" else FIXTURE
        first = self.active_language == self.offered_languages[0]
        file = root / (ITEMS if first else f"items.{self.active_language}.jsonl")
        items = [self._item(root, file, row, line) for line, row in enumerate(medvqa.read_jsonl(file), 1)]
        for field, accepted in select.items():
            if field not in self.strata:
                raise ValueError(f"{self.name} cannot select by {field!r}; its strata: {', '.join(self.strata)}")
            items = [it for it in items if str(it.meta.get(field)) in set(map(str, accepted))]
        return items

    def _item(self, root: Path, file: Path, row: dict, line: int) -> medvqa.Item:
        record = str(row.get("id") or f"line {line}")
        if not isinstance(row.get("id"), str) or not row["id"].strip():
            raise medvqa.DataError("every item needs a non-empty string id", file=file, record=record)
        options = row.get("options")
        if not isinstance(options, dict) or not options:
            raise medvqa.DataError("options must be a non-empty object {key: text}", file=file, record=record)
        if not isinstance(row.get("question"), str):
            raise medvqa.DataError("question must be a string", file=file, record=record)
        images = tuple(
            medvqa.ImageRef(ref=ref, path=medvqa.resolve_image(root, ref, file=file, record=record))
            for ref in row.get("images") or [])
        gold = medvqa.Gold.from_json(row.get("answer"), file=file, record=record)
        n_select = len(gold.alternatives[0]) if gold is not None and gold.alternatives else 1
        return medvqa.Item(
            id=row["id"], benchmark=self.name, question=row["question"], language=self.active_language,
            options=tuple(medvqa.Option(key=str(k), label=str(k), text=str(t)) for k, t in options.items()),
            gold=gold, n_select=n_select, images=images,
            meta={"subject": row.get("subject"), "has_image": bool(images)},
        )

    def template(self, item):
        return prompts.TEMPLATE

    def sample_path(self):
        return FIXTURE

    def validate(self, path):
        """Every problem in the release at `path`, each naming the file and the record."""
        file = Path(path) / ITEMS
        findings, seen = [], set()

        def finding(record, rule, message, level="error"):
            findings.append(medvqa.Finding(file=str(file), section=None, number=record, rule=rule,
                                           level=level, message=message))

        try:
            rows = medvqa.read_jsonl(file)
        except medvqa.DataError as exc:
            finding(None, "readable", str(exc))
            return findings
        for line, row in enumerate(rows, 1):
            record = str(row.get("id") or f"line {line}")
            if record in seen:
                finding(record, "unique-id", "the id is used by an earlier item")
            seen.add(record)
            options = row.get("options") if isinstance(row.get("options"), dict) else {}
            try:
                gold = medvqa.Gold.from_json(row.get("answer"), file=file, record=record)
            except medvqa.DataError as exc:
                finding(record, "answer", str(exc))
                continue
            if gold is None:
                finding(record, "answer", "no answer: the item is excluded", level="warning")
            else:
                for key in sorted(gold.keys - set(map(str, options))):
                    finding(record, "gold-in-options", f"answer {key!r} is not an option")
            for ref in row.get("images") or []:
                try:
                    found = medvqa.resolve_image(Path(path), ref, file=file, record=record)
                except medvqa.DataError as exc:
                    finding(record, "image-inside", str(exc))
                    continue
                if found is None:
                    finding(record, "image-present", f"image {ref!r} is missing", level="warning")
        return findings
'''

TESTS = '''"""The adapter keeps every medvqa contract (the conformance kit) and reads its fixture and
its language's answers as it should."""

from pathlib import Path

import medvqa

FIXTURE = Path(__file__).resolve().parents[1] / "__MODULE__" / "fixture"


def test_the_benchmark_keeps_every_contract(medvqa_check):
    report = medvqa_check("__NAME__", FIXTURE)
    assert report.ok and report.n_items == 3
    assert report.n_records == {"random": 8, "gold": 8}  # 3 items x C, C+Q, and the image item's C+I, C+Q+I


def test_the_loader_reads_the_fixture():
    items = medvqa.load("__NAME__", FIXTURE)
    assert [it.id for it in items] == ["q1", "q2", "q3"]
    assert items[1].gold.keys == {"A", "C"} and items[1].n_select == 2
    assert [it.image_available for it in items] == [False, False, True]
    assert medvqa.load("__NAME__", FIXTURE, select={"subject": ["cardiology"]})[0].id == "q2"


def test_answers_in_the_exam_language_are_read():
    item = medvqa.load("__NAME__", FIXTURE)[0]
    assert medvqa.score(item, __SAMPLE_REPLY__).predicted == ("B",)
    assert medvqa.score(item, '{"answer": ["B"]}').correct
    assert not medvqa.score(item, '{"answer": ["A"]}').correct
'''

README = '''# medvqa-__DIST__

A [medvqa](https://pypi.org/project/medvqa/) adapter for __TITLE__, written by
`medvqa new-adapter __NAME____LANGOPT__`.

```bash
pip install -e .
medvqa list                              # __NAME__ is listed, with its plugin
medvqa run __NAME__ --model random       # on the bundled three-item fixture
medvqa run __NAME__ --data RELEASE/ --model openai/gpt-5
medvqa validate __NAME__ --data RELEASE/
python -m pytest -q                      # its own tests and the conformance kit
```

- `__MODULE__/benchmark.py`: the loader (`items.jsonl` in a release folder), strata, validator.
- `__MODULE__/prompts.py`: the template and answer phrases in __LANGNAME__.
- `__MODULE__/fixture/`: three items, one with an image; the tests and the kit run on it.
- `tests/test___NAME__.py`: `medvqa_check` (the conformance kit) and hand-checked loader tests.

Next steps are in medvqa's docs/adding-an-exam.md: the real release's layout, its answer
conventions, its pass lines and its download.
'''


def _py(value) -> str:
    return pprint.pformat(value, width=100)


def write_adapter(name: str, out_dir: str | Path = ".", *, language: str = "en", title: str | None = None) -> Scaffold:
    """Write the adapter package `name` into `out_dir/name` (which must not exist or be empty)."""
    if not NAME.match(name) or keyword.iskeyword(name):
        raise ValueError(f"adapter name {name!r}: use 2-40 lower-case letters, digits and underscores, "
                         "starting with a letter (it is the benchmark's name in `medvqa run NAME`)")
    if not LANGUAGE.match(language):
        raise ValueError(f"--language {language!r}: give an ISO 639 code such as en, ko, pl")
    from medvqa.core import plugins

    if name in plugins.benchmarks():
        raise ValueError(f"a benchmark named {name!r} is already installed ({plugins.benchmarks()[name].plugin}); "
                         "choose another name")
    root = Path(out_dir) / name
    if root.exists() and any(root.iterdir()):
        raise ValueError(f"{root} exists and is not empty: choose another --out or name")
    words, known = _phrases(language)
    module = f"medvqa_{name}"
    title = title or f"the {name} exam"
    cls = "".join(part.capitalize() for part in name.split("_")) or "Exam"
    if words.get("patterns_import"):
        pattern_import, patterns = words["patterns_import"] + "\n", ""
    elif not words["answer_prefixes"]:
        pattern_import, patterns = "", ""
    else:
        answer = "".join(f'rf"{p}{{medvqa.ANSWER_TOKEN}}", ' for p in words["answer_prefixes"]).rstrip()
        pattern_import = ""
        patterns = (f'\n# answer phrases (Rule 6 of the answer reader); English always applies, and so do the\n'
                    f'# refusal sentences of every language medvqa ships (add the exam\'s own as refusal=(...))\n'
                    f'PATTERNS = medvqa.LanguagePatterns(language="{language}", answer=({answer}))\n')
    has_patterns = bool(pattern_import or patterns)
    langname = words["name"] if known else f"English (no phrasebook for {language!r} yet: translate them)"
    subst = {
        "__DIST__": name.replace("_", "-"), "__NAME__": name, "__MODULE__": module, "__CLASS__": cls,
        "__TITLE__": title, "__LANG__": language, "__LANGNAME__": langname,
        "__LANGOPT__": f" --language {language}" if language != "en" else "",
        "__QUESTION_HEADER__": _py(words["question_header"]), "__OPTIONS_HEADER__": _py(words["options_header"]),
        "__INSTRUCTION__": _py(words["instruction"]), "__IMAGE_INSTRUCTION__": _py(words["image_instruction"]),
        "__FORCED_GUESS__": _py(words["forced_guess"]), "__PATTERN_IMPORT__": pattern_import,
        "__PATTERNS__": patterns, "__PATTERNS_HOOK__": PATTERNS_HOOK if has_patterns else "",
        "__SAMPLE_REPLY__": _py(words["sample_reply"]),
    }

    def fill(text: str) -> str:
        for key in sorted(subst, key=len, reverse=True):
            text = text.replace(key, subst[key])
        return text

    files = {
        "pyproject.toml": fill(PYPROJECT), "README.md": fill(README),
        f"{module}/__init__.py": fill(INIT), f"{module}/plugin.py": fill(PLUGIN),
        f"{module}/prompts.py": fill(PROMPTS), f"{module}/benchmark.py": fill(BENCHMARK),
        f"{module}/fixture/items.jsonl": "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in FIXTURE_ITEMS),
        f"tests/test_{name}.py": fill(TESTS),
    }
    written = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    image = root / module / "fixture" / "images" / "q3.png"
    image.parent.mkdir(parents=True, exist_ok=True)
    image.write_bytes(_png())
    written.append(image)
    return Scaffold(root, name, module, language, known, tuple(written))

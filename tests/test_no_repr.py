"""No output of any command shows a Python repr: every command (run, report with its tables, pass
lines and judges, audit, compare) in every format, over each built-in benchmark's fixture and
two models. JSON is allowed (it quotes with `"`); a dict or list written with `'`, a
`datetime(`, `Decimal(`, numpy scalar or object repr is not."""

import json
import re

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from tests.conftest import REPO, shared_data

pytestmark = pytest.mark.slow  # ten runs and some eighty command outputs: about a minute

BENCHMARKS = {  # name: (data, extra run arguments, its table set, whether it has pass lines)
    "jmed48k": (None, ["--sample"], "jmed48k", True),
    "igakuqa": (lambda: shared_data("igakuqa"), ["--select", "year=2018"], "igakuqa", True),
    "yakugakuqa": (lambda: shared_data("yakugakuqa"), ["--select", "year=2022"], "yakugakuqa", True),
    "polish_pes": (lambda: REPO / "tests" / "adapters" / "polish_pes" / "data", [], "polish_pes", True),
    "mmbu_hard": (lambda: shared_data("mmbu-proxy"), [], "mmbu_hard", False),
}
MODELS = {"random": "random", "constant": "constant:a"}
REPR = re.compile(
    r"[{\[(,:]\s*'[^'\n]*'\s*[:,\]}]"  # {'a': ..., ['a', ...], ('a', ...): single-quoted items of a container
    r"|\b(?:datetime|date|Decimal|PosixPath|np\.\w+|numpy\.\w+|Timestamp)\("  # reprs of values
    r"|<[\w.]+ object at 0x|\bdtype[:=]"
)


def reprs(text: str) -> list[str]:
    """Python reprs in `text`; JSON strings are decoded first, so a quote inside one is not taken
    for a repr's, and a page's scripts and styles (JavaScript quotes with `'`) are left out."""
    text = re.sub(r"<(script|style)\b.*?</\1>", "", text, flags=re.S)
    try:
        doc = json.loads(text)
    except ValueError:
        return [m.group(0) for m in REPR.finditer(text)]
    return [s for s in _strings(doc) for m in [REPR.search(s)] if m]


def _strings(doc) -> list[str]:
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in [str(k), *_strings(v)]]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return [doc] if isinstance(doc, str) else []


def test_the_check_catches_reprs_and_lets_json_through():
    assert reprs("Physician 2018: [{'id': 'PHY-hisshu', 'points': 59}]") and reprs("['a', 'b']")
    assert reprs("created datetime(2024, 1, 1)") and reprs("value Decimal('0.5')") and reprs("np.float64(0.5)")
    assert reprs('{"rows": [{"note": "{\'id\': 1}"}]}')  # a repr inside a JSON string is still one
    assert not reprs('{"exam": "Physician 2018", "rows": [{"a": 1, "b": ["x", "y"]}]}')
    assert not reprs("| random | igakuqa | Physician 2018 | overall | not evaluable | – |")
    assert not reprs("the examinee's answer, the model's")  # apostrophes in prose
    assert not reprs("<p>n</p><script>f('change', '', x)</script>") and reprs("<td>{'a': 1}</td>")


def invoke(*args) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, (args, result.output)
    return result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("norepr")
    out = {}
    for bench, (data, extra, _, _) in BENCHMARKS.items():
        for name, model in MODELS.items():
            run_dir = tmp / f"{bench}-{name}"
            args = [
                "run",
                bench,
                "--model",
                model,
                "--conditions",
                "C,C+Q,C+I,C+Q+I",
                "--no-cache",
                "--run-dir",
                run_dir,
                *extra,
                *(["--data", data()] if data else []),
            ]
            out[(bench, name, "run")] = invoke(*args)  # the summary and the progress lines
            out[(bench, name, "run --json")] = invoke(*args, "--json")
            out[(bench, name, "dir")] = run_dir
    return out


def outputs(runs, tmp_path):
    """(what, text) for every command and format over the runs."""
    for (bench, name, what), value in runs.items():
        if what != "dir":
            yield f"{bench} {name} {what}", value
    for bench, (_, _, table, passes) in BENCHMARKS.items():
        run_dir = runs[(bench, "random", "dir")]
        for fmt in ("text", "md", "csv", "latex", "json", "html"):
            yield f"{bench} report {fmt}", invoke("report", run_dir, "--format", fmt)
            yield f"{bench} report --table {fmt}", invoke("report", run_dir, "--table", table, "--format", fmt)
            if passes:
                yield f"{bench} report --pass {fmt}", invoke("report", run_dir, "--pass", "--format", fmt)
        yield f"{bench} report --by condition", invoke("report", run_dir, "--by", "")
        unjudged = CliRunner().invoke(cli, ["report", str(run_dir), "--judges"])  # no judge: an error saying so
        assert unjudged.exit_code == 1 and "no record was judged" in unjudged.output, unjudged.output
        yield f"{bench} report --judges", unjudged.output
        pair = [run_dir, runs[(bench, "constant", "dir")]]
        yield f"{bench} audit", invoke("audit", *pair, "--resamples", 50, "--examples", 1)
        yield f"{bench} audit --json", invoke("audit", *pair, "--json", "--resamples", 50, "--examples", 1)
        page = tmp_path / f"{bench}-audit.html"
        invoke("audit", *pair, "--html", page, "--resamples", 50, "--examples", 1)
        yield f"{bench} audit --html", page.read_text(encoding="utf-8")
    every = [d for (_, _, what), d in runs.items() if what == "dir"]
    for fmt in ("md", "csv", "latex", "json", "html"):
        yield f"compare {fmt}", invoke("compare", *every, "--format", fmt, "--resamples", 50)
    page = tmp_path / "compare.html"
    invoke("compare", *every[:4], "--html", page, "--resamples", 50)
    yield "compare --html", page.read_text(encoding="utf-8")
    for audit_page in sorted((tmp_path / "compare-audits").glob("*.html")):
        yield f"compare --html {audit_page.name}", audit_page.read_text(encoding="utf-8")


def test_no_command_prints_a_python_repr(runs, tmp_path):
    seen = 0
    for what, text in outputs(runs, tmp_path):
        seen += 1
        assert text.strip(), f"{what}: empty output"
        found = reprs(text)
        assert not found, f"{what} shows Python reprs: {found[:3]}"
    assert seen > 80


def test_compare_of_two_igakuqa_runs_shows_the_pass_lines_as_a_table(runs, tmp_path):
    pair = [runs[("igakuqa", "random", "dir")], runs[("igakuqa", "constant", "dir")]]
    md = invoke("compare", *pair, "--resamples", 50)
    head = (
        "| model | benchmark | exam | criterion | status | points | required | maximum | margin | note | treatments |"
    )
    assert head in md
    # 2018 (the 112th exam) has no sourced line: the points of each part, no verdict
    rows = [line for line in md.splitlines() if line.startswith("| random | igakuqa | Physician 2018 |")]
    assert [line.split(" | ")[3:5] for line in rows] == [
        ["overall", "not evaluable"],
        ["hisshu", "not evaluable"],
        ["general", "not evaluable"],
    ]
    doc = json.loads(invoke("compare", *pair, "--json", "--resamples", 50))
    # a criterion's name is the same in every year: a row is an exam and a criterion
    points = {(r["model"], r["exam"], r["criterion"]): (r["points"], r["maximum"]) for r in doc["pass_lines"]}
    report = json.loads(invoke("report", pair[0], "--pass", "--json"))
    assert {(r["exam"], r["criterion"]): (r["points"], r["maximum"]) for r in report["rows"]} == {
        (e, c): v for (m, e, c), v in points.items() if m == "random"
    }
    # 400 items, 112A43 withdrawn: maxima 200 + 299 (its 1 point out)
    assert points[("random", "Physician 2018", "hisshu")][1] + points[("random", "Physician 2018", "general")][1] == 499
    page = tmp_path / "c.html"
    invoke("compare", *pair, "--html", page, "--resamples", 50)
    html = page.read_text(encoding="utf-8")
    table = html[html.index('<table id="pass">') :]
    table = table[: table.index("</table>")]
    assert (
        table.count("<tr data-model=") == 6
        and ('<td dir="auto">Physician 2018</td><td dir="auto">hisshu</td>') in table
    )

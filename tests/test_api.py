"""`import medvqa` is the one public surface: every name listed, documented with an example that
runs, imported lazily; adapters use nothing else; the functions return what the commands print."""

import ast
import contextlib
import io
import json
import math
import re
import subprocess
import sys
from importlib import import_module

import pandas as pd
import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.run.store import read_records
from tests.conftest import REPO, shared_data

SURFACE = {
    "Benchmark",
    "Item",
    "Gold",
    "Option",
    "ImageRef",
    "Template",
    "LanguagePatterns",
    "Finding",
    "hookimpl",
    "load",
    "score",
    "run",
    "records",
    "report",
    "audit",
    "compare",
    "AnswerConventions",
    "DataError",
    "resolve_image",
    "Condition",
    "ANSWER_TOKEN",
    "read_jsonl",
}
PUBLIC_MODULES = ["medvqa"] + sorted(
    f"medvqa.{p.stem}" for p in (REPO / "medvqa").glob("*.py") if not p.name.startswith("_")
)


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, re.M | re.S)


def public_names() -> list[str]:
    return [f"{module}.{name}" for module in PUBLIC_MODULES for name in import_module(module).__all__]


def test_the_surface_is_listed_and_every_name_resolves():
    out = subprocess.run(
        [sys.executable, "-c", "import medvqa; print(medvqa.__all__)"], capture_output=True, text=True, check=True
    )
    assert SURFACE <= set(ast.literal_eval(out.stdout))
    assert PUBLIC_MODULES == [
        "medvqa",
        "medvqa.commands",
        "medvqa.ja",
        "medvqa.metrics",
        "medvqa.mhlw",
        "medvqa.stats",
        "medvqa.tables",
        "medvqa.testing",
    ]
    for dotted in public_names():
        module, _, name = dotted.rpartition(".")
        assert getattr(import_module(module), name) is not None, dotted
        assert name in dir(import_module(module))
    with pytest.raises(AttributeError, match="module 'medvqa' has no attribute 'nothing'"):
        _ = medvqa.nothing


def test_import_medvqa_loads_nothing_heavy():
    code = (
        "import sys, medvqa; from medvqa import hookimpl; "
        "print(sorted(m for m in ('pandas', 'pydantic', 'litellm', 'numpy', 'medvqa.core.items') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_public_name_is_documented_with_an_example():
    docs = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^### `([\w.]+)`\n(.*?)(?=^##+ |\Z)", docs, re.M | re.S))
    for dotted in public_names():
        assert dotted in sections, f"{dotted} is not documented in docs/api.md"
        assert "```python" in sections[dotted], f"{dotted} has no example in docs/api.md"
    assert not set(sections) - set(public_names()), "docs/api.md documents names that are not public"


def run_blocks(blocks: list[str], cwd) -> str:
    out = io.StringIO()
    namespace: dict = {"__name__": "__doc_example__"}
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out):
        for i, block in enumerate(blocks, 1):
            exec(compile(block, f"<example {i}: {block.splitlines()[0]}>", "exec"), namespace)
    return out.getvalue()


def test_the_api_docs_examples_run(tmp_path):
    blocks = python_blocks((REPO / "docs" / "api.md").read_text(encoding="utf-8"))
    assert len(blocks) >= len(public_names()) - 4  # a few examples show two names at once
    run_blocks(blocks, tmp_path)


def test_the_readme_python_example_runs_verbatim_on_the_bundled_sample(tmp_path):
    blocks = python_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) == 1
    printed = run_blocks(blocks, tmp_path)
    assert printed.startswith("True answered ('2',)\n")
    run_dirs = list((tmp_path / "runs").iterdir())
    assert len(run_dirs) == 1 and (run_dirs[0] / "records.jsonl").is_file()


def imports(path):
    """(module, name or None, line) of every absolute import in a Python file."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield from ((node.module, alias.name, node.lineno) for alias in node.names)


def adapter_files():
    for root in (REPO / "adapters", REPO / "tests" / "plugin_package"):
        for path in sorted(root.rglob("*.py")):
            if not {"build", "__pycache__"} & set(path.relative_to(root).parts) and ".egg-info" not in str(path):
                yield path


def test_adapters_import_only_public_medvqa_names():
    files = list(adapter_files())
    assert len(files) > 20 and any("plugin_package" in str(p) for p in files)
    bad = []
    for path in files:
        for module, name, line in imports(path):
            where = f"{path.relative_to(REPO)}:{line}"
            if module == "__future__":
                continue
            if any(part.startswith("_") for part in module.split(".")) or (name or "").startswith("_"):
                bad.append(f"{where}: private name {module}.{name}")
            elif module.split(".")[0] == "medvqa":
                if module not in PUBLIC_MODULES:
                    bad.append(f"{where}: {module} is not a public module")
                elif name is not None and name not in import_module(module).__all__:
                    bad.append(f"{where}: {module}.{name} is not public")
    assert not bad, "\n".join(bad)


def test_the_docs_python_imports_only_public_medvqa_names(tmp_path):
    """An adapter author copies the docs' code: every Python block of docs/ imports only public
    names (scoring.md's conventions example imported medvqa.core.benchmark)."""
    bad = []
    for doc in sorted((REPO / "docs").rglob("*.md")):
        for number, block in enumerate(python_blocks(doc.read_text(encoding="utf-8")), 1):
            path = tmp_path / f"{doc.stem}_{number}.py"
            path.write_text(block, encoding="utf-8")
            for module, name, _ in imports(path):
                if module.split(".")[0] == "medvqa" and (
                    module not in PUBLIC_MODULES or (name is not None and name not in import_module(module).__all__)
                ):
                    bad.append(f"{doc.relative_to(REPO)} block {number}: {module}.{name or ''}")
    assert not bad, "\n".join(bad)


def test_pass_report_states_the_types_of_its_arguments():
    """`pass_report(items, records)`: items are medvqa.Item objects, records dicts; the hook's
    docs and its docstring say so."""
    row = next(
        line
        for line in (REPO / "docs" / "plugins.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `pass_report(items, records)`")
    )
    assert "`items` is a `list[medvqa.Item]`" in row and "`records` a `list[dict]`" in row
    doc = " ".join(medvqa.Benchmark.pass_report.__doc__.split())
    assert "`items` are `medvqa.Item`s" in doc and "`records` are dicts" in doc


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("api") / "run"
    outcome = medvqa.run("jmed48k", "random", sample=True, run_dir=str(run_dir), cache=False, progress=False)
    return outcome


def invoke_json(*args):
    result = CliRunner().invoke(cli, [*map(str, args), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_run_returns_the_run_directory_and_the_summary_run_prints(sample_run, tmp_path):
    run_dir, summary = sample_run
    assert (run_dir / "manifest.json").is_file() and summary["run_dir"] == str(run_dir)
    printed = invoke_json(
        "run", "jmed48k", "--sample", "--model", "random", "--no-cache", "--run-dir", tmp_path / "cli"
    )
    assert {k: v for k, v in summary.items() if k in printed and k != "run_dir"} == {
        k: v for k, v in printed.items() if k != "run_dir"
    }
    live = [it for it in medvqa.load("jmed48k", split="sample") if not it.excluded]
    assert summary["n_records"] == len(live) + sum(it.image_available for it in live) == 22
    assert set(summary["accuracy"]) == {"C+Q", "C+Q+I"}
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["command_line"] == [
        "python",
        "-c",
        f"import medvqa; medvqa.run('jmed48k', 'random', sample=True, run_dir={str(run_dir)!r}, cache=False)",
    ]
    assert manifest["plugins"]["medvqa.adapters.jmed48k.plugin"]["distribution"] == "medvqa"
    with pytest.raises(TypeError, match="unknown options smaple; accepted: .*sample"):
        medvqa.run("jmed48k", "random", smaple=True)


def test_records_are_the_newest_record_of_each_pair(sample_run):
    run_dir, summary = sample_run
    path = run_dir / "records.jsonl"
    saved = path.read_bytes()
    try:
        first = json.loads(saved.splitlines()[0])
        with path.open("a", encoding="utf-8") as fh:  # a newer record of the same pair
            fh.write(json.dumps({**first, "response": "rewritten"}) + "\n")
        frame = medvqa.records(run_dir)
        assert len(frame) == summary["n_records"] == len(read_records(run_dir))
        row = frame[(frame["item_id"] == first["item_id"]) & (frame["condition"] == first["condition"])]
        assert list(row["response"]) == ["rewritten"]
        assert frame.attrs["manifest"]["model"] == "random"
        assert frame.groupby("condition")["correct"].mean().to_dict() == pytest.approx(summary["accuracy"])
    finally:
        path.write_bytes(saved)


def values(frame) -> list[dict]:
    """A DataFrame's rows as plain values, a missing one (NaN, None) as None: how JSON says them."""
    return [
        {k: None if v is None or (isinstance(v, float) and math.isnan(v)) else v for k, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]


@pytest.mark.parametrize(
    "args,kwargs",
    [
        ((), {}),
        (("--by", "profession,year"), {"by": ["profession", "year"]}),
        (("--by", ""), {"by": ""}),
    ],
)
def test_report_returns_a_dataframe_of_what_report_json_prints(sample_run, args, kwargs):
    run_dir, _ = sample_run
    printed = invoke_json("report", run_dir, *args)
    frame = medvqa.report(run_dir, **kwargs)
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(printed[0])
    assert values(frame) == printed  # value by value, in the order printed
    assert frame.attrs["reading"] == "strict" and set(frame["reading"]) == {"strict"}
    assert medvqa.report(run_dir, fmt="json", **kwargs) == printed  # the document itself, as before
    strata = frame.columns.intersection(["profession", "year", "dominant_type"]).tolist()
    by_condition = frame[frame[strata].isna().all(axis=1)].set_index("condition")["accuracy"].to_dict()
    assert by_condition == ({} if kwargs.get("by") else pytest.approx(sample_run.summary["accuracy"]))


def test_report_tables_and_pass_lines_are_dataframes_of_what_json_prints(sample_run):
    run_dir, _ = sample_run
    printed = invoke_json("report", run_dir, "--table", "jmed48k")
    tables = medvqa.report(run_dir, table="jmed48k")
    assert list(tables) == list(printed) == ["text_only", "with_images", "dominant_type", "any_type", "exclusions"]
    for name, frame in tables.items():
        assert values(frame) == printed[name]["rows"], name
        assert frame.attrs == {"title": printed[name]["title"], "notes": printed[name]["notes"], "reading": "strict"}
    assert medvqa.report(run_dir, table="jmed48k", fmt="json") == printed
    printed = invoke_json("report", run_dir, "--pass")
    verdicts = medvqa.report(run_dir, pass_lines=True)
    assert values(verdicts) == printed["rows"]
    assert verdicts.criterion.tolist() == [
        "overall",
        "hisshu",
        "general",
        "kinki",
        "overall",
        "hisshu",
        "general+situational",
    ]  # Physician 2024, then Nurse 2023
    assert verdicts.attrs == {k: v for k, v in printed.items() if k != "rows"}
    assert medvqa.report(run_dir, pass_lines=True, fmt="json") == printed


def test_report_of_a_published_run_shows_the_other_reading_in_flat_columns(tmp_path):
    """The published GPT-4o WorldMedQA-V Japan table (with image, Japanese): 149 of 168 right
    under the protocol's assisted reading (published 0.8810, 148: japan-144 is read by matching where
    the published run asked its extractor), 57 under matching alone."""
    data = shared_data("worldmedqa-v-japan")
    table = data / "visuals" / "outputs_w_images" / "GPT4o" / "GPT4o_japan_local_gpt-4o-mini_result.xlsx"
    run_dir = tmp_path / "gpt4o-ja"
    invoke_json("import", "worldmedqa_v", table, "--data", data, "--run-dir", run_dir)
    headline = medvqa.report(run_dir, by="")
    assert values(headline) == invoke_json("report", run_dir, "--by", "")
    row = headline.iloc[0]
    assert (row.reading, row.n, row.correct, row.strict_correct, row.extracted) == ("assisted", 168, 149, 57, 101)
    assert row.accuracy == 149 / 168 and row.strict_accuracy == 57 / 168
    strict = medvqa.report(run_dir, by="", reading="strict")
    assert values(strict) == invoke_json("report", run_dir, "--by", "", "--reading", "strict")
    row = strict.iloc[0]
    assert (row.reading, row.correct, row.assisted_correct) == ("strict", 57, 149)
    assert (row.assisted_accuracy, row.assisted_ci_low, row.assisted_ci_high) == (
        headline.accuracy[0],
        headline.ci_low[0],
        headline.ci_high[0],
    )
    # compare's cell of this run is report's row, column for column
    cell = medvqa.compare(run_dir, reading="strict", resamples=50).query("stratum == 'overall'").iloc[0]
    for column in ("n", "ci_low", "ci_high", "assisted_accuracy", "assisted_ci_low", "assisted_ci_high", "extracted"):
        assert cell[column] == row[column], column
    assert cell.value == row.accuracy
    # the records read as report reads them: the protocol's reading, or the one asked for
    frame = medvqa.records(run_dir)
    assert frame.attrs["reading"] == "assisted" and frame.groupby("condition")["correct"].mean().to_dict() == {
        "C+Q+I": 149 / 168
    }
    assert frame["strict_reading"].notna().sum() == 101  # the replies the extractor read, their strict reading kept
    strict_frame = medvqa.records(run_dir, reading="strict")
    assert strict_frame.attrs["reading"] == "strict" and strict_frame["correct"].sum() == 57
    with pytest.raises(ValueError, match="unknown reading 'loose'"):
        medvqa.records(run_dir, reading="loose")


def test_report_in_other_formats_and_its_errors(sample_run):
    run_dir, _ = sample_run
    result = CliRunner().invoke(cli, ["report", str(run_dir), "--format", "md"])
    assert result.exit_code == 0 and result.stdout == medvqa.report(run_dir, fmt="md")
    with pytest.raises(ValueError, match="no table set 'other' for this jmed48k run; its table set is 'jmed48k'"):
        medvqa.report(run_dir, table="other")
    with pytest.raises(ValueError, match="either"):
        medvqa.report(run_dir, table="jmed48k", pass_lines=True)


def test_audit_returns_what_audit_json_prints(sample_run, tmp_path):
    run_dir, _ = sample_run
    doc = medvqa.audit(run_dir, by=["profession"], resamples=200)
    assert doc == invoke_json("audit", run_dir, "--by", "profession", "--resamples", 200)
    pairs = sum(it.image_available for it in medvqa.load("jmed48k", split="sample") if not it.excluded)
    assert doc["paired"]["overall"]["n"] == pairs == 5 and set(doc["paired"]["by"]) == {"profession"}
    twice = medvqa.audit(run_dir, run_dir, resamples=200)
    assert twice["notes"] == [f"{run_dir} is given more than once: audited once"]
    assert twice["paired"] == medvqa.audit(run_dir, resamples=200)["paired"]
    again = medvqa.run("jmed48k", "random", sample=True, run_dir=str(tmp_path / "again" / run_dir.name), progress=False)
    cohorts = medvqa.audit(run_dir, again.run_dir, cohorts={"baselines": ["random"]}, resamples=50)
    assert set(cohorts["models"]) == {f"random@{run_dir}", f"random@{again.run_dir}"}  # same folder names
    assert cohorts["cohorts"]["baselines"]["n_models"] == 2


def test_read_jsonl_names_the_file_and_the_line(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "a", "q": "line\u2028separator"}\n\n{"id": "b"}\r\n', encoding="utf-8")
    assert medvqa.read_jsonl(path) == [{"id": "a", "q": "line\u2028separator"}, {"id": "b"}]
    path.write_text('{"id": "a"}\n{"id": "b",}\n', encoding="utf-8")
    with pytest.raises(medvqa.DataError, match=rf"{re.escape(str(path))}: record line 2: not valid JSON"):
        medvqa.read_jsonl(path)
    path.write_text('{"id": "a"}\n["b"]\n', encoding="utf-8")
    with pytest.raises(medvqa.DataError, match="record line 2: expected a JSON object, got list"):
        medvqa.read_jsonl(path)
    with pytest.raises(medvqa.DataError, match="missing.jsonl: file not found"):
        medvqa.read_jsonl(tmp_path / "missing.jsonl")


class TTYStream(io.StringIO):
    """A stderr that says it is a terminal (as a terminal does, and as some notebook kernels'
    streams do)."""

    def isatty(self) -> bool:
        return True


def fake_ipython(shell_class: str, config: dict):
    """The `IPython` module as a shell of `shell_class` finds it already imported (the public
    `IPython.get_ipython()`); IPython itself is not installed here."""
    import types

    shell = type(shell_class, (), {"config": config})()
    module = types.ModuleType("IPython")
    module.get_ipython = lambda: shell
    return module


PLAIN_LINE = re.compile(r"^\d+/22 \(\d+%\)  \d+\.\d req/s  errors 0  ETA (\d+:\d\d:\d\d|unknown)$")


def test_run_in_a_notebook_writes_rare_plain_lines_never_a_redrawn_display(tmp_path, monkeypatch, capsys):
    # a Jupyter kernel whose stderr answers isatty() True: before, the terminal's display was drawn into the cell
    monkeypatch.setitem(sys.modules, "IPython", fake_ipython("ZMQInteractiveShell", {"IPKernelApp": {}}))
    monkeypatch.setattr(sys, "stderr", TTYStream())
    medvqa.run("jmed48k", "random", sample=True, run_dir=str(tmp_path / "nb"), cache=False)
    shown = sys.stderr.getvalue()
    assert "\r" not in shown and "\x1b" not in shown and shown.endswith("\n")
    lines = shown.splitlines()
    # one line at each tenth of the 22 records (3, 5, 7, 9, 11, 14, 16, 18, 20, 22 done), not one per 5 %
    assert [int(line.split("/")[0]) for line in lines] == [3, 5, 7, 9, 11, 14, 16, 18, 20, 22]
    assert all(PLAIN_LINE.match(line) for line in lines), lines
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(sys, "stderr", TTYStream())  # progress=False: nothing at all
    medvqa.run("jmed48k", "random", sample=True, run_dir=str(tmp_path / "quiet"), cache=False, progress=False)
    assert sys.stderr.getvalue() == ""


@pytest.mark.parametrize("shell", [None, "TerminalInteractiveShell"])
def test_run_on_a_terminal_keeps_the_rich_display_on_stderr(tmp_path, monkeypatch, capsys, shell):
    if shell:  # IPython in a terminal is a terminal
        monkeypatch.setitem(sys.modules, "IPython", fake_ipython(shell, {"TerminalIPythonApp": {}}))
    else:
        monkeypatch.delitem(sys.modules, "IPython", raising=False)
    monkeypatch.setattr(sys, "stderr", TTYStream())
    medvqa.run("jmed48k", "random", sample=True, run_dir=str(tmp_path / "tty"), cache=False)
    shown = sys.stderr.getvalue()
    assert "\x1b[" in shown and "22/22" in shown and "17/17" in shown and "in flight 0" in shown
    assert not any(PLAIN_LINE.match(line) for line in shown.splitlines())
    # the display is on stderr: before, rich drew it on stdout, into the file of `medvqa run ... > out.txt`
    assert capsys.readouterr().out == ""


def test_a_script_piped_to_a_file_writes_plain_lines(tmp_path):
    code = f"import medvqa; medvqa.run('jmed48k', 'random', sample=True, run_dir={str(tmp_path / 'r')!r}, cache=False)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "" and "\r" not in out.stderr and "\x1b" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 20 and lines[-1].startswith("22/22 (100%)")  # one at each new 5 % of 22 records
    assert all(PLAIN_LINE.match(line) for line in lines), lines

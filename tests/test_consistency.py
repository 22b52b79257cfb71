"""One number, one computation: over every built-in benchmark and two models, each (benchmark,
model, condition, stratum, level) cell has the same n and value in `run --json`, `report --json`,
`report --table ... --json`, `compare --json` and the audit's marginals (`audit --json`).

IgakuQA 2018 holds MHLW's withdrawn items (採点除外): under the run's `mhlw` convention they are in
no denominator, in any output (`uncounted` says how many)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core import plugins
from tests.conftest import REPO, shared_data

pytestmark = pytest.mark.slow  # ten runs and every command over each

BENCHMARKS = {  # name: (data, --select)
    "jmed48k": (None, []),
    "igakuqa": (lambda: shared_data("igakuqa"), ["--select", "year=2018"]),
    "yakugakuqa": (lambda: shared_data("yakugakuqa"), ["--select", "year=2012"]),
    "polish_pes": (lambda: REPO / "tests" / "adapters" / "polish_pes" / "data", []),
    "mmbu_hard": (lambda: shared_data("mmbu-proxy"), []),
    "worldmedqa_v": (lambda: shared_data("worldmedqa-v-japan"), []),
}
MODELS = ("random", "constant:A")


def invoke(*args) -> dict:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code in (0, 4), result.output  # 4: a run whose items lack images may still finish
    return json.loads(result.output)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("consistency")
    out = {}
    for bench, (data, select) in BENCHMARKS.items():
        source = ["--sample"] if data is None else ["--data", data()]
        for model in MODELS:
            run_dir = tmp / f"{bench}-{model.replace(':', '-')}"
            summary = invoke(
                "run",
                bench,
                *source,
                *select,
                "--model",
                model,
                "--conditions",
                "C,C+Q,C+I,C+Q+I",
                "--no-cache",
                "--run-dir",
                run_dir,
                "--json",
            )
            out[(bench, model)] = (run_dir, summary)
    return out


def value(row: dict):
    """A cell's headline value: `value` where a benchmark's headline is not accuracy."""
    if "accuracy" not in row or row.get("metric", "accuracy") != "accuracy":
        return row["value"]
    return row["accuracy"]


def test_every_cell_has_one_n_and_one_value_in_every_command(runs):
    compare = invoke("compare", *[d for d, _ in runs.values()], "--json", "--resamples", "20")
    by_compare = {(r["benchmark"], r["model"], r["condition"], r["stratum"], r["level"]): r for r in compare["table"]}
    checked = 0
    for (bench, model), (run_dir, summary) in runs.items():
        benchmark = plugins.get_benchmark(bench)
        audit = invoke("audit", run_dir, "--json", "--resamples", "20")
        marginals = audit["marginals"]
        report = invoke("report", run_dir, "--by", "", "--json")
        assert [r["condition"] for r in report] == list(summary["conditions"])
        for row in report:
            cond = row["condition"]
            cells = [
                summary["conditions"][cond],
                marginals["overall"][cond],
                by_compare[(bench, model, cond, "overall", "")],
            ]
            for other in cells:
                assert other["n"] == row["n"], (bench, model, cond)
                assert value(other) == pytest.approx(value(row), abs=1e-12), (bench, model, cond)
            checked += 1
        for name in benchmark.default_strata:
            rows = invoke("report", run_dir, "--by", name, "--json")
            field = benchmark.stratum_aliases.get(name, name)
            for row in rows:
                cond, level = row["condition"], row[field]
                cells = [by_compare[(bench, model, cond, name, level)], marginals["by"][name][level][cond]]
                for other in cells:
                    assert other["n"] == row["n"], (bench, model, cond, name, level)
                    assert value(other) == pytest.approx(value(row), abs=1e-12), (bench, model, cond, name, level)
                checked += 1
        tables = invoke("report", run_dir, "--table", bench, "--json")
        checked += tables_agree(bench, run_dir, tables)
    assert checked > 250  # every loop above ran


def tables_agree(bench: str, run_dir: Path, tables: dict) -> int:
    """The benchmark's own tables against `report --by` on the same cells; returns cells checked."""
    checked = 0
    plan = {
        "igakuqa": [("by_block", "block"), ("by_year", "year")],
        "yakugakuqa": [("by_block", "block"), ("by_year", "year")],
        "polish_pes": [("configurations", "set")],
        "worldmedqa_v": [("by_country", "country")],
    }.get(bench, [])
    for table, field in plan:
        report = {(r["condition"], r[field]): r for r in invoke("report", run_dir, "--by", field, "--json")}
        for row in tables[table]["rows"]:
            level = {"VQA": "vqa", "QA": "qa"}.get(row[field], row[field])
            want = report[(row["condition"], level)]
            assert (row["n"], row["correct"], row["accuracy"]) == (want["n"], want["correct"], want["accuracy"])
            assert (row.get("ci_low"), row.get("ci_high")) == (want["ci_low"], want["ci_high"])
            checked += 1
    if bench == "mmbu_hard":
        report = {
            (r["condition"], r["task"], r["format"]): r
            for r in invoke("report", run_dir, "--by", "task,format", "--json")
        }
        for row in tables["micro_f1"]["rows"]:
            want = report[(row["condition"], row["task"], row["format"])]
            assert row["n"] == want["n"] and row["micro_f1"] == pytest.approx(want["value"], abs=1e-12)
            checked += 1
    if bench == "igakuqa":  # 2018 has withdrawn items: out of the tables' n, counted aside
        assert sum(r["withdrawn"] for r in tables["by_year"]["rows"]) > 0
        assert sum(r["n"] for r in tables["by_block"]["rows"]) == sum(r["n"] for r in tables["by_year"]["rows"])
    return checked


def test_withdrawn_items_are_out_of_every_denominator_under_mhlw(runs):
    run_dir, summary = runs[("igakuqa", "random")]
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    cq = [r for r in records if r["condition"] == "C+Q"]
    withdrawn = sum(bool(r["withdrawn"]) for r in cq)
    assert withdrawn > 0 and summary["n_items"] == len(cq)
    assert summary["conditions"]["C+Q"]["n"] == len(cq) - withdrawn
    assert summary["conditions"]["C+Q"]["uncounted"] == withdrawn
    blocks = invoke("report", run_dir, "--table", "igakuqa", "--json")["by_block"]["rows"]
    assert sum(r["n"] for r in blocks if r["condition"] == "C+Q") == len(cq) - withdrawn
    assert sum(r["withdrawn"] for r in blocks if r["condition"] == "C+Q") == withdrawn

"""`medvqa compare` across all four benchmarks at once: JMed48k (bundled sample), IgakuQA (the
real 2022 exam), Polish PES (its Polish fixture) and MMBU-hard (the real closed proxy items),
each run by random, constant and a gold replay. One table holds them all, and every cell is
the run's own number: `report`'s accuracy where the headline is accuracy, the benchmark's own
`headline` (micro-F1 for MMBU-hard) otherwise."""

import json

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.metrics import counted
from tests.conftest import REPO, shared_data

pytestmark = pytest.mark.slow  # twelve runs, one of 400 items: tens of seconds

BENCHMARKS = {  # name: (data, select)
    "jmed48k": (None, None),
    "igakuqa": (lambda: shared_data("igakuqa"), {"year": ["2022"]}),
    "polish_pes": (lambda: REPO / "tests" / "adapters" / "polish_pes" / "data", None),
    "mmbu_hard": (lambda: shared_data("mmbu-proxy"), None),
}


def gold_response(bench: str, item) -> str:
    keys = list(item.gold.alternatives[0])
    if bench == "polish_pes":
        return json.dumps({"response": keys[0]})
    return json.dumps({"answer": keys})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cross")
    out = {}
    for bench, (data, select) in BENCHMARKS.items():
        path = data() if data else None
        items = [
            it
            for it in medvqa.load(bench, path, split="sample" if path is None else None, select=select)
            if not it.excluded
        ]
        replay = tmp / f"{bench}-gold.jsonl"
        with replay.open("w", encoding="utf-8") as fh:
            for it in items:
                for cond in ("C", "C+Q", "C+I", "C+Q+I"):
                    fh.write(
                        json.dumps({"item_id": it.id, "condition": cond, "response": gold_response(bench, it)}) + "\n"
                    )
        for name, model in (("random", "random"), ("constant", "constant:A"), ("gold", f"replay:{replay}")):
            run_dir = tmp / f"{bench}-{name}"
            options = {"sample": True} if path is None else {"data": str(path)}
            medvqa.run(
                bench,
                model,
                conditions="C,C+Q,C+I,C+Q+I",
                select=select,
                run_dir=str(run_dir),
                cache=False,
                progress=False,
                **options,
            )
            out[(bench, name)] = run_dir
    return out


def test_one_table_over_four_benchmarks_whose_cells_are_each_runs_own_numbers(runs):
    frame = medvqa.compare(list(runs.values()), resamples=100)
    overall = frame[frame.stratum == "overall"]
    assert set(overall.benchmark) == set(BENCHMARKS)
    for (bench, name), run_dir in runs.items():
        saved = medvqa.read_run(run_dir)
        model = saved.manifest["model"]
        for row in medvqa.report(run_dir, by="").to_dict(orient="records"):
            cell = overall[
                (overall.benchmark == bench) & (overall.model == model) & (overall.condition == row["condition"])
            ]
            assert len(cell) == 1, (bench, name, row["condition"])
            cell = cell.iloc[0]
            assert cell.n == row["n"]
            records = [r for r in saved.records if r["condition"] == row["condition"]]
            own = saved.benchmark.headline(counted(records, saved.benchmark)[0])  # withdrawn items out, as everywhere
            assert cell.metric == own["metric"] == saved.benchmark.headline_metric
            assert cell.value == pytest.approx(own["value"], abs=1e-12)
            if own["metric"] == "accuracy":
                assert cell.value == pytest.approx(row["accuracy"], abs=1e-9)
        if name == "gold":  # a replay of the gold answers scores 100 % on every benchmark and condition
            assert (overall[(overall.benchmark == bench) & (overall.model == model)].value == 1.0).all(), bench
    assert frame[frame.benchmark == "mmbu_hard"].metric.eq("micro_f1").all()


def test_the_command_prints_one_table_and_one_json_document(runs, tmp_path):
    dirs = [str(d) for d in runs.values()]
    text = CliRunner().invoke(cli, ["compare", *dirs, "--resamples", "50"])
    assert text.exit_code == 0, text.output
    header = next(line for line in text.output.splitlines() if line.startswith("| model |"))
    for bench in BENCHMARKS:
        assert f"{bench} C+Q " in header
    doc = CliRunner().invoke(cli, ["compare", *dirs, "--json", "--resamples", "50", "--html", str(tmp_path / "c.html")])
    assert doc.exit_code == 0, doc.output
    parsed = json.loads(doc.stdout)  # the pages written are named on stderr
    assert {r["benchmark"] for r in parsed["table"]} == set(BENCHMARKS)
    # Δimg for every benchmark x model with image items (IgakuQA has none)
    assert {d["benchmark"] for d in parsed["delta_img"]} == {"jmed48k", "polish_pes", "mmbu_hard"}
    assert (tmp_path / "c.html").read_text(encoding="utf-8").count("audit-link") >= len(dirs)

"""`--years` and `--professions` are the adapters' selection keywords (`Benchmark.selection_keywords`),
not core's: every command line selects the items it selected when core named them (the counts
and the recorded selections below were measured on the same data before the keywords moved),
Polish PES's `--professions` selects its `specialty` (it was an error: "items have no field
'profession'"), and a benchmark that declares no keyword says so, naming the keywords it takes."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core import plugins
from medvqa.core.run.store import read_records
from tests.conftest import shared_data

PES = Path(__file__).parents[1] / "adapters" / "polish_pes" / "data"  # no copy of the PES VQA set is public


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def run(tmp_path, benchmark, *args):
    result = invoke(
        "run", benchmark, *args, "--model", "random", "--conditions", "C+Q", "--json", "--run-dir", tmp_path / "run"
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    return json.loads(result.output), manifest, {r["item_id"] for r in read_records(tmp_path / "run")}


# benchmark, data (None: --sample), the command line's selection, the items it means (on the whole
# split), what the manifest records as the selection, and the items asked (records of C+Q)
CASES = [
    (
        "jmed48k",
        None,
        ["--professions", "Nurse", "--years", "2023"],
        lambda m: m["profession"] == "Nurse" and m["year"] == 2023,
        {"year": ["2023"], "profession": ["Nurse"]},
        5,
    ),
    (
        "jmed48k",
        None,
        ["--professions", "医師"],
        lambda m: m["profession"] == "Physician",
        {"profession": ["医師"]},
        12,
    ),
    (
        "jmed48k",
        ("jmed48k-sample",),
        ["--split", "full", "--years", "2026"],
        lambda m: m["year"] == 2026,
        {"year": ["2026"]},
        400,
    ),
    (
        "jmed48k",
        ("jmed48k-sample",),
        ["--years", "2025,2026"],
        lambda m: m["year"] in (2025, 2026),
        {"year": ["2025", "2026"]},
        800,
    ),
    (
        "jmed48k",
        ("jmed48k-sample",),
        ["--select", "section=A", "--years", "2026"],
        lambda m: m["section"] == "A" and m["year"] == 2026,
        {"section": ["A"], "year": ["2026"]},
        75,
    ),
    (
        "igakuqa",
        ("igakuqa",),
        ["--years", "2022", "--professions", "医師"],
        lambda m: m["year"] == 2022 and m["profession"] == "Physician",
        {"year": ["2022"], "profession": ["医師"]},
        400,
    ),
    (
        "igakuqa",
        ("igakuqa",),
        ["--professions", "Physician", "--select", "block=116A"],
        lambda m: m["block"] == "116A",
        {"block": ["116A"], "profession": ["Physician"]},
        75,
    ),
    ("yakugakuqa", ("yakugakuqa",), ["--years", "2022"], lambda m: m["year"] == 2022, {"year": ["2022"]}, 344),
    (
        "polish_pes",
        "pes",
        ["--professions", "Radiologia i diagnostyka obrazowa", "--years", "2026"],
        lambda m: m["specialty"] == "Radiologia i diagnostyka obrazowa" and m["year"] == 2026,
        {"specialty": ["Radiologia i diagnostyka obrazowa"], "year": ["2026"]},
        3,
    ),
]


@pytest.mark.parametrize(
    "benchmark, data, args, means, recorded, n", CASES, ids=[f"{c[0]}{''.join(c[2])}" for c in CASES]
)
def test_each_keyword_option_selects_the_items_its_field_holds(tmp_path, benchmark, data, args, means, recorded, n):
    path = PES if data == "pes" else shared_data(*data) if data else None
    where = ["--data", path] if path else ["--sample"]
    split = "sample" if path is None else "full" if "--split" in args or benchmark != "jmed48k" else None
    whole = medvqa.load(benchmark, path, split)
    meant = [it for it in whole if means(it.meta)]
    summary, manifest, asked = run(tmp_path, benchmark, *where, *args)
    assert asked == {it.id for it in meant if not it.excluded} and len(asked) == n
    assert summary["n_excluded"] == sum(it.excluded for it in meant)
    assert manifest["load"]["select"] == recorded  # what `medvqa report` and `score` load the run with


def test_a_run_recorded_with_the_keywords_themselves_still_loads_its_items(tmp_path, jmed_sample):
    """A manifest written before `--select` existed keeps `load`'s keywords (years, professions):
    the run reloads the same items (a different set would change the data fingerprint)."""
    summary, manifest, asked = run(tmp_path, "jmed48k", "--data", jmed_sample, "--years", "2026")
    manifest["load"] = {
        **{k: v for k, v in manifest["load"].items() if k != "select"},
        "years": [2026],
        "professions": None,
    }
    (tmp_path / "run" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    rescored = invoke("score", tmp_path / "run")  # reloads the items and checks their fingerprint
    assert rescored.exit_code == 0, rescored.output
    assert f"re-scored {len(asked)} records" in rescored.output and len(asked) == 400


@pytest.mark.parametrize("benchmark, data", [("mmbu_hard", "mmbu-proxy"), ("worldmedqa_v", "worldmedqa-v-japan")])
def test_a_benchmark_without_the_keyword_names_those_it_takes(tmp_path, benchmark, data):
    result = invoke(
        "run",
        benchmark,
        "--data",
        shared_data(data),
        "--years",
        "2024",
        "--model",
        "random",
        "--run-dir",
        tmp_path / "run",
    )
    assert result.exit_code == 2, result.output
    assert (
        f"{benchmark} takes no option 'years'; its selection keywords: none; select={{FIELD: [...]}} "
        "(--select FIELD=V1,V2) selects on any field of its items"
    ) in " ".join(result.output.split())
    assert not (tmp_path / "run").exists()
    with pytest.raises(medvqa.UsageError, match=f"{benchmark} takes no option 'professions'"):
        medvqa.load(benchmark, shared_data(data), professions=["Physician"])
    with pytest.raises(
        medvqa.UsageError,
        match=r"polish_pes takes no option 'year'; its selection keywords: years "
        r"\(--years, field year\), professions \(--professions, field specialty\)",
    ):
        medvqa.load("polish_pes", PES, year=[2026])  # a misspelt keyword is not silently dropped


class SubjectExam(medvqa.Benchmark):
    """A benchmark of another plugin, with a keyword no built-in adapter declares."""

    name = "subject_exam"
    strata = ("subject",)
    selection_keywords = {"subjects": "subject", "limit": "subject"}  # `--limit` is medvqa run's own

    def load(self, path=None, split=None, *, select=None, **keywords):
        rows = medvqa.read_jsonl(Path(path) / "items.jsonl")
        return self.select_items(
            [
                medvqa.Item(
                    id=r["id"],
                    benchmark=self.name,
                    question=r["question"],
                    options=tuple(medvqa.Option(key=k, label=k, text=t) for k, t in r["options"].items()),
                    gold=medvqa.Gold.from_json(r["answer"]),
                    meta={"subject": r["subject"]},
                )
                for r in rows
            ],
            self.keyword_selection(select, **keywords),
        )


class SubjectPlugin:
    @medvqa.hookimpl
    def register_benchmarks(self, register):
        register(SubjectExam())


def test_a_plugins_keyword_becomes_an_option_of_run(tmp_path):
    rows = [
        {
            "id": f"s{i}",
            "question": f"Question {i}?",
            "options": {"A": "yes", "B": "no"},
            "answer": "A",
            "subject": subject,
        }
        for i, subject in enumerate(["anatomy", "cardiology", "anatomy"])
    ]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pm = plugins.manager()
    pm.register(SubjectPlugin(), name="subject_plugin")
    try:
        help_text = invoke("run", "--help")
        summary, _, asked = run(tmp_path, "subject_exam", "--data", tmp_path, "--subjects", "anatomy")
        jmed = invoke(
            "run", "jmed48k", "--sample", "--subjects", "anatomy", "--model", "random", "--run-dir", tmp_path / "jmed"
        )
    finally:
        pm.unregister(name="subject_plugin")
    flat = " ".join(help_text.output.split())
    assert (
        "--subjects V1,V2 Comma-separated values" in flat and "--select subject=... [benchmarks: subject_exam]" in flat
    )
    assert "the selection keyword 'limit' has no option: --limit is taken (use --select)" in help_text.stderr
    assert asked == {"s0", "s2"} and summary["n_items"] == 2
    assert (
        jmed.exit_code == 2
        and "jmed48k takes no option 'subjects'; its selection keywords: years (--years, "
        "field year), professions (--professions, field profession)"
        in " ".join(jmed.output.split())
    )
    assert "--subjects" not in invoke("run", "--help").output  # the plugin is gone, and its option with it

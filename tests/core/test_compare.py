"""`medvqa compare` and `medvqa.compare`: one table across models and benchmarks whose numbers are
each run's own report, Δimg as the audit computes it, paired tests on shared items, unpaired
cells marked, runs of different data refused."""

import csv
import io
import json
import math
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core import bootstrap
from medvqa.core.compare import table as compare_table
from medvqa.core.stats import binomial_ci
from tests.conftest import shared_data

CONDITIONS = "C,C+Q,C+I,C+Q+I"


def gold_json(item):
    return json.dumps({"answer": list(item.gold.alternatives[0])})


@pytest.fixture(scope="module")
def sample_items():
    return [it for it in medvqa.load("jmed48k", split="sample") if not it.excluded]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, sample_items):
    """Three models on the bundled sample: random, constant:1, and a replay that gives the gold
    answer everywhere except with the image of the first image item (a wrong answer there)."""
    tmp = tmp_path_factory.mktemp("compare")
    image_items = [it for it in sample_items if it.image_available]
    spoiled = image_items[0]
    wrong = next(k for k in spoiled.keys if (k,) not in spoiled.gold.alternatives)
    replay = tmp / "replay.jsonl"
    with replay.open("w", encoding="utf-8") as fh:
        for it in sample_items:
            conds = ["C", "C+Q"] + (["C+I", "C+Q+I"] if it.image_available else [])
            for c in conds:
                response = json.dumps({"answer": [wrong]}) if (it is spoiled and c == "C+Q+I") else gold_json(it)
                fh.write(json.dumps({"item_id": it.id, "condition": c, "response": response}) + "\n")
    out = {}
    for name, model in (("random", "random"), ("constant", "constant:1"), ("replay", f"replay:{replay}")):
        run_dir = tmp / name
        medvqa.run(
            "jmed48k", model, sample=True, conditions=CONDITIONS, run_dir=str(run_dir), cache=False, progress=False
        )
        out[name] = run_dir
    out["spoiled"] = spoiled.id
    out["n_image"] = len(image_items)
    return out


def invoke(*args):
    result = CliRunner().invoke(cli, ["compare", *map(str, args)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


def test_every_cell_is_the_runs_own_report(runs):
    frame = medvqa.compare([runs["random"], runs["constant"], runs["replay"]], resamples=200)
    for name in ("random", "constant", "replay"):
        model = medvqa.records(runs[name]).attrs["manifest"]["model"]
        for row in medvqa.report(runs[name], by="").to_dict(orient="records"):  # by condition
            cell = frame[(frame.model == model) & (frame.condition == row["condition"]) & (frame.stratum == "overall")]
            assert len(cell) == 1
            cell = cell.iloc[0]
            assert cell.n == row["n"] and (cell.value, cell.ci_low, cell.ci_high) == pytest.approx(
                (row["accuracy"], row["ci_low"], row["ci_high"]), abs=1e-9
            )
            # the sample's one excluded item (Physician_2024_A_Q7, no answer) has no image: no C+I or C+Q+I row's
            assert cell.n_excluded == row["n_excluded"] == (0 if "I" in row["condition"] else 1)
            assert cell.non_answer_rate == (row["n"] - row["answered"]) / row["n"]
        for row in medvqa.report(runs[name], by="profession").to_dict(orient="records"):  # as report --by gives them
            cell = frame[
                (frame.model == model)
                & (frame.condition == row["condition"])
                & (frame.stratum == "profession")
                & (frame.level == row["profession"])
            ].iloc[0]
            assert (cell.n, cell.value) == (row["n"], pytest.approx(row["accuracy"], abs=1e-9))
    assert set(frame.stratum) == {"overall", "profession", "dominant_type"}  # JMed48k's default strata
    assert frame.attrs["by"] == {"jmed48k": ["profession", "dominant_type"]}


def test_the_gold_replay_by_hand(runs, sample_items):
    frame = medvqa.compare([runs["replay"], runs["constant"]], resamples=200)
    overall = frame[(frame.stratum == "overall")].set_index(["model", "condition"])
    replay = medvqa.records(runs["replay"]).attrs["manifest"]["model"]
    n_items, n_image = len(sample_items), runs["n_image"]
    assert overall.loc[(replay, "C+Q"), "value"] == 1.0 and overall.loc[(replay, "C+Q"), "n"] == n_items == 17
    assert overall.loc[(replay, "C+Q+I"), "value"] == (n_image - 1) / n_image == 4 / 5
    low, high = binomial_ci(4, 5)
    assert (overall.loc[(replay, "C+Q+I"), "ci_low"], overall.loc[(replay, "C+Q+I"), "ci_high"]) == (low, high)
    delta = {d["model"]: d for d in frame.attrs["delta_img"]}[replay]
    # one item lost its credit with the image, none gained: p10 = 0, p01 = 1/5
    assert (delta["n"], delta["a_with"], delta["a_removed"]) == (5, 0.8, 1.0)
    # one discordant pair: mid-p 2·½ − ½ = 0.5, the exact conditional p 1 beside it
    assert delta["delta_img"] == pytest.approx(-0.2) and (delta["mcnemar_p"], delta["mcnemar_exact_p"]) == (0.5, 1.0)
    audit = medvqa.audit(runs["replay"], resamples=200)["paired"]["overall"]
    assert (audit["delta_img"], audit["ci"]) == (delta["delta_img"], [delta["ci_low"], delta["ci_high"]])

    constant = medvqa.records(runs["constant"])
    cq = constant[constant.condition == "C+Q"]
    wrong = int((~cq.correct.astype(bool)).sum())  # the replay is right on every C+Q item
    test = next(t for t in frame.attrs["tests"] if t["condition"] == "C+Q")
    assert (test["a"], test["b"], test["status"], test["n"]) == (replay, "constant:1", "paired", 17)
    assert test["test"] == "mcnemar-mid-p" and test["difference"] == wrong / 17
    # McNemar with n01 = 0: exact conditional 2·½^wrong, mid-p half of it (Fagerland et al. 2013)
    assert test["exact_p"] == pytest.approx(min(1.0, 2 * 0.5**wrong))
    assert test["p"] == pytest.approx(0.5**wrong)


def test_runs_of_different_data_are_refused_naming_both_fingerprints(runs, tmp_path):
    other = tmp_path / "other"
    medvqa.run(
        "jmed48k",
        "random",
        data=str(shared_data("jmed48k-sample")),
        conditions="C+Q",
        limit=30,
        run_dir=str(other),
        cache=False,
        progress=False,
    )
    fps = [json.loads((d / "manifest.json").read_text())["data_fingerprint"] for d in (runs["random"], other)]
    with pytest.raises(medvqa.DataError, match=rf"{fps[0]}.*{fps[1]}"):
        medvqa.compare([runs["random"], other])
    result = CliRunner().invoke(cli, ["compare", str(runs["random"]), str(other)])
    assert result.exit_code == 1 and "runs of jmed48k on different data cannot be compared" in result.output
    assert fps[0] in result.output and fps[1] in result.output and "Traceback" not in result.output


def test_a_run_on_part_of_the_items_is_marked_partly_paired(runs, tmp_path):
    part = tmp_path / "part"
    # --limit changes the data fingerprint, so the same items are replayed into a filtered copy
    medvqa.run("jmed48k", "random", sample=True, conditions=CONDITIONS, run_dir=str(part), cache=False, progress=False)
    path = part / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [
        line
        for line in lines
        if json.loads(line)["condition"] != "C+Q" or not json.loads(line)["item_id"].startswith("Nurse")
    ]
    path.write_text("".join(kept), encoding="utf-8")
    dropped = len(lines) - len(kept)
    assert dropped > 0
    frame = medvqa.compare([runs["constant"], part], resamples=100)
    test = next(t for t in frame.attrs["tests"] if t["condition"] == "C+Q")
    assert (test["status"], test["n"], test["only_a"], test["only_b"]) == ("partly paired", 17 - dropped, dropped, 0)
    assert next(t for t in frame.attrs["tests"] if t["condition"] == "C")["status"] == "paired"
    md = invoke(runs["constant"], part, "--resamples", 100).output
    assert f"partly paired (only a {dropped}, only b 0)" in md


def test_formats_by_and_errors(runs, tmp_path, monkeypatch):
    doc = json.loads(invoke(runs["random"], runs["replay"], "--json", "--resamples", 100, "--by", "year").output)
    frame = medvqa.compare([runs["random"], runs["replay"]], by="year", resamples=100)
    assert len(doc["table"]) == len(frame) and doc["tests"] == frame.attrs["tests"]
    for printed, row in zip(doc["table"], frame.to_dict(orient="records")):
        assert printed == {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
    assert {r["stratum"] for r in doc["table"]} == {"overall", "year"} and doc["by"] == {"jmed48k": ["year"]}
    rows = list(csv.DictReader(io.StringIO(invoke(runs["random"], "--format", "csv", "--by", "year").output)))
    years = {r["level"]: int(r["n"]) for r in rows if r["stratum"] == "year" and r["condition"] == "C+Q"}
    live = [it for it in medvqa.load("jmed48k", split="sample") if not it.excluded]
    assert years == {str(y): sum(it.meta["year"] == y for it in live) for y in {it.meta["year"] for it in live}}
    latex = invoke(runs["random"], runs["replay"], "--format", "latex", "--resamples", 100).output
    assert latex.count(r"\begin{tabular}") == 3 and "jmed48k C+Q+I" in latex  # headline, Δimg, pass lines
    assert r"random & jmed48k & Physician 2024 & overall & not evaluable" in latex
    md = invoke(runs["random"], runs["replay"], "--resamples", 100).output
    assert "| model | jmed48k C (accuracy) | jmed48k C+Q (accuracy) |" in md and "## By profession" in md
    # JMed48k has pass lines: one row per model × exam × criterion (a few items, not whole exams)
    assert "| random | jmed48k | Physician 2024 | overall | not evaluable |" in md
    assert "| random | jmed48k | Physician 2024 | hisshu | not evaluable |" in md

    bad = CliRunner().invoke(cli, ["compare", str(runs["random"]), "--by", "nosuchfield"])
    assert bad.exit_code == 1 and "no run's records have the field 'nosuchfield'; available:" in bad.output
    parquet = CliRunner().invoke(cli, ["compare", str(runs["random"]), "--format", "parquet"])
    assert parquet.exit_code == 1 and "--format parquet writes a file: give --out" in parquet.output
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    absent = CliRunner().invoke(
        cli, ["compare", str(runs["random"]), "--format", "parquet", "--out", str(tmp_path / "t.parquet")]
    )
    assert absent.exit_code == 1 and "pip install 'medvqa[parquet]'" in absent.output
    assert not (tmp_path / "t.parquet").exists()


def test_audit_without_by_shows_the_default_strata(runs):
    doc = json.loads(CliRunner().invoke(cli, ["audit", str(runs["replay"]), "--json", "--resamples", "50"]).output)
    assert set(doc["paired"]["by"]) == {"profession", "dominant_type"}
    # the five image items are one Nurse and four Physician items
    by_prof = {k: v["n"] for k, v in doc["paired"]["by"]["profession"].items()}
    image_items = [it for it in medvqa.load("jmed48k", split="sample") if not it.excluded and it.image_available]
    assert by_prof == {
        p: sum(it.meta["profession"] == p for it in image_items) for p in {it.meta["profession"] for it in image_items}
    }
    text = CliRunner().invoke(cli, ["audit", str(runs["replay"]), "--resamples", "50"]).output
    assert "| profession = Physician |" in text and "| dominant_type = " in text


def test_python_and_command_agree_on_nan_free_json(runs):
    frame = medvqa.compare(runs["constant"], resamples=50)
    assert not any(isinstance(v, float) and math.isnan(v) for v in frame.attrs["delta_img"][0].values())
    assert frame.attrs["tests"] == [] and frame.attrs["runs"][0]["runs"] == [str(runs["constant"])]


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _Numbers(HTMLParser):
    """Every number cell (`data-path`, `data-format`, text), the rows' model and visibility,
    the forest plot's points and the audit links."""

    def __init__(self):
        super().__init__()
        self.cells, self.rows, self.points, self.links = [], [], 0, []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "data-path" in attrs:
            self._cell = {"path": json.loads(attrs["data-path"]), "format": attrs["data-format"], "text": ""}
        if tag == "tr" and "data-model" in attrs:
            self.rows.append({"model": attrs["data-model"], "hidden": "hidden" in (attrs.get("class") or "")})
        if tag == "circle" and "forest-point" in (attrs.get("class") or ""):
            self.points += 1
        if tag == "a" and "audit-link" in (attrs.get("class") or ""):
            self.links.append(attrs["href"])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag):
        if tag == "span" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None


def shown(value, kind):
    if value is None:
        return "–"
    return {"pct": f"{100 * value:.1f}", "pp": f"{100 * value:+.1f}", "p": f"{value:.3g}", "int": str(value)}[kind]


@pytest.mark.slow  # a real server or whole-data runs: seconds
def test_html_page_in_chromium_shows_the_json_numbers(runs, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip(
            "headless Chromium is not installed (apt-get install -y chromium); CI installs it and runs this check"
        )
    page = tmp_path / "cmp.html"
    result = invoke(runs["random"], runs["constant"], runs["replay"], "--json", "--html", page, "--resamples", 100)
    doc = json.loads(result.stdout)
    text = page.read_text(encoding="utf-8")
    assert 'src="http' not in text and 'href="http' not in text and "<link" not in text
    out = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            f"{page.as_uri()}#model=random",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert '<span dir="auto" id="filter-state">random</span>' in out.stdout  # the page's script ran
    parser = _Numbers()
    parser.feed(out.stdout)
    assert len(parser.cells) > 100
    for cell in parser.cells:
        value = doc
        for key in cell["path"]:
            value = value[key]
        assert cell["text"] == shown(value, cell["format"]), cell["path"]
    paths = {tuple(c["path"][:2]) for c in parser.cells}
    overall = [i for i, r in enumerate(doc["table"]) if r["stratum"] == "overall"]
    assert {("table", i) for i in overall} <= paths and len(overall) == 3 * 4
    assert {("delta_img", i) for i in range(3)} <= paths and {("tests", i) for i in range(12)} <= paths
    assert parser.points == len(doc["delta_img"]) == 3  # one point per benchmark x model in the forest plot
    assert all(r["hidden"] == (r["model"] != "random") for r in parser.rows)
    assert len(parser.links) == 3
    for link in parser.links:
        audit_page = (page.parent / link).read_text(encoding="utf-8")
        assert "data-path" in audit_page and "<link" not in audit_page


def test_report_without_by_adds_the_default_strata(runs, sample_items):
    rows = medvqa.report(runs["replay"])
    overall = rows[rows.profession.isna() & rows.dominant_type.isna()]
    assert list(zip(overall.condition, overall.n)) == [("C", 17), ("C+Q", 17), ("C+I", 5), ("C+Q+I", 5)]
    professions = rows.dropna(subset=["profession"]).set_index(["condition", "profession"])["n"]
    for prof in ("Nurse", "Physician"):
        assert professions[("C+Q", prof)] == sum(it.meta["profession"] == prof for it in sample_items)
    # text items have no image type: their records read "unknown"
    types = rows[rows.condition == "C+Q"].dropna(subset=["dominant_type"]).set_index("dominant_type")["n"]
    assert types["unknown"] == sum(not it.meta.get("dominant_type") for it in sample_items)
    assert types.sum() == 17
    only = medvqa.report(runs["replay"], by="")  # by condition only
    assert list(only.columns) == [c for c in rows.columns if c not in ("profession", "dominant_type")]
    assert only.equals(overall[only.columns].reset_index(drop=True))
    md = medvqa.report(runs["replay"], fmt="md")
    assert (
        md.count("| condition |") == 3 and "| condition | profession |" in md and "| condition | dominant_type |" in md
    )


class PointsExam(medvqa.Benchmark):
    """A second benchmark whose headline is the share of points won (items weigh 1 or 3)."""

    name = "points_exam"
    strata = ("points",)
    headline_metric = "points"

    def load(self, path=None, split=None, **options):
        return [
            medvqa.Item(
                id=f"p{i}",
                benchmark=self.name,
                question=f"Question number {i}?",
                options=(medvqa.Option(key="A", label="A", text="yes"), medvqa.Option(key="B", label="B", text="no")),
                gold=medvqa.Gold.from_json("A" if i % 2 else "B"),
                meta={"points": 3 if i < 2 else 1},
            )
            for i in range(6)
        ]

    def headline(self, records):
        won = sum(r["points"] for r in records if r["correct"])
        total = sum(r["points"] for r in records)
        return {"metric": "points", "value": won / total if total else None, "n": len(records), "ci": None}


class _Plugin:
    @medvqa.hookimpl
    def register_benchmarks(self, register):
        register(PointsExam())


@pytest.fixture
def points_exam():
    from medvqa.core import plugins

    plugin = _Plugin()
    plugins.manager().register(plugin, name="test-points-exam")
    yield
    plugins.manager().unregister(plugin)


def test_two_benchmarks_side_by_side_each_with_its_own_headline(runs, tmp_path, points_exam):
    a = medvqa.run(
        "points_exam", "constant:A", conditions="C+Q", run_dir=str(tmp_path / "a"), cache=False, progress=False
    )
    b = medvqa.run(
        "points_exam", "constant:B", conditions="C+Q", run_dir=str(tmp_path / "b"), cache=False, progress=False
    )
    frame = medvqa.compare([runs["constant"], a.run_dir, b.run_dir], resamples=300)
    overall = frame[frame.stratum == "overall"].set_index(["model", "benchmark", "condition"])
    # A is right on p1, p3, p5 (3 + 1 + 1 = 5 of 10 points); B on p0, p2, p4 (3 + 1 + 1 = 5)
    assert overall.loc[("constant:A", "points_exam", "C+Q"), "value"] == 0.5
    assert overall.loc[("constant:A", "points_exam", "C+Q"), "metric"] == "points"
    assert overall.loc[("constant:B", "points_exam", "C+Q"), "value"] == 0.5
    assert overall.loc[("constant:1", "jmed48k", "C+Q"), "metric"] == "accuracy"
    assert frame.attrs["by"] == {"jmed48k": ["profession", "dominant_type"], "points_exam": []}
    test = next(t for t in frame.attrs["tests"] if t["benchmark"] == "points_exam")
    assert (test["test"], test["status"], test["n"], test["difference"]) == ("paired-bootstrap", "paired", 6, 0.0)
    # 6 shared items: below 50 this bootstrap has no nominal coverage (bench/coverage.py), so no
    # interval and no test
    assert test["ci_low"] is None and test["p"] is None and "below 50" in test["note"]
    assert not any({t["a"], t["b"]} == {"constant:1", "constant:A"} for t in frame.attrs["tests"])  # never across
    # benchmarks
    md = invoke(runs["constant"], a.run_dir, "--resamples", 50).output
    assert "points_exam C+Q (points)" in md and "jmed48k C+Q (accuracy)" in md
    row = next(line for line in md.splitlines() if line.startswith("| constant:A |"))
    assert row == "| constant:A | no run | no run | no run | no run | 50.0 – n=6 na=0.0% |"


def test_the_paired_bootstrap_asks_for_the_value_only_once_per_resample(tmp_path, points_exam, monkeypatch):
    """A benchmark whose headline computes its own interval (MMBU-hard's micro-F1) is not asked
    for that interval on every resample: the bootstrap calls `headline_value`."""
    calls = {"headline": 0, "headline_value": 0}
    original = PointsExam.headline

    def counted_headline(self, records):
        calls["headline"] += 1
        return original(self, records)

    def counted_value(self, records):
        calls["headline_value"] += 1
        return original(self, records)["value"]

    monkeypatch.setattr(PointsExam, "headline", counted_headline)
    monkeypatch.setattr(PointsExam, "headline_value", counted_value)
    monkeypatch.setattr(bootstrap, "MIN_HEADLINE_BOOTSTRAP_N", 1)  # bootstrap the six items (the output needs 50)
    a = medvqa.run(
        "points_exam", "constant:A", conditions="C+Q", run_dir=str(tmp_path / "a"), cache=False, progress=False
    )
    b = medvqa.run(
        "points_exam", "constant:B", conditions="C+Q", run_dir=str(tmp_path / "b"), cache=False, progress=False
    )
    medvqa.compare([a.run_dir, b.run_dir], resamples=40)
    # two values per resample and four more for the observed difference and the two cells' values
    assert calls["headline_value"] == 2 * 40 + 4
    assert calls["headline"] < 10  # the table's cells only, never per resample


def test_models_of_the_same_data_share_one_cluster_map(tmp_path, monkeypatch):
    """Two models of one data folder: the linked question sets of its items are read once, and
    each model's table row counts the same clusters: 800 items, five linked pairs (the 119th
    exam's B41–42, 43–44, 45–46, 47–48, 49–50), so 795 cases."""
    from medvqa.adapters.jmed48k.benchmark import JMed48k

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    run_dirs = []
    for model in ("random", "constant:A"):
        run_dirs.append(tmp_path / model.replace(":", "-"))
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "jmed48k",
                "--data",
                str(shared_data("jmed48k-sample")),
                "--split",
                "full",
                "--model",
                model,
                "--conditions",
                "C+Q",
                "--no-cache",
                "--run-dir",
                str(run_dirs[-1]),
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
    read, resampled = [], []
    real, columns = JMed48k.clusters, compare_table.cluster_interval_columns
    monkeypatch.setattr(JMed48k, "clusters", lambda self, items: read.append(1) or real(self, items))
    monkeypatch.setattr(
        compare_table, "cluster_interval_columns", lambda *a: resampled.append(len(a[1])) or columns(*a)
    )
    result = CliRunner().invoke(cli, ["compare", *map(str, run_dirs), "--json", "--resamples", "200"])
    assert result.exit_code == 0, result.output
    table = json.loads(result.output)["table"]
    rows = [r for r in table if r["stratum"] == "overall"]
    assert [(r["model"], r["n"], r["n_clusters"], r["cluster_level"]) for r in rows] == [
        ("random", 800, 795, "case"),
        ("constant:A", 800, 795, "case"),
    ]
    assert len(read) == 1
    # every model's profession is one level (Physician): the same 800 records as its overall row,
    # resampled once for both rows, which show the same interval
    [(low, high)] = {
        (r["cluster_ci_low"], r["cluster_ci_high"])
        for r in table
        if r["model"] == "random" and r["stratum"] in ("overall", "profession")
    }
    assert low < high
    assert len(resampled) == len(table) - 2 and resampled.count(800) == 2

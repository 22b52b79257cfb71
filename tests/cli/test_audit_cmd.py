import json
import math
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from medvqa.cli.audit_cmd import command
from medvqa.core import plugins
from medvqa.core.run.options import RunOptions, run
from tests.conftest import shared_data

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


@pytest.fixture(scope="module")
def sample_items():
    return plugins.get_benchmark("jmed48k").load(shared_data("jmed48k-sample"), "full")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Saved runs of the two baselines on the real sample, all four conditions."""
    tmp = tmp_path_factory.mktemp("baselines")
    out = {}
    for model in ("random", "constant:A"):
        run_dir = tmp / model.replace(":", "_")
        run(
            RunOptions(
                benchmark="jmed48k",
                model=model,
                data=str(shared_data("jmed48k-sample")),
                conditions="C,C+Q,C+I,C+Q+I",
                run_dir=str(run_dir),
                cache=False,
            ),
            progress=False,
        )
        out[model] = run_dir
    return out


@pytest.fixture
def no_backend(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the audit must not build a model backend")

    monkeypatch.setattr(plugins, "get_backend", refuse)
    monkeypatch.setattr(plugins, "backends", refuse)


def invoke(*args: str) -> dict:
    result = CliRunner().invoke(command, [str(a) for a in args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return json.loads(result.stdout)


def score_two_sided(k: int, n: int, p: float) -> float:
    """The score test against p that Wilson's interval inverts: 2·Φ(−|k − np| / √(np(1 − p)))."""
    return math.erfc(abs(k - n * p) / math.sqrt(n * p * (1 - p)) / math.sqrt(2))


def test_io_control_and_selection_bias_from_saved_runs(runs, sample_items, tmp_path, no_backend):
    before = {m: (d / "records.jsonl").read_bytes() for m, d in runs.items()}
    cohort = tmp_path / "cohorts.yaml"
    cohort.write_text("baselines:\n  - random\n  - constant:A\n", encoding="utf-8")
    doc = invoke(runs["random"], runs["constant:A"], "--json", "--cohort", cohort, "--resamples", 400)
    assert {m: (d / "records.jsonl").read_bytes() for m, d in runs.items()} == before

    io_items = [it for it in sample_items if it.image_as_options and it.image_available]
    baseline = sum(1 / len(it.options) for it in io_items) / len(io_items)
    for model in ("random", "constant:A"):
        io = doc["models"][model]["io_control"]
        assert io["n"] == len(io_items) == 5
        assert io["baseline"] == pytest.approx(baseline)
        k = round(io["a_removed"] * io["n"])
        assert io["test"] == "binomial-score"
        assert io["binomial_p"] == pytest.approx(score_two_sided(k, io["n"], baseline), rel=1e-9)
        # stems that describe options one by one ("①腹部膨隆を認める。②…") are flagged
        assert {"Physician_2026_D_Q28", "Physician_2026_D_Q67"} <= set(io["leakage_items"])
        assert "Physician_2026_B_Q18" not in io["leakage_items"]
        assert io["leakage_hits"] == len(io["leakage_items"])
    random_io = doc["models"]["random"]["io_control"]
    for acc, ci in (("a_with", "ci_a_with"), ("a_removed", "ci_a_removed")):
        lo, hi = random_io[ci]
        assert lo <= random_io[acc] <= hi
        assert lo <= baseline <= hi, f"random guessing left the CI around the baseline ({acc})"
    gold_a = sum(it.gold.alternatives == (("A",),) for it in io_items) / len(io_items)
    assert doc["models"]["constant:A"]["io_control"]["a_with"] == pytest.approx(gold_a)

    single = [it for it in sample_items if it.options and it.gold.format == "single"]
    share_a = sum(it.gold.alternatives[0][0] == "A" for it in single) / len(single)
    bias = doc["models"]["constant:A"]["selection_bias"]["C+Q"]
    assert bias["n"] == len(single)
    assert bias["over_selected"] == [{"label": "A", "difference": pytest.approx(1 - share_a)}]
    assert bias["outside_share"] == 0.0

    deltas = {m: doc["models"][m]["paired"]["overall"]["delta_img"] for m in runs}
    cohort_row = doc["cohorts"]["baselines"]["paired"]["overall"]
    assert cohort_row["n_models"] == 2
    assert cohort_row["delta_img"] == pytest.approx((deltas["random"] + deltas["constant:A"]) / 2)
    diff = next(c for c in doc["comparisons"] if c["measure"] == "delta_img")
    assert (diff["a"], diff["b"], diff["n"]) == ("random", "constant:A", 17)
    assert diff["difference"] == pytest.approx(deltas["random"] - deltas["constant:A"])


def test_text_output_and_clear_errors(runs, tmp_path, no_backend):
    result = CliRunner().invoke(command, [str(runs["random"]), "--by", "image_type", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    assert "image_type = Radiology" in result.stdout and "| overall | 17 |" in result.stdout
    result = CliRunner().invoke(command, [str(runs["random"]), "--by", "organ"])
    assert result.exit_code != 0 and "no field 'organ'" in result.output
    bad = tmp_path / "cohorts.yaml"
    bad.write_text("- random\n", encoding="utf-8")
    result = CliRunner().invoke(command, [str(runs["random"]), "--cohort", str(bad)])
    assert result.exit_code != 0 and f"{bad}: expected a mapping" in result.output
    result = CliRunner().invoke(command, [str(runs["random"]), "--refusals", "imputed", "--json"])
    assert result.exit_code == 0  # no refusals: nothing to impute


class _Cells(HTMLParser):
    """Elements carrying data-path (with their text) and filterable rows (with hidden)."""

    def __init__(self):
        super().__init__()
        self.cells, self.rows, self._open, self.images = [], [], None, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-path" in a:
            self._open = {"path": json.loads(a["data-path"]), "format": a["data-format"], "text": ""}
        if "data-fields" in a:
            self.rows.append({"strata": json.loads(a["data-strata"]), "hidden": "hidden" in a})
        if tag == "img" and a.get("src", "").startswith("data:image/png;base64,"):
            self.images += 1

    def handle_data(self, data):
        if self._open is not None:
            self._open["text"] += data

    def handle_endtag(self, tag):
        if self._open is not None:
            self.cells.append(self._open)
            self._open = None


def shown(value, kind: str) -> str:
    """How the report is meant to print a number."""
    if value is None:
        return "–"
    return {
        "pct": lambda v: f"{100 * v:.1f}",
        "pp": lambda v: f"{100 * v:+.1f}",
        "p": lambda v: f"{v:.3g}",
        "int": lambda v: str(v),
        "ci": lambda v: f"[{100 * v[0]:.1f}, {100 * v[1]:.1f}]",
        "ci_pp": lambda v: f"[{100 * v[0]:+.1f}, {100 * v[1]:+.1f}]",
        "text": str,
    }[kind](value)


def lookup(doc, path):
    for key in path:
        doc = doc[key]
    return doc


@pytest.mark.slow  # real processes or servers: seconds each
def test_figures_and_html_in_chromium_match_the_json(runs, tmp_path, no_backend):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip(
            "headless Chromium is not installed (apt-get install -y chromium); CI installs it and runs this check"
        )
    cohort = tmp_path / "cohorts.json"
    cohort.write_text(json.dumps({"random": "baseline", "constant:A": "baseline"}), encoding="utf-8")
    html_path, fig_dir = tmp_path / "audit.html", tmp_path / "figures"
    doc = invoke(
        runs["random"],
        runs["constant:A"],
        "--json",
        "--by",
        "image_type",
        "--cohort",
        cohort,
        "--html",
        html_path,
        "--figures",
        fig_dir,
        "--resamples",
        200,
        "--examples",
        1,
    )

    for stem in (
        "states_overall",
        "delta_overall",
        "states_by_image_type",
        "delta_by_image_type",
        "heatmap_image_type",
    ):
        assert (fig_dir / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert ET.parse(fig_dir / f"{stem}.svg").getroot().tag.endswith("svg")

    page = html_path.read_text(encoding="utf-8")
    assert 'src="http' not in page and 'href="http' not in page and "<link" not in page

    profile = tmp_path / "chromium-profile"
    out = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--dump-dom",
            f"{html_path.as_uri()}#filter=image_type=Radiology",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    parser = _Cells()
    parser.feed(out.stdout)
    assert 'id="filter-state">image_type=Radiology<' in out.stdout  # the page's script ran

    assert len(parser.cells) > 150
    for cell in parser.cells:
        assert cell["text"] == shown(lookup(doc, cell["path"]), cell["format"]), cell["path"]
    shown_paths = {tuple(c["path"]) for c in parser.cells}
    for model in runs:
        for key in ("p11", "p10", "p01", "p00", "delta_img", "ci", "mcnemar_p"):
            assert ("models", model, "paired", "overall", key) in shown_paths
        assert ("models", model, "io_control", "baseline") in shown_paths
    assert ("cohorts", "baseline", "paired", "overall", "delta_img") in shown_paths

    radiology = [r for r in parser.rows if "image_type=Radiology" in r["strata"]]
    others = [r for r in parser.rows if not any(s.startswith("image_type=Radiology") for s in r["strata"])]
    assert radiology and not any(r["hidden"] for r in radiology)
    assert others and all(r["hidden"] for r in others)
    assert parser.images >= 1  # example thumbnails inline

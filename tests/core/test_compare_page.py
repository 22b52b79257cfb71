"""The compare page and the labels of one model's experiments, on GPT-4o's published
WorldMedQA-V tables of Brazil and Japan (local language and English, with and without the image):
one model is `GPT4o [brazil, pt]`, `GPT4o [brazil, en]`, ... in every output (it was
`GPT4o@brazil_english_image` beside `GPT4o [pt]`), the audit page counts one model in several
experiments, and the Δimg forest plot holds its labels whole on round ticks."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.audit.svg import text_width
from tests.conftest import shared_data

EXPERIMENTS = {"GPT4o [brazil, pt]", "GPT4o [brazil, en]", "GPT4o [japan, ja]", "GPT4o [japan, en]"}


def invoke(*args) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Eight published tables, one run each (a country's two conditions join into one experiment)."""
    out = tmp_path_factory.mktemp("gpt4o")
    visuals = shared_data("worldmedqa-v-outputs", "visuals")
    dirs = []
    for country in ("brazil", "japan"):
        for version in ("local", "english"):
            for folder, part in (("outputs_w_images", "image"), ("outputs_blind", "blind")):
                [table] = (visuals / folder / "GPT4o").glob(f"GPT4o_{country}_{version}_*_result.xlsx")
                run_dir = out / f"{country}_{version}_{part}"
                invoke("import", "worldmedqa_v", table, "--run-dir", run_dir)
                dirs.append(run_dir)
    return dirs


def test_one_model_is_labelled_by_its_part_and_language_in_every_output(runs, tmp_path):
    compare = json.loads(invoke("compare", *runs, "--json", "--resamples", "20"))
    assert {r["model"] for r in compare["table"]} == EXPERIMENTS
    assert {r["model"] for r in compare["delta_img"]} == EXPERIMENTS
    assert {(r["a"], r["b"]) for r in compare["tests"]} == {
        ("GPT4o [brazil, pt]", "GPT4o [brazil, en]"),
        ("GPT4o [japan, ja]", "GPT4o [japan, en]"),
    }
    assert {r["model"] for r in compare["delta_lang"]} == {"GPT4o"}  # the pair is the model's, its languages beside
    audit = medvqa.audit(*runs, resamples=20)
    assert set(audit["models"]) == EXPERIMENTS
    page = medvqa.view(*runs, html=tmp_path / "view.html")
    doc = json.loads(
        re.search(
            r'<script type="application/json" id="view-data">(.*?)</script>', page.read_text(encoding="utf-8"), re.S
        ).group(1)
    )
    assert {r["label"] for r in doc["runs"]} == EXPERIMENTS


def test_the_audit_page_counts_one_model_in_two_languages_as_one(runs, tmp_path):
    japan = [d for d in runs if d.name.startswith("japan_") and d.name.endswith("_image")]
    invoke("audit", *japan, "--resamples", "20", "--html", tmp_path / "audit.html")
    page = (tmp_path / "audit.html").read_text(encoding="utf-8")
    assert ">1 model in 2 experiments; refusals strict;" in page and "model(s)" not in page
    invoke("audit", japan[0], "--resamples", "20", "--html", tmp_path / "one.html")
    assert ">1 model; refusals strict;" in (tmp_path / "one.html").read_text(encoding="utf-8")


class _Forest(HTMLParser):
    """The forest plot's labels (x of their right end, text), its tick labels, and the page's style."""

    def __init__(self):
        super().__init__()
        self.inside, self.labels, self.ticks, self.style, self.svg = False, [], [], "", {}
        self._text = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "svg" and attrs.get("class") == "forest":
            self.inside, self.svg = True, attrs
        elif self.inside and tag == "text":
            self._text = [attrs, ""]
        elif tag == "style":
            self._text = ["style", ""]

    def handle_data(self, data):
        if self._text is not None:
            self._text[1] += data

    def handle_endtag(self, tag):
        if tag == "svg":
            self.inside = False
        if self._text is None or tag not in ("text", "style"):
            return
        attrs, text = self._text
        self._text = None
        if attrs == "style":
            self.style += text
        elif attrs.get("text-anchor") == "end":
            self.labels.append((float(attrs["x"]), text))
        elif attrs.get("font-size") == "11":
            self.ticks.append(text)


def test_the_forest_plot_holds_its_labels_whole_on_round_ticks_within_the_page(runs, tmp_path):
    invoke("compare", *runs, "--resamples", "20", "--html", tmp_path / "compare.html")
    forest = _Forest()
    forest.feed((tmp_path / "compare.html").read_text(encoding="utf-8"))
    assert len(forest.labels) == 4
    # each label ends where the plot begins and starts inside the picture (x of its left end >= 0)
    assert all(x - text_width(text, 12) >= 0 for x, text in forest.labels), forest.labels
    assert {text.split(" · ")[1].rsplit(" (n=", 1)[0] for _, text in forest.labels} == EXPERIMENTS
    values = [0.0 if t == "0" else float(t) for t in forest.ticks]
    assert "0" in forest.ticks and "-0" not in forest.ticks and "+0" not in forest.ticks
    steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
    assert len(steps) == 1 and steps.pop() in (1, 2, 2.5, 5, 10, 20, 25, 50), forest.ticks
    # the picture scales to the page's width, and a wide table scrolls in its own box, not the page
    assert forest.svg["viewbox"].startswith("0 0 ") and "svg.forest{max-width:100%;height:auto}" in forest.style
    assert "table{display:block;max-width:100%;overflow-x:auto}" in forest.style


def test_round_ticks_never_write_minus_zero():
    from medvqa.core.audit.svg import round_ticks

    ticks = round_ticks(-0.3, 10.0)  # the first step, ceil(-0.12) * 2.5, is -0.0
    assert ticks == [0.0, 2.5, 5.0, 7.5, 10.0] and all(f"{t:g}" != "-0" for t in ticks)
    assert round_ticks(-12.0, 31.0) == [-10.0, 0.0, 10.0, 20.0, 30.0]

"""`medvqa compare` over WorldMedQA-V runs of several countries and both languages: the table
by country and language with each country's passing threshold (the paper's Figure 2: Japan 0.70,
Spain 0.66, Israel 0.60, Brazil 0.65, drawn by the authors' visuals/data_visualization.ipynb,
`passing_threshold`), the figure in that layout (a panel per country, local vs English bars per
model, the threshold line) in the page and as PNG/SVG, Δlang per model and country with its
paired test, and Δimg per model, country and language with the blind runs.

The runs are small ones written here (`synthetic.py`: Israel in Hebrew, Brazil in Portuguese,
two models), whose accuracies are known exactly."""

from __future__ import annotations

import html as html_lib
import json
import re

import pytest
from click.testing import CliRunner

from medvqa.adapters.worldmedqa_v.passing import PASS_LINES
from medvqa.cli.main import cli

from .synthetic import RIGHT, N, accuracy, build

FIGURE2_LINES = {"japan": 0.70, "spain": 0.66, "israel": 0.60, "brazil": 0.65}  # the paper's Figure 2
LANG = {"local": "local", "english": "en"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return build(tmp_path_factory.mktemp("figure2"))


@pytest.fixture(scope="module")
def doc(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("figure2-out")
    result = CliRunner().invoke(
        cli,
        [
            "compare",
            *map(str, runs.values()),
            "--json",
            "--resamples",
            "20",
            "--html",
            str(out / "cmp.html"),
            "--figure",
            str(out / "fig2.png"),
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), out


def test_the_thresholds_are_figure_2s():
    assert PASS_LINES == FIGURE2_LINES


def test_compare_gives_each_model_country_and_language_with_the_countrys_pass_line(doc):
    d, _ = doc
    (panel,) = d["panels"]
    assert (panel["stratum"], panel["condition"]) == ("country", "C+Q+I")
    assert panel["levels"] == ["brazil", "israel"] and panel["models"] == ["Alpha", "Beta"]
    assert panel["languages"] == ["local", "en"]  # the exam's own language first, as Figure 2's bars
    assert panel["pass_lines"] == {"brazil": 0.65, "israel": 0.60}
    cells = {(c["model"], c["level"], c["language"]): d["table"][c["row"]] for c in panel["cells"]}
    assert len(cells) == 2 * 2 * 2
    for (model, country, version, condition), right in RIGHT.items():
        if condition != "C+Q+I":
            continue
        row = cells[(model, country, LANG[version])]
        assert (row["value"], row["n"], row["condition"], row["level"]) == (right / N, N, "C+Q+I", country)
    # the pass verdicts: one per model, country, language and condition, the table's value against the line
    verdicts = {
        (p["model"], p["scope"]["country"], p["scope"]["language"], p["scope"]["condition"]): p for p in d["pass_lines"]
    }
    assert len(verdicts) == len(RIGHT)
    alpha_he = verdicts[("Alpha [israel, he]", "israel", "he", "C+Q+I")]
    assert (alpha_he["points"], alpha_he["required"], alpha_he["status"]) == (0.5, 0.6, "fail")
    assert verdicts[("Alpha [brazil, pt]", "brazil", "pt", "C+Q+I")]["status"] == "pass"  # 0.70 >= 0.65


def test_delta_lang_per_model_and_country_and_delta_img_per_model_country_and_language(doc):
    d, _ = doc
    lang = {(r["model"], r["scope"], r["condition"]): r for r in d["delta_lang"]}
    assert len(lang) == 2 * 2 * 2  # models × countries × conditions: never a pair across countries
    for model in ("Alpha", "Beta"):
        for country in ("israel", "brazil"):
            for condition in ("C+Q+I", "C+Q"):
                row = lang[(model, f"country={country}", condition)]
                want = accuracy(model, country, "local", condition) - accuracy(model, country, "english", condition)
                assert row["n"] == N and row["delta_lang"] == pytest.approx(want)
                assert row["ci_method"] == "tango-score" and 0 <= row["mcnemar_p"] <= 1
    img = [r for r in d["delta_img"]]
    assert len(img) == 2 * 2 * 2  # models × countries × languages
    for r in img:
        run = next(x for x in d["runs"] if x["model"] == r["model"])
        country, language = run["scope"]["country"], run["language"]
        version = "local" if language == "local" else "english"
        want = accuracy(run["model_name"], country, version, "C+Q+I") - accuracy(
            run["model_name"], country, version, "C+Q"
        )
        assert r["scope"] == f"country={country}" and r["delta_img"] == pytest.approx(want)
    # the models are compared within a country only: runs of different countries share no item
    assert all(t["status"] == "paired" for t in d["tests"])


def test_the_figure_is_in_the_page_and_written_as_png_and_svg(doc, tmp_path):
    d, out = doc
    png = (out / "fig2.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    page = (out / "cmp.html").read_text(encoding="utf-8")
    figure = page[page.index('<figure id="panels-0"') : page.index("</figure>", page.index('<figure id="panels-0"'))]
    assert "<svg" in figure
    # the panel table beside it: each value tagged with its row of the table
    table = page[page.index('<table id="panel-table-0"') :]
    table = table[: table.index("</table>")]
    paths = re.findall(r'data-path="([^"]+)" data-format="pct">([^<]*)<', table)
    assert len(paths) == 8
    for path, text in paths:
        _, i, key = json.loads(html_lib.unescape(path))
        assert text == f"{100 * d['table'][i][key]:.1f}"
    assert "pass line" in table and "65.0" in table and "60.0" in table
    from medvqa.core.compare.figure import write_panel_figure
    from medvqa.core.compare.render import markdown

    (svg,) = write_panel_figure(d, tmp_path / "fig2.svg")  # what --figure FILE.svg writes
    assert svg.read_text(encoding="utf-8").lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match="ending in .png or .svg"):
        write_panel_figure(d, tmp_path / "fig.pdf")
    md = markdown(d)  # what compare prints
    assert "## worldmedqa_v: C+Q+I accuracy % by country and language, with each level's pass line" in md
    assert re.search(r"\| Alpha \| 70\.0 \(n=10\) \| 60\.0 \(n=10\) \| 50\.0 \(n=10\) \| 80\.0 \(n=10\) \|", md)
    assert "| pass line | 65.0 | 65.0 | 60.0 | 60.0 |" in md


def test_runs_of_one_country_on_different_data_are_still_refused(runs, tmp_path):
    """Two runs of the same country (the same items) on different data are refused as before;
    only different parts (one country and another) stand side by side."""
    from medvqa.adapters.worldmedqa_v.importer import import_table

    from .synthetic import write_tables

    data, tables = write_tables(tmp_path)
    tsv = data / "israel_local.tsv"
    tsv.write_text(tsv.read_text(encoding="utf-8").replace("מה האבחנה", "מהי האבחנה"), encoding="utf-8")
    other = tmp_path / "other"
    import_table(next(t for t in tables if t.name == "Alpha_israel_local.csv"), data, other)
    mine = runs[("Alpha", "israel", "local", "C+Q+I")]
    result = CliRunner().invoke(cli, ["compare", str(mine), str(other)])
    assert result.exit_code == 1 and "runs of worldmedqa_v on different data cannot be compared" in result.output

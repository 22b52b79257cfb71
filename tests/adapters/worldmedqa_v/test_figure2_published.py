"""The WorldMedQA-V paper's Figure 2 from the authors' published result tables: `medvqa compare`
over the with-image runs holds its 80 cells (10 models × 4 countries × 2 languages), and each
cell's value is the figure's, or differs from it by items named in its run.

Where the figure's numbers come from. Figure 2 is drawn by the authors' notebook
`visuals/data_visualization.ipynb` (github.com/WorldMedQA/V; the shared data's SOURCE.txt names
the commit of the tables): it reads every `*_result.xlsx`, drops `paligemma-3b-mix-448` ("drop
rows with paligemma-3b-mix-448 from the models": 80 cells, not the 88 tables), takes the
published extractor's option (`extracted`, else the raw `prediction`) for every row, recomputes
`hit` as that option equal to `correct_option`, keeps the first row of each (country, model,
index) (`pivot_table(..., aggfunc='first')`: Israel's repeated index 84 counts once, 185
items), and shows the mean per model, country and language. FIGURE2 below is that table as the
notebook prints it (three decimals) just before it draws Figure 2 with
`passing_threshold = [.7, .66, .6, .65]`; the bars of the figure are these values (the text of
the paper gives no other).

medvqa's headline reading (assisted: VLMEvalKit's matching, then the published extractor's
option where matching fails) differs from the figure on two counts only, each checked here item
by item: where VLMEvalKit's matching as medvqa implements it (commit 134b4ea) reads another
option than the published extraction (the run's manifest lists those items), and Israel's second
question under index 84, which the figure leaves out and medvqa counts.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from tests.conftest import shared_data

pytestmark = pytest.mark.slow  # 60-88 imports of the published tables, then one compare: ~15 s

COLUMNS = [(c, lang) for c in ("brazil", "israel", "japan", "spain") for lang in ("en", "local")]
FIGURE2 = {  # notebook table `performance_results_images`, columns brazil_english ... spain_local
    "GPT4o": [0.674, 0.753, 0.632, 0.578, 0.720, 0.881, 0.728, 0.712],
    "GPT4o_MINI": [0.584, 0.584, 0.438, 0.373, 0.613, 0.732, 0.632, 0.640],
    "GeminiFlash1-5": [0.539, 0.640, 0.427, 0.395, 0.601, 0.667, 0.632, 0.640],
    "GeminiPro1-5": [0.652, 0.607, 0.492, 0.368, 0.613, 0.726, 0.632, 0.584],
    "Yi_VL_34B": [0.472, 0.438, 0.389, 0.270, 0.536, 0.530, 0.544, 0.416],
    "Yi_VL_6B": [0.348, 0.348, 0.362, 0.249, 0.417, 0.482, 0.448, 0.336],
    "llava_next_llama3": [0.483, 0.382, 0.297, 0.297, 0.482, 0.470, 0.552, 0.416],
    "llava_next_mistral_7b": [0.416, 0.404, 0.319, 0.265, 0.452, 0.381, 0.512, 0.336],
    "llava_next_vicuna_7b": [0.337, 0.292, 0.314, 0.308, 0.399, 0.298, 0.448, 0.328],
    "llava_next_yi_34b": [0.539, 0.483, 0.432, 0.281, 0.577, 0.518, 0.592, 0.488],
}
ITEMS = {"brazil": 89, "israel": 185, "japan": 168, "spain": 125}  # as the figure counts them
# Cells whose two decimals differ from the figure's, all by one item read otherwise by matching
# (the counts are checked item by item below).
NOT_AT_TWO_DECIMALS = {("GPT4o", "brazil", "local"), ("GPT4o", "japan", "en"), ("GPT4o", "spain", "en"),
                       ("GPT4o_MINI", "japan", "en"), ("GPT4o_MINI", "spain", "local"),
                       ("GeminiFlash1-5", "spain", "en"), ("GeminiPro1-5", "brazil", "local")}


def figure_count(model: str, country: str, language: str) -> int:
    """The figure's number of items right: its value times its n (unique: 1/n > 0.001)."""
    value = FIGURE2[model][COLUMNS.index((country, language))]
    return round(value * ITEMS[country])


def _derived_items(tables: Path, data: Path) -> None:
    """Item tables for the importer, written from the result tables' own columns (index,
    question, A-D, correct_option): one per country and language (GPT-4o's tables); not
    Israel's, whose repeated index 84 an importer that reads items by index refuses."""
    for f in sorted((tables / "GPT4o").glob("GPT4o_*_result.xlsx")):
        country, version = f.name.split("_")[1:3]
        if country == "israel":
            continue
        rows = medvqa.read_table(f, ("index", "question", "A", "B", "C", "D", "correct_option"))
        with (data / f"{country}_{version}.tsv").open("w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh, delimiter="\t")
            out.writerow(["index", "question", "A", "B", "C", "D", "answer"])
            out.writerows([[r["index"], r["question"], r["A"], r["B"], r["C"], r["D"], r["correct_option"]]
                           for r in rows])


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> tuple[list[Path], list[str]]:
    """Every with-image result table as a run: the folder at once where the importer takes one,
    else table by table with item tables written from the result tables (Israel, whose tables
    repeat index 84, cannot be imported so: noted)."""
    tables = shared_data("worldmedqa-v-outputs") / "visuals" / "outputs_w_images"
    out = tmp_path_factory.mktemp("figure2-published")
    folder = CliRunner().invoke(cli, ["import", "worldmedqa_v", str(tables), "--run-dir", str(out / "runs")])
    if folder.exit_code == 0:
        return sorted(p.parent for p in (out / "runs").rglob("manifest.json")), []
    from medvqa.adapters.worldmedqa_v.importer import import_table

    data = out / "data"
    data.mkdir()
    _derived_items(tables, data)
    runs, notes = [], []
    for f in sorted(tables.glob("*/*_result.xlsx")):
        if "_israel_" in f.name:
            notes.append(f"{f.name}: not imported (index 84 appears twice)")
            continue
        try:
            import_table(f, data, out / "runs" / f.stem)
        except medvqa.DataError as exc:
            notes.append(f"{f.name}: {exc}")
            continue
        runs.append(out / "runs" / f.stem)
    return runs, notes


def test_compare_holds_figure_2s_80_cells_each_the_figures_or_differing_by_named_items(imported):
    runs, notes = imported
    assert all("_israel_" in n for n in notes), notes  # only Israel's tables, for their repeated index
    result = CliRunner().invoke(cli, ["compare", *map(str, runs), "--json", "--resamples", "20"])
    assert result.exit_code == 0, result.output[-2000:]
    doc = json.loads(result.stdout)
    assert doc["reading"] == "assisted"
    (panel,) = doc["panels"]
    assert (panel["stratum"], panel["condition"], panel["languages"]) == ("country", "C+Q+I", ["local", "en"])
    assert panel["pass_lines"] == {c: line for c, line in {"japan": 0.70, "spain": 0.66, "israel": 0.60,
                                                         "brazil": 0.65}.items() if c in panel["levels"]}
    runs_by_label = {r["model"]: r for r in doc["runs"]}
    cells = {}
    for c in panel["cells"]:
        cells[(c["model"], c["level"], c["language"])] = (doc["table"][c["row"]], runs_by_label[c["experiment"]])
    wanted = {(m, country, lang) for m in FIGURE2 for country, lang in COLUMNS}
    held = wanted & set(cells)
    israel = {k for k in wanted if k[1] == "israel"}
    assert held == (wanted if not notes else wanted - israel)  # the 80 cells (60 until Israel imports)
    assert {m for m, _, _ in cells} - set(FIGURE2) <= {"paligemma-3b-mix-448"}  # the figure leaves it out
    off = set()
    for key in sorted(held):
        model, country, lang = key
        row, run = cells[key]
        run_dir = Path(run["runs"][0])
        saved = medvqa.read_run(run_dir)
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        # each item matching reads otherwise than the published extraction moves the count by its verdicts
        moved = 0
        for d in manifest["imported"].get("differs_from_published", []):
            gold = saved.items[d["item_id"]].gold.alternatives
            moved += ((d["matching"],) in gold) - ((d["published"],) in gold)
        # a repeated index's later questions (Israel's second 84): medvqa counts them, the figure does not
        extra = [r for r in saved.read_as("assisted").records if "#" in r["item_id"]]
        second = sum(bool(r.get("correct")) for r in extra)
        correct = round(row["value"] * row["n"])
        assert row["n"] == ITEMS[country] + len(extra), key
        assert correct == figure_count(model, country, lang) + moved + second, key
        if round(row["value"], 2) != round(figure_count(model, country, lang) / ITEMS[country], 2):
            off.add(key)
    assert off - israel == NOT_AT_TWO_DECIMALS

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
by item: where VLMEvalKit's matching as medvqa implements it (the rule the study's run applied) reads another
option than the published extraction (the run's manifest lists those items), and Israel's second
question under index 84, which the figure leaves out and medvqa counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from tests.conftest import shared_data

pytestmark = pytest.mark.slow  # 88 imports of the published tables, then one compare: ~30 s

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
# Cells whose headline's two decimals differ from the figure's (71 of the 80 agree): outside
# Israel by one item each that matching reads otherwise than the published extraction; in Israel
# by such items and by the question the figure leaves out (both checked item by item below).
NOT_AT_TWO_DECIMALS = {
    ("GPT4o", "japan", "local"),
    ("GPT4o", "spain", "en"),
    ("GPT4o_MINI", "spain", "local"),
    ("GeminiFlash1-5", "spain", "en"),
    ("GPT4o", "israel", "en"),
    ("GPT4o", "israel", "local"),
    ("GeminiFlash1-5", "israel", "en"),
    ("llava_next_vicuna_7b", "israel", "en"),
    ("llava_next_yi_34b", "israel", "en"),
}
# Cells whose published accuracy (beside the headline: `_acc.csv`, else the mean of the table's
# `hit`) differs from the figure's at two decimals (77 of the 80 agree): Israel's, over 186
# questions where the figure counts 185.
PUBLISHED_NOT_AT_TWO_DECIMALS = {
    ("GeminiFlash1-5", "israel", "en"),
    ("llava_next_vicuna_7b", "israel", "en"),
    ("llava_next_yi_34b", "israel", "en"),
}


def figure_count(model: str, country: str, language: str) -> int:
    """The figure's number of items right: its value times its n (unique: 1/n > 0.001)."""
    value = FIGURE2[model][COLUMNS.index((country, language))]
    return round(value * ITEMS[country])


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> dict:
    """`medvqa compare --json` over every with-image result table, imported as a folder."""
    tables = shared_data("worldmedqa-v-outputs") / "visuals" / "outputs_w_images"
    out = tmp_path_factory.mktemp("figure2-published")
    imported = CliRunner().invoke(cli, ["import", "worldmedqa_v", str(tables), "--run-dir", str(out)])
    assert imported.exit_code == 0, imported.output[-2000:]
    runs = sorted(p.parent for p in out.rglob("manifest.json"))
    assert len(runs) == 88
    result = CliRunner().invoke(cli, ["compare", *map(str, runs), "--json", "--resamples", "20"])
    assert result.exit_code == 0, result.output[-2000:]
    return json.loads(result.stdout)


def left_out(run_dir: Path, saved) -> tuple[str, bool] | None:
    """The item the figure leaves out of a table that repeats an index (the later row of Israel's
    index 84, the notebook keeping the first), and its published hit; None elsewhere."""
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    rows = list(medvqa.read_table(Path(manifest["imported"]["files"][0]), ("index", "prediction")))
    seen, later = set(), None
    for r in rows:
        index = str(r["index"]).strip()
        if index in seen:
            later = r
        seen.add(index)
    if later is None:
        return None
    prefix = f"{manifest['imported']['country']}-{str(later['index']).strip()}"
    item = next(
        it
        for it in saved.items.values()
        if it.id.split("#")[0] == prefix and it.gold.raw == str(later["correct_option"]).strip()
    )
    return item.id, str(later["hit"]).strip() in ("1", "1.0", "True", "true")


def test_compare_holds_figure_2s_80_cells_each_the_figures_or_differing_by_named_items(doc):
    assert doc["reading"] == "assisted"
    (panel,) = doc["panels"]
    assert (panel["stratum"], panel["condition"], panel["languages"]) == ("country", "C+Q+I", ["local", "en"])
    assert panel["pass_lines"] == {"japan": 0.70, "spain": 0.66, "israel": 0.60, "brazil": 0.65}
    runs_by_label = {r["model"]: r for r in doc["runs"]}
    cells = {(c["model"], c["level"], c["language"]): c for c in panel["cells"]}
    wanted = {(m, country, lang) for m in FIGURE2 for country, lang in COLUMNS}
    assert wanted <= set(cells) and len(wanted) == 80  # Figure 2's 80 cells
    assert set(cells) - wanted == {("paligemma-3b-mix-448", c, lang) for c, lang in COLUMNS}  # the figure drops it
    off, published_off = set(), set()
    for key in sorted(wanted):
        model, country, lang = key
        cell = cells[key]
        row, overall = doc["table"][cell["row"]], doc["table"][cell["overall_row"]]
        run_dir = Path(runs_by_label[cell["experiment"]]["runs"][0])
        saved = medvqa.read_run(run_dir)
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        # each item matching reads otherwise than the published extraction moves the count by its verdicts
        moved = 0
        for d in manifest["imported"].get("differs_from_published", []):
            gold = saved.items[d["item_id"]].gold.alternatives
            moved += ((d["matching"],) in gold) - ((d["published"],) in gold)
        # the question a repeated index holds twice: medvqa counts it, the figure does not
        dropped = left_out(run_dir, saved)
        records = {r["item_id"]: r for r in saved.read_as("assisted").records}
        extra = int(bool(records[dropped[0]].get("correct"))) if dropped else 0
        correct = round(row["value"] * row["n"])
        assert row["n"] == ITEMS[country] + (dropped is not None), key
        assert correct == figure_count(model, country, lang) + moved + extra, key
        figure = figure_count(model, country, lang) / ITEMS[country]
        if round(row["value"], 2) != round(figure, 2):
            off.add(key)
        # the published accuracy beside it is the figure's, but for the question the figure leaves out
        said = overall["published_correct"] - (dropped[1] if dropped else 0)
        assert said == figure_count(model, country, lang), key
        if round(overall["published_accuracy"], 2) != round(figure, 2):
            published_off.add(key)
    assert off == NOT_AT_TWO_DECIMALS
    assert published_off == PUBLISHED_NOT_AT_TWO_DECIMALS

"""`compare` beside Δimg: the Δ of each image variant per model × benchmark, paired as the audit
pairs a variant with its base condition, with every number worked out by hand.

Two replayed models on the bundled sample's five image items, asked under `C+Q+I` and
`C+Q+I~hflip`, each right on every item under `C+Q+I`:
- `flips` is right under the flipped image only on the first item (Nurse_2023_AM_Q3);
- `steady` is right under the flipped image everywhere.
The last image item's (Physician_2024_B_Q3's) `C+Q+I~hflip` record is then dropped from both runs,
so four items are paired and one is left unpaired ("no C+Q+I~hflip record").
"""

import html
import json
import re

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.compare.comparison import compare_runs
from medvqa.core.compare.page import page

BASE, FLIPPED = "C+Q+I", "C+Q+I~hflip"
DROPPED = "Physician_2024_B_Q3"


def gold(item) -> str:
    return json.dumps({"answer": list(item.gold.alternatives[0])})


def wrong(item) -> str:
    return json.dumps({"answer": [next(k for k in item.keys if (k,) not in item.gold.alternatives)]})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare-variants")
    items = [it for it in medvqa.load("jmed48k", split="sample") if not it.excluded and it.image_available]
    assert [it.id for it in items][0] == "Nurse_2023_AM_Q3" and items[-1].id == DROPPED
    out = {}
    for name in ("flips", "steady"):
        replay = tmp / f"{name}.jsonl"
        with replay.open("w", encoding="utf-8") as fh:
            for i, it in enumerate(items):
                flipped = gold(it) if (name == "steady" or i == 0) else wrong(it)
                for condition, response in ((BASE, gold(it)), (FLIPPED, flipped)):
                    fh.write(json.dumps({"item_id": it.id, "condition": condition, "response": response}) + "\n")
        run_dir = tmp / name
        medvqa.run(
            "jmed48k",
            f"replay:{replay}",
            sample=True,
            conditions=BASE,
            variants="hflip",
            run_dir=str(run_dir),
            cache=False,
            progress=False,
        )
        path = run_dir / "records.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [
            line for line in lines if (json.loads(line)["item_id"], json.loads(line)["condition"]) != (DROPPED, FLIPPED)
        ]
        assert len(kept) == len(lines) - 1
        path.write_text("".join(kept), encoding="utf-8")
        out[name] = run_dir
    return out


def test_each_models_delta_under_hflip_with_its_transition_counts(runs):
    doc = compare_runs([runs["flips"], runs["steady"]], resamples=100).as_json()
    rows = {r["model"].split("@")[-1]: r for r in doc["delta_variants"]}
    assert len(doc["delta_variants"]) == 2 and doc["delta_img"] == []
    flips, steady = (next(r for m, r in rows.items() if name in m) for name in ("flips", "steady"))
    for row in (flips, steady):
        assert (row["benchmark"], row["variant"], row["base"], row["label"]) == ("jmed48k", "hflip", BASE, FLIPPED)
        assert (row["n"], row["n_unpaired"], row["a_base"]) == (4, 1, 1.0)
    # flips: right under both on Nurse Q3 only, right only under C+Q+I on the other three
    assert (flips["n11"], flips["n10"], flips["n01"], flips["n00"]) == (1, 3, 0, 0)
    assert flips["a_variant"] == pytest.approx(0.25) and flips["delta_variant"] == pytest.approx(0.75)
    # McNemar on (3, 0): mid-p = P(X = 0), X ~ Bin(3, ½) = 1/8; the exact conditional p 2/8
    assert flips["mcnemar_p"] == pytest.approx(1 / 8) and flips["mcnemar_exact_p"] == pytest.approx(2 / 8)
    assert flips["ci_method"] and flips["ci_low"] < 0.75 < flips["ci_high"]
    assert (steady["n11"], steady["n10"], steady["n01"], steady["n00"]) == (4, 0, 0, 0)
    assert steady["a_variant"] == 1.0 and steady["delta_variant"] == 0.0 and steady["mcnemar_p"] == 1


def test_the_audit_pairs_the_same_items_to_the_same_numbers(runs):
    doc = compare_runs([runs["flips"]], resamples=100).as_json()
    row = doc["delta_variants"][0]
    section = medvqa.audit(runs["flips"], resamples=100)["variants"]["hflip"]["overall"]
    assert section["counts"] == {"n11": 1, "n10": 3, "n01": 0, "n00": 0}
    assert (row["n"], row["a_base"], row["a_variant"], row["delta_variant"], row["mcnemar_p"]) == (
        section["n"],
        section["a_base"],
        section["a_hflip"],
        section["delta_hflip"],
        section["mcnemar_p"],
    )
    assert [row["ci_low"], row["ci_high"]] == section["ci"]


def test_markdown_shows_a_variant_table_after_the_delta_img_one(runs):
    result = CliRunner().invoke(cli, ["compare", str(runs["flips"]), str(runs["steady"]), "--resamples", "100"])
    assert result.exit_code == 0, result.output
    md = result.output
    heading = "## Image variants: Δ = the base condition − its variant on the same items"
    assert md.index("## Visual reliance: Δimg") < md.index(heading) < md.index("## Models compared on the same items")
    table = md[md.index(heading) :].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if "| hflip |" in line]
    assert len(rows) == 2
    # n, base %, variant %, Δ (points), then after the interval the counts right only under each side and mid-p
    assert "| hflip | C+Q+I | 4 | 100.0 | 25.0 | +75.0 |" in rows[0] and rows[0].endswith("| 3 | 0 | 0.125 |")
    assert "| hflip | C+Q+I | 4 | 100.0 | 100.0 | +0.0 |" in rows[1] and rows[1].endswith("| 0 | 0 | 1 |")
    assert "flips" in rows[0] and "steady" in rows[1]


def test_without_variant_records_the_json_has_no_variant_key(runs, tmp_path):
    plain = tmp_path / "plain"
    medvqa.run("jmed48k", "random", sample=True, conditions="C+Q", run_dir=str(plain), cache=False, progress=False)
    doc = compare_runs([plain], resamples=100).as_json()
    assert "delta_variants" not in doc


def test_the_page_shows_the_variant_table_with_each_number_tagged(runs):
    doc = compare_runs([runs["flips"], runs["steady"]], resamples=100).as_json()
    text = page(doc)
    assert text.index(">Visual reliance: Δimg") < text.index(">Image variants: Δ") < text.index(">Models compared")
    found = re.findall(r'data-path="([^"]*)" data-format="[^"]*">([^<]*)<', text)
    shown = {tuple(json.loads(html.unescape(path))): html.unescape(value) for path, value in found}
    assert shown[("delta_variants", 0, "delta_variant")] == "+75.0"
    assert shown[("delta_variants", 0, "n10")] == "3" and shown[("delta_variants", 0, "n01")] == "0"
    assert shown[("delta_variants", 1, "delta_variant")] == "+0.0"


def test_latex_has_a_variant_table(runs):
    result = CliRunner().invoke(
        cli, ["compare", str(runs["flips"]), str(runs["steady"]), "--resamples", "100", "--format", "latex"]
    )
    assert result.exit_code == 0, result.output
    assert "Image variants: the base condition vs its variant on the same items" in result.output
    assert "& hflip & C+Q+I & 4 & 100.0 & 25.0 & +75.0 & [" in result.output
    assert "& 3 & 0 & 0.125 \\\\" in result.output


def test_the_python_api_shows_the_same_rows_as_compare_json(runs):
    """`medvqa.compare(...)` keeps the variants' rows in `.attrs`, the same as `compare --json`."""
    frame = medvqa.compare([runs["flips"], runs["steady"]], resamples=100)
    doc = compare_runs([runs["flips"], runs["steady"]], resamples=100).as_json()
    assert frame.attrs["delta_variants"] == doc["delta_variants"]
    assert [r["delta_variant"] for r in frame.attrs["delta_variants"]] == [
        r["delta_variant"] for r in doc["delta_variants"]
    ]

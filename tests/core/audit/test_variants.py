"""Variants of a condition paired with it (`C+Q+I` with `C+Q+I~swap`, `C+Q+I~hflip`): runs with
outcomes written item by item, audited, and every count, Δ and mid-p worked out by hand."""

import json
from pathlib import Path

import pytest

import medvqa
from medvqa.core import plugins
from medvqa.core.audit.analysis import audit
from medvqa.core.audit.pairs import RunInput, Settings
from medvqa.core.audit.summary import summary_markdown
from medvqa.core.items import Gold, ImageRef, Item, Option
from tests.conftest import shared_data

SETTINGS = Settings(resamples=50)


def item(i: int) -> Item:
    """An image item (its file not here: records with the image are paired as imported ones are)."""
    options = tuple(Option(key=k, label=k, text=f"{k} {i}") for k in "ABCD")
    return Item(
        id=f"v{i:02d}",
        benchmark="demo",
        question=f"Which one? #{i}",
        options=options,
        gold=Gold(alternatives=(("A",),)),
        images=(ImageRef(ref=f"v{i}.png"),),
    )


def record(it: Item, condition: str, right: bool) -> dict:
    return {
        "item_id": it.id,
        "condition": condition,
        "status": "answered",
        "correct": right,
        "predicted": ["A" if right else "B"],
    }


def run_of(outcomes: dict[str, list[bool]]) -> RunInput:
    """A run of len(outcomes[...]) items, each asked under every label of `outcomes` (label:
    right or wrong per item)."""
    n = len(next(iter(outcomes.values())))
    items = [item(i) for i in range(n)]
    records = [record(it, label, rights[i]) for label, rights in outcomes.items() for i, it in enumerate(items)]
    return RunInput(model="m", records=records, items={it.id: it for it in items})


def counts(row: dict) -> dict:
    return row["counts"]


# (a) a model that reads THE image: right on C+Q+I on items 0-8, and under C+Q and under a swapped
# image only on items 0, 1 and 9 (the same items: a wrong image tells it what no image does)
READS = [True] * 9 + [False] * 3
WITHOUT = [True, True] + [False] * 7 + [True, False, False]


def test_a_model_that_reads_the_image_loses_under_a_swap_what_it_loses_without_an_image():
    doc = audit([run_of({"C+Q+I": READS, "C+Q": WITHOUT, "C+Q+I~swap": WITHOUT})], SETTINGS)
    img, swap = doc["paired"]["overall"], doc["variants"]["swap"]
    row = swap["overall"]
    assert (swap["variant"], swap["base"], swap["label"]) == ("swap", "C+Q+I", "C+Q+I~swap")
    # p11 items 0-1, p10 items 2-8, p01 item 9, p00 items 10-11
    assert counts(row) == counts(img) == {"n11": 2, "n10": 7, "n01": 1, "n00": 2}
    assert row["n"] == 12 and row["a_base"] == pytest.approx(9 / 12) and row["a_swap"] == pytest.approx(3 / 12)
    assert row["delta_swap"] == img["delta_img"] == pytest.approx(6 / 12)
    # mid-p of (7, 1): 2·P(X ≤ 1) − P(X = 1), X ~ Bin(8, ½) = (2·9 − 8)/256; exact 18/256
    assert row["mcnemar_p"] == img["mcnemar_p"] == pytest.approx(10 / 256)
    assert row["mcnemar_exact_p"] == pytest.approx(18 / 256)
    assert row["ci"] == img["ci"] and row["role"] == "primary"
    assert "a_with" not in row and "delta_img" not in row
    # the swap against removal: the same outcomes on every item, so no discordant pair
    vs = swap["vs_removal"]
    assert (vs["first"], vs["second"]) == ("C+Q+I~swap", "C+Q")
    assert counts(vs["overall"]) == {"n11": 3, "n10": 0, "n01": 0, "n00": 9}
    assert vs["overall"]["delta_swap_removal"] == 0 and vs["overall"]["mcnemar_p"] == 1
    # Δimg = Δswap + Δswap_removal on items holding all three records
    assert img["delta_img"] == pytest.approx(row["delta_swap"] + vs["overall"]["delta_swap_removal"])
    assert swap["unpaired"] == {}


# (b) an image-agnostic model: right on items 0-9 whenever an image is shown, the item's own or
# another's, and wrong on every item without one
AGNOSTIC = [True] * 10 + [False] * 2


def test_an_image_agnostic_model_loses_nothing_under_a_swap_and_everything_without_an_image():
    doc = audit([run_of({"C+Q+I": AGNOSTIC, "C+Q": [False] * 12, "C+Q+I~swap": AGNOSTIC})], SETTINGS)
    img, swap = doc["paired"]["overall"], doc["variants"]["swap"]
    assert counts(img) == {"n11": 0, "n10": 10, "n01": 0, "n00": 2}
    assert img["delta_img"] == pytest.approx(10 / 12)
    # mid-p of (10, 0): 2·P(X = 0) − P(X = 0) = 1/1024; exact 2/1024
    assert img["mcnemar_p"] == pytest.approx(1 / 1024) and img["mcnemar_exact_p"] == pytest.approx(2 / 1024)
    row = swap["overall"]
    assert counts(row) == {"n11": 10, "n10": 0, "n01": 0, "n00": 2}
    assert row["delta_swap"] == 0 and row["mcnemar_p"] == 1 and row["mcnemar_exact_p"] == 1
    assert row["a_base"] == row["a_swap"] == pytest.approx(10 / 12)
    # any image (a wrong one) adds all of Δimg over none
    vs = swap["vs_removal"]["overall"]
    assert counts(vs) == {"n11": 0, "n10": 10, "n01": 0, "n00": 2}
    assert vs["a_swap"] == pytest.approx(10 / 12) and vs["a_removed"] == 0
    assert vs["delta_swap_removal"] == pytest.approx(10 / 12) and vs["mcnemar_p"] == pytest.approx(1 / 1024)


def test_a_flip_that_changes_laterality_costs_three_of_eight_items():
    # right on all 8 items as asked, wrong on items 5-7 flipped left to right
    doc = audit([run_of({"C+Q+I": [True] * 8, "C+Q+I~hflip": [True] * 5 + [False] * 3})], SETTINGS)
    flip = doc["variants"]["hflip"]
    row = flip["overall"]
    assert counts(row) == {"n11": 5, "n10": 3, "n01": 0, "n00": 0}
    assert row["delta_hflip"] == pytest.approx(3 / 8)
    assert row["a_base"] == 1 and row["a_hflip"] == pytest.approx(5 / 8)
    # mid-p of (3, 0): 2·(1/8) − 1/8 = 1/8; exact 2/8
    assert row["mcnemar_p"] == pytest.approx(1 / 8) and row["mcnemar_exact_p"] == pytest.approx(2 / 8)
    assert "vs_removal" not in flip  # (a flip has no removal contrast, and this run no C+Q)
    assert doc["paired"]["overall"]["n"] == 0  # no C+Q records: no image-removal pairs


def test_a_variant_record_without_its_base_record_leaves_the_item_unpaired():
    run = run_of({"C+Q+I": [True] * 4, "C+Q+I~swap": [False] * 4})
    missing = run.records[0]["item_id"]
    run = RunInput(
        model="m",
        records=[r for r in run.records if not (r["item_id"] == missing and r["condition"] == "C+Q+I")],
        items=run.items,
    )
    swap = audit([run], SETTINGS)["variants"]["swap"]
    assert swap["unpaired"] == {"no C+Q+I record": {"n": 1, "items": [missing]}}
    assert counts(swap["overall"]) == {"n11": 0, "n10": 3, "n01": 0, "n00": 0}
    assert "vs_removal" not in swap  # no C+Q records to contrast with


def test_variants_keep_their_order_and_a_variant_under_two_bases_names_each():
    outcomes = {
        "C+I": [True] * 4,
        "C+Q+I": [True] * 4,
        "C+Q+I~hflip": [True] * 4,
        "C+I~swap": [False] * 4,
        "C+Q+I~swap": [True, False, True, True],
    }
    variants = audit([run_of(outcomes)], SETTINGS)["variants"]
    assert list(variants) == ["swap (C+I)", "swap (C+Q+I)", "hflip"]
    assert variants["swap (C+I)"]["overall"]["delta_swap"] == 1
    assert variants["swap (C+Q+I)"]["overall"]["delta_swap"] == pytest.approx(1 / 4)


def test_variants_are_paired_by_stratum_with_holm_and_in_words():
    run = run_of({"C+Q+I": READS, "C+Q": WITHOUT, "C+Q+I~swap": WITHOUT})
    for r in run.records:
        r["year"] = "2024" if int(r["item_id"][1:]) < 6 else "2025"
    doc = audit([run], Settings(by=("year",), resamples=50))
    by = doc["variants"]["swap"]["by"]["year"]
    # 2024: items 0-5 (p11 0-1, p10 2-5); 2025: items 6-11 (p10 6-8, p01 9, p00 10-11)
    assert counts(by["2024"]) == {"n11": 2, "n10": 4, "n01": 0, "n00": 0}
    assert counts(by["2025"]) == {"n11": 0, "n10": 3, "n01": 1, "n00": 2}
    assert all(row["role"] == "secondary" and "mcnemar_p_holm" in row for row in by.values())
    text = summary_markdown(doc)
    assert "Variant swap (C+Q+I vs C+Q+I~swap" in text and "| Δswap |" in text
    assert "Swap vs removal (C+Q+I~swap vs C+Q" in text and "Δswap_removal" in text
    # after the image-removal section (its table, and its pairs' refusal rates)
    assert text.index("Image removal (C+Q+I vs C+Q)") < text.index("Refusal rates") < text.index("Variant swap")


def test_an_audit_without_variants_has_no_variant_section():
    doc = audit([run_of({"C+Q+I": READS, "C+Q": WITHOUT})], SETTINGS)
    assert "variants" not in doc and "Variant" not in summary_markdown(doc)


def test_medvqa_audit_of_a_run_directory_returns_the_variants(tmp_path: Path):
    """A saved run whose records.jsonl holds C+Q+I~hflip records beside its C+Q+I ones."""
    data = shared_data("jmed48k-sample")
    bench = plugins.get_benchmark("jmed48k")
    items = bench.load(data, "full")
    shown = [it for it in items if it.image_available][:8]
    answers = [(it, "C+Q+I", json.dumps({"answer": list(it.gold.alternatives[0])})) for it in shown]
    run_dir = tmp_path / "run"
    load = {"data": str(data), "split": "full"}
    medvqa.write_run(bench, items, answers, run_dir, model="replayed", load=load, saved=False)
    path = run_dir / "records.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    answered = [r for r in records if r["status"] == "answered"]  # (the other items' are recorded missing)
    assert len(answered) == 8
    flipped = [{**r, "condition": "C+Q+I~hflip", "correct": i < 5} for i, r in enumerate(answered)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records + flipped), encoding="utf-8")
    flip = medvqa.audit(str(run_dir), resamples=50)["variants"]["hflip"]
    # the image items not answered hold a C+Q+I record (missing) and no flipped one
    assert flip["unpaired"]["no C+Q+I~hflip record"]["n"] == 9
    row = flip["overall"]
    assert counts(row) == {"n11": 5, "n10": 3, "n01": 0, "n00": 0}
    assert row["delta_hflip"] == pytest.approx(3 / 8)


def test_over_repeats_the_variant_delta_is_pooled_item_by_item_beside_the_last_repeats_table():
    """Two items asked twice under C+Q+I and C+Q+I~hflip. v00: right with its image in both
    repeats, flipped right only in the second; v01: right with its image in the first repeat
    only, flipped wrong in both. Per item and repeat, base − flipped: v00 (1, 0), v01 (1, 0):
    each item's mean 0.5, pooled Δhflip 0.5. The table pairs the last repeat's records: v00 right
    in both (n11), v01 wrong in both (n00): Δ 0 there."""
    items = [item(0), item(1)]
    outcomes = {("v00", "C+Q+I"): (1, 1), ("v00", "C+Q+I~hflip"): (0, 1), ("v01", "C+Q+I"): (1, 0)}
    records = [
        {**record(it, cond, bool(outcomes.get((it.id, cond), (0, 0))[r])), "repeat": r}
        for r in range(2)
        for it in items
        for cond in ("C+Q+I", "C+Q+I~hflip")
    ]
    run = RunInput(model="m", records=records, items={it.id: it for it in items})
    section = audit([run], SETTINGS)["variants"]["hflip"]
    assert counts(section["overall"]) == {"n11": 1, "n10": 0, "n01": 0, "n00": 1}
    pooled = section["over_repeats"]["pooled"]
    assert (pooled["n_items"], pooled["delta"]) == (2, 0.5)
    assert [(d["repeat"], d["delta"]) for d in section["over_repeats"]["per_repeat"]] == [(0, 1.0), (1, 0.0)]

"""The item browser with variant records: each item's transition under every factor, paired as
the audit pairs it (so the browser's counts are the audit's), the perturbed image shown beside
the item's own, and the page's filter by a factor's transition."""

from __future__ import annotations

from collections import Counter
from urllib.parse import quote

import medvqa
from medvqa.core.view import view_document, write_view
from tests.core.test_view import chromium_dom, shown_items


def run_with_variants(tmp_path):
    run_dir = tmp_path / "run"
    medvqa.run(
        "jmed48k",
        model="random",
        split="sample",
        conditions=["C+Q", "C+Q+I"],
        variants="hflip,order",
        run_dir=run_dir,
        progress=False,
    )
    return run_dir


def test_the_browser_holds_each_factors_transitions_as_the_audit_counts_them(tmp_path):
    run_dir = run_with_variants(tmp_path)
    doc = view_document([medvqa.read_run(run_dir)])
    audit = medvqa.audit(run_dir)["variants"]
    assert doc["factors"] == {
        "hflip": "C+Q+I vs C+Q+I~hflip",
        "order (C+Q)": "C+Q vs C+Q~order",
        "order (C+Q+I)": "C+Q+I vs C+Q+I~order",
    }
    for name in doc["factors"]:
        states = Counter(item["vt"]["0"][name] for item in doc["items"] if name in item.get("vt", {}).get("0", {}))
        counts = audit[name]["overall"]["counts"]
        assert {f"p{k[1:]}": v for k, v in counts.items() if v} == dict(states)
    # the 5 image items were shown flipped: each gets its flipped image(s) beside its own (B_Q3 has two)
    flipped = {item["id"]: item["vi"]["hflip"] for item in doc["items"] if "vi" in item}
    assert sorted(flipped) == [
        "Nurse_2023_AM_Q3",
        "Physician_2024_A_Q3",
        "Physician_2024_A_Q4",
        "Physician_2024_B_Q2",
        "Physician_2024_B_Q3",
    ]
    assert {i: len(v) for i, v in flipped.items()}["Physician_2024_B_Q3"] == 2
    own = {i for item in doc["items"] for i in item["i"]}
    assert not own & {i for v in flipped.values() for i in v}  # other images than the item's own


def test_the_page_filters_by_a_factors_transition(tmp_path):
    run_dir = run_with_variants(tmp_path)
    doc = view_document([medvqa.read_run(run_dir)])
    page = write_view([medvqa.read_run(run_dir)], tmp_path / "view.html")
    shown = 0
    for factor in ("order (C+Q)", "hflip"):
        for state in ("p10", "p00"):
            want = [item["id"] for item in doc["items"] if item.get("vt", {}).get("0", {}).get(factor) == state]
            fragment = f"factor={quote(f'{factor}:{state}', safe='')}&size=1000"
            assert shown_items(chromium_dom(page, fragment, tmp_path / f"p-{factor[:5]}-{state}")) == want
            shown += len(want)
    assert shown >= 10  # the random baseline is wrong in every order on most of the 11 rotated items

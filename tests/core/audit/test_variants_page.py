"""The audit's page shows each variant's paired table after the image-removal one, in its shape,
every number tagged with its path in the audit document (outcomes written item by item)."""

import html
import json
import re

from medvqa.core.audit.analysis import audit
from medvqa.core.audit.html import render_html
from tests.core.audit.test_variants import SETTINGS, run_of

# four items, right under C+Q+I on all; under C+Q+I~hflip on the first only; under C+Q on none
BASE = [True] * 4
FLIPPED = [True, False, False, False]


def cells(page: str) -> dict[tuple, str]:
    """{JSON path: shown text} of every number cell."""
    found = re.findall(r'data-path="([^"]*)" data-format="[^"]*">([^<]*)<', page)
    return {tuple(json.loads(html.unescape(path))): html.unescape(text) for path, text in found}


def test_a_variant_table_after_the_image_removal_one_with_its_numbers():
    doc = audit([run_of({"C+Q+I": BASE, "C+Q": [False] * 4, "C+Q+I~hflip": FLIPPED})], SETTINGS)
    page = render_html(doc, svgs={})
    assert page.index(">Image removal (C+Q+I vs C+Q)") < page.index(">Variant hflip (C+Q+I vs C+Q+I~hflip")
    shown = cells(page)
    row = ("variants", "hflip", "overall")
    # p11 item 0, p10 items 1-3: Δhflip = 3/4
    assert shown[(*row, "n")] == "4"
    assert shown[(*row, "p10")] == "75.0" and shown[(*row, "p11")] == "25.0"
    assert shown[(*row, "a_base")] == "100.0" and shown[(*row, "a_hflip")] == "25.0"
    assert shown[(*row, "delta_hflip")] == "+75.0"
    assert shown[(*row, "mcnemar_p")] == "0.125"
    section = doc["variants"]["hflip"]["overall"]
    assert section["counts"] == {"n11": 1, "n10": 3, "n01": 0, "n00": 0}
    heading = page[page.index(">Variant hflip") :]
    assert ">C+Q+I~hflip</th>" in heading and ">Δhflip</th>" in heading


def test_the_swap_shows_its_table_against_removal():
    doc = audit([run_of({"C+Q+I": BASE, "C+Q": [False] * 4, "C+Q+I~swap": FLIPPED})], SETTINGS)
    shown = cells(render_html(doc, svgs={}))
    assert shown[("variants", "swap", "overall", "delta_swap")] == "+75.0"
    # the swap right on item 0 only, C+Q on none: a_swap − a_removed = 1/4
    assert shown[("variants", "swap", "vs_removal", "overall", "delta_swap_removal")] == "+25.0"


def test_without_variants_the_page_has_no_variant_table():
    doc = audit([run_of({"C+Q+I": BASE, "C+Q": [False] * 4})], SETTINGS)
    assert ">Variant " not in render_html(doc, svgs={})


def test_the_factors_forest_draws_each_factors_delta_as_the_tables_give_it():
    from medvqa.core.audit.charts import audit_charts, chart_names

    with_variants = audit([run_of({"C+Q+I": BASE, "C+Q": [False] * 4, "C+Q+I~hflip": FLIPPED})], SETTINGS)
    svg = audit_charts(with_variants)["factors"]
    # Δimg: right with the image on 4, without on none: +100.0; Δhflip +75.0 (above)
    assert "m, Δimg (image removed): +100.0 pp" in svg and "m, Δhflip: +75.0 pp" in svg
    without = audit([run_of({"C+Q+I": BASE, "C+Q": [False] * 4})], SETTINGS)
    assert "factors" not in [name for name, _, _ in chart_names(without)]

"""The pages' charts (core/audit/charts.py, core/audit/svg.py): well-formed SVG whose marks carry
the document's numbers, labels as escaped text in any script, and the Figure 2 panels drawn from
the comparison's table."""

import xml.etree.ElementTree as ET

from medvqa.core.audit.charts import audit_charts, diverging, panel_chart, states_chart
from medvqa.core.audit.svg import text_width

SVG = "{http://www.w3.org/2000/svg}"


def paired_row(n: int, p10: float) -> dict:
    return {
        "n": n,
        "p11": 0.5,
        "p10": p10,
        "p01": 0.1,
        "p00": 0.4 - p10,
        "delta_img": p10 - 0.1,
        "ci": [p10 - 0.2, p10],
    }


DOC = {
    "model": "random <a&b>",
    "settings": {"by": ["section"]},
    "paired": {
        "overall": paired_row(10, 0.2),
        "by": {"section": {"必修問題": paired_row(4, 0.25), "שאלה": paired_row(6, 0.15), "empty": {"n": 0}}},
    },
}


def titles(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text for t in root.iter(f"{SVG}title")]


def test_every_audit_chart_is_svg_with_the_rows_numbers_in_its_marks():
    charts = audit_charts(DOC)
    assert list(charts) == [
        "states_overall",
        "delta_overall",
        "states_by_section",
        "delta_by_section",
        "heatmap_section",
    ]
    tips = {name: titles(svg) for name, svg in charts.items()}  # each parses as XML
    # the four states of the overall row, in percent, with the model named as written
    assert "random <a&b>, overall (n=10): correct only with image 20.0 %" in tips["states_overall"]
    assert "random <a&b>, overall (n=10): wrong in both 20.0 %" in tips["states_overall"]
    # Δimg and its interval in percentage points; the stratum without pairs is left out
    assert "random <a&b>, overall: Δimg +10.0 pp [+0.0, +20.0]" in tips["delta_overall"]
    assert "random <a&b>, 必修問題: Δimg +15.0 pp [+5.0, +25.0]" in tips["delta_by_section"]
    assert "random <a&b>, שאלה: Δimg +5.0 pp" in tips["heatmap_section"]
    assert not any("empty" in t for t in tips["delta_by_section"])
    texts = [t.text for t in ET.fromstring(charts["states_by_section"]).iter(f"{SVG}text")]
    assert "שאלה (n=6)" in texts and "必修問題 (n=4)" in texts


def test_labels_are_measured_wider_in_cjk_and_the_diverging_scale_matches_rdbu():
    assert text_width("必修", 10) == 20 and text_width("ab", 10) == 12  # one em a wide character, 0.6 em others
    assert diverging(0, 10) == "#ffffff"
    assert diverging(10, 10) == "#2166ac" and diverging(-10, 10) == "#b2182b"  # RdBu's ends: blue high, red low
    assert diverging(50, 10) == diverging(10, 10)  # clipped at the limit


def test_the_panel_chart_draws_the_tables_values_and_the_pass_line():
    table = [
        {"value": 0.7, "ci_low": 0.4, "ci_high": 0.9, "n": 10},
        {"value": 0.5, "ci_low": 0.2, "ci_high": 0.8, "n": 10, "published_accuracy": 0.6},
    ]
    panel = {
        "benchmark": "worldmedqa_v",
        "stratum": "country",
        "condition": "C+Q+I",
        "levels": ["israel"],
        "models": ["Alpha"],
        "languages": ["local", "en"],
        "pass_lines": {"israel": 0.6},
        "cells": [
            {"level": "israel", "model": "Alpha", "language": "local", "row": 0},
            {"level": "israel", "model": "Alpha", "language": "en", "row": 1, "overall_row": 1},
        ],
    }
    svg = panel_chart({"table": table}, panel)
    assert titles(svg)[1:] == ["israel, Alpha, local: 70.0 % [40.0, 90.0]", "israel, Alpha, en: 50.0 % [20.0, 80.0]"]
    root = ET.fromstring(svg)
    dashed = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-dasharray")]
    assert len(dashed) == 1  # the pass line
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "israel (pass line 60.0 %)" in texts and "published" in texts and "pass line" in texts


def test_a_chart_of_no_paired_rows_is_still_a_chart():
    doc = {"model": "m", "settings": {"by": []}, "paired": {"overall": {"n": 0}, "by": {}}}
    assert ET.fromstring(states_chart(doc)).tag == f"{SVG}svg"
    assert list(audit_charts(doc)) == ["states_overall", "delta_overall"]

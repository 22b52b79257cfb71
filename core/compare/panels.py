"""A comparison's panels: per benchmark with a stratum shown, its headline cells laid out as a
figure of panels (one per level of its first stratum, a group per model, a bar per language),
each cell pointing at its row of the table, never recomputed (`figure` draws them, and the page
and the Markdown show them as tables).
"""

from __future__ import annotations

from ..audit.pairing import manifest_language
from .deltas import WITH
from .entries import Entry
from .table import OVERALL


def panel_rows(
    table: list[dict], runs: list[dict], pass_lines: list[dict], by: dict[str, list[str]], entries: list[Entry]
) -> list[dict]:
    """Per benchmark with a stratum shown, its headline cells laid out as a figure of panels: one
    panel per level of its first stratum (a country), one group per model, one bar per language,
    and each panel's pass line where the benchmark's pass verdicts name that level (`scope`). A
    cell points at its row of the table (`row`), and, where the experiment holds that level alone, at
    its overall row (`overall_row`: the published accuracy beside medvqa's, where the run was
    imported from published results): the values are the table's, never recomputed.
    The condition is C+Q+I where held (the model saw the image), else the first."""
    out = []
    # an experiment is its model on its benchmark: one model name may head runs of several exams,
    # each in its own language
    ranks = {
        (e.benchmark.name, e.model): (
            e.benchmark.offered_languages.index(lang)
            if (lang := manifest_language(e.runs[0].manifest)) in e.benchmark.offered_languages
            else len(e.benchmark.offered_languages)
        )
        for e in entries
    }
    info = {(r["benchmark"], r["model"]): r for r in runs}
    for bench, strata in by.items():
        if not strata:
            continue
        stratum = strata[0]
        rows = [(i, r) for i, r in enumerate(table) if r["benchmark"] == bench and r["stratum"] == stratum]
        conditions = list(dict.fromkeys(r["condition"] for _, r in rows))
        if not rows:
            continue
        condition = WITH if WITH in conditions else conditions[0]
        overall = {
            (r["model"], r["condition"]): i
            for i, r in enumerate(table)
            if r["benchmark"] == bench and r["stratum"] == OVERALL
        }
        cells = [
            {
                "level": r["level"],
                "model": info[bench, r["model"]]["model_name"],
                "language": info[bench, r["model"]]["language"],
                "experiment": r["model"],
                "row": i,
            }
            for i, r in rows
            if r["condition"] == condition
        ]
        for c in cells:  # an experiment of this level alone: its overall row (the published accuracy, where imported)
            if info[bench, c["experiment"]]["scope"].get(stratum) == c["level"]:
                c["overall_row"] = overall[(c["experiment"], condition)]
        languages = sorted(
            dict.fromkeys(c["language"] for c in cells),
            key=lambda lang: min(ranks[bench, c["experiment"]] for c in cells if c["language"] == lang),
        )
        lines: dict[str, float] = {}
        for p in pass_lines:
            level, scope_ = p.get("scope", {}).get(stratum), p.get("scope", {})
            if (
                p["benchmark"] == bench
                and level is not None
                and scope_.get("condition", condition) == condition
                and p.get("unit") == "share"
                and isinstance(p.get("required"), (int, float))
            ):
                lines.setdefault(level, p["required"])
        out.append(
            {
                "benchmark": bench,
                "stratum": stratum,
                "condition": condition,
                "levels": sorted(dict.fromkeys(c["level"] for c in cells)),
                "models": list(dict.fromkeys(c["model"] for c in cells)),
                "languages": languages,
                "cells": cells,
                "pass_lines": lines,
            }
        )
    return out

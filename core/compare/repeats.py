"""`compare`'s numbers and Markdown over repeats: one row per experiment with repeats, and
Δlang per repeat and pooled between two experiments that differ only in the language."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..audit.pairing import same_but_language, side
from ..repeat_metrics import repeat_numbers
from ..repeats import language_repeats, n_repeats


def study_repeats(entries: Sequence[Any]) -> list[dict]:
    """`compare`'s numbers over repeats: one row per experiment with repeats (anything with
    `benchmark`, `model`, `records` and `runs`, as `compare.entries.Entry`) holding its
    `repeat_numbers`, and, for two experiments that differ only in the language, Δlang per
    repeat and pooled (`language_repeats`, the exam's own language first). Empty when no run
    has repeats."""
    rows = []
    for e in entries:
        numbers = repeat_numbers(e.records, e.benchmark, e.runs[0].reading)
        if numbers is not None:
            rows.append({"benchmark": e.benchmark.name, "model": e.model, **numbers})
    for i, a in enumerate(entries):
        for b in entries[i + 1 :]:
            if not same_but_language(a.runs, b.runs) or n_repeats(a.records) < 2 or n_repeats(b.records) < 2:
                continue
            first, second = sorted((side(a.runs), side(b.runs)), key=lambda x: x.rank)
            rows.append(
                {
                    "benchmark": a.benchmark.name,
                    "model": a.model,
                    "languages": [first.language, second.language],
                    "delta_lang": language_repeats(first.records, second.records),
                }
            )
    return rows


def repeats_markdown(rows: Sequence[Mapping]) -> list[str]:
    """`compare`'s section on repeats, as Markdown lines (none without repeats)."""
    if not rows:
        return []

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}"

    def pp(x):
        return "-" if x is None else f"{100 * x:+.1f}"

    lines = [
        "## Over repeats (mean, between-repeat SD, item-level 95 % CI; per repeat)",
        "",
        "| benchmark | model | condition | repeats | mean % | SD (pp) | 95 % CI | per repeat % |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    deltas = []
    for row in rows:
        if "delta_lang" in row:
            for cond, d in row["delta_lang"].items():
                deltas.append((row["benchmark"], row["model"], f"Δlang {' − '.join(row['languages'])}, {cond}", d))
            continue
        for cond, c in row["conditions"].items():
            ci = f"{pct(c['ci'][0])}–{pct(c['ci'][1])}" if c["ci"] else "-"
            lines.append(
                f"| {row['benchmark']} | {row['model']} | {cond} | {row['repeats']} | {pct(c['mean'])} | "
                f"{pct(c['between_repeat_sd'])} | {ci} | {' '.join(pct(v) for v in c['per_repeat'])} |"
            )
        if row.get("delta_img"):
            deltas.append((row["benchmark"], row["model"], "Δimg C+Q+I − C+Q", row["delta_img"]))
    if deltas:
        lines += [
            "",
            "| benchmark | model | factor | pooled (pp) | 95 % CI | SD (pp) | per repeat (pp) |",
            "|---|---|---|---:|---|---:|---|",
        ]
        for bench, model, name, d in deltas:
            ci = d["pooled"]["ci"]
            lines.append(
                f"| {bench} | {model} | {name} | {pp(d['pooled']['delta'])} | "
                f"{f'{pp(ci[0])} to {pp(ci[1])}' if ci else '-'} | {pct(d['between_repeat_sd'])} | "
                f"{' '.join(pp(x['delta']) for x in d['per_repeat'])} |"
            )
    methods = sorted({row["method"] for row in rows if "method" in row})
    return [*lines, "", "Item-level intervals: " + "; ".join(methods) + " (docs/runs.md#repeats).", ""]

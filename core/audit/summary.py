"""An audit document in words: its per-model sections (`model_docs`), the paired table's
columns and rows (`PAIRED_COLUMNS`, `strata_rows`) in Markdown (`paired_markdown`), the sentences
on the reading and the refusal rates' scope, and the short summary `medvqa audit` prints
(`summary_markdown`), with the variants' tables in the same shape (`variant_markdown`). The page
(`html`) shows the same columns.
"""

from __future__ import annotations

from .. import stats
from .clusters import intervals_text
from .confidence import confidence_markdown
from .order import order_lines
from .pairs import STATES


def model_docs(doc: dict) -> dict[str, dict]:
    """{model name: per-model section} of an audit document, one run or several."""
    return doc["models"] if "models" in doc else {doc["model"]: doc}


# the paired table's number columns, in Markdown and on the page: (heading, key, number format)
PAIRED_COLUMNS = [
    ("n", "n", "int"),
    *((s, s, "pct") for s in (*STATES, "a_with", "a_removed")),
    ("Δimg", "delta_img", "pp"),
    ("95 % CI", "ci", "ci_pp"),
    ("cluster 95 % CI", "ci_cluster", "ci_pp"),
    ("McNemar mid-p", "mcnemar_p", "p"),
    ("Holm p", "mcnemar_p_holm", "p"),
    ("role", "role", "text"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]
# columns a table shows only where some row has a value
OPTIONAL_COLUMNS = ("warning", "note", "cluster 95 % CI")


def strata_rows(section: dict) -> list[tuple[str, list, dict]]:
    """A paired section's rows as (label, path in the section, row): overall, then one per level
    of each stratum."""
    return [("overall", ["overall"], section["overall"])] + [
        (f"{name} = {level}", ["by", name, level], row)
        for name, levels in section["by"].items()
        for level, row in levels.items()
    ]


def paired_markdown(section: dict, columns: list[tuple[str, str, str]], unpaired: str = "Unpaired items") -> list[str]:
    """A paired section's table (`strata_rows` × `columns`) in Markdown, through the one renderer,
    then the items it left `unpaired` by reason, as lines."""
    import pandas as pd

    from ..render import to_markdown

    frame = pd.DataFrame(
        [[label, *(row.get(key) for _, key, _ in columns)] for label, _, row in strata_rows(section)],
        columns=["stratum", *(heading for heading, _, _ in columns)],
    )
    for name in OPTIONAL_COLUMNS:  # a warning (note, cluster interval) column only where a row has one
        if name in frame and frame[name].isna().all():
            frame = frame.drop(columns=name)
    reasons = ", ".join(f"{v['n']} {reason}" for reason, v in section["unpaired"].items())
    return [
        to_markdown(frame, {heading: kind for heading, _, kind in columns}).rstrip("\n"),
        *(["", f"{unpaired}: {reasons}."] if reasons else []),
    ]


def renamed_columns(names: dict[str, tuple[str, str]]) -> list[tuple[str, str, str]]:
    """`PAIRED_COLUMNS` with the columns keyed in `names` ({key: (heading, key)}) renamed: the
    image-removal table's shape for another paired factor (a variant's)."""
    return [(*names.get(key, (heading, key)), kind) for heading, key, kind in PAIRED_COLUMNS]


def pooled_line(entry: dict) -> str | None:
    """The Δ of a variant entry pooled over a run's repeats (`over_repeats`), as a sentence; None
    for a run without repeats."""
    over = entry.get("over_repeats")
    if not over or over["pooled"]["delta"] is None:
        return None
    pooled, v = over["pooled"], entry["variant"]
    ci = pooled.get("ci")
    interval = f", 95 % CI {100 * ci[0]:+.1f} to {100 * ci[1]:+.1f}" if ci else ""
    return (
        f"Over {len(over['per_repeat'])} repeats: Δ{v} pooled (each item's mean) {100 * pooled['delta']:+.1f} "
        f"points on {pooled['n_items']} items{interval} ({pooled['ci_method']}); the table pairs the last repeat's."
    )


def variant_markdown(variants: dict) -> list[str]:
    """The variants' paired tables (an audit document's `variants`, `variants.variant_sections`)
    as lines: per variant, its table against its base condition in the image-removal table's
    shape, and for the swap the swap against removal on the same items."""
    lines: list[str] = []
    for entry in variants.values():
        base, label, v = entry["base"], entry["label"], entry["variant"]
        lines += [
            "",
            f"Variant {v} ({base} vs {label}, same items and template), refusals {entry['convention']}; "
            f"Δ{v} = {base} − {label} (p10: right under {base} only); statistics as for Δimg:",
            "",
            *paired_markdown(
                entry,
                renamed_columns(
                    {"a_with": (base, "a_base"), "a_removed": (label, f"a_{v}"), "delta_img": (f"Δ{v}", f"delta_{v}")}
                ),
            ),
        ]
        if "circular_accuracy" in entry:
            lines += ["", *order_lines(entry)]
        if (line := pooled_line(entry)) is not None:
            lines += ["", line]
        if (vs := entry.get("vs_removal")) is not None:
            first, second = vs["first"], vs["second"]
            lines += [
                "",
                f"Swap vs removal ({first} vs {second}: is a wrong image worse than none?), refusals "
                f"{vs['convention']}; Δswap_removal = {first} − {second}, negative where a wrong image is worse:",
                "",
                *paired_markdown(
                    vs,
                    renamed_columns(
                        {
                            "a_with": (first, "a_swap"),
                            "a_removed": (second, "a_removed"),
                            "delta_img": ("Δswap_removal", "delta_swap_removal"),
                        }
                    ),
                ),
            ]
    return lines


def reading_text(doc: dict) -> str:
    """Which reading an audit document's records were read under (per benchmark where they differ)."""
    readings = doc.get("readings") or {}
    said = (
        (doc.get("reading") or "strict")
        if doc.get("reading") != "mixed"
        else "each benchmark's protocol's (" + ", ".join(f"{b} {r}" for b, r in readings.items()) + ")"
    )
    return (
        f"Reading: {said}: every count, Δ and test reads replies so (--reading strict|assisted "
        "switches; docs/scoring.md)."
    )


def refusal_scope(refusals: dict) -> str:
    """Which items a refusal-rate table counts: "over the 75 paired items" (those of the
    image-removal table above it), or every item of a run without pairs."""
    over = refusals.get("rates_over") or {}
    if over.get("scope") == "paired":
        return f"over the {over['items']} paired items of the table above"
    return f"over all {over.get('items', 0)} items" if over else "over all records"


def summary_markdown(doc: dict) -> str:
    """A short human-readable summary: which reading, how runs were paired, per model the paired
    rows (overall and by stratum) with the image items left unpaired, refusal rates and the
    image-as-options control, as Markdown."""
    from ..render import percent as pct

    lines = [reading_text(doc), ""]
    lines += [f"Note: {note}" for note in doc.get("notes", [])] + ([""] if doc.get("notes") else [])
    for name, m in model_docs(doc).items():
        p = m["paired"]
        lines += [f"## {name}", ""]
        if p["overall"]["n"] or p["unpaired"]:
            table, *unpaired = paired_markdown(p, PAIRED_COLUMNS, "Unpaired image items")
            lines += [
                f"Image removal (C+Q+I vs C+Q), refusals {p['convention']}:",
                "",
                table,
                "",
                "95 % CI of Δimg: Tango's score interval for paired proportions; McNemar mid-p "
                "(Fagerland, Lydersen & Laake 2013; the exact conditional p is in --json); Holm p: adjusted by "
                "Holm's method over the tested levels of each stratum. The overall row is the pre-specified "
                f"primary Δimg; strata are secondary, and one of fewer than {stats.MIN_TESTED} pairs is "
                "descriptive (no test).",
                f"Intervals: {intervals_text(doc)}",
                *unpaired,
            ]
        else:  # a text-only run: no table of nothing
            lines.append("Image removal: no image items in these records, so no pairs.")
        rates = ", ".join(f"{c} {pct(v['rate'])} %" for c, v in m["refusals"]["rates"].items())
        io = m["io_control"]
        lines += ["", f"Refusal rates ({refusal_scope(m['refusals'])}): {rates or 'no records'}."]
        if io["n"]:  # items whose options are in the image only
            lines.append(
                f"Image-as-options control: n {io['n']}, baseline {pct(io['baseline'])} %, with image "
                f"{pct(io['a_with'])} %, removed {pct(io['a_removed'])} %, stem leakage hits "
                f"{io['leakage_hits']}."
            )
        lines += variant_markdown(m.get("variants") or {})  # (after the refusal rates of the image-removal pairs)
        lines += confidence_markdown(m.get("confidence"))
        lines.append("")
    return "\n".join(lines)

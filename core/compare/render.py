"""A comparison (`Comparison`) as text: Markdown, CSV, LaTeX or JSON (`render`, by format; the
HTML page is `page`'s), or its long table as a Parquet file.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..audit.between_models import BETWEEN_MODELS_TEXT
from ..audit.clusters import intervals_text
from ..render import to_csv, to_latex, to_markdown
from .comparison import Comparison
from .frames import (
    ABSTENTION,
    ABSTENTION_TEXT,
    ABSTENTION_TITLE,
    CALIBRATION,
    CALIBRATION_TITLE,
    CLUSTERED,
    DELTA,
    LANGUAGE,
    STRATUM,
    TESTS,
    VARIANT,
    formats,
    frame,
    headline_frame,
    panel_frame,
    panel_title,
    pass_frame,
    reading_line,
)
from .page import page
from .repeats import repeats_markdown
from .table import OVERALL

FORMATS = ("md", "csv", "latex", "json", "html", "parquet")


def _markdown_table(doc: dict, section: str, spec: list, stratum: str | None = None) -> str:
    return to_markdown(frame(doc, section, spec, stratum), formats(spec))


def markdown(doc: dict) -> str:
    lines = [
        reading_line(doc),
        "",
        "## Headline metric (% [95 % CI], n, non-answers)",
        "",
        to_markdown(headline_frame(doc)),
        "## Visual reliance: Δimg = C+Q+I − C+Q on the same items",
        "",
        _markdown_table(doc, "delta_img", DELTA)
        if doc["delta_img"]
        else "No run holds both C+Q+I and C+Q records of the same items.\n",
    ]
    if doc.get("delta_variants"):
        lines += [
            "## Image variants: Δ = the base condition − its variant on the same items",
            "",
            _markdown_table(doc, "delta_variants", VARIANT),
        ]
    if doc.get("delta_lang"):
        lines += [
            "## Language: Δlang = the exam's language − the other, same items and condition",
            "",
            _markdown_table(doc, "delta_lang", LANGUAGE),
        ]
    for panel in doc.get("panels") or []:
        lines += [f"## {panel_title(panel)}", "", to_markdown(panel_frame(doc, panel)[0])]
    lines += [
        "## Models compared on the same items",
        "",
        _markdown_table(doc, "tests", TESTS) + f"\n{BETWEEN_MODELS_TEXT}\n"
        if doc["tests"]
        else "No two models on the same benchmark.\n",
    ]
    if doc["pass_lines"]:
        lines += ["## Pass lines (one row per exam and criterion)", "", to_markdown(pass_frame(doc))]
    if doc.get("calibration"):
        lines += [f"## {CALIBRATION_TITLE}", "", _markdown_table(doc, "calibration", CALIBRATION)]
    if doc.get("abstention"):
        lines += [
            f"## {ABSTENTION_TITLE}",
            "",
            _markdown_table(doc, "abstention", ABSTENTION) + f"\n{ABSTENTION_TEXT}\n",
        ]
    lines += repeats_markdown(doc.get("repeats") or [])
    if doc.get("usage"):
        lines += [
            "## Tokens and cost (per model, benchmark and condition)",
            "",
            "| model | benchmark | condition | prompt | completion | reasoning | cost (USD) |",
            "|---|---|---|---:|---:|---:|---:|",
            *(
                f"| {u['model']} | {u['benchmark']} | {u['condition']} | {u['prompt_tokens']:,} | "
                f"{u['completion_tokens']:,} | {u['reasoning_tokens']:,} | {u['cost_usd']:.4f} |"
                for u in doc["usage"]
            ),
            "",
        ]
    for stratum in dict.fromkeys(r["stratum"] for r in doc["table"] if r["stratum"] != OVERALL):
        lines += [f"## By {stratum}", "", _markdown_table(doc, "table", STRATUM, stratum)]
    cluster = (doc.get("intervals") or {}).get("cluster")
    if cluster:
        lines += [
            f"## Cluster-bootstrap intervals ({cluster}), beside the item-level ones",
            "",
            _markdown_table(doc, "table", CLUSTERED, OVERALL),
        ]
    methods = sorted(
        {r["ci_method"] for rows in (doc["table"], doc["delta_img"], doc["tests"]) for r in rows if r.get("ci_method")}
    )
    if methods:
        lines += [
            "Intervals: " + ", ".join(methods) + " (each row's `ci_method` in --json; docs/audit.md). A "
            'bootstrap p shown as 1/B is an upper bound (`p_bound: "<"` in --json); McNemar\'s p is the mid-p '
            "(the exact conditional p is `mcnemar_exact_p` / `exact_p` in --json)."
            + (f" {intervals_text(doc)}" if doc.get("intervals") else ""),
            "",
        ]
    if doc["notes"]:
        lines += ["Notes:", "", *(f"- {n}" for n in doc["notes"])]
    return "\n".join(lines) + "\n"


def latex(comparison: Comparison) -> str:
    doc = comparison.as_json()
    out = to_latex(
        headline_frame(doc),
        caption="Headline metric per benchmark and condition (% [95 % CI], n, non-answers)",
        notes=[reading_line(doc), *comparison.notes],
    )
    if doc["delta_img"]:
        out += to_latex(
            frame(doc, "delta_img", DELTA),
            caption="Visual reliance: C+Q+I vs C+Q on the same items",
            formats=formats(DELTA),
        )
    if doc.get("delta_variants"):
        out += to_latex(
            frame(doc, "delta_variants", VARIANT),
            caption="Image variants: the base condition vs its variant on the same items",
            formats=formats(VARIANT),
        )
    if doc["pass_lines"]:
        out += to_latex(pass_frame(doc), caption="Pass lines (one row per exam and criterion)")
    if doc.get("calibration"):
        out += to_latex(frame(doc, "calibration", CALIBRATION), caption=CALIBRATION_TITLE, formats=formats(CALIBRATION))
    if doc.get("abstention"):
        out += to_latex(
            frame(doc, "abstention", ABSTENTION),
            caption=ABSTENTION_TITLE,
            formats=formats(ABSTENTION),
            notes=[ABSTENTION_TEXT],
        )
    return out


def render(comparison: Comparison, fmt: str) -> str:
    writers = {
        "json": lambda c: json.dumps(c.as_json(), ensure_ascii=False, indent=1, default=str, allow_nan=False),
        "latex": latex,
        "md": lambda c: markdown(c.as_json()),
        "csv": lambda c: to_csv(c.table),
        "html": lambda c: page(c.as_json()),
    }
    if fmt not in writers:
        raise ValueError(f"unknown format {fmt!r}; choose {', '.join(FORMATS)}")
    return writers[fmt](comparison)


def write_parquet(comparison: Comparison, path: Path) -> Path:
    """The long table as a Parquet file (needs pyarrow: `pip install 'medvqa[parquet]'`)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError(
            "--format parquet needs pyarrow, which is not installed: pip install 'medvqa[parquet]' "
            "(or choose --format csv)"
        ) from None
    from ..files import write_atomic

    return write_atomic(path, lambda fh: comparison.table.to_parquet(fh, index=False))

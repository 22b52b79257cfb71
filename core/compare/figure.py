"""A comparison's panels (`Comparison.panels`) as a figure: one panel per stratum level (a
country), one group of bars per model, one bar per language with its 95 % CI (and, for runs
imported from published results, a black tick at the published accuracy), and the level's
pass line where the benchmark declares one: the layout of WorldMedQA-V's Figure 2, for any
benchmark whose runs differ by a stratum and a language.

Every value is read from the comparison document's table row the cell points at: the figure
draws the numbers the table shows. Built on `matplotlib.figure.Figure` (no pyplot), with the
audit figures' fonts (`core/audit/figures.py`): Japanese, Hebrew and Latin labels in real glyphs;
SVG text is drawn as paths, so the file shows it without any font installed. This is what
`medvqa compare --figure FILE` writes; the page draws the same panels as SVG markup
(`core/audit/charts.py`).
"""

from __future__ import annotations

import math
import re
from functools import partial
from pathlib import Path

import numpy as np
from matplotlib.artist import Artist
from matplotlib.figure import Figure

from ..audit.charts import LANGUAGE_COLOURS, PASS_COLOUR
from ..audit.figures import figure_style
from ..render import percent

# a run of right-to-left letters (Hebrew, Arabic), with the spaces and marks between them
_RTL_RUN = re.compile(
    r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]+(?:[ \u05be\u05f3\u05f4'\"-]+"
    r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]+)*"
)


def visual(text: str) -> str:
    """A label as matplotlib should draw it: matplotlib lays text out left to right in stored
    order, so each run of Hebrew (or Arabic) letters is reversed to read right to left; the rest
    (Latin, digits, Japanese) stays as it is."""
    return _RTL_RUN.sub(lambda m: m.group(0)[::-1], str(text))


FIGURE_SUFFIXES = (".png", ".svg")


def _value(doc: dict, cell: dict, key: str):
    return doc["table"][cell["row"]].get(key)


def panel_figure(doc: dict, panel: dict) -> Figure:
    """The figure of one benchmark's panel view (`doc["panels"][k]`)."""
    levels, models, languages = panel["levels"], panel["models"], panel["languages"]
    cells = {(c["level"], c["model"], c["language"]): c for c in panel["cells"]}
    ncols = 2 if len(levels) == 4 else min(len(levels), 3) or 1
    nrows = math.ceil(len(levels) / ncols) or 1
    width = max(6.0, min(16.0, 0.55 * len(models) * len(languages) * ncols + 2))
    fig = Figure(figsize=(width, 3.2 * nrows + 0.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False).ravel())
    bar = 0.8 / max(1, len(languages))
    x = np.arange(len(models))
    for ax, level in zip(axes, levels):
        for k, lang in enumerate(languages):
            here = [cells.get((level, m, lang)) for m in models]
            values = [
                100 * _value(doc, c, "value") if c and _value(doc, c, "value") is not None else np.nan for c in here
            ]
            low = [
                v - 100 * _value(doc, c, "ci_low") if c and _value(doc, c, "ci_low") is not None else 0
                for v, c in zip(values, here)
            ]
            high = [
                100 * _value(doc, c, "ci_high") - v if c and _value(doc, c, "ci_high") is not None else 0
                for v, c in zip(values, here)
            ]
            pos = x - 0.4 + bar * (k + 0.5)
            ax.bar(
                pos,
                values,
                bar * 0.95,
                yerr=[low, high],
                capsize=2,
                error_kw={"linewidth": 0.7},
                color=LANGUAGE_COLOURS[k % len(LANGUAGE_COLOURS)],
                label=lang,
            )
            said = [
                100 * doc["table"][c["overall_row"]]["published_accuracy"]
                if c and "overall_row" in c and doc["table"][c["overall_row"]].get("published_accuracy") is not None
                else np.nan
                for c in here
            ]
            if not np.isnan(said).all():
                ax.scatter(pos, said, marker="_", s=90, linewidths=2, color="black", zorder=3, label="published")
            for p, v in zip(pos, values):
                if not np.isnan(v):
                    ax.text(p, 1.5, percent(v / 100), ha="center", va="bottom", rotation=90, fontsize=6, color="white")
        line = panel["pass_lines"].get(level)
        if line is not None:
            ax.axhline(100 * line, color=PASS_COLOUR, linestyle="--", linewidth=1.2, label="pass line")
        ax.set_title(visual(level) if line is None else f"{visual(level)} (pass line {percent(line)} %)", fontsize=10)
        ax.set_xticks(x, [visual(m) for m in models], rotation=35, ha="right", fontsize=7)
        ax.set_ylim(0, 100)
        ax.set_ylabel(f"{panel['condition']} accuracy %", fontsize=8)
    handles: dict[str, Artist] = {}
    for ax in axes[: len(levels)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(
        list(handles.values()), list(handles), loc="outside lower center", ncol=len(handles), fontsize=8, frameon=False
    )
    for ax in axes[len(levels) :]:
        ax.set_visible(False)
    fig.suptitle(
        f"{panel['benchmark']}: accuracy by {panel['stratum']} and language ({panel['condition']}), 95 % CI, pass line",
        fontsize=10,
    )
    return fig


def write_panel_figure(doc: dict, path: Path) -> list[Path]:
    """The first panel view of `doc` as PNG or SVG at `path` (by its suffix); with several
    benchmarks holding panels, one file per benchmark beside it (`<stem>-<benchmark><suffix>`)."""
    path = Path(path)
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise ValueError(f"--figure writes PNG or SVG: give a file ending in .png or .svg, not {path.name!r}")
    panels = doc.get("panels") or []
    if not panels:
        raise ValueError("no figure to draw: no run's records hold a stratum to draw panels of (see --by)")
    from ..files import write_atomic

    written = []
    with figure_style():
        for i, panel in enumerate(panels):
            target = path if i == 0 else path.with_name(f"{path.stem}-{panel['benchmark']}{path.suffix}")
            fig = panel_figure(doc, panel)
            written.append(write_atomic(target, partial(fig.savefig, format=target.suffix[1:].lower(), dpi=150)))
    return written

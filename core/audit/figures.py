"""Audit figures from an audit document: stacked bars of the four transition states per
stratum, Δimg by stratum (models and cohorts) and a model × stratum heatmap of Δimg.

Figures are built on `matplotlib.figure.Figure` (no pyplot, no GUI): PNG goes through Agg,
SVG through matplotlib's SVG writer, so they render headless.
"""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from functools import lru_cache, partial
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import font_manager, rc_context
from matplotlib.figure import Figure

from .charts import STATE_COLOURS, STATE_NAMES, chart_names, factor_rows, paired_rows
from .pairs import STATES

# Each figure's files: (suffix, `Figure.savefig` options).
FORMATS: tuple[tuple[str, dict[str, Any]], ...] = ((".png", {"dpi": 150}), (".svg", {}))

# Sans-serif families tried after DejaVu Sans for glyphs it lacks (Japanese, Korean).
_FALLBACK_FONTS = ("IPAexGothic", "IPAGothic", "Noto Sans CJK JP", "Noto Sans CJK KR", "NanumGothic")


def japanese_font_path() -> Path | None:
    """IPAexGothic as shipped by the `matplotlib-fontja` dependency (found without importing
    it: its import restyles matplotlib globally), or None where it is not installed."""
    spec = find_spec("matplotlib_fontja")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "fonts" / "ipaexg.ttf"
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _register_japanese_font() -> None:
    path = japanese_font_path()
    if path is not None:
        font_manager.fontManager.addfont(str(path))


def figure_style() -> AbstractContextManager[None]:
    """Fonts with fallbacks for Japanese and Korean labels; a fixed SVG id salt so output
    is reproducible."""
    _register_japanese_font()
    installed = {f.name for f in font_manager.fontManager.ttflist}
    families = ["DejaVu Sans", *(f for f in _FALLBACK_FONTS if f in installed)]
    # concrete families, not the generic "sans-serif": matplotlib falls back glyph by glyph only
    # across the families listed in font.family
    return rc_context({"font.family": families, "svg.hashsalt": "medvqa"})


def states_figure(doc: dict, field: str | None = None) -> Figure:
    """Stacked horizontal bars of p11, p10, p01, p00 per stratum, one panel per model."""
    rows = paired_rows(doc, field)
    height = sum(max(1, len(r)) for r in rows.values()) * 0.4 + 1.2 * len(rows) + 0.6
    fig = Figure(figsize=(8, max(2.5, height)), layout="constrained")
    axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
    for ax, (model, strata) in zip(axes, rows.items()):
        labels = [f"{k} (n={r['n']})" for k, r in strata.items()]
        y = np.arange(len(labels))
        left = np.zeros(len(labels))
        for state in STATES:
            widths = np.array([100 * r[state] for r in strata.values()])
            ax.barh(y, widths, left=left, color=STATE_COLOURS[state], label=STATE_NAMES[state])
            left += widths
        ax.set_yticks(y, labels)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of paired items")
        ax.set_title(model, fontsize=10)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(f"Image-removal transitions{'' if field is None else f' by {field}'}")
    return fig


def factors_figure(doc: dict, field: str | None = None) -> Figure:
    """Every paired factor's Δ (Δimg, Δswap, ..., Δorder) with its 95 % CI for each model
    (`charts.factor_rows`): the page's factors' forest, for print."""
    series = {name: (rows, True) for name, rows in factor_rows(doc).items()}
    return forest_figure(series, "Paired factors", "Δ = a_base − a_changed (percentage points)")


def delta_figure(doc: dict, field: str | None = None) -> Figure:
    """Δimg (percentage points) per stratum with 95 % CIs for models, and cohort means."""
    series = {name: (strata, True) for name, strata in paired_rows(doc, field).items()}
    series.update(
        {f"cohort: {name}": (strata, False) for name, strata in paired_rows(doc, field, cohorts=True).items()}
    )
    title = f"Δimg{'' if field is None else f' by {field}'}"
    return forest_figure(series, title, "Δimg = a_with − a_removed (percentage points)")


def forest_figure(series: dict[str, tuple[dict[str, dict], bool]], title: str, axis: str) -> Figure:
    """A forest of Δ rows (`delta_img`, `ci`), one row per key, one marker per series: a model with
    its interval, a cohort's mean as a diamond."""
    keys = list(dict.fromkeys(k for strata, _ in series.values() for k in strata))
    fig = Figure(figsize=(8, max(2.5, 0.5 * len(keys) + 1.5)), layout="constrained")
    ax = fig.subplots()
    offsets = np.linspace(-0.3, 0.3, len(series)) if len(series) > 1 else [0.0]
    for i, (offset, (name, (strata, is_model))) in enumerate(zip(offsets, series.items())):
        pos = np.array([keys.index(k) for k in strata], dtype=float) + offset
        values = np.array([100 * r["delta_img"] for r in strata.values()])
        if is_model:
            cis = [r.get("ci") or [r["delta_img"]] * 2 for r in strata.values()]
            err = np.array(
                [
                    [100 * (r["delta_img"] - lo), 100 * (hi - r["delta_img"])]
                    for r, (lo, hi) in zip(strata.values(), cis)
                ]
            ).T
            ax.errorbar(values, pos, xerr=err if len(values) else None, fmt="o", capsize=3, color=f"C{i}", label=name)
        else:
            ax.scatter(values, pos, marker="D", s=40, color=f"C{i}", label=name)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(keys)), keys)
    ax.invert_yaxis()
    ax.set_xlabel(axis)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title)
    return fig


def heatmap_figure(doc: dict, field: str | None = None) -> Figure:
    """Models (rows) × strata (columns) of Δimg in percentage points (the one column "overall"
    when `field` is None)."""
    rows = paired_rows(doc, field)
    keys = list(dict.fromkeys(k for strata in rows.values() for k in strata))
    grid = np.array(
        [[100 * strata[k]["delta_img"] if k in strata else math.nan for k in keys] for strata in rows.values()],
        dtype=float,
    )
    limit = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
    fig = Figure(figsize=(max(4, 1.1 * len(keys) + 2.5), max(2, 0.5 * len(rows) + 1.8)), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(grid, cmap="RdBu", vmin=-max(limit, 1.0), vmax=max(limit, 1.0), aspect="auto")
    for (i, j), v in np.ndenumerate(grid):
        if np.isfinite(v):
            ax.text(
                j,
                i,
                f"{v:.1f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if abs(v) > 0.6 * max(limit, 1.0) else "black",
            )
    ax.set_xticks(range(len(keys)), keys, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), list(rows))
    fig.colorbar(image, ax=ax, label="Δimg (pp)")
    ax.set_title(f"Δimg: model × {field}")
    return fig


def figures(doc: dict) -> dict[str, Figure]:
    """Every audit figure by file stem: overall states and Δimg, then per `--by` field that has
    paired strata."""
    draw = {"states": states_figure, "delta": delta_figure, "heatmap": heatmap_figure, "factors": factors_figure}
    with figure_style():
        return {name: draw[kind](doc, field) for name, kind, field in chart_names(doc)}


def save_figures(doc: dict, out_dir: Path) -> list[Path]:
    """Write every figure as PNG and SVG into `out_dir`; returns the files written."""
    from ..files import write_atomic

    written = []
    with figure_style():
        for stem, fig in figures(doc).items():
            for suffix, extra in FORMATS:
                written.append(
                    write_atomic(Path(out_dir) / f"{stem}{suffix}", partial(fig.savefig, format=suffix[1:], **extra))
                )
    return written

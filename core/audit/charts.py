"""The charts of the HTML pages, written as SVG markup (`svg`): the audit's transition states,
Δimg and heatmap per stratum, a comparison's panels (WorldMedQA-V's Figure 2 layout), and the
exam-date curves (accuracy by exam year, split at a model's declared knowledge cutoff).
`medvqa audit --figures DIR` and `medvqa compare --figure FILE` still write matplotlib figures
(PNG and SVG files for print: `core/audit/figures.py`, `core/compare/figure.py`); both draw
the numbers of the same document.
"""

from __future__ import annotations

import math
import re

from ..cutoffs import parse_cutoff, side
from ..render import percent
from .pairs import STATES
from .summary import model_docs
from .svg import ROW, Svg, round_ticks, text_width, x_axis

STATE_COLOURS = {"p11": "#4c9a2a", "p10": "#2b6cb0", "p01": "#dd6b20", "p00": "#a0aec0"}
STATE_NAMES = {
    "p11": "correct in both",
    "p10": "correct only with image",
    "p01": "correct only without image",
    "p00": "wrong in both",
}
SERIES_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
LANGUAGE_COLOURS = ("#2b6cb0", "#dd6b20", "#4c9a2a", "#805ad5")
PASS_COLOUR = "#c53030"


def paired_rows(doc: dict, field: str | None, cohorts: bool = False) -> dict[str, dict[str, dict]]:
    """{model (cohort with `cohorts`): {stratum: paired row}}, rows over no pair (no member model)
    left out; the single stratum "overall" when `field` is None. The charts and the figures
    (`core/audit/figures.py`) draw these rows."""
    out, count = {}, "n_models" if cohorts else "n"
    for name, m in ((doc.get("cohorts") or {}) if cohorts else model_docs(doc)).items():
        rows = {"overall": m["paired"]["overall"]} if field is None else m["paired"]["by"].get(field, {})
        out[name] = {k: r for k, r in rows.items() if r.get(count)}
    return out


def states_chart(doc: dict, field: str | None = None) -> str:
    """Stacked bars of p11, p10, p01, p00 per stratum, one panel per model."""
    rows = paired_rows(doc, field)
    labels = {m: [f"{k} (n={r['n']})" for k, r in strata.items()] for m, strata in rows.items()}
    gutter = 12 + max([text_width(t) for ls in labels.values() for t in ls] or [40])
    left, right = gutter, gutter + 420
    title = f"Image-removal transitions{'' if field is None else f' by {field}'}"
    height = 34 + sum(24 + ROW * max(1, len(s)) + 40 for s in rows.values()) + 24
    svg = Svg(right + 24, height, title)
    svg.text((right + 24) / 2, 20, title, anchor="middle", size=13, bold=True)
    y = 34
    for model, strata in rows.items():
        svg.text(left + (right - left) / 2, y + 14, model, anchor="middle", size=11, bold=True)
        y += 24
        for label, row in zip(labels[model], strata.values()):
            svg.text(left - 6, y + ROW / 2 + 4, label, anchor="end")
            x = left
            for state in STATES:
                w = (right - left) * row[state]
                svg.rect(
                    x,
                    y + 3,
                    w,
                    ROW - 6,
                    STATE_COLOURS[state],
                    f"{model}, {label}: {STATE_NAMES[state]} {percent(row[state])} %",
                )
                x += w
            y += ROW
        x_axis(svg, left, right, y + 2, 0, 100, [0, 25, 50, 75, 100], "% of paired items")
        y += 40
    svg.legend([(STATE_NAMES[s], STATE_COLOURS[s]) for s in STATES], y + 12)
    return svg.render()


def factor_rows(doc: dict) -> dict[str, dict[str, dict]]:
    """{model: {factor: its overall paired row, the Δ under "delta_img"}}: Δimg and the Δ of each
    variant factor the audit holds (`variants`), the rows of the factors' forest; None where the
    audit holds no variant."""
    out: dict[str, dict[str, dict]] = {}
    for name, m in model_docs(doc).items():
        rows = {"Δimg (image removed)": m["paired"]["overall"]}
        for key, entry in (m.get("variants") or {}).items():
            row = entry["overall"]
            rows[f"Δ{key}"] = {**row, "delta_img": row[f"delta_{entry['variant']}"]}
        out[name] = {k: r for k, r in rows.items() if r.get("n") and r.get("delta_img") is not None}
    return out


def has_factors(doc: dict) -> bool:
    """Whether the audit holds a variant factor (and so a factors' forest)."""
    return any(m.get("variants") for m in model_docs(doc).values())


def factors_chart(doc: dict, field: str | None = None) -> str:
    """Every paired factor's Δ (Δimg, Δswap, Δblur, ..., Δorder; percentage points) with its 95 %
    CI for each model: the forest of what each control moves."""
    series = [(name, rows, True) for name, rows in factor_rows(doc).items()]
    return forest(series, "Paired factors", "Δ = a_base − a_changed (percentage points)")


def delta_chart(doc: dict, field: str | None = None) -> str:
    """Δimg (percentage points) per stratum with its 95 % CI for each model, and cohort means."""
    series = [(name, strata, True) for name, strata in paired_rows(doc, field).items()]
    series += [(f"cohort: {name}", strata, False) for name, strata in paired_rows(doc, field, cohorts=True).items()]
    title = f"Δimg{'' if field is None else f' by {field}'}"
    return forest(series, title, "Δimg = a_with − a_removed (percentage points)", "Δimg ")


def forest(series: list[tuple[str, dict[str, dict], bool]], title: str, axis: str, measure: str = "") -> str:
    """A forest of Δ rows (`delta_img`, `ci`): one row per key, one marker per series (a model, with
    its interval; a cohort's mean, a diamond); `measure` names the Δ in each marker's tip."""
    keys = list(dict.fromkeys(k for _, strata, _ in series for k in strata))
    values = [0.0]
    for _, strata, is_model in series:
        for r in strata.values():
            values += [100 * v for v in (r.get("ci") or []) if v is not None] if is_model else []
            values.append(100 * r["delta_img"])
    lo, hi = min(values), max(values)
    pad = max(1.0, 0.05 * (hi - lo))
    ticks = round_ticks(lo - pad, hi + pad)
    lo, hi = min(ticks[0], lo - pad), max(ticks[-1], hi + pad)
    gutter = 12 + max([text_width(k) for k in keys] or [40])
    left, right = gutter, gutter + 420
    scale = (right - left) / (hi - lo)
    band = ROW + 6 * max(0, len(series) - 1)
    top = 34
    height = top + band * max(1, len(keys)) + 46 + 20
    svg = Svg(right + 24, height, title)
    svg.text((right + 24) / 2, 20, title, anchor="middle", size=13, bold=True)
    bottom = top + band * len(keys)
    zero = left + (0 - lo) * scale
    for i, key in enumerate(keys):
        svg.text(left - 6, top + band * i + band / 2 + 4, key, anchor="end")
    svg.line(zero, top, zero, bottom, stroke="#000", width=0.8)
    offsets = [0.0] if len(series) == 1 else [-0.3 + 0.6 * i / (len(series) - 1) for i in range(len(series))]
    for i, (offset, (name, strata, is_model)) in enumerate(zip(offsets, series)):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        for key, r in strata.items():
            y = top + band * keys.index(key) + band / 2 + offset * band
            x = left + (100 * r["delta_img"] - lo) * scale
            ci = r.get("ci") if is_model else None
            tip = f"{name}, {key}: {measure}{100 * r['delta_img']:+.1f} pp"
            if ci and None not in ci:
                x1, x2 = (left + (100 * v - lo) * scale for v in ci)
                svg.line(x1, y, x2, y, stroke=colour, width=1.4)
                svg.line(x1, y - 3, x1, y + 3, stroke=colour, width=1.4)
                svg.line(x2, y - 3, x2, y + 3, stroke=colour, width=1.4)
                tip += f" [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"
            svg.marker(x, y, colour, tip, "circle" if is_model else "diamond")
    x_axis(svg, left, right, bottom + 2, lo, hi, ticks, axis)
    svg.legend([(name, SERIES_COLOURS[i % len(SERIES_COLOURS)]) for i, (name, _, _) in enumerate(series)], bottom + 58)
    return svg.render()


def diverging(value: float, limit: float) -> str:
    """A colour from red (−limit) through white (0) to blue (+limit), as matplotlib's RdBu."""
    t = max(-1.0, min(1.0, value / limit)) if limit else 0.0
    end = (33, 102, 172) if t > 0 else (178, 24, 43)
    r, g, b = (round(255 + (e - 255) * abs(t)) for e in end)
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_chart(doc: dict, field: str | None = None) -> str:
    """Models (rows) × strata (columns) of Δimg in percentage points (the one column "overall"
    when `field` is None)."""
    rows = paired_rows(doc, field)
    keys = list(dict.fromkeys(k for strata in rows.values() for k in strata))
    values = [100 * r["delta_img"] for strata in rows.values() for r in strata.values()]
    limit = max([1.0, *(abs(v) for v in values)])
    gutter = 12 + max([text_width(m) for m in rows] or [40])
    cell_w, cell_h = 64, 26
    head = 20 + max([text_width(k) * 0.6 for k in keys] or [20]) + 10
    title = f"Δimg: model × {field}"
    width = gutter + cell_w * len(keys) + 24
    svg = Svg(max(width, text_width(title, 13) + 24), head + 20 + cell_h * len(rows) + 16, title)
    svg.text(svg.width / 2, 18, title, anchor="middle", size=13, bold=True)
    top = head + 20
    for j, key in enumerate(keys):
        x = gutter + cell_w * j + cell_w / 2
        svg.text(x, top - 6, key, anchor="start", size=10, rotate=-35)
    for i, (model, strata) in enumerate(rows.items()):
        y = top + cell_h * i
        svg.text(gutter - 6, y + cell_h / 2 + 4, model, anchor="end")
        for j, key in enumerate(keys):
            if key not in strata:
                continue
            v = 100 * strata[key]["delta_img"]
            svg.rect(
                gutter + cell_w * j,
                y,
                cell_w - 1,
                cell_h - 1,
                diverging(v, limit),
                f"{model}, {key}: Δimg {v:+.1f} pp",
                stroke="#cbd5e0",
            )
            svg.text(
                gutter + cell_w * j + cell_w / 2,
                y + cell_h / 2 + 4,
                f"{v:.1f}",
                anchor="middle",
                size=10,
                fill="#fff" if abs(v) > 0.6 * limit else "#000",
            )
    return svg.render()


def chart_names(doc: dict) -> list[tuple[str, str, str | None]]:
    """(name, kind, field) of every audit chart, the page's and the figure files' alike: the
    overall states and Δimg, the paired factors' forest where the audit holds variants, then per
    `--by` field that has paired strata its states, Δimg and heatmap (kind "states", "delta",
    "factors" or "heatmap")."""
    out: list[tuple[str, str, str | None]] = [("states_overall", "states", None), ("delta_overall", "delta", None)]
    if has_factors(doc):  # (only where the audit holds a variant)
        out.append(("factors", "factors", None))
    for field in doc["settings"]["by"]:
        if any(paired_rows(doc, field).values()):
            slug = re.sub(r"[^A-Za-z0-9_-]+", "_", field)
            out += [
                (f"states_by_{slug}", "states", field),
                (f"delta_by_{slug}", "delta", field),
                (f"heatmap_{slug}", "heatmap", field),
            ]
    return out


def audit_charts(doc: dict) -> dict[str, str]:
    """Every audit chart by name (`chart_names`), as SVG markup."""
    draw = {"states": states_chart, "delta": delta_chart, "heatmap": heatmap_chart, "factors": factors_chart}
    return {name: draw[kind](doc, field) for name, kind, field in chart_names(doc)}


def panel_chart(doc: dict, panel: dict) -> str:
    """A comparison's panel view (`doc["panels"][k]`): one panel per level (a country), one group
    of bars per model, one bar per language with its 95 % CI whisker, a black tick at the published
    accuracy where the run holds one, and the level's pass line, dashed."""
    levels, models, languages = panel["levels"], panel["models"], panel["languages"]
    cells = {(c["level"], c["model"], c["language"]): c for c in panel["cells"]}
    table = doc["table"]
    ncols = 2 if len(levels) == 4 else min(len(levels), 3) or 1
    nrows = math.ceil(len(levels) / ncols) or 1
    bar = 14
    plot_w = max(180, len(models) * (bar * len(languages) + 10))
    label_h = 10 + max([text_width(m, 10) * 0.6 for m in models] or [20])
    plot_h, axis_w = 180, 34
    panel_w, panel_h = axis_w + plot_w + 16, 24 + plot_h + label_h + 10
    title = (
        f"{panel['benchmark']}: accuracy by {panel['stratum']} and language ({panel['condition']}), 95 % CI, pass line"
    )
    svg = Svg(max(ncols * panel_w, text_width(title, 12) + 20), 30 + nrows * panel_h + 30, title)
    svg.text(svg.width / 2, 18, title, anchor="middle", size=12, bold=True)
    for index, level in enumerate(levels):
        ox, oy = (index % ncols) * panel_w + axis_w, 30 + (index // ncols) * panel_h + 24
        line = panel["pass_lines"].get(level)
        svg.text(
            ox + plot_w / 2,
            oy - 8,
            level if line is None else f"{level} (pass line {percent(line)} %)",
            anchor="middle",
            bold=True,
        )

        def y_of(value: float, top: float = oy) -> float:  # (`top`: this panel's, bound as it is drawn)
            return top + plot_h * (1 - value)

        for t in (0, 0.25, 0.5, 0.75, 1.0):
            svg.line(ox - 4, y_of(t), ox, y_of(t))
            svg.text(ox - 6, y_of(t) + 4, f"{100 * t:.0f}", anchor="end", size=9)
        svg.line(ox, oy, ox, oy + plot_h)
        svg.line(ox, oy + plot_h, ox + plot_w, oy + plot_h)
        group = plot_w / max(1, len(models))
        for m_index, model in enumerate(models):
            gx = ox + group * m_index + (group - bar * len(languages)) / 2
            for k, lang in enumerate(languages):
                c = cells.get((level, model, lang))
                row = table[c["row"]] if c else {}
                value = row.get("value")
                x = gx + bar * k
                if value is None:
                    continue
                colour = LANGUAGE_COLOURS[k % len(LANGUAGE_COLOURS)]
                tip = f"{level}, {model}, {lang}: {percent(value)} %"
                low, high = row.get("ci_low"), row.get("ci_high")
                if low is not None and high is not None:
                    tip += f" [{percent(low)}, {percent(high)}]"
                svg.rect(x, y_of(value), bar - 1, plot_h * value, colour, tip)
                if low is not None and high is not None:
                    mid = x + (bar - 1) / 2
                    svg.line(mid, y_of(low), mid, y_of(high), width=0.8)
                    svg.line(mid - 2, y_of(low), mid + 2, y_of(low), width=0.8)
                    svg.line(mid - 2, y_of(high), mid + 2, y_of(high), width=0.8)
                said = table[c["overall_row"]].get("published_accuracy") if c and "overall_row" in c else None
                if said is not None:
                    svg.line(x - 1, y_of(said), x + bar, y_of(said), stroke="#000", width=2.5)
            svg.text(ox + group * m_index + group / 2, oy + plot_h + 10, model, anchor="end", size=9, rotate=-35)
        if line is not None:
            svg.line(ox, y_of(line), ox + plot_w, y_of(line), stroke=PASS_COLOUR, width=1.2, dash="5 3")
    entries = [(lang, LANGUAGE_COLOURS[k % len(LANGUAGE_COLOURS)]) for k, lang in enumerate(languages)]
    entries += [("published", "#000")] * any(
        "overall_row" in c and table[c["overall_row"]].get("published_accuracy") is not None for c in panel["cells"]
    )
    entries += [("pass line", PASS_COLOUR)] * any(v is not None for v in panel["pass_lines"].values())
    svg.legend(entries, svg.height - 12)
    return svg.render()


BEFORE_COLOUR, AFTER_COLOUR = "#2b6cb0", "#dd6b20"


def exam_date_chart(curve: dict, title: str, cutoff: str | None) -> str:
    """One exam-date curve (`contamination.curves.curve`): accuracy by exam year, a point with its
    95 % CI whisker per year, and with a `cutoff` (`YYYY-MM`) a dashed line where it falls, the
    years before it in blue, after it in orange, and each side's pooled accuracy drawn across
    its years (a year the cutoff falls inside is grey, on neither side)."""
    years = list(curve["years"])
    when = parse_cutoff(cutoff) if cutoff else None
    column, plot_h, axis_w, top = 56, 160, 40, 46
    plot_w = column * max(1, len(years))
    svg = Svg(max(axis_w + plot_w + 24, text_width(title, 13) + 24), top + plot_h + 60, title)
    svg.text(svg.width / 2, 20, title, anchor="middle", size=13, bold=True)

    def y_of(value: float) -> float:
        return top + plot_h * (1 - value)

    def x_of(index: float) -> float:
        return axis_w + column * index + column / 2

    for t in (0, 0.25, 0.5, 0.75, 1.0):
        svg.line(axis_w - 4, y_of(t), axis_w + plot_w, y_of(t), stroke="#e2e8f0" if t else "#222", width=0.8)
        svg.text(axis_w - 6, y_of(t) + 4, f"{100 * t:.0f}", anchor="end", size=9)
    svg.line(axis_w, top, axis_w, top + plot_h)
    svg.text(
        axis_w + plot_w / 2, top + plot_h + 34, "exam year; accuracy (%) with its 95 % CI", anchor="middle", size=10
    )
    sides = {y: side(int(y), when) if when else None for y in years}
    colours = {"before": BEFORE_COLOUR, "after": AFTER_COLOUR, "straddles": "#a0aec0", None: "#222"}
    for i, year in enumerate(years):
        cell, x = curve["years"][year], x_of(i)
        svg.text(x, top + plot_h + 16, year, anchor="middle", size=10)
        if cell["accuracy"] is None:
            continue
        colour = colours[sides[year]]
        tip = f"{year}: {percent(cell['accuracy'])} % (n={cell['n']})"
        if cell["ci"]:
            low, high = cell["ci"]
            svg.line(x, y_of(low), x, y_of(high), stroke=colour, width=1.2)
            svg.line(x - 4, y_of(low), x + 4, y_of(low), stroke=colour, width=1.2)
            svg.line(x - 4, y_of(high), x + 4, y_of(high), stroke=colour, width=1.2)
            tip += f" [{percent(low)}, {percent(high)}]"
        svg.marker(x, y_of(cell["accuracy"]), colour, tip)
    if when is None:
        return svg.render()
    # the cutoff between the last year wholly before it and the first after it, or inside the
    # year it falls in, at its month
    before = [i for i, y in enumerate(years) if sides[y] == "before"]
    inside = [i for i, y in enumerate(years) if sides[y] == "straddles"]
    after = [i for i, y in enumerate(years) if sides[y] == "after"]
    at = inside[0] - 0.5 + when[1] / 12 if inside else (before[-1] + 0.5 if before else -0.5)
    x = x_of(at)
    svg.line(x, top - 4, x, top + plot_h, stroke="#c53030", width=1.2, dash="5 3")
    svg.text(x, top - 6, f"cutoff {cutoff}", anchor="middle", size=10, fill="#c53030")
    for name, indices, colour in (("before", before, BEFORE_COLOUR), ("after", after, AFTER_COLOUR)):
        part = curve.get(name) or {}
        if indices and part.get("accuracy") is not None:
            y = y_of(part["accuracy"])
            svg.line(
                x_of(indices[0]) - column / 2 + 4, y, x_of(indices[-1]) + column / 2 - 4, y, stroke=colour, dash="2 2"
            )
            svg.text(
                x_of(indices[-1]) + column / 2 - 4,
                y - 4,
                f"{name} {percent(part['accuracy'])}",
                anchor="end",
                size=9,
                fill=colour,
            )
    svg.legend([("before the cutoff", BEFORE_COLOUR), ("after", AFTER_COLOUR)], svg.height - 8)
    return svg.render()

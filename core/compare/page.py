"""A comparison as one self-contained HTML page: the headline table (each cell linking to the item
browser filtered to its items), a forest plot of Δimg, the Δ, panel, tests, pass and strata tables,
and links to each run's audit page (`write_page` writes the page with those audits and the item
browser beside it).

Every number cell of the page carries `data-path` (the JSON path of its value in the
`medvqa compare --json` document) and `data-format`, so the page can be checked against it.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ..audit.between_models import BETWEEN_MODELS_TEXT
from ..audit.svg import round_ticks, text_width
from ..render import FONT_STACK, bidi_auto, fmt, to_html
from ..render import interval as _ci
from ..render import points as _pp
from .comparison import Comparison
from .frames import (
    ABSTENTION,
    ABSTENTION_TEXT,
    ABSTENTION_TITLE,
    CALIBRATION,
    CALIBRATION_TITLE,
    DELTA,
    LANGUAGE,
    STRATUM,
    TESTS,
    VARIANT,
    columns,
    formats,
    frame,
    metric_label,
    models,
    other_reading,
    overall_index,
    panel_frame,
    panel_title,
    pass_frame,
    reading_line,
)
from .table import OVERALL


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _num(path: list, value: Any, kind: str) -> str:
    return f'<span data-path="{_e(json.dumps(path))}" data-format="{kind}">{fmt(value, kind)}</span>'


def _html_table(doc: dict, section: str, spec: list, table_id: str | None = None, stratum: str | None = None) -> str:
    """`frame(doc, section, spec, stratum)` through the one renderer, each number tagged with its
    JSON path (an interval's each bound); rows of one model carry it for the model filter."""
    table = frame(doc, section, spec, stratum)
    index, columns = [int(i) for i in table.index], {heading: (key, kind) for heading, key, kind in spec}

    def cell(i: int, column: str, text: str) -> str | None:
        key, kind = columns[column]
        src = doc[section][index[i]]
        if key == "warning":  # a Δ's warning, in its own cell, tagged with its path as a number is
            return (
                f'<td class="warning" data-path="{_e(json.dumps([section, index[i], key]))}" '
                f'data-format="text">{text}</td>'
            )
        if kind == "text":
            return None
        if isinstance(key, tuple):
            one = "pp" if kind == "ci_pp" else "pct"
            return "<td>[" + ", ".join(_num([section, index[i], k], src[k], one) for k in key) + "]</td>"
        return f"<td>{_num([section, index[i], key], src[key], kind)}</td>"

    return to_html(
        table,
        formats(spec),
        table_id=table_id,
        cell=cell,
        row_attrs=lambda row: f' data-model="{_e(row["model"])}"' if "model" in row else "",
    )


def _other_html(row: dict, i: int) -> str:
    """The other reading's accuracy under a headline cell, where an extraction makes it differ."""
    other = other_reading(row)
    if other is None:
        return ""
    return (
        f'<br><span class="sub other-reading">{_e(other[0])} '
        f"{_num(['table', i, f'{other[0]}_accuracy'], other[1], 'pct')} %</span>"
    )


def _panel_html(doc: dict, panel: dict, k: int) -> str:
    """A panel view: its figure (SVG inline) and its table, each value tagged with its JSON path."""
    from ..audit.charts import panel_chart

    table, paths = panel_frame(doc, panel)

    def cell(i: int, column: str, text: str) -> str | None:
        path = paths.get((i, column))
        if path is None:
            return None
        r = doc["table"][path[1]]
        c = next(c for c in panel["cells"] if c["row"] == path[1])
        said = ""
        if "overall_row" in c and doc["table"][c["overall_row"]].get("published_accuracy") is not None:
            j = c["overall_row"]
            flag = doc["table"][j].get("published_artifact")
            said = (
                f'<br><span class="sub">published '
                f"{_num(['table', j, 'published_accuracy'], doc['table'][j]['published_accuracy'], 'pct')}"
                + (f" (artifact: {_e(flag)})" if flag else "")
                + "</span>"
            )
        return f'<td>{_num(path, r["value"], "pct")} <span class="sub">n={_e(r["n"])}</span>{said}</td>'

    return (
        f'<h2>{_e(panel_title(panel))}</h2><figure id="panels-{k}" class="panels">{panel_chart(doc, panel)}'
        f"<figcaption>{_e(panel_title(panel))}; bars with 95 % CIs.</figcaption></figure>"
        + to_html(table, table_id=f"panel-table-{k}", cell=cell)
    )


def forest_svg(doc: dict) -> str:
    """Δimg with its 95 % CI per benchmark × model, one row each, on a shared axis in points with
    round ticks; the label column as wide as its longest label, and the chart scales down to the
    page's width (never wider than it)."""
    rows = [d for d in doc["delta_img"] if d["delta_img"] is not None]
    if not rows:
        return "<p>No Δimg to plot: no run holds both C+Q+I and C+Q records of the same items.</p>"
    lo = min(min(d["ci_low"] if d["ci_low"] is not None else d["delta_img"] for d in rows), 0.0)
    hi = max(max(d["ci_high"] if d["ci_high"] is not None else d["delta_img"] for d in rows), 0.0)
    pad = max(0.05, (hi - lo) * 0.1)
    ticks = round_ticks(100 * (lo - pad), 100 * (hi + pad))  # in points
    lo, hi = min(lo - pad, ticks[0] / 100), max(hi + pad, ticks[-1] / 100)
    labels = [f"{d['benchmark']} · {d['model']} (n={d['n']})" for d in rows]
    left = 20 + max(text_width(label, 12) for label in labels)
    width, row_h, top = 420, 26, 30
    height = top + row_h * len(rows) + 40
    total = left + width + 40

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total:.0f}" height="{height}" '
        f'viewBox="0 0 {total:.0f} {height}" role="img" aria-label="Forest plot of Δimg per benchmark and model" '
        f'class="forest">',
        f'<line x1="{x(0):.1f}" y1="{top - 10}" x2="{x(0):.1f}" y2="{height - 30}" stroke="#888" '
        f'stroke-dasharray="4 3"/>',
    ]
    for i, (d, label) in enumerate(zip(rows, labels)):
        y = top + i * row_h + row_h / 2
        parts.append(f'<text x="{left - 10:.1f}" y="{y + 4:.1f}" text-anchor="end" font-size="12">{_e(label)}</text>')
        if d["ci_low"] is not None:
            parts.append(
                f'<line x1="{x(d["ci_low"]):.1f}" y1="{y:.1f}" x2="{x(d["ci_high"]):.1f}" y2="{y:.1f}" '
                f'stroke="#1f5fa8" stroke-width="2"/>'
            )
        parts.append(
            f'<circle class="forest-point" cx="{x(d["delta_img"]):.1f}" cy="{y:.1f}" r="4.5" '
            f'fill="#1f5fa8"><title>{_e(d["benchmark"])} {_e(d["model"])}: Δimg '
            f"{_pp(d['delta_img'])} points {_ci(d['ci_low'], d['ci_high'], _pp)}</title></circle>"
        )
    axis_y = height - 25
    parts.append(f'<line x1="{left:.1f}" y1="{axis_y}" x2="{left + width:.1f}" y2="{axis_y}" stroke="#333"/>')
    for t in ticks:
        parts.append(
            f'<line x1="{x(t / 100):.1f}" y1="{axis_y}" x2="{x(t / 100):.1f}" y2="{axis_y + 4}" stroke="#333"/>'
            f'<text x="{x(t / 100):.1f}" y="{axis_y + 16}" text-anchor="middle" font-size="11">'
            f"{'0' if t == 0 else f'{t:+g}'}</text>"
        )
    parts.append(
        f'<text x="{left + width / 2:.1f}" y="{top - 14}" text-anchor="middle" font-size="12">'
        f"Δimg (points): C+Q+I − C+Q, 95 % CI</text></svg>"
    )
    return "".join(parts)


def _confidence_html(doc: dict) -> list[str]:
    """The calibration table and, per model, its reliability diagram and risk-coverage chart (the
    audit page's, one series per benchmark and condition); the abstention table. Nothing where no
    record carries a confidence."""
    from ..audit.confidence_page import reliability_chart, risk_coverage_chart

    out: list[str] = []
    rows = doc.get("calibration") or []
    if rows:
        out.append(f"<h2>{_e(CALIBRATION_TITLE)}</h2>")
        out.append(_html_table(doc, "calibration", CALIBRATION, "calibration"))
        for k, model in enumerate(dict.fromkeys(r["model"] for r in rows)):
            mine = [r for r in rows if r["model"] == model]
            bins = {f"{r['benchmark']} {r['condition']}": r["reliability"] for r in mine}
            curves = {f"{r['benchmark']} {r['condition']}": r["risk_coverage"] for r in mine}
            out.append(
                f'<div data-model="{_e(model)}"><h3>{_e(model)}</h3>'
                f'<figure id="fig-reliability-{k}" class="confidence">{reliability_chart(bins)}'
                f"<figcaption>{_e(model)}: reliability</figcaption></figure>"
                f'<figure id="fig-risk-coverage-{k}" class="confidence">{risk_coverage_chart(curves)}'
                f"<figcaption>{_e(model)}: risk-coverage</figcaption></figure></div>"
            )
    if doc.get("abstention"):
        out.append(f"<h2>{_e(ABSTENTION_TITLE)}</h2>")
        out.append(
            _html_table(doc, "abstention", ABSTENTION, "abstention") + f'<p class="sub">{_e(ABSTENTION_TEXT)}</p>'
        )
    return out


STYLE = (
    f"body{{font-family:{FONT_STACK};margin:1.5rem;color:#222}}"
    + """table{border-collapse:collapse;margin:.6rem 0 1.4rem}
td,th{border:1px solid #ccc;padding:.25rem .5rem;font-size:.9rem;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}.ci,.sub{color:#666;font-size:.8rem}.hidden{display:none}
td.warning{text-align:left;color:#a00;max-width:28rem}figure.panels svg{max-width:100%;height:auto}
svg.forest{max-width:100%;height:auto}figure.confidence{display:inline-block;margin:.4rem 1rem}
figure.confidence svg{max-width:100%;height:auto}table{display:block;max-width:100%;overflow-x:auto}
code,li{overflow-wrap:anywhere}"""
)

SCRIPT = """(function(){var f=(location.hash.match(/model=([^&]+)/)||[])[1];f=f?decodeURIComponent(f):"";
document.getElementById("filter-state").textContent=f||"all models";
document.querySelectorAll("[data-model]").forEach(function(r){if(f&&r.dataset.model!==f)r.classList.add("hidden");});
})();"""


def page(doc: dict, audit_links: dict[str, str] | None = None, view_href: str | None = None) -> str:
    """The comparison as one HTML page; `audit_links` maps a run source to its audit page;
    `view_href` (relative) is the item browser of the runs, which each headline cell links to
    filtered to its items (model, benchmark, condition)."""
    audit_links = audit_links or {}
    cols, names, index = columns(doc), models(doc), overall_index(doc)
    out = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>medvqa comparison</title>',
        f"<style>{STYLE}</style></head><body><h1>medvqa comparison</h1>",
        f'<p id="reading" data-reading="{_e(doc.get("reading", "strict"))}">{_e(reading_line(doc))}</p>',
        '<p>Model filter (set <code>#model=NAME</code> in the address): <span id="filter-state"></span></p>',
        '<h2>Headline metric per benchmark and condition</h2><table id="headline"><thead><tr><th>model</th>',
    ]
    out += [f'<th>{_e(b)}<br>{_e(c)}<br><span class="sub">{_e(metric_label(doc, b))} %</span></th>' for b, c in cols]
    out.append("</tr></thead><tbody>")
    for m in names:
        out.append(f'<tr data-model="{_e(m)}"><td>{_e(m)}</td>')
        for b, c in cols:
            i = index.get((m, b, c))
            if i is None:
                out.append('<td class="sub">no run</td>')
                continue
            r = doc["table"][i]
            items = ""
            if view_href:  # the item browser, filtered to this cell's items
                href = view_href + "#" + urlencode({"model": m, "benchmark": b, "condition": c, "counted": "1"})
                items = f' <a class="view-link" href="{_e(href)}">items</a>'
            out.append(
                f"<td>{_num(['table', i, 'value'], r['value'], 'pct')} "
                f'<span class="ci">[{_num(["table", i, "ci_low"], r["ci_low"], "pct")}, '
                f"{_num(['table', i, 'ci_high'], r['ci_high'], 'pct')}]</span><br>"
                f'<span class="sub">n {_num(["table", i, "n"], r["n"], "int")} · non-answers '
                f"{_num(['table', i, 'non_answer_rate'], r['non_answer_rate'], 'pct')} %</span>"
                f"{_other_html(r, i)}{items}</td>"
            )
        out.append("</tr>")
    out.append("</tbody></table>")
    out.append("<h2>Visual reliance: Δimg = C+Q+I − C+Q on the same items</h2>")
    out.append(forest_svg(doc))
    if doc["delta_img"]:
        out.append(_html_table(doc, "delta_img", DELTA, "delta"))
    if doc.get("delta_variants"):
        out.append("<h2>Image variants: Δ = the base condition − its variant on the same items</h2>")
        out.append(_html_table(doc, "delta_variants", VARIANT, "delta-variants"))
    if doc.get("delta_lang"):
        out.append("<h2>Language: Δlang = the exam's language − the other, same items and condition</h2>")
        out.append(_html_table(doc, "delta_lang", LANGUAGE, "delta-lang"))
    for k, panel in enumerate(doc.get("panels") or []):
        out.append(_panel_html(doc, panel, k))
    out.append("<h2>Models compared on the same items</h2>")
    out.append(
        _html_table(doc, "tests", TESTS, "tests") + f'<p class="sub">{_e(BETWEEN_MODELS_TEXT)}</p>'
        if doc["tests"]
        else "<p>No two models on the same benchmark.</p>"
    )
    if doc["pass_lines"]:
        out.append("<h2>Pass lines (one row per exam and criterion)</h2>")
        out.append(to_html(pass_frame(doc), table_id="pass", row_attrs=lambda r: f' data-model="{_e(r["model"])}"'))
    out += _confidence_html(doc)
    for stratum in dict.fromkeys(r["stratum"] for r in doc["table"] if r["stratum"] != OVERALL):
        out.append(f"<h2>By {_e(stratum)}</h2>" + _html_table(doc, "table", STRATUM, stratum=stratum))
    out.append('<h2>Runs</h2><ul id="runs">')
    for r in doc["runs"]:
        source = " + ".join(r["runs"])
        link = audit_links.get(source)
        audit = f' · <a class="audit-link" href="{_e(link)}">audit page</a>' if link else ""
        out.append(
            f"<li>{_e(r['benchmark'])} · {_e(r['model'])}: <code>{_e(source)}</code> (data "
            f"{_e(str(r['data_fingerprint'])[:12])}, conditions {_e(', '.join(r['conditions']))}){audit}</li>"
        )
    out.append("</ul>")
    if doc["notes"]:
        out.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in doc["notes"]) + "</ul>")
    out.append(f"<script>{SCRIPT}</script></body></html>\n")
    return bidi_auto("".join(out))


def write_page(comparison: Comparison, path: Path, *, resamples: int | None, seed: int) -> list[Path]:
    """The comparison page at `path` and, beside it in `<stem>-audits/`, one audit page per
    run (or joined runs) it links to. Returns the files written."""
    from ..audit.html import write_html
    from ..audit.runs import audit_saved, distinct
    from ..files import write_atomic
    from ..view import items_page_beside, write_view

    path = Path(path)
    folder = path.parent / f"{path.stem}-audits"
    readings = comparison.reading["readings"]  # each benchmark's records read as the comparison read them
    by_dir = comparison.saved_runs  # the runs compare read, not read again
    items_page = write_view(
        [run.read_as(readings.get(run.benchmark.name)) for run in by_dir.values()], items_page_beside(path)
    )
    written, links = [items_page], {}
    level = comparison.intervals.get("cluster")
    for i, r in enumerate(comparison.runs, 1):
        dirs, repeated = distinct(r["runs"])
        saved = [by_dir[str(Path(d))] for d in dirs]
        # the comparison's intervals, --cluster too, where the run's benchmark declares that level
        declared = level is not None and level in saved[0].benchmark.cluster_levels
        doc = audit_saved(
            saved,
            repeated,
            resamples=resamples,
            seed=seed,
            reading=readings.get(r["benchmark"]),
            cluster=level if declared else "none",
        )
        slug = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{r['benchmark']}-{r['model']}")[:80]
        target = folder / f"{i:02d}-{slug}.html"
        written.append(write_html(doc, target, view_href=f"../{quote(items_page.name)}"))
        links[" + ".join(r["runs"])] = f"./{quote(folder.name)}/{quote(target.name)}"  # relative, never a scheme
    write_atomic(path, page(comparison.as_json(), links, view_href=f"./{quote(items_page.name)}"))
    return [path, *written]

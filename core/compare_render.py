"""A comparison (`core/compare.py`) as text: Markdown, CSV, LaTeX, JSON, Parquet, or one
self-contained HTML page with a forest plot of Δimg and links to each run's audit page.

Every number cell of the HTML page carries `data-path` (the JSON path of its value in the
`medvqa compare --json` document) and `data-format`, so the page can be checked against it.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from medvqa.core.compare import OVERALL, Comparison
from medvqa.core.report import to_latex

FORMATS = ("md", "csv", "latex", "json", "html", "parquet")


def _pct(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"


def _pp(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:+.1f}"


def _p(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3g}"


def _ci(low: Any, high: Any, show=_pct) -> str:
    if low is None or high is None or (isinstance(low, float) and math.isnan(low)):
        return "–"
    return f"[{show(low)}, {show(high)}]"


def columns(doc: dict) -> list[tuple[str, str]]:
    """(benchmark, condition) columns of the headline table, benchmarks in the order given."""
    out = []
    for row in doc["table"]:
        key = (row["benchmark"], row["condition"])
        if row["stratum"] == OVERALL and key not in out:
            out.append(key)
    order = {c: i for i, c in enumerate(("C", "C+Q", "C+I", "C+Q+I"))}
    benches = list(dict.fromkeys(b for b, _ in out))
    return sorted(out, key=lambda k: (benches.index(k[0]), order.get(k[1], 9)))


def models(doc: dict) -> list[str]:
    return list(dict.fromkeys(row["model"] for row in doc["table"]))


def overall_index(doc: dict) -> dict[tuple[str, str, str], int]:
    return {(r["model"], r["benchmark"], r["condition"]): i for i, r in enumerate(doc["table"])
            if r["stratum"] == OVERALL}


def _metric_label(doc: dict, bench: str) -> str:
    metric = next((r["metric"] for r in doc["table"] if r["benchmark"] == bench), "accuracy")
    return metric


def cell_text(row: dict) -> str:
    return (f"{_pct(row['value'])} {_ci(row['ci_low'], row['ci_high'])} n={row['n']}"
            f" na={_pct(row['non_answer_rate'])}%")


def markdown(doc: dict) -> str:
    cols, names, index = columns(doc), models(doc), overall_index(doc)
    lines = ["## Headline metric (% [95 % CI], n, non-answers)", ""]
    head = ["model"] + [f"{b} {c} ({_metric_label(doc, b)})" for b, c in cols]
    lines += ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for m in names:
        cells = [m]
        for b, c in cols:
            i = index.get((m, b, c))
            cells.append("no run" if i is None else cell_text(doc["table"][i]))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Visual reliance: Δimg = C+Q+I − C+Q on the same items (points, [95 % CI], McNemar p)", ""]
    if doc["delta_img"]:
        benches = list(dict.fromkeys(d["benchmark"] for d in doc["delta_img"]))
        lines += ["| model | " + " | ".join(benches) + " |", "|" + "|".join("---" for _ in range(len(benches) + 1)) + "|"]
        by = {(d["model"], d["benchmark"]): d for d in doc["delta_img"]}
        for m in names:
            cells = [m]
            for b in benches:
                d = by.get((m, b))
                cells.append("–" if d is None else f"{_pp(d['delta_img'])} {_ci(d['ci_low'], d['ci_high'], _pp)} "
                                                   f"n={d['n']} p={_p(d['mcnemar_p'])}")
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines.append("No run holds both C+Q+I and C+Q records of the same items.")
    if doc.get("delta_lang"):
        lines += ["", "## Language: Δlang = the exam's language − the other, same items and condition "
                      "(points, [95 % CI], McNemar p)", "",
                  "| model | benchmark | condition | languages | n | first % | second % | Δlang | 95 % CI | p |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for d in doc["delta_lang"]:
            lines.append(f"| {d['model']} | {d['benchmark']} | {d['condition']} | {d['languages']} | {d['n']} | "
                         f"{_pct(d['a_local'])} | {_pct(d['a_other'])} | {_pp(d['delta_lang'])} | "
                         f"{_ci(d['ci_low'], d['ci_high'], _pp)} | {_p(d['mcnemar_p'])} |")
    lines += ["", "## Models compared on the same items", ""]
    if doc["tests"]:
        lines += ["| benchmark | condition | a | b | pairing | n | a % | b % | difference (points) | 95 % CI | test | p |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for t in doc["tests"]:
            pairing = t["status"] + (f" (only a {t['only_a']}, only b {t['only_b']})" if t["status"] != "paired" else "")
            lines.append(f"| {t['benchmark']} | {t['condition']} | {t['a']} | {t['b']} | {pairing} | {t['n']} | "
                         f"{_pct(t['a_value'])} | {_pct(t['b_value'])} | {_pp(t['difference'])} | "
                         f"{_ci(t['ci_low'], t['ci_high'], _pp)} | {t['test'] or 'not compared'} | {_p(t['p'])} |")
    else:
        lines.append("No two models on the same benchmark.")
    if doc["pass_lines"]:
        lines += ["", "## Pass lines", "", "| model | benchmark | verdicts | detail |", "|---|---|---|---|"]
        for p in doc["pass_lines"]:
            verdicts = ", ".join(f"{k} {v}" for k, v in p["verdicts"].items())
            lines.append(f"| {p['model']} | {p['benchmark']} | {verdicts} | {p['summary']} |")
    strata = list(dict.fromkeys(r["stratum"] for r in doc["table"] if r["stratum"] != OVERALL))
    for stratum in strata:
        lines += ["", f"## By {stratum}", "", "| model | benchmark | condition | level | % | 95 % CI | n | non-answers % |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in doc["table"]:
            if r["stratum"] == stratum:
                lines.append(f"| {r['model']} | {r['benchmark']} | {r['condition']} | {r['level']} | {_pct(r['value'])} | "
                             f"{_ci(r['ci_low'], r['ci_high'])} | {r['n']} | {_pct(r['non_answer_rate'])} |")
    if doc["notes"]:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in doc["notes"]]
    return "\n".join(lines) + "\n"


def latex(comparison: Comparison) -> str:
    doc = comparison.as_json()
    cols, names, index = columns(doc), models(doc), overall_index(doc)
    wide = pd.DataFrame({"model": names, **{f"{b} {c}": [cell_text(doc["table"][index[(m, b, c)]])
                                                         if (m, b, c) in index else "no run" for m in names]
                                            for b, c in cols}})
    out = to_latex(wide, caption="Headline metric per benchmark and condition (% [95 % CI], n, non-answers)",
                   notes=comparison.notes)
    if doc["delta_img"]:
        d = comparison.delta_img
        frame = pd.DataFrame({"model": d["model"], "benchmark": d["benchmark"], "n": d["n"],
                              "C+Q+I %": [_pct(v) for v in d["a_with"]], "C+Q %": [_pct(v) for v in d["a_removed"]],
                              "Δimg (points)": [_pp(v) for v in d["delta_img"]],
                              "95 % CI": [_ci(lo, hi, _pp) for lo, hi in zip(d["ci_low"], d["ci_high"])],
                              "McNemar p": [_p(v) for v in d["mcnemar_p"]]})
        out += to_latex(frame, caption="Visual reliance: C+Q+I vs C+Q on the same items")
    return out


def render(comparison: Comparison, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(comparison.as_json(), ensure_ascii=False, indent=1, default=str)
    if fmt == "md":
        return markdown(comparison.as_json())
    if fmt == "csv":
        return comparison.table.to_csv(index=False)
    if fmt == "latex":
        return latex(comparison)
    if fmt == "html":
        return page(comparison.as_json())
    raise ValueError(f"unknown format {fmt!r}; choose {', '.join(FORMATS)}")


def write_parquet(comparison: Comparison, path: Path) -> Path:
    """The long table as a Parquet file (needs pyarrow: `pip install 'medvqa[parquet]'`)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError("--format parquet needs pyarrow, which is not installed: pip install 'medvqa[parquet]' "
                         "(or choose --format csv)") from None
    comparison.table.to_parquet(path, index=False)
    return path


# ---------------------------------------------------------------- the HTML page

def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _num(path: list, value: Any, kind: str) -> str:
    shown = {"pct": _pct, "pp": _pp, "p": _p, "int": lambda v: "–" if v is None else str(int(v))}[kind](value)
    return f'<span data-path="{_e(json.dumps(path))}" data-format="{kind}">{shown}</span>'


def forest_svg(doc: dict) -> str:
    """Δimg with its 95 % CI per benchmark × model, one row each, on a shared axis in points."""
    rows = [d for d in doc["delta_img"] if d["delta_img"] is not None]
    if not rows:
        return "<p>No Δimg to plot: no run holds both C+Q+I and C+Q records of the same items.</p>"
    lo = min(min(d["ci_low"] if d["ci_low"] is not None else d["delta_img"] for d in rows), 0.0)
    hi = max(max(d["ci_high"] if d["ci_high"] is not None else d["delta_img"] for d in rows), 0.0)
    pad = max(0.05, (hi - lo) * 0.1)
    lo, hi = lo - pad, hi + pad
    left, width, row_h, top = 260, 420, 26, 30
    height = top + row_h * len(rows) + 40

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" '
             f'role="img" aria-label="Forest plot of Δimg per benchmark and model" class="forest">',
             f'<line x1="{x(0):.1f}" y1="{top - 10}" x2="{x(0):.1f}" y2="{height - 30}" stroke="#888" '
             f'stroke-dasharray="4 3"/>']
    for i, d in enumerate(rows):
        y = top + i * row_h + row_h / 2
        parts.append(f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end" font-size="12">'
                     f'{_e(d["benchmark"])} · {_e(d["model"])} (n={d["n"]})</text>')
        if d["ci_low"] is not None:
            parts.append(f'<line x1="{x(d["ci_low"]):.1f}" y1="{y:.1f}" x2="{x(d["ci_high"]):.1f}" y2="{y:.1f}" '
                         f'stroke="#1f5fa8" stroke-width="2"/>')
        parts.append(f'<circle class="forest-point" cx="{x(d["delta_img"]):.1f}" cy="{y:.1f}" r="4.5" '
                     f'fill="#1f5fa8"><title>{_e(d["benchmark"])} {_e(d["model"])}: Δimg '
                     f'{_pp(d["delta_img"])} points {_ci(d["ci_low"], d["ci_high"], _pp)}</title></circle>')
    axis_y = height - 25
    parts.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + width}" y2="{axis_y}" stroke="#333"/>')
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        parts.append(f'<line x1="{x(v):.1f}" y1="{axis_y}" x2="{x(v):.1f}" y2="{axis_y + 4}" stroke="#333"/>'
                     f'<text x="{x(v):.1f}" y="{axis_y + 16}" text-anchor="middle" font-size="11">{100 * v:+.0f}</text>')
    parts.append(f'<text x="{left + width / 2}" y="{top - 14}" text-anchor="middle" font-size="12">'
                 f'Δimg (points): C+Q+I − C+Q, 95 % CI</text></svg>')
    return "".join(parts)


STYLE = """body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}table{border-collapse:collapse;margin:.6rem 0 1.4rem}
td,th{border:1px solid #ccc;padding:.25rem .5rem;font-size:.9rem;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}.ci,.sub{color:#666;font-size:.8rem}.hidden{display:none}
.unpaired{color:#a33}"""

SCRIPT = """(function(){var f=(location.hash.match(/model=([^&]+)/)||[])[1];f=f?decodeURIComponent(f):"";
document.getElementById("filter-state").textContent=f||"all models";
document.querySelectorAll("[data-model]").forEach(function(r){if(f&&r.dataset.model!==f)r.classList.add("hidden");});
})();"""


def page(doc: dict, audit_links: dict[str, str] | None = None) -> str:
    """The comparison as one HTML page; `audit_links` maps a run source to its audit page."""
    audit_links = audit_links or {}
    cols, names, index = columns(doc), models(doc), overall_index(doc)
    out = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>medvqa comparison</title>",
           f"<style>{STYLE}</style></head><body><h1>medvqa comparison</h1>",
           '<p>Model filter (set <code>#model=NAME</code> in the address): <span id="filter-state"></span></p>',
           "<h2>Headline metric per benchmark and condition</h2><table id=\"headline\"><thead><tr><th>model</th>"]
    out += [f"<th>{_e(b)}<br>{_e(c)}<br><span class=\"sub\">{_e(_metric_label(doc, b))} %</span></th>" for b, c in cols]
    out.append("</tr></thead><tbody>")
    for m in names:
        out.append(f'<tr data-model="{_e(m)}"><td>{_e(m)}</td>')
        for b, c in cols:
            i = index.get((m, b, c))
            if i is None:
                out.append('<td class="sub">no run</td>')
                continue
            r = doc["table"][i]
            out.append(f"<td>{_num(['table', i, 'value'], r['value'], 'pct')} "
                       f"<span class=\"ci\">[{_num(['table', i, 'ci_low'], r['ci_low'], 'pct')}, "
                       f"{_num(['table', i, 'ci_high'], r['ci_high'], 'pct')}]</span><br>"
                       f"<span class=\"sub\">n {_num(['table', i, 'n'], r['n'], 'int')} · non-answers "
                       f"{_num(['table', i, 'non_answer_rate'], r['non_answer_rate'], 'pct')} %</span></td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    out.append("<h2>Visual reliance: Δimg = C+Q+I − C+Q on the same items</h2>")
    out.append(forest_svg(doc))
    if doc["delta_img"]:
        out.append("<table id=\"delta\"><thead><tr><th>model</th><th>benchmark</th><th>n</th><th>C+Q+I %</th>"
                   "<th>C+Q %</th><th>Δimg (points)</th><th>95 % CI</th><th>McNemar p</th></tr></thead><tbody>")
        for i, d in enumerate(doc["delta_img"]):
            base = ["delta_img", i]
            out.append(f'<tr data-model="{_e(d["model"])}"><td>{_e(d["model"])}</td><td>{_e(d["benchmark"])}</td>'
                       f"<td>{_num(base + ['n'], d['n'], 'int')}</td><td>{_num(base + ['a_with'], d['a_with'], 'pct')}</td>"
                       f"<td>{_num(base + ['a_removed'], d['a_removed'], 'pct')}</td>"
                       f"<td>{_num(base + ['delta_img'], d['delta_img'], 'pp')}</td>"
                       f"<td>[{_num(base + ['ci_low'], d['ci_low'], 'pp')}, {_num(base + ['ci_high'], d['ci_high'], 'pp')}]</td>"
                       f"<td>{_num(base + ['mcnemar_p'], d['mcnemar_p'], 'p')}</td></tr>")
        out.append("</tbody></table>")
    out.append("<h2>Models compared on the same items</h2>")
    if doc["tests"]:
        out.append("<table id=\"tests\"><thead><tr><th>benchmark</th><th>condition</th><th>a</th><th>b</th>"
                   "<th>pairing</th><th>n</th><th>a %</th><th>b %</th><th>difference (points)</th><th>95 % CI</th>"
                   "<th>test</th><th>p</th></tr></thead><tbody>")
        for i, t in enumerate(doc["tests"]):
            base = ["tests", i]
            klass = "" if t["status"] == "paired" else ' class="unpaired"'
            out.append(f"<tr><td>{_e(t['benchmark'])}</td><td>{_e(t['condition'])}</td><td>{_e(t['a'])}</td>"
                       f"<td>{_e(t['b'])}</td><td{klass}>{_e(t['status'])}</td><td>{_num(base + ['n'], t['n'], 'int')}</td>"
                       f"<td>{_num(base + ['a_value'], t['a_value'], 'pct')}</td>"
                       f"<td>{_num(base + ['b_value'], t['b_value'], 'pct')}</td>"
                       f"<td>{_num(base + ['difference'], t['difference'], 'pp')}</td>"
                       f"<td>[{_num(base + ['ci_low'], t['ci_low'], 'pp')}, {_num(base + ['ci_high'], t['ci_high'], 'pp')}]</td>"
                       f"<td>{_e(t['test'] or 'not compared')}</td><td>{_num(base + ['p'], t['p'], 'p')}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append("<p>No two models on the same benchmark.</p>")
    if doc["pass_lines"]:
        out.append("<h2>Pass lines</h2><table id=\"pass\"><thead><tr><th>model</th><th>benchmark</th><th>verdicts</th>"
                   "<th>detail</th></tr></thead><tbody>")
        for p in doc["pass_lines"]:
            verdicts = ", ".join(f"{k} {v}" for k, v in p["verdicts"].items())
            out.append(f'<tr data-model="{_e(p["model"])}"><td>{_e(p["model"])}</td><td>{_e(p["benchmark"])}</td>'
                       f"<td>{_e(verdicts)}</td><td style=\"text-align:left\">{_e(p['summary'])}</td></tr>")
        out.append("</tbody></table>")
    for stratum in dict.fromkeys(r["stratum"] for r in doc["table"] if r["stratum"] != OVERALL):
        out.append(f"<h2>By {_e(stratum)}</h2><table class=\"stratum\"><thead><tr><th>model</th><th>benchmark</th>"
                   "<th>condition</th><th>level</th><th>%</th><th>95 % CI</th><th>n</th><th>non-answers %</th></tr>"
                   "</thead><tbody>")
        for i, r in enumerate(doc["table"]):
            if r["stratum"] != stratum:
                continue
            base = ["table", i]
            out.append(f'<tr data-model="{_e(r["model"])}"><td>{_e(r["model"])}</td><td>{_e(r["benchmark"])}</td>'
                       f"<td>{_e(r['condition'])}</td><td>{_e(r['level'])}</td><td>{_num(base + ['value'], r['value'], 'pct')}</td>"
                       f"<td>[{_num(base + ['ci_low'], r['ci_low'], 'pct')}, {_num(base + ['ci_high'], r['ci_high'], 'pct')}]</td>"
                       f"<td>{_num(base + ['n'], r['n'], 'int')}</td>"
                       f"<td>{_num(base + ['non_answer_rate'], r['non_answer_rate'], 'pct')}</td></tr>")
        out.append("</tbody></table>")
    out.append("<h2>Runs</h2><ul id=\"runs\">")
    for r in doc["runs"]:
        source = " + ".join(r["runs"])
        link = audit_links.get(source)
        audit = f' · <a class="audit-link" href="{_e(link)}">audit page</a>' if link else ""
        out.append(f"<li>{_e(r['benchmark'])} · {_e(r['model'])}: <code>{_e(source)}</code> (data "
                   f"{_e(str(r['data_fingerprint'])[:12])}, conditions {_e(', '.join(r['conditions']))}){audit}</li>")
    out.append("</ul>")
    if doc["notes"]:
        out.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in doc["notes"]) + "</ul>")
    out.append(f"<script>{SCRIPT}</script></body></html>\n")
    return "".join(out)


def write_page(comparison: Comparison, path: Path, *, resamples: int, seed: int) -> list[Path]:
    """The comparison page at `path` and, beside it in `<stem>-audits/`, one audit page per
    run (or joined runs) it links to. Returns the files written."""
    from medvqa.core.api import audit
    from medvqa.core.audit.figures import figures, svg_texts
    from medvqa.core.audit.html import write_html

    path = Path(path)
    folder = path.parent / f"{path.stem}-audits"
    folder.mkdir(parents=True, exist_ok=True)
    written, links = [], {}
    for i, r in enumerate(comparison.runs, 1):
        doc = audit(*r["runs"], resamples=resamples, seed=seed)
        slug = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{r['benchmark']}-{r['model']}")[:80]
        target = folder / f"{i:02d}-{slug}.html"
        written.append(write_html(doc, target, svg_texts(figures(doc))))
        links[" + ".join(r["runs"])] = f"{folder.name}/{target.name}"
    path.write_text(page(comparison.as_json(), links), encoding="utf-8")
    return [path, *written]

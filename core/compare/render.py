"""A comparison (`core/compare/runs.py`) as text: Markdown, CSV, LaTeX, JSON, Parquet, or one
self-contained HTML page with a forest plot of Δimg and links to each run's audit page.

Every number cell of the HTML page carries `data-path` (the JSON path of its value in the
`medvqa compare --json` document) and `data-format`, so the page can be checked against it.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pandas as pd

from ..audit.between_models import BETWEEN_MODELS_TEXT
from ..audit.clusters import intervals_text
from ..audit.svg import round_ticks, text_width
from ..metrics import READINGS
from ..passlines import COLUMNS as PASS_COLUMNS
from ..passlines import PassVerdict
from ..render import FONT_STACK, bidi_auto, fmt, to_csv, to_html, to_latex, to_markdown
from ..render import interval as _ci
from ..render import percent as _pct
from ..render import points as _pp
from ..results import condition_order
from .repeats import repeats_markdown
from .runs import OVERALL, Comparison

FORMATS = ("md", "csv", "latex", "json", "html", "parquet")


def pass_frame(doc: dict) -> pd.DataFrame:
    """The pass verdicts of a comparison document as shown: model, benchmark, then the row."""
    rows = [
        {
            "model": r["model"],
            "benchmark": r["benchmark"],
            **PassVerdict(**{k: v for k, v in r.items() if k not in ("model", "benchmark")}).shown(),
        }
        for r in doc["pass_lines"]
    ]
    return pd.DataFrame(rows, columns=["model", "benchmark", *PASS_COLUMNS])


def columns(doc: dict) -> list[tuple[str, str]]:
    """(benchmark, condition) columns of the headline table, benchmarks in the order given."""
    out = []
    for row in doc["table"]:
        key = (row["benchmark"], row["condition"])
        if row["stratum"] == OVERALL and key not in out:
            out.append(key)
    benches = list(dict.fromkeys(b for b, _ in out))
    return sorted(out, key=lambda k: (benches.index(k[0]), condition_order(k[1])))


def models(doc: dict) -> list[str]:
    return list(dict.fromkeys(row["model"] for row in doc["table"]))


def overall_index(doc: dict) -> dict[tuple[str, str, str], int]:
    return {
        (r["model"], r["benchmark"], r["condition"]): i for i, r in enumerate(doc["table"]) if r["stratum"] == OVERALL
    }


def _metric_label(doc: dict, bench: str) -> str:
    return next((r["metric"] for r in doc["table"] if r["benchmark"] == bench), "accuracy")


def other_reading(row: dict) -> tuple[str, float] | None:
    """(the other reading's name, its accuracy) of a table row, where an extraction makes it differ."""
    return next(((name, row[f"{name}_accuracy"]) for name in READINGS if row.get(f"{name}_accuracy") is not None), None)


def cell_text(row: dict) -> str:
    other = other_reading(row)
    beside = f" {other[0]}={_pct(other[1])}%" if other else ""
    return (
        f"{_pct(row['value'])} {_ci(row['ci_low'], row['ci_high'])} n={row['n']}"
        f" na={_pct(row['non_answer_rate'])}%{beside}"
    )


def reading_line(doc: dict) -> str:
    """Which reading the headline numbers use, per benchmark where they differ."""
    readings = doc.get("readings") or {}
    each = ", ".join(f"{b} {r}" for b, r in readings.items())
    said = doc.get("reading", "strict") if doc.get("reading") != "mixed" else f"each benchmark's protocol's ({each})"
    return (
        f"Reading: {said}. Headline values, Δs and tests read replies so; the other reading's accuracy stands "
        "beside a cell where an extractor read some replies (--reading strict|assisted switches)."
    )


def headline_frame(doc: dict) -> pd.DataFrame:
    """Models × (benchmark, condition): each cell the headline metric, its CI, n and non-answers."""
    cols, names, index = columns(doc), models(doc), overall_index(doc)
    return pd.DataFrame(
        {
            "model": names,
            **{
                f"{b} {c} ({_metric_label(doc, b)})": [
                    cell_text(doc["table"][index[(m, b, c)]]) if (m, b, c) in index else "no run" for m in names
                ]
                for b, c in cols
            },
        }
    )


# Each table's columns: (heading, the key of its value in the document's rows (a pair of keys for an
# interval, a function of the row for a text composed from several), number format). A number column
# of the HTML page carries the JSON path of its value.
CI = ("ci_low", "ci_high")
DELTA = [
    ("model", "model", "text"),
    ("benchmark", "benchmark", "text"),
    ("items", "scope", "text"),
    ("n", "n", "int"),
    ("C+Q+I %", "a_with", "pct"),
    ("C+Q %", "a_removed", "pct"),
    ("Δimg (points)", "delta_img", "pp"),
    ("95 % CI", CI, "ci_pp"),
    ("McNemar mid-p", "mcnemar_p", "p"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]
TESTS = [
    *((h, h, "text") for h in ("benchmark", "condition", "a", "b")),
    (
        "pairing",
        lambda t: t["status"] + (f" (only a {t['only_a']}, only b {t['only_b']})" if t["status"] != "paired" else ""),
        "text",
    ),
    ("n", "n", "int"),
    ("a %", "a_value", "pct"),
    ("b %", "b_value", "pct"),
    ("difference (points)", "difference", "pp"),
    ("95 % CI", CI, "ci_pp"),
    ("test", lambda t: t["test"] or "not compared", "text"),
    ("p", "p", "p"),
    ("Holm p", "p_holm", "p"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]
STRATUM = [
    *((h, h, "text") for h in ("model", "benchmark", "condition", "level")),
    ("%", "value", "pct"),
    ("95 % CI", CI, "ci"),
    ("n", "n", "int"),
    ("non-answers %", "non_answer_rate", "pct"),
]
LANGUAGE = [
    *((h, h, "text") for h in ("model", "benchmark", "condition", "languages")),
    ("items", "scope", "text"),
    ("n", "n", "int"),
    ("first %", "a_local", "pct"),
    ("second %", "a_other", "pct"),
    ("Δlang (points)", "delta_lang", "pp"),
    ("95 % CI", CI, "ci_pp"),
    ("McNemar mid-p", "mcnemar_p", "p"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]


CLUSTER_CI = ("cluster_ci_low", "cluster_ci_high")
# with --cluster: each overall cell's item-level and cluster-bootstrap intervals side by side
CLUSTERED = [
    *((h, h, "text") for h in ("model", "benchmark", "condition")),
    ("%", "value", "pct"),
    ("item-level 95 % CI", CI, "ci"),
    ("cluster 95 % CI", CLUSTER_CI, "ci"),
    ("clusters", "n_clusters", "int"),
]


def formats(spec: list) -> dict[str, str]:
    return {heading: kind for heading, _, kind in spec}


def frame(doc: dict, section: str, spec: list, stratum: str | None = None) -> pd.DataFrame:
    """The rows of `doc[section]` (those of one `stratum` of the table) as `spec`'s columns,
    indexed by their position in the section."""
    rows = {i: r for i, r in enumerate(doc[section]) if stratum is None or r["stratum"] == stratum}

    def value(row: dict, key: Any) -> Any:
        return key(row) if callable(key) else tuple(row[k] for k in key) if isinstance(key, tuple) else row.get(key)

    table = pd.DataFrame(
        [[value(r, key) for _, key, _ in spec] for r in rows.values()],
        columns=[heading for heading, _, _ in spec],
        index=list(rows),
    )
    for said in ("warning", "note"):  # a warning (a note) column only where a row has one
        if said in table and table[said].isna().all():
            table = table.drop(columns=said)
    if "items" in table and table["items"].fillna("").nunique() <= 1:  # only where it tells rows apart (parts)
        table = table.drop(columns="items")
    return table


def published_text(row: dict) -> str:
    """ " · published 0.0 (artifact: empty-answer-column)": a row's published accuracy, and the
    importer's flag where it named the published number an artifact; "" without one."""
    said = row.get("published_accuracy")
    if said is None:
        return ""
    flag = row.get("published_artifact")
    return f" · published {_pct(said)}" + (f" (artifact: {flag})" if flag else "")


def panel_frame(doc: dict, panel: dict) -> tuple[pd.DataFrame, dict[tuple[int, str], list]]:
    """A panel view (`doc["panels"]`) as a table: one row per model, one column per level and
    language, each cell the headline value and n of the table row it points at, and a last row
    with each level's pass line; with the JSON path of each shown value."""
    cells = {(c["model"], c["level"], c["language"]): c for c in panel["cells"]}
    columns = [(level, lang) for level in panel["levels"] for lang in panel["languages"]]
    heads = [f"{level} {lang}" for level, lang in columns]
    rows, paths = [], {}
    for i, model in enumerate(panel["models"]):
        row = {"model": model}
        for head, (level, lang) in zip(heads, columns):
            c = cells.get((model, level, lang))
            r = doc["table"][c["row"]] if c else None
            said = doc["table"][c["overall_row"]] if c and "overall_row" in c else {}
            row[head] = f"{_pct(r['value'])} (n={r['n']})" + published_text(said) if r else "no run"
            if r:
                paths[(i, head)] = ["table", c["row"], "value"]
        rows.append(row)
    lines = panel["pass_lines"]
    if lines:
        rows.append(
            {
                "model": "pass line",
                **{
                    head: f"{_pct(lines[level])}" if level in lines else "–" for head, (level, _) in zip(heads, columns)
                },
            }
        )
    return pd.DataFrame(rows, columns=["model", *heads]), paths


def panel_title(panel: dict) -> str:
    return f"{panel['benchmark']}: {panel['condition']} accuracy % by {panel['stratum']} and language" + (
        ", with each level's pass line" if panel["pass_lines"] else ""
    )


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
    if doc["pass_lines"]:
        out += to_latex(pass_frame(doc), caption="Pass lines (one row per exam and criterion)")
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


# ---------------------------------------------------------------- the HTML page


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


STYLE = (
    ("body{font-family:%s;margin:1.5rem;color:#222}" % FONT_STACK)
    + """table{border-collapse:collapse;margin:.6rem 0 1.4rem}
td,th{border:1px solid #ccc;padding:.25rem .5rem;font-size:.9rem;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}.ci,.sub{color:#666;font-size:.8rem}.hidden{display:none}
td.warning{text-align:left;color:#a00;max-width:28rem}figure.panels svg{max-width:100%;height:auto}
svg.forest{max-width:100%;height:auto}table{display:block;max-width:100%;overflow-x:auto}
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
    out += [f'<th>{_e(b)}<br>{_e(c)}<br><span class="sub">{_e(_metric_label(doc, b))} %</span></th>' for b, c in cols]
    out.append("</tr></thead><tbody>")
    for m in names:
        out.append(f'<tr data-model="{_e(m)}"><td>{_e(m)}</td>')
        for b, c in cols:
            i = index.get((m, b, c))
            if i is None:
                out.append('<td class="sub">no run</td>')
                continue
            r = doc["table"][i]
            items = (
                (
                    f' <a class="view-link" href="{_e(view_href + "#" + urlencode({"model": m, "benchmark": b, "condition": c, "counted": "1"}))}">'
                    "items</a>"
                )
                if view_href
                else ""
            )
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

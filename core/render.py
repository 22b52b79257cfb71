"""The one table renderer: how every number is shown (`fmt`) and the writers (text, Markdown,
CSV, LaTeX, JSON, HTML) that `report`, `compare`, benchmarks' tables, pass lines and the audit
page use. Fractions show as percentages with one decimal, differences of fractions as signed
percentage points (0.05 → `+5.0`), p-values with three significant digits, intervals as
`[low, high]`, a missing value as `–`; CSV and JSON keep the raw values.
"""

from __future__ import annotations

import html
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

MISSING = "–"
FORMATS = ("text", "md", "csv", "latex", "json", "html")
# columns shown as percentages by name, and their headings
PERCENT_COLUMNS = {
    "accuracy": "accuracy %",
    "ci_low": "CI low %",
    "ci_high": "CI high %",
    "assisted_accuracy": "assisted accuracy %",
    "assisted_ci_low": "assisted CI low %",
    "assisted_ci_high": "assisted CI high %",
    "strict_accuracy": "strict accuracy %",
    "strict_ci_low": "strict CI low %",
    "strict_ci_high": "strict CI high %",
    "published_accuracy": "published accuracy %",
}


def is_missing(value: Any) -> bool:
    """None, NaN or pandas' NA (which only a frame holds: pandas, a fifth of a second to import,
    is not imported to ask)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    pandas = sys.modules.get("pandas")
    return pandas is not None and value is pandas.NA


def numeric(column: pd.Series) -> bool:
    """Whether a frame's column holds numbers (right-aligned)."""
    from pandas.api.types import is_numeric_dtype

    return is_numeric_dtype(column)


def percent(value: Any) -> str:
    """A fraction as a percentage with one decimal."""
    return MISSING if is_missing(value) else f"{100 * value:.1f}"


def points(value: Any) -> str:
    """A difference of two fractions in percentage points, signed, one decimal."""
    return MISSING if is_missing(value) else f"{100 * value:+.1f}"


def p_value(value: Any) -> str:
    if is_missing(value):
        return MISSING
    return "< 1e-300" if value <= 1e-300 else f"{value:.3g}"  # a p below the smallest float is a bound (never 0)


def interval(low: Any, high: Any, show: Callable[[Any], str] = percent) -> str:
    """`[low, high]` in the format `show`; a missing bound gives `–`."""
    return MISSING if is_missing(low) or is_missing(high) else f"[{show(low)}, {show(high)}]"


NUMBER_FORMATS: dict[str, Callable[[Any], str]] = {
    "pct": percent,
    "pp": points,
    "p": p_value,
    "int": lambda v: MISSING if is_missing(v) else str(int(v)),
    "decimal": lambda v: MISSING if is_missing(v) else f"{float(v):.3f}",  # a Brier score, an AUROC, points
    "text": lambda v: MISSING if is_missing(v) else str(v),
}


def fmt(value: Any, kind: str) -> str:
    """`value` in the number format `kind` (`pct`, `pp`, `p`, `int`, `decimal`, `ci` for a pair of
    fractions, `ci_pp` for a pair of differences); `text` shows it as it is."""
    if kind in ("ci", "ci_pp"):
        return MISSING if is_missing(value) else interval(value[0], value[1], points if kind == "ci_pp" else percent)
    if kind not in NUMBER_FORMATS:
        raise ValueError(f"unknown number format {kind!r}")
    return NUMBER_FORMATS[kind](value)


def cells(frame: pd.DataFrame, formats: Mapping[str, str] | None = None) -> tuple[list[str], list[list[str]]]:
    """The headings and every row of `frame` as shown text: a column named in `formats` in its
    format, one named in PERCENT_COLUMNS as a percentage (its heading says so), others as text."""
    formats = formats or {}
    kinds = [formats.get(str(c), "pct" if c in PERCENT_COLUMNS else "text") for c in frame.columns]
    rows = [[fmt(v, k) for v, k in zip(row, kinds)] for row in frame.itertuples(index=False)]
    return [str(c) if c in formats else PERCENT_COLUMNS.get(str(c), str(c)) for c in frame.columns], rows


def to_markdown(frame: pd.DataFrame, formats: Mapping[str, str] | None = None) -> str:
    """A GitHub Markdown table; `|` inside a cell is escaped."""
    head, rows = cells(frame, formats)

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.replace("|", r"\|").replace("\n", " ") for v in values) + " |"

    return "\n".join([line(head), "|" + "|".join("---" for _ in head) + "|", *map(line, rows)]) + "\n"


def to_text(frame: pd.DataFrame, formats: Mapping[str, str] | None = None) -> str:
    """Aligned plain-text columns: numbers right, text left."""
    head, rows = cells(frame, formats)
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(head)]
    right = [numeric(frame[c]) for c in frame.columns]
    return (
        "\n".join(
            "  ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(line, widths, right)).rstrip()
            for line in [head, *rows]
        )
        + "\n"
    )


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    MISSING: "--",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(
    frame: pd.DataFrame, caption: str | None = None, notes: Iterable[str] = (), formats: Mapping[str, str] | None = None
) -> str:
    """A booktabs `table` float (needs \\usepackage{booktabs}): numbers right-aligned, each
    note as a footnote-size line under the tabular."""
    head, rows = cells(frame, formats)
    align = "".join("r" if numeric(frame[c]) else "l" for c in frame.columns)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule", " & ".join(map(latex_escape, head)) + r" \\", r"\midrule"]
    lines += [" & ".join(map(latex_escape, row)) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [rf"\par\smallskip{{\footnotesize {latex_escape(note)}}}" for note in notes]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def to_html(
    frame: pd.DataFrame,
    formats: Mapping[str, str] | None = None,
    *,
    table_id: str | None = None,
    row_attrs: Callable[[dict], str] | None = None,
    cell: Callable[[int, str, str], str | None] | None = None,
) -> str:
    """An HTML `<table>`; `row_attrs(row)` adds attributes to a row's `<tr>` (e.g. a filter key);
    `cell(i, column, text)` may return the whole `<td>` of the i-th row's cell in `column` (`text`
    is its value as shown, escaped), e.g. one tagged with where the value comes from; None keeps
    the plain cell."""
    head, rows = cells(frame, formats)
    records = frame.to_dict(orient="records")
    ident = f' id="{html.escape(table_id)}"' if table_id else ""
    out = [f"<table{ident}><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    klass = [' class="num"' if numeric(frame[c]) else "" for c in frame.columns]
    for i, (record, row) in enumerate(zip(records, rows)):
        attrs = row_attrs(record) if row_attrs else ""
        tds = [
            (cell and cell(i, column, html.escape(v))) or f"<td{c}>{html.escape(v)}</td>"
            for column, v, c in zip(frame.columns, row, klass)
        ]
        out.append(f"<tr{attrs}>" + "".join(tds) + "</tr>")
    return "".join(out) + "</tbody></table>"


def json_rows(frame: pd.DataFrame) -> list[dict]:
    """The rows as JSON values: numpy scalars as Python numbers, NaN and a missing whole number
    (`pd.NA`) as null (full precision)."""

    def plain(v: Any) -> Any:
        v = v.item() if hasattr(v, "item") and not isinstance(v, (list, dict, str)) else v
        return None if is_missing(v) else v

    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


# A spreadsheet runs a cell starting with one of these as a formula (`=HYPERLINK(...)`, `+1+1`, `@SUM`).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def to_csv(frame: pd.DataFrame) -> str:
    """`frame` as CSV, safe to open in a spreadsheet: a text cell or heading taken from data (a
    model's name, a stratum's level) that starts like a formula is prefixed with `'`, as OWASP
    recommends against CSV injection, so it is shown as text and never run. Numbers, negative
    ones included, are written as they are."""

    def safe(value: Any) -> Any:
        return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value

    out = frame.map(safe)
    out.columns = [safe(c) for c in frame.columns]
    return out.to_csv(index=False)


def render(frame: pd.DataFrame, fmt: str, formats: Mapping[str, str] | None = None) -> str:
    """`frame` as `text`, `md`, `csv`, `latex`, `json` or `html` text."""
    if fmt == "csv":
        return to_csv(frame)
    if fmt == "json":
        return json.dumps(json_rows(frame), ensure_ascii=False, indent=1, allow_nan=False)
    writers: dict[str, Callable[..., str]] = {"md": to_markdown, "latex": to_latex, "text": to_text, "html": to_html}
    if fmt not in writers:
        raise ValueError(f"unknown format {fmt!r}; choose {', '.join(FORMATS)}")
    return writers[fmt](frame, formats=formats)


def reading_note(reading: str) -> str:
    """The line under a table that says which reading its headline numbers use."""
    other = "assisted" if reading == "strict" else "strict"
    how = (
        "the rules alone; an extractor's answer counts in the assisted columns"
        if reading == "strict"
        else "an extractor's answer where the rules could not read the reply; the strict columns read the rules alone"
    )
    return f"Reading: {reading} ({how}; --reading {other} switches)."


@dataclass
class Table:
    """One of a benchmark's official tables: a name (its key in JSON), a title and notes."""

    name: str
    title: str
    frame: pd.DataFrame
    notes: list[str] = dataclass_field(default_factory=list)
    formats: dict[str, str] = dataclass_field(default_factory=dict)  # column -> number format


@dataclass
class Tables:
    """Titled tables rendered alike (a benchmark's official tables, pass lines): Markdown with
    a heading per table, CSV with `#` titles and notes, LaTeX floats, HTML, aligned text, or one
    JSON object keyed by table name. A table without rows is its title, "No rows." and its
    notes, never an empty grid."""

    tables: list[Table]
    # the reading of the records counted (metrics.READINGS), named in every table's JSON and notes
    reading: str | None = None

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    def render(self, fmt: str) -> str:
        """`text`, `md`, `csv`, `latex`, `json` or `html`."""
        said = {"reading": self.reading} if self.reading else {}
        if fmt == "json":
            doc = {
                t.name: {"title": t.title, "rows": json_rows(t.frame), "notes": t.notes, **said} for t in self.tables
            }
            return json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False) + "\n"
        if self.reading:
            self = Tables(
                [
                    Table(t.name, t.title, t.frame, [*t.notes, reading_note(self.reading)], t.formats)
                    for t in self.tables
                ]
            )
        if fmt == "latex":
            return "\n".join(to_latex(t.frame, caption=t.title, notes=t.notes, formats=t.formats) for t in self.tables)
        esc = html.escape if fmt == "html" else str
        title, note = (
            {
                "md": ("### {}\n\n", "\n{}\n"),
                "csv": ("# {}\n", "# {}\n"),
                "html": ("<h3>{}</h3>", "<p>{}</p>"),
                "text": ("{}\n\n", "\n{}\n"),
            }[fmt]
            if fmt in FORMATS
            else ("", "")
        )
        # a table without rows shows no empty grid: its notes say why it is empty
        blocks = [
            title.format(esc(t.title))
            + (
                render(t.frame, fmt, t.formats)
                if len(t.frame) or fmt == "csv"
                else note.format("No rows.").lstrip("\n")
            )
            + "".join(note.format(esc(n)) for n in t.notes)
            for t in self.tables
        ]
        return "\n".join(blocks)


# ---------------------------------------------------------------- every script readable

# The pages' fonts, tried in order for each character: Latin with Portuguese and Spanish accents,
# Hebrew, Japanese; the system's fonts after them. Debian: fonts-noto-core (Noto Sans, Noto Sans
# Hebrew), fonts-ipaexfont-gothic or fonts-noto-cjk (Japanese), fonts-dejavu-core.
FONT_STACK = (
    '"Noto Sans", "DejaVu Sans", "Noto Sans Hebrew", "IPAexGothic", "Noto Sans CJK JP", '
    '"Hiragino Sans", "Yu Gothic", "Meiryo", "Arial Hebrew", "Segoe UI", Arial, system-ui, sans-serif'
)
# Elements that hold text: each gets dir="auto", so Hebrew reads right to left in its own element
# and Latin stays left to right beside it.
TEXT_ELEMENTS = (
    "p",
    "li",
    "td",
    "th",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "span",
    "code",
    "pre",
    "caption",
    "figcaption",
    "label",
    "a",
    "option",
    "summary",
    "dt",
    "dd",
    "title",
    "button",
    "legend",
    "div",
    "section",
    "nav",
    "select",
    "textarea",
    "blockquote",
    "q",
    "em",
    "strong",
    "b",
    "i",
    "small",
)
_TEXT_TAGS = "|".join(TEXT_ELEMENTS)
_OPEN_TAG = re.compile(rf"<({_TEXT_TAGS})(?=[\s>/])([^>]*)>", re.IGNORECASE)
# content the page must not touch: scripts, styles, inline SVG (its <title> elements are tooltips)
_VERBATIM = re.compile(r"(<script\b.*?</script>|<style\b.*?</style>|<svg\b.*?</svg>)", re.IGNORECASE | re.DOTALL)


def bidi_auto(page: str) -> str:
    """`page` with `dir="auto"` on every text element that has no `dir` yet, outside scripts,
    styles and inline SVG: each element's direction follows its first strong character (Hebrew
    right to left, Latin and Japanese left to right)."""

    def tag(m: re.Match) -> str:
        if re.search(r"\sdir\s*=", m.group(2), re.IGNORECASE):
            return m.group(0)
        return f'<{m.group(1)} dir="auto"{m.group(2)}>'  # first, so the element's other attributes keep their order

    parts = _VERBATIM.split(page)
    return "".join(part if i % 2 else _OPEN_TAG.sub(tag, part) for i, part in enumerate(parts))

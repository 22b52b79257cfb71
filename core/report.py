"""Rendering tables: Markdown, CSV, LaTeX and JSON, and a benchmark's official `Tables`.
The numbers in them come from the metrics layer (`medvqa.core.metrics.table`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Iterable

import numpy as np
import pandas as pd

from medvqa.core.metrics import CI_COLUMNS

PERCENT_COLUMNS = {"accuracy": "accuracy %", "ci_low": "CI low %", "ci_high": "CI high %"}


def json_rows(frame: pd.DataFrame) -> list[dict]:
    """A DataFrame's rows as JSON values: numpy scalars as Python numbers at full precision (the
    same float every other command prints), NaN as null."""
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def _plain(value: Any) -> Any:
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(value) else float(value)
    return value


def render(table: pd.DataFrame, fmt: str) -> str:
    if fmt == "csv":
        return table.to_csv(index=False)
    if fmt == "json":
        return json.dumps(json_rows(table), ensure_ascii=False, indent=1)
    if fmt == "md":
        return to_markdown(table)
    if fmt == "latex":
        return to_latex(table)
    raise ValueError(f"unknown format {fmt!r}; choose md, csv, latex or json")


def _cell(col: str, v: Any) -> str:
    """A table cell as text: accuracies and their CIs as percentages with one decimal; missing
    values empty."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if col in PERCENT_COLUMNS:
        return f"{100 * v:.1f}"
    return str(v)


def _header(table: pd.DataFrame) -> list[str]:
    return [PERCENT_COLUMNS.get(c, str(c)) for c in table.columns]


def to_markdown(table: pd.DataFrame) -> str:
    """A GitHub markdown table (no extra dependency); accuracies as percentages."""
    cols = _header(table)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(c, v) for c, v in zip(table.columns, row)) + " |")
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(table: pd.DataFrame, caption: str | None = None, notes: Iterable[str] = ()) -> str:
    """A booktabs `table` float (needs \\usepackage{booktabs}): numbers right-aligned,
    accuracies as percentages, each note as a footnote-size line under the tabular."""
    align = "".join("r" if pd.api.types.is_numeric_dtype(table[c]) else "l" for c in table.columns)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule",
              " & ".join(latex_escape(c) for c in _header(table)) + r" \\", r"\midrule"]
    for row in table.itertuples(index=False):
        lines.append(" & ".join(latex_escape(_cell(c, v)) for c, v in zip(table.columns, row)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [rf"\par\smallskip{{\footnotesize {latex_escape(note)}}}" for note in notes]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


@dataclass
class Table:
    """One of a benchmark's official tables: a name (its key in JSON), a title and notes."""

    name: str
    title: str
    frame: pd.DataFrame
    notes: list[str] = dataclass_field(default_factory=list)


@dataclass
class Tables:
    """A benchmark's official tables (`Benchmark.report_tables`), rendered as `report` renders
    its own: Markdown with a heading per table, CSV with `#` titles and notes, LaTeX floats, or
    one JSON object keyed by table name."""

    tables: list[Table]

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    def render(self, fmt: str) -> str:
        """`md`, `csv`, `latex` or `json`."""
        if fmt == "json":
            doc = {t.name: {"title": t.title, "rows": json.loads(render(t.frame, "json")), "notes": t.notes}
                   for t in self.tables}
            return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
        if fmt not in ("md", "csv", "latex"):
            raise ValueError(f"unknown format {fmt!r}; choose md, csv, latex or json")
        blocks = []
        for t in self.tables:
            if fmt == "md":
                blocks.append(f"### {t.title}\n\n{to_markdown(t.frame)}" + "".join(f"\n{n}\n" for n in t.notes))
            elif fmt == "csv":
                blocks.append(f"# {t.title}\n{render(t.frame, 'csv')}" + "".join(f"# {n}\n" for n in t.notes))
            else:
                blocks.append(to_latex(t.frame, caption=t.title, notes=t.notes))
        return "\n".join(blocks)

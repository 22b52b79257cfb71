"""Tables from records: n, n_excluded, accuracy with its 95 % CI and status counts, by
condition and strata.

Pure functions of the run directory's records and manifest; no model is called.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Iterable

import pandas as pd

from medvqa.core.audit.stats import CLOPPER_PEARSON, binomial_ci
from medvqa.core.scoring.score import STATUSES

CI_COLUMNS = ("ci_low", "ci_high")  # the exact (Clopper-Pearson) 95 % interval of an accuracy
PERCENT_COLUMNS = {"accuracy": "accuracy %", "ci_low": "CI low %", "ci_high": "CI high %"}


def hashable(value: Any) -> Any:
    """A record field's value as a table level: a list joined ("none" when empty), a missing
    value "unknown"."""
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value else "none"
    # pandas stores a missing value of a text column as NaN, not None
    return "unknown" if value is None or (isinstance(value, float) and math.isnan(value)) else value


def records_frame(records: list[dict], by: Iterable[str] = ()) -> pd.DataFrame:
    df = pd.DataFrame.from_records(records)
    for field in by:
        if field not in df.columns:
            raise KeyError(f"records have no field {field!r}; available: {', '.join(sorted(df.columns))}")
        df[field] = df[field].map(hashable)
    return df


def accuracy_table(records: list[dict], excluded: list[dict] | None = None, by: Iterable[str] = ()) -> pd.DataFrame:
    """One row per condition (× stratum): n, n_excluded, correct, accuracy, its 95 % CI and
    every status."""
    by = list(by)
    keys = ["condition", *by]
    cols = [*keys, "n", "n_excluded", "correct", "accuracy", *CI_COLUMNS, "ci_method", *STATUSES]
    if not records:
        return pd.DataFrame(columns=cols)
    df = records_frame(records, by)
    df["correct"] = df["correct"].astype(bool)
    grouped = df.groupby(keys, sort=True, dropna=False)
    table = grouped.agg(n=("item_id", "size"), correct=("correct", "sum"))
    table["accuracy"] = table["correct"] / table["n"]
    add_ci(table)
    counts = df.pivot_table(index=keys, columns="status", values="item_id", aggfunc="size", fill_value=0)
    for status in STATUSES:
        table[status] = counts[status] if status in counts.columns else 0
    table = table.reset_index()
    table["n_excluded"] = 0
    if excluded:
        ex = pd.DataFrame.from_records(excluded)
        for field in by:
            ex[field] = ex[field].map(hashable) if field in ex.columns else "unknown"
        if by:
            n_ex = ex.groupby(by).size()
            table["n_excluded"] = [int(n_ex.get(tuple(row) if len(by) > 1 else row[0], 0))
                                   for row in table[by].itertuples(index=False)]
        else:
            table["n_excluded"] = len(ex)
    table[list(STATUSES)] = table[list(STATUSES)].astype(int)
    return table[cols]


def add_ci(table: pd.DataFrame) -> None:
    """Add `ci_low` and `ci_high` (fractions) from the integer columns `correct` and `n`, and
    `ci_method` (`clopper-pearson`, the exact interval)."""
    cis = [binomial_ci(int(c), int(n)) or (None, None) for c, n in zip(table["correct"], table["n"])]
    table["ci_low"] = [ci[0] for ci in cis]
    table["ci_high"] = [ci[1] for ci in cis]
    table["ci_method"] = CLOPPER_PEARSON


def render(table: pd.DataFrame, fmt: str) -> str:
    if fmt == "csv":
        return table.to_csv(index=False)
    if fmt == "json":
        return table.to_json(orient="records", force_ascii=False, indent=1)
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


def report_json(table: pd.DataFrame) -> str:
    return json.dumps(json.loads(table.to_json(orient="records", force_ascii=False)), ensure_ascii=False, indent=1)


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

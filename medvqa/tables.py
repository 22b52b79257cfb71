"""Rendering tables (pandas DataFrames) the way every medvqa command does, for a benchmark's
own official tables (`Benchmark.report_tables`): one set of number formats (percentages,
percentage points, p-values, intervals, missing values) and one writer per output format.

    >>> import pandas as pd
    >>> from medvqa.tables import render
    >>> print(render(pd.DataFrame({"profession": ["Nurse"], "accuracy": [0.5]}), "md"), end="")
    | profession | accuracy % |
    |---|---|
    | Nurse | 50.0 |
"""

from medvqa.core.metrics import CI_COLUMNS, add_ci
from medvqa.core.render import (
    Table,
    Tables,
    fmt,
    interval,
    p_value,
    percent,
    points,
    render,
    to_html,
    to_latex,
    to_markdown,
    to_text,
)

__all__ = [
    "CI_COLUMNS",
    "Table",
    "Tables",
    "add_ci",
    "fmt",
    "interval",
    "p_value",
    "percent",
    "points",
    "render",
    "to_html",
    "to_latex",
    "to_markdown",
    "to_text",
]

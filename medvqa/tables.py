"""Rendering tables (pandas DataFrames) the way `medvqa report` does, for a benchmark's own
official tables (`Benchmark.report_tables`).

    >>> import pandas as pd
    >>> from medvqa.tables import render
    >>> print(render(pd.DataFrame({"profession": ["Nurse"], "accuracy": [0.5]}), "md"), end="")
    | profession | accuracy % |
    |---|---|
    | Nurse | 50.0 |
"""

from medvqa.core.metrics import add_ci
from medvqa.core.report import CI_COLUMNS, Table, Tables, render, to_latex, to_markdown

__all__ = ["CI_COLUMNS", "Table", "Tables", "add_ci", "render", "to_latex", "to_markdown"]

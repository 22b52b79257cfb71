"""Tables from records: n, n_excluded, accuracy with its 95 % CI and status counts, by
condition and strata.

Pure functions of the run directory's records and manifest; no model is called.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import pandas as pd

from medvqa.core.audit.stats import binomial_ci
from medvqa.core.scoring.score import STATUSES

CI_COLUMNS = ("ci_low", "ci_high")  # the exact (Clopper-Pearson) 95 % interval of an accuracy


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
    cols = [*keys, "n", "n_excluded", "correct", "accuracy", *CI_COLUMNS, *STATUSES]
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
    """Add `ci_low` and `ci_high` (fractions) from the integer columns `correct` and `n`."""
    cis = [binomial_ci(int(c), int(n)) or (None, None) for c, n in zip(table["correct"], table["n"])]
    table["ci_low"] = [ci[0] for ci in cis]
    table["ci_high"] = [ci[1] for ci in cis]

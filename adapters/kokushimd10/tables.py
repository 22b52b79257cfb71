"""The benchmark's own tables (`medvqa report RUN --table igakuqa|yakugakuqa|kokushimd10`): per
block and per exam-year, the model's accuracy, points and maximum beside the examinees' mean
accuracy, the items without their images, the withdrawn ones, the exclusions; and how well the
model's per-item correctness follows item difficulty (its correlation with examinees' accuracy).

Under the `mhlw` convention withdrawn items (採点除外) leave accuracy, points and maxima; under
`igakuqa` and `kokushimd10` they stay in, with their data points (0), as the scripts count them.
Where an extractor read parse failures (`medvqa score --extractor`), each row adds the assisted
accuracy beside the strict one (the metrics layer's `ASSISTED_COLUMNS`); points stay strict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from medvqa.metrics import cell, counted, excluded_counts, group, is_derived, with_assisted
from medvqa.tables import Table, Tables

from .conventions import MHLW

COLUMNS = [
    "condition",
    "n",
    "correct",
    "accuracy",
    "ci_low",
    "ci_high",
    "score",
    "total",
    "human_mean",
    "without_image",
    "withdrawn",
    "excluded",
]


def tables(benchmark, records: list[dict], manifest: dict) -> Tables:
    convention = benchmark.active_convention or MHLW
    records = [r for r in records if not is_derived(r["condition"])]  # forced guesses are the audit's
    excluded = manifest.get("excluded") or []
    by_block = _grouped(benchmark, records, excluded, "block")
    by_year = _grouped(benchmark, records, excluded, "year")
    corr = _difficulty([r for r in records if benchmark.counts(r)])
    notes = [
        f"convention: {convention}"
        + (
            "; withdrawn items (採点除外) are out of n, accuracy, score and total"
            if convention == MHLW
            else "; withdrawn items are counted as the script counts them (0 points)"
        ),
        "human_mean: the examinees' mean accuracy over the same items (percent correct, as a fraction)",
    ]
    return Tables(
        [
            Table("by_block", "Accuracy, points and examinees by block", by_block, notes),
            Table("by_year", "Accuracy, points and examinees by exam year", by_year, notes),
            Table(
                "difficulty",
                "Model correctness against item difficulty (examinees' accuracy)",
                corr,
                ["r: Pearson correlation of per-item correctness (0/1) with examinees' accuracy (point-biserial)"],
            ),
        ]
    )


def _grouped(benchmark, records: list[dict], excluded: list[dict], field: str) -> pd.DataFrame:
    """One row per level of `field` × condition: the metrics layer's n, correct, accuracy and
    interval, then points, maxima and the examinees' mean over the counted records."""
    out = []
    for (condition, level), rs in group(records, [field]).items():
        c = cell(rs, benchmark)
        kept, _ = counted(rs, benchmark)
        human = [float(r["human_accuracy"]) / 100 for r in kept if r.get("human_accuracy") is not None]
        points = [int(r.get("points") or 0) for r in kept]
        out.append(
            {
                field: level,
                "condition": condition,
                **c.accuracy_columns(()),
                "score": sum(p for p, r in zip(points, kept) if r.get("correct")),
                "total": sum(points),
                "human_mean": round(sum(human) / len(human), 4) if human else None,
                "without_image": sum(bool(r.get("without_image")) for r in kept),
                "withdrawn": c.uncounted,
                "excluded": excluded_counts(excluded, condition, [field])[(level,)],
            }
        )
    return pd.DataFrame(out, columns=with_assisted([field, *COLUMNS], out))


def _difficulty(records: list[dict]) -> pd.DataFrame:
    """Per condition (in the order of every other table): n and r over the items with examinees' accuracy."""
    rows = []
    for (condition,), rs in group([r for r in records if r.get("human_accuracy") is not None]).items():
        pairs = [(float(bool(r.get("correct"))), float(r["human_accuracy"]) / 100) for r in rs]
        rows.append({"condition": condition, "n": len(pairs), "r": pearson(pairs)})
    return pd.DataFrame(rows, columns=["condition", "n", "r"])


def pearson(pairs: list[tuple[float, float]]) -> float | None:
    """Pearson's r of (x, y) pairs (numpy's); None when either side does not vary."""
    x, y = np.asarray(pairs, dtype=float).reshape(-1, 2).T
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return round(float(np.corrcoef(x, y)[0, 1]), 4)

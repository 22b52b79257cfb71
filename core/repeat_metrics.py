"""The metrics layer's numbers over a run's repeats (`medvqa run --repeats K`). Per
condition, `repeat_numbers` gives:

- `per_repeat`: the headline metric of each repeat, computed by the metrics layer
  (`metrics.cell`) on that repeat's records: the number a run without repeats would show;
- `mean` over repeats, and `between_repeat_sd`: the sample standard deviation (K − 1 in the
  denominator) of the per-repeat values;
- `ci`: the item-level 95 % interval of the mean (`repeats.item_ci`, `repeats.ITEM_INTERVAL`).
  For a benchmark whose headline metric is not accuracy, the mean and SD are of its metric and
  the item-level interval is left out (None, and the method says so).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from statistics import fmean, stdev
from typing import TYPE_CHECKING, Any

from . import metrics
from .repeats import IMAGE_PAIR, ITEM_INTERVAL, NO_INTERVAL, by_repeat, item_ci, item_means, paired_repeats
from .results import condition_order

if TYPE_CHECKING:
    import pandas as pd

    from .benchmark import Benchmark


def repeat_numbers(
    records: Iterable[Mapping[str, Any]], benchmark: Benchmark | None = None, reading: str | None = None
) -> dict[str, Any] | None:
    """Per condition, the numbers over the repeats (see the module's docstring), and Δimg per
    repeat and pooled where the records hold both C+Q+I and C+Q; None for records of one repeat."""
    records = metrics.read(list(records), metrics.reading_of(benchmark, reading))
    repeats = by_repeat(records)
    if len(repeats) < 2:
        return None
    kept = metrics.counted(records, benchmark)[0]
    accuracy = benchmark is None or benchmark.headline_metric == metrics.ACCURACY
    conditions = sorted({r["condition"] for r in records}, key=condition_order)
    out: dict[str, Any] = {
        "repeats": len(repeats),
        "method": ITEM_INTERVAL if accuracy else NO_INTERVAL,
        "conditions": {},
    }
    for cond in conditions:
        cells = [metrics.cell([r for r in rs if r["condition"] == cond], benchmark) for rs in repeats.values()]
        values = [c.value for c in cells if c.value is not None]
        means = item_means(r for r in kept if r["condition"] == cond)
        ci, method = item_ci(means) if accuracy else (None, None)
        out["conditions"][cond] = {
            "n_items": len(means),
            "per_repeat": values,
            "mean": fmean(values) if values else None,
            "between_repeat_sd": stdev(values) if len(values) > 1 else None,
            "ci": list(ci) if ci else None,
            "ci_method": method,
        }
    with_image, without = IMAGE_PAIR
    if with_image in conditions and without in conditions:
        side = {c: [r for r in kept if r["condition"] == c] for c in IMAGE_PAIR}
        out["delta_img"] = paired_repeats(side[with_image], side[without])
    return out


REPEAT_COLUMNS = ("repeats", "mean_over_repeats", "between_repeat_sd", "item_ci_low", "item_ci_high", "item_ci_method")


def with_repeat_columns(frame: pd.DataFrame, numbers: Mapping[str, Any]) -> pd.DataFrame:
    """A by-condition table (`metrics.table`) with the numbers over repeats beside each
    condition's pooled row (`REPEAT_COLUMNS`): what `report` shows for a run with repeats."""
    frame = frame.copy()
    rows = [numbers["conditions"].get(c) or {} for c in frame["condition"]]
    frame["repeats"] = numbers["repeats"]
    frame["mean_over_repeats"] = [r.get("mean") for r in rows]
    frame["between_repeat_sd"] = [r.get("between_repeat_sd") for r in rows]
    frame["item_ci_low"] = [(r.get("ci") or (None, None))[0] for r in rows]
    frame["item_ci_high"] = [(r.get("ci") or (None, None))[1] for r in rows]
    frame["item_ci_method"] = numbers["method"]
    return frame

"""Item-level numbers of repeated records (`medvqa run --repeats K`): pure functions of records.

A run asked K times holds K records per (item, condition), each with its `repeat` index (a
record without one is repeat 0). The repeats of one item are never counted as independent
items: each item's mean correctness over its repeats is one observation (`item_means`), and the
item-level 95 % interval of a mean (`item_ci`, `ITEM_INTERVAL`) is Student's t over the items.
Where the items' means do not vary at all (every item right in every repeat, or wrong in every
one, where t gives no width), the Wilson interval on the items stands instead.

Paired factors per repeat and pooled (`paired_repeats`): the difference of correctness between
two sides of the same item (Δimg: C+Q+I − C+Q of one run; Δlang: one language's run − the
other's), per repeat on the items both sides hold in that repeat, and pooled: the mean over
items of each item's mean difference across repeats, with the same item-level t interval.
Refusals count as wrong (the audit's default, strict convention).

The ground floor: the metrics layer's numbers over repeats are in `repeat_metrics`, compare's
in `compare.repeats`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean, stdev
from typing import Any

from .results import RecordDict, as_records, condition_order, is_derived

# the `ci_method` of an item-level interval: Student's t over the items' means, or (no spread
# among them) Wilson's on the items
ITEM_T, ITEM_WILSON = "item-mean-t", "item-mean-wilson"
ITEM_INTERVAL = (
    "Student's t over items (each item's mean over the repeats); Wilson on the items where their means do not vary"
)
NO_INTERVAL = "none: the headline metric is not a mean over items"
IMAGE_PAIR = ("C+Q+I", "C+Q")


def repeat_of(record: RecordDict) -> int:
    return int(record.get("repeat") or 0)


def by_repeat(records: Iterable[Mapping[str, Any]]) -> dict[int, list[RecordDict]]:
    """{repeat index: its records}, in index order."""
    out: dict[int, list[RecordDict]] = defaultdict(list)
    for r in as_records(records):
        out[repeat_of(r)].append(r)
    return dict(sorted(out.items()))


def n_repeats(records: Iterable[Mapping[str, Any]]) -> int:
    """How many repeats the records hold (1 for a run without repeats)."""
    return len({repeat_of(r) for r in as_records(records)}) or 1


def _t_interval(values: Sequence[float], mean: float) -> tuple[float, float] | None:
    n = len(values)
    if n < 2:
        return None
    sd = stdev(values)
    if sd == 0:
        return None
    from scipy.special import stdtrit

    half = stdtrit(n - 1, 0.975) * sd / math.sqrt(n)
    return (mean - half, mean + half)


def item_interval(per_item: Sequence[float], lower: float = 0.0) -> tuple[float, float] | None:
    """The item-level 95 % interval of the mean of `per_item` (each item's mean over its
    repeats; see the module's docstring), clipped to [`lower`, 1] (−1 for a difference). A
    difference without spread among its items (one item, or every item's the same) has none:
    no interval measures a spread that is not there, and a zero-width one would claim certainty."""
    return item_ci(per_item, lower)[0]


def item_ci(per_item: Sequence[float], lower: float = 0.0) -> tuple[tuple[float, float] | None, str | None]:
    """(`item_interval`, its `ci_method`: `ITEM_T` or `ITEM_WILSON`; None without an interval)."""
    if not per_item:
        return None, None
    mean = fmean(per_item)
    found = _t_interval(per_item, mean)
    if found is None:  # no spread among the items: the Wilson interval of a proportion on them
        if lower < 0:
            return None, None
        from .stats import binomial_ci  # (numpy and scipy on first use)

        exact = binomial_ci(mean * len(per_item), len(per_item))  # (expected counts where means are not 0 or 1)
        return (exact, ITEM_WILSON) if exact else (None, None)
    return (max(lower, found[0]), min(1.0, found[1])), ITEM_T


def item_means(records: Iterable[Mapping[str, Any]]) -> list[float]:
    """Each item's mean correctness over its records (its repeats), in first-seen order."""
    return list(item_means_by_id(records).values())


def paired_repeats(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The difference of correctness a − b on the items both sides hold, per repeat and pooled
    (see the module's docstring): {per_repeat: [{repeat, n, delta}], mean, between_repeat_sd,
    pooled: {n_items, delta, ci}, method}."""
    index_b = {(r["item_id"], repeat_of(r)): bool(r.get("correct")) for r in as_records(b)}
    per_repeat: dict[int, list[float]] = defaultdict(list)
    per_item: dict[str, list[float]] = defaultdict(list)
    for r in as_records(a):
        other = index_b.get((r["item_id"], repeat_of(r)))
        if other is None:
            continue
        d = float(bool(r.get("correct"))) - float(other)
        per_repeat[repeat_of(r)].append(d)
        per_item[r["item_id"]].append(d)
    deltas = [{"repeat": k, "n": len(v), "delta": fmean(v)} for k, v in sorted(per_repeat.items())]
    values = [d["delta"] for d in deltas]
    means = [fmean(v) for v in per_item.values()]
    ci, method = item_ci(means, lower=-1.0)
    return {
        "per_repeat": deltas,
        "mean": fmean(values) if values else None,
        "between_repeat_sd": stdev(values) if len(values) > 1 else None,
        "pooled": {
            "n_items": len(means),
            "delta": fmean(means) if means else None,
            "ci": list(ci) if ci else None,
            "ci_method": method,
        },
        "method": ITEM_INTERVAL.split(";")[0],
    }


ITEM_PAIRED_T = "item-mean-paired-t"  # the `test` of `paired_means_test`


def paired_means_test(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """a − b on the same items, each side one value per item (its mean over its repeats): the
    item-level t interval of the mean contrast (`item_ci`, clipped to [−1, 1]) and the paired t
    test from the same statistic, so the interval excludes 0 exactly when p < 0.05. Every repeat
    of an item enters through its mean: testing the last repeat alone dropped the others.
    {"n", "difference", "ci", "ci_method", "test", "p", "p_bound", "note"}; neither interval nor
    test where the contrasts do not vary (one item, or every item's the same)."""
    d = [x - y for x, y in zip(a, b, strict=True)]
    ci, method = item_ci(d, lower=-1.0)
    out = {
        "n": len(d),
        "difference": fmean(d) if d else None,
        "ci": list(ci) if ci else None,
        "ci_method": method,
        "test": ITEM_PAIRED_T,
        "p": None,
        "p_bound": None,
        "note": None,
    }
    if ci is None:
        return {**out, "note": "every item gives the same contrast: no interval, no test" if d else None}
    from scipy.special import stdtr

    from .stats import P_FLOOR

    t = fmean(d) / (stdev(d) / math.sqrt(len(d)))
    p = 2 * float(stdtr(len(d) - 1, -abs(t)))
    return {**out, "p": p, "p_bound": "="} if p >= P_FLOOR else {**out, "p": P_FLOOR, "p_bound": "<"}


def item_mean_pairs(
    a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]]
) -> tuple[list[str], list[float], list[float]]:
    """(the items both sides hold, each one's mean over its repeats in `a`, the same in `b`): the
    pairs every test between repeated runs is over (`paired_means_test`)."""
    ma, mb = item_means_by_id(a), item_means_by_id(b)
    shared = [i for i in ma if i in mb]
    return shared, [ma[i] for i in shared], [mb[i] for i in shared]


def item_means_by_id(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """{item id: its mean correctness over its records (its repeats)}."""
    per_item: dict[str, list[float]] = defaultdict(list)
    for r in as_records(records):
        per_item[r["item_id"]].append(float(bool(r.get("correct"))))
    return {i: fmean(v) for i, v in per_item.items()}


def language_repeats(
    local: Iterable[Mapping[str, Any]], other: Iterable[Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Δlang per repeat and pooled, per condition both runs hold (their base conditions):
    {condition: `paired_repeats(local, other)`}."""
    local, other = list(local), list(other)
    conditions = sorted(
        {r["condition"] for r in local if not is_derived(r["condition"])} & {r["condition"] for r in other},
        key=condition_order,
    )
    return {
        c: paired_repeats([r for r in local if r["condition"] == c], [r for r in other if r["condition"] == c])
        for c in conditions
    }

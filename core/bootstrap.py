"""Every bootstrap medvqa prints, seeded so every number is reproducible (the closed-form
intervals and tests are in `stats`; docs/audit.md, "Statistics", gives the references):

- a non-accuracy headline between models (micro-F1): one seeded paired bootstrap gives the
  percentile interval and the p-value (`bootstrap_statistic`), from `MIN_HEADLINE_BOOTSTRAP_N`
  items; its p is never 0 but bounded by 1/B (`bootstrap_p`);
- every bootstrap interval an output prints is Hesterberg's expanded percentile interval
  (`expanded_level`, `expanded_p`: the plain percentile one covers 92 % at 20 units);
- clustered items (`--cluster`): a bootstrap resampling whole clusters (`cluster_bootstrap`; a
  difference: `bootstrap_difference` with clusters, interval and p from the same resamples),
  beside the item-level interval; every resampling goes through `resampled_sums`;
- the plain percentile interval of a mean (`bootstrap_ci`) and of a paired difference
  (`paired_bootstrap`), for a benchmark's own tables.

`scipy.stats` (a second to import) is imported only by `bootstrap_ci`; the rest needs numpy and
`scipy.special`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .stats import LEVEL

# 10,000 resamples: at 20 clusters a 95 % interval's tails then rest on about 250 resamples each
# (Davison & Hinkley 1997, §5.2.3, ask for at least 1,000 and more for tail quantiles)
RESAMPLES = 10_000
_RESAMPLE_CELLS = 4_000_000  # counts drawn at once by `resampled_sums` (32 MB of them)
# the `ci_method` names outputs give bootstrap intervals
BOOTSTRAP = "bootstrap-percentile"  # `bootstrap_ci`'s plain percentile interval
# the expanded percentile interval (Hesterberg 2015) of every bootstrap an output prints
EXPANDED_BOOTSTRAP = "bootstrap-expanded-percentile"
CLUSTER_BOOTSTRAP = "cluster-bootstrap-expanded-percentile"
PAIRED_BOOTSTRAP = "paired-bootstrap"  # the `test` name of a bootstrap p-value
# below this many resampled units an output gives no bootstrap interval: none reaches nominal
# coverage there (bench/coverage.py measures it)
MIN_BOOTSTRAP_N = 20
# a non-accuracy headline between models (micro-F1): its plain percentile bootstrap covers 0.918
# at n = 20, the expanded one 0.934 at n = 20 and 0.944 at n = 50 (bench/coverage.py): it is
# given from 50 shared items, clear of the edge
MIN_HEADLINE_BOOTSTRAP_N = 50


def bootstrap_ci(
    values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0, level: float = LEVEL
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean of per-item `values` (resampling items). None for no
    items and where every resample gives the same mean (one item, or all values equal): a
    bootstrap has no interval to give there; use an exact or score interval instead."""
    data = np.asarray(values, dtype=float)
    if data.size == 0 or np.all(data == data[0]):
        return None
    from scipy import stats

    res = stats.bootstrap(
        (data,),
        np.mean,
        n_resamples=resamples,
        confidence_level=level,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def bootstrap_p(differences: Sequence[float] | np.ndarray, resamples: int) -> tuple[float, str]:
    """Two-sided bootstrap p-value for a zero difference from a bootstrap distribution of
    differences: (p, "=") or, where no resample reaches zero, (1 / B, "<") — a bound, never 0."""
    d = np.asarray(differences, dtype=float)
    if d.size == 0 or np.all(d == 0):
        return 1.0, "="
    p = min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
    return (p, "=") if p > 0 else (1 / resamples, "<")


def resampled_sums(
    columns: np.ndarray, clusters: Sequence[Any] | None = None, *, resamples: int = RESAMPLES, seed: int = 0
) -> np.ndarray:
    """(resamples × k) totals of the k per-item `columns` (n × k) over seeded bootstrap resamples:
    of items, or of whole clusters (`clusters`: one id per item; every item of a drawn cluster
    comes along, Davison & Hinkley 1997, §3.8, and Field & Welsh 2007, JRSS B 69:369–390). The
    one resampling engine of every bootstrap medvqa prints.

    Drawing m units with replacement only decides how often each distinct unit total is drawn, so
    a resample is drawn as those counts (one multinomial over the distinct totals, with their
    shares): the same bootstrap distribution as drawing unit indices, at a cost that grows with
    the distinct totals (a handful for right-or-wrong items) rather than with m. Resamples are
    drawn in blocks, so memory stays bounded whatever `resamples` is."""
    data = np.asarray(columns, dtype=float)
    if clusters is not None:  # each cluster's totals, its items added in their order
        ids: dict = {}
        index = np.array([ids.setdefault(c, len(ids)) for c in clusters], dtype=np.intp)
        data = np.column_stack([np.bincount(index, weights=column, minlength=len(ids)) for column in data.T])
    units = data.shape[0]
    rows, counts = np.unique(data, axis=0, return_counts=True)
    rng = np.random.default_rng(seed)
    block = max(1, _RESAMPLE_CELLS // len(rows))
    return np.concatenate(
        [
            rng.multinomial(units, counts / units, size=min(block, resamples - start)) @ rows
            for start in range(0, resamples, block)
        ]
    )


def _percentile(values: np.ndarray, level: float) -> tuple[float, float]:
    """The (1 − level)/2 and (1 + level)/2 quantiles of the resamples as the inverse of their
    empirical distribution (no interpolation between resamples): the lower limit is above 0
    exactly when the share of resamples ≤ 0 is below (1 − level)/2, the condition `bootstrap_p`
    tests, so an interval and its p cannot disagree."""
    alpha = (1 - level) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha], method="inverted_cdf")
    return float(low), float(high)


def expanded_level(units: int, level: float = LEVEL) -> float:
    """The level of the percentile interval that makes it Hesterberg's expanded percentile
    interval for `units` resampled units (Hesterberg 2015, The American Statistician 69:371–386,
    §4.1): α' = 2Φ(−√(n/(n − 1))·t(n − 1, 1 − α/2)), which undoes the plain percentile
    interval's narrowness at small n (its spread is the plug-in one, √((n − 1)/n) too small, and
    z in place of t)."""
    if units < 2:
        return level
    from scipy.special import ndtr, stdtrit

    t = float(stdtrit(units - 1, 0.5 + level / 2))
    return 1 - 2 * float(ndtr(-np.sqrt(units / (units - 1)) * t))


def expanded_p(p: float, units: int) -> float:
    """The two-sided p of the expanded percentile interval from the plain bootstrap p
    (`bootstrap_p`): the α at which the expanded interval at level 1 − α just reaches 0, so it
    excludes 0 exactly when this p < α. Never below the plain p; 1 stays 1."""
    if p >= 1 or units < 2:
        return min(1.0, p)
    from scipy.special import ndtri, stdtr

    t = -float(ndtri(p / 2)) / float(np.sqrt(units / (units - 1)))
    return min(1.0, 2 * float(stdtr(units - 1, -t)))


def bootstrap_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    clusters: Sequence[Any] | None = None,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    min_n: int = MIN_BOOTSTRAP_N,
    expanded: bool = True,
) -> dict[str, Any]:
    """Mean of `a` − mean of `b` over the same items, its percentile interval and its two-sided
    p-value from one paired bootstrap (items resampled jointly, or whole `clusters`): {"n",
    "n_units", "difference", "ci", "ci_method", "test", "p", "p_bound", "note"}: the expanded
    percentile interval (`expanded_level`) and its p (`expanded_p`). The interval excludes 0
    exactly when p < 1 − level (both read the same resamples), so the two never contradict.
    Below `min_n` resampled units, and where every resample agrees, neither is given (a note
    says why): a bootstrap has no nominal coverage there (bench/coverage.py)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length ({x.size} vs {y.size})")
    n = int(x.size)
    units = len(set(clusters)) if clusters is not None else n
    method = CLUSTER_BOOTSTRAP if clusters is not None else EXPANDED_BOOTSTRAP if expanded else BOOTSTRAP
    out = {
        "n": n,
        "n_units": units,
        "difference": float(np.mean(x - y)) if n else None,
        "ci": None,
        "ci_method": method,
        "test": PAIRED_BOOTSTRAP,
        "p": None,
        "p_bound": None,
        "note": None,
    }
    if units < min_n:
        return {
            **out,
            "note": f"{units} {'clusters' if clusters is not None else 'items'}: below {min_n}, "
            "a bootstrap gives no interval and no test",
        }
    sums = resampled_sums(np.column_stack([x - y, np.ones(n)]), clusters, resamples=resamples, seed=seed)
    d = sums[:, 0] / sums[:, 1]
    if np.all(d == d[0]):
        return {**out, "note": "every resample gives the same difference: no interval, no test"}
    p, bound = bootstrap_p(d, resamples)
    if not expanded:
        return {**out, "ci": list(_percentile(d, level)), "p": p, "p_bound": bound}
    return {
        **out,
        "ci": list(_percentile(d, expanded_level(units, level))),
        "p": expanded_p(p, units),
        "p_bound": bound,
    }


def bootstrap_statistic(
    n: int,
    statistic: Callable[[np.ndarray], float | None],
    estimate: float | None,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    min_n: int = MIN_BOOTSTRAP_N,
) -> dict[str, Any]:
    """The seeded percentile bootstrap of a difference no closed form covers (a non-accuracy
    headline, such as micro-F1, of one model minus another's on the same items): `statistic(idx)`
    is the difference on the items at indices `idx` (None where it is undefined), `estimate` its
    value on all n. The expanded percentile interval (`expanded_level`) and its two-sided p for
    a zero difference (`bootstrap_p`, `expanded_p`) read the same resamples: {"ci",
    "ci_method", "test", "p", "p_bound", "note"}. Below `min_n` items neither is given; an
    interval that would not contain the estimate or has zero width is not given."""
    out = {"ci": None, "ci_method": None, "test": PAIRED_BOOTSTRAP, "p": None, "p_bound": None, "note": None}
    if n < min_n:
        return {**out, "note": f"{n} shared items: below {min_n}, a bootstrap gives no interval and no test"}
    dist = [d for d in map(statistic, resampled_indices(n, resamples=resamples, seed=seed)) if d is not None]
    if not dist or estimate is None:
        return out
    d = np.asarray(dist)
    low, high = _percentile(d, expanded_level(n, level))
    p, bound = bootstrap_p(d, resamples)
    p = expanded_p(p, n)
    if not low <= estimate <= high or low == high:  # every resample agrees: a bootstrap gives no interval
        return {**out, "p": p, "p_bound": bound}
    return {**out, "ci": [low, high], "ci_method": EXPANDED_BOOTSTRAP, "p": p, "p_bound": bound}


def cluster_bootstrap(
    numerator: Sequence[float],
    denominator: Sequence[float],
    clusters: Sequence[Any],
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    min_clusters: int = MIN_BOOTSTRAP_N,
) -> dict[str, Any]:
    """Expanded percentile interval (`expanded_level`, over the number of clusters) of
    Σ numerator / Σ denominator (an accuracy: correct and 1 per item; a
    Δ: the difference and 1 per pair; micro-F1: 2TP and 2TP + FP + FN) resampling whole
    clusters: {"ci", "ci_method", "n_clusters", "note"}; no interval below `min_clusters`
    clusters or where every resample agrees."""
    units = len(set(clusters))
    out = {"ci": None, "ci_method": CLUSTER_BOOTSTRAP, "n_clusters": units, "note": None}
    if units < min_clusters:
        return {**out, "note": f"{units} clusters: below {min_clusters}, no cluster interval"}
    sums = resampled_sums(np.column_stack([numerator, denominator]), clusters, resamples=resamples, seed=seed)
    keep = sums[:, 1] > 0
    ci = expanded_interval(sums[keep, 0] / sums[keep, 1], units, level)
    if ci is None:
        return {**out, "note": "every resample gives the same value: no cluster interval"}
    return {**out, "ci": ci}


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0, level: float = LEVEL
) -> dict[str, Any]:
    """Difference of means `a − b` over the same items, resampling items jointly:
    {"n", "difference", "ci", "p", "p_bound"} with a two-sided bootstrap p-value for a zero
    difference (`bootstrap_p`: bounded by 1/B, never 0). `ci` is None where every resample
    gives the same difference: a bootstrap has no interval to give there. (`bootstrap_difference`
    without a minimum n, for callers that state their own.)"""
    out = bootstrap_difference(a, b, resamples=resamples, seed=seed, level=level, min_n=1, expanded=False)
    if out["n"] == 0:
        return {"n": 0, "difference": None, "ci": None, "p": None}
    if out["ci"] is None:  # every resample gives the same difference
        p, bound = (1.0, "=") if out["difference"] == 0 else (1 / resamples, "<")
        return {"n": out["n"], "difference": out["difference"], "ci": None, "p": p, "p_bound": bound}
    return {k: out[k] for k in ("n", "difference", "ci", "p", "p_bound")}


def resampled_indices(
    n: int, clusters: Sequence[Any] | None = None, *, resamples: int = RESAMPLES, seed: int = 0
) -> Iterator[np.ndarray]:
    """`resamples` seeded bootstrap resamples of n items as index arrays: n items drawn with
    replacement, or as many whole clusters as there are (`clusters`: one id per item; every item of
    a drawn cluster comes along, as in `resampled_sums`). For a statistic no column sum gives (a
    calibration error re-binned on each resample, an AUROC), computed on each resample."""
    rng = np.random.default_rng(seed)
    if clusters is None:
        for _ in range(resamples):
            yield rng.integers(0, n, n)
        return
    groups: dict[Any, list[int]] = {}
    for i, c in enumerate(clusters):
        groups.setdefault(c, []).append(i)
    members = [np.asarray(g, dtype=np.intp) for g in groups.values()]
    for _ in range(resamples):
        yield np.concatenate([members[k] for k in rng.integers(0, len(members), len(members))])


def expanded_interval(values: Sequence[float] | np.ndarray, units: int, level: float = LEVEL) -> list[float] | None:
    """Hesterberg's expanded percentile interval (`expanded_level` over `units` resampled units)
    of a statistic's bootstrap `values`, or None where every resample agrees (no interval)."""
    data = np.asarray(values, dtype=float)
    if not data.size or np.all(data == data[0]):
        return None
    return list(_percentile(data, expanded_level(units, level)))

"""Statistics for the audit and the reports: bootstrap confidence intervals over items,
McNemar's exact test, the exact binomial test and interval, the interval of a macro average,
and a paired bootstrap between two models. Thin wrappers over
`scipy.stats`, seeded so that every number is reproducible."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy import stats

RESAMPLES = 1000
LEVEL = 0.95


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def _mean_difference(a, b, axis=-1):
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def bootstrap_ci(values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0,
                 level: float = LEVEL) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean of per-item `values` (resampling items).
    None for no items; a single item gives a zero-width interval."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    if data.size == 1 or np.all(data == data[0]):
        return (float(data[0]), float(data[0]))
    res = stats.bootstrap((data,), _mean, n_resamples=resamples, confidence_level=level,
                          method="percentile", vectorized=True, rng=np.random.default_rng(seed))
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def mcnemar_exact(n10: int, n01: int) -> float:
    """Two-sided exact McNemar p-value on the discordant pairs (binomial, p = 1/2)."""
    n = n10 + n01
    if n == 0:
        return 1.0
    return float(stats.binomtest(n10, n, 0.5).pvalue)


def binomial_test(successes: int, n: int, p: float) -> float | None:
    """Two-sided exact binomial p-value of `successes` out of `n` against probability `p`."""
    if n == 0:
        return None
    return float(stats.binomtest(successes, n, p).pvalue)


def binomial_ci(successes: int, n: int, *, level: float = LEVEL) -> tuple[float, float] | None:
    """Exact (Clopper-Pearson) CI of a proportion."""
    if n == 0:
        return None
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=level, method="exact")
    return (float(ci.low), float(ci.high))


def mean_of_proportions_ci(successes: Sequence[int], ns: Sequence[int], *,
                           level: float = LEVEL) -> tuple[float, float] | None:
    """CI of the unweighted mean of independent proportions `successes[i] / ns[i]` (a macro
    average): the Agresti-Coull normal approximation, each proportion adjusted to
    (x + z²/2) / (n + z²) with variance p(1 - p) / (n + z²), so that rows at 0 % or 100 % still
    carry their uncertainty; clipped to [0, 1]. None without proportions or with an empty one."""
    if not ns or min(ns) == 0:
        return None
    z = float(stats.norm.ppf(0.5 + level / 2))
    n = np.asarray(ns, dtype=float) + z * z
    p = (np.asarray(successes, dtype=float) + z * z / 2) / n
    centre = float(p.mean())
    half = z * float(np.sqrt(np.sum(p * (1 - p) / n))) / len(p)
    return (max(0.0, centre - half), min(1.0, centre + half))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES,
                     seed: int = 0, level: float = LEVEL) -> dict:
    """Difference of means `a − b` over the same items, resampling items jointly:
    {"n", "difference", "ci", "p"} with a two-sided bootstrap p-value for a zero difference."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length ({x.size} vs {y.size})")
    n = int(x.size)
    if n == 0:
        return {"n": 0, "difference": None, "ci": None, "p": None}
    difference = float(np.mean(x - y))
    if n == 1 or np.all(x - y == (x - y)[0]):
        return {"n": n, "difference": difference, "ci": (difference, difference),
                "p": 1.0 if difference == 0 else 0.0}
    res = stats.bootstrap((x, y), _mean_difference, n_resamples=resamples, paired=True,
                          confidence_level=level, method="percentile", vectorized=True,
                          rng=np.random.default_rng(seed))
    dist = res.bootstrap_distribution
    p = min(1.0, 2 * min(np.mean(dist <= 0), np.mean(dist >= 0)))
    return {"n": n, "difference": difference,
            "ci": (float(res.confidence_interval.low), float(res.confidence_interval.high)), "p": float(p)}

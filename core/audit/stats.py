"""Statistics for the audit and the reports. The papers prescribe none; each method is chosen so
that every estimate lies inside its interval, no interval has zero width where n >= 1, and
coverage is near nominal at small n (docs/audit.md, "Statistics", gives the references):

- a proportion: the exact Clopper-Pearson interval (`binomial_ci`, `proportion_ci`);
- a difference of paired proportions (Δimg, two models on the same items): Tango's score
  interval (`paired_difference_ci`) and McNemar's exact test (`mcnemar_exact`);
- an unweighted mean of independent proportions (a macro average): the MOVER interval built
  from each proportion's Wilson score limits (`mean_of_proportions_ci`);
- several strata tested at once: Holm's step-down adjustment (`holm`);
- only where no closed form exists (micro-F1, a difference of differences): a seeded percentile
  bootstrap, whose p-value is never 0 but bounded by 1/B (`bootstrap_p`).

Thin wrappers over scipy, seeded so every number is reproducible. The intervals of proportions
need only `scipy.special` (its beta quantile and normal quantile, the functions `scipy.stats`
calls for them); `scipy.stats` and `scipy.optimize` (a second to import) are imported by the
tests and intervals that need them, so a run's summary does without."""

from __future__ import annotations

from typing import Sequence

import numpy as np

RESAMPLES = 1000
LEVEL = 0.95
# the `ci_method` names outputs give their intervals
CLOPPER_PEARSON = "clopper-pearson"
TANGO = "tango-score"
MOVER_WILSON = "mover-wilson"
BOOTSTRAP = "bootstrap-percentile"


def _beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b): what `scipy.stats.beta.ppf` returns, bit for bit."""
    from scipy.special import betaincinv

    return float(betaincinv(a, b, q))


def _normal_quantile(q: float) -> float:
    """The q-quantile of the standard normal: what `scipy.stats.norm.ppf` returns, bit for bit."""
    from scipy.special import ndtri

    return float(ndtri(q))


def _mean_difference(a, b, axis=-1):
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def bootstrap_ci(values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0,
                 level: float = LEVEL) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean of per-item `values` (resampling items). None for no
    items and where every resample gives the same mean (one item, or all values equal): a
    bootstrap has no interval to give there; use an exact or score interval instead."""
    data = np.asarray(values, dtype=float)
    if data.size == 0 or np.all(data == data[0]):
        return None
    from scipy import stats

    res = stats.bootstrap((data,), np.mean, n_resamples=resamples, confidence_level=level,
                          method="percentile", vectorized=True, rng=np.random.default_rng(seed))
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def mcnemar_exact(n10: int, n01: int) -> float:
    """Two-sided exact McNemar p-value on the discordant pairs (binomial, p = 1/2); 1 without any."""
    return binomial_test(n10, n10 + n01, 0.5) if n10 + n01 else 1.0


def binomial_test(successes: int, n: int, p: float) -> float | None:
    """Two-sided exact binomial p-value of `successes` out of `n` against probability `p`; None for n = 0."""
    if not n:
        return None
    from scipy import stats

    return float(stats.binomtest(successes, n, p).pvalue)


def binomial_ci(successes: int, n: int, *, level: float = LEVEL) -> tuple[float, float] | None:
    """Exact (Clopper-Pearson) CI of a proportion: the beta quantiles of `proportion_ci`, which
    `scipy.stats.binomtest(...).proportion_ci(method="exact")` finds by root-finding on the
    binomial tails (the two agree to 1e-12)."""
    return proportion_ci(successes, n, level=level)


def proportion_ci(successes: float, n: int, *, level: float = LEVEL) -> tuple[float, float] | None:
    """Clopper-Pearson through the beta quantiles, which also takes an expected (fractional)
    count of successes, as imputed refusals give; equal to `binomial_ci` for whole counts."""
    if n == 0:
        return None
    alpha = 1 - level
    x = min(max(float(successes), 0.0), float(n))
    low = 0.0 if x <= 0 else _beta_quantile(alpha / 2, x, n - x + 1)
    high = 1.0 if x >= n else _beta_quantile(1 - alpha / 2, x + 1, n - x)
    return (low, high)


def wilson_ci(successes: float, n: int, *, level: float = LEVEL) -> tuple[float, float] | None:
    """Wilson's score interval of a proportion."""
    if n == 0:
        return None
    z = _normal_quantile(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, float(centre - half)), min(1.0, float(centre + half)))


def mean_of_proportions_ci(successes: Sequence[int], ns: Sequence[int], *,
                           level: float = LEVEL) -> tuple[float, float] | None:
    """CI of the unweighted mean m = Σ pᵢ / k of independent proportions pᵢ = successes[i] / ns[i]
    (a macro average): MOVER (Zou & Donner 2008; Zou, Huang & Zhang 2009) from each row's Wilson
    limits [lᵢ, uᵢ]: m − √Σ((pᵢ − lᵢ)/k)² to m + √Σ((uᵢ − pᵢ)/k)². It is centred on the
    estimate itself, so it always contains it, and rows at 0 % or 100 % still carry their
    uncertainty. None without proportions or with an empty one."""
    if not ns or min(ns) == 0:
        return None
    k = len(ns)
    p = np.asarray(successes, dtype=float) / np.asarray(ns, dtype=float)
    limits = np.asarray([wilson_ci(x, n, level=level) for x, n in zip(successes, ns)])
    m = float(p.mean())
    low = m - float(np.sqrt(np.sum(((p - limits[:, 0]) / k) ** 2)))
    high = m + float(np.sqrt(np.sum(((limits[:, 1] - p) / k) ** 2)))
    return (max(0.0, low), min(1.0, high))


def paired_difference_ci(n10: float, n01: float, n: int, *, level: float = LEVEL) -> tuple[float, float] | None:
    """Tango's asymptotic score interval for the difference p10 − p01 of two paired proportions
    (Tango 1998; recommended by Fagerland, Lydersen & Laake 2014): n10 pairs are correct only
    on the first side, n01 only on the second, of n pairs. The limits are the Δ where the score
    statistic Z(Δ) = (n10 − n01 − nΔ) / √(n(2q̂ + Δ(1 − Δ))), q̂ the restricted maximum-likelihood
    estimate of p01 given Δ, equals ±z. Z(Δ̂) = 0, so the estimate lies inside, and the interval
    has width > 0 for every n >= 1 (concordant pairs only: [−z²/(n+z²), z²/(n+z²)]). Counts may
    be expected (fractional) counts."""
    if n == 0:
        return None
    z = _normal_quantile(0.5 + level / 2)
    estimate = (n10 - n01) / n

    def score(delta: float) -> float:
        w = -n10 - n01 + (2 * n - n10 + n01) * delta
        q = (np.sqrt(max(w * w + 8 * n * n01 * delta * (1 - delta), 0.0)) - w) / (4 * n)
        numerator = n10 - n01 - n * delta
        variance = n * (2 * q + delta * (1 - delta))
        if variance <= 0:
            return 0.0 if numerator == 0 else float(np.sign(numerator)) * np.inf
        return numerator / float(np.sqrt(variance))

    def solve(target: float, bound: float) -> float:
        if estimate == bound or (score(bound) - target) * (score(estimate) - target) > 0:
            return bound
        from scipy import optimize

        return float(optimize.brentq(lambda d: score(d) - target, min(bound, estimate), max(bound, estimate),
                                     xtol=1e-12))

    return (solve(z, -1.0), solve(-z, 1.0))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment (Holm 1979) of a family of p-values; None stays None and is
    not counted in the family."""
    present = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    out: list[float | None] = [None] * len(pvalues)
    m, running = len(present), 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def bootstrap_p(differences: Sequence[float], resamples: int) -> tuple[float, str]:
    """Two-sided bootstrap p-value for a zero difference from a bootstrap distribution of
    differences: (p, "=") or, where no resample reaches zero, (1 / B, "<") — a bound, never 0."""
    d = np.asarray(differences, dtype=float)
    if d.size == 0 or np.all(d == 0):
        return 1.0, "="
    p = min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
    return (p, "=") if p > 0 else (1 / resamples, "<")


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES,
                     seed: int = 0, level: float = LEVEL) -> dict:
    """Difference of means `a − b` over the same items, resampling items jointly:
    {"n", "difference", "ci", "p", "p_bound"} with a two-sided bootstrap p-value for a zero
    difference (`bootstrap_p`: bounded by 1/B, never 0). `ci` is None where every resample
    gives the same difference: a bootstrap has no interval to give there."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length ({x.size} vs {y.size})")
    n = int(x.size)
    if n == 0:
        return {"n": 0, "difference": None, "ci": None, "p": None}
    difference = float(np.mean(x - y))
    if n == 1 or np.all(x - y == (x - y)[0]):  # every resample gives the same difference
        p, bound = (1.0, "=") if difference == 0 else (1 / resamples, "<")
        return {"n": n, "difference": difference, "ci": None, "p": p, "p_bound": bound}
    from scipy import stats

    res = stats.bootstrap((x, y), _mean_difference, n_resamples=resamples, paired=True,
                          confidence_level=level, method="percentile", vectorized=True,
                          rng=np.random.default_rng(seed))
    p, bound = bootstrap_p(res.bootstrap_distribution, resamples)
    return {"n": n, "difference": difference,
            "ci": (float(res.confidence_interval.low), float(res.confidence_interval.high)), "p": p, "p_bound": bound}

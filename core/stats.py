"""Statistics for the audit and the reports, and the closed-form intervals and tests among them.
The papers prescribe none; each method is chosen so that every estimate lies inside its
interval, no interval has zero width where n >= 1, and coverage is near nominal at small n
(docs/audit.md, "Statistics", gives the references). This module holds the intervals and tests
of proportions and ratios:

- a proportion: Wilson's score interval with Brown, Cai & DasGupta's boundary correction
  (`binomial_ci`, of whole or expected counts; chosen by its smallest coverage over p from 0.01
  to 0.99 against plain Wilson, Jeffreys and mid-p Clopper-Pearson: bench/coverage.py), and
  against a chance rate the score test Wilson's interval inverts (`score_test`), so the two never
  contradict;
- a difference of paired proportions (Δimg, two models on the same items): Tango's score
  interval (`paired_difference_ci`) and McNemar's mid-p test (`mcnemar`, Fagerland, Lydersen &
  Laake 2013), with the exact conditional p beside it; both computed in log space, so no p is
  0 and one below the smallest float is the bound `P_FLOOR` (`p_bound` "<");
- an unweighted mean of independent proportions (a macro average): the MOVER interval built
  from each proportion's Wilson score limits (`mean_of_proportions_ci`); a mean of one
  proportion is that proportion, with its own Wilson interval;
- several strata tested at once: Holm's step-down adjustment (`holm`); a stratum of fewer than
  `MIN_TESTED` pairs is descriptive (no test);
- a ratio of sums over datapoints (micro-F1 with boxes): the delta-method (linearisation)
  interval of a ratio estimator with a t quantile (`ratio_ci`), from `MIN_RATIO_N` datapoints.

Beside it on the ground floor: every bootstrap (`bootstrap`: a non-accuracy headline between
models, clustered items, the resampling engine) and the difference of two paired Δ's
(`contrasts`: the sign-flip test and the z).

Thin wrappers over scipy. The intervals of proportions need only `scipy.special` (its beta
quantile and normal quantile, the functions `scipy.stats` calls for them); `scipy.optimize` (a
second to import) is imported by the interval that needs it, so a run's summary does without."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

LEVEL = 0.95
# the `ci_method` names outputs give their intervals
WILSON = "wilson-score-bcd"  # `binomial_ci`: Wilson's, with the boundary correction
TANGO = "tango-score"
MOVER_WILSON = "mover-wilson"
DELTA_RATIO = "delta-method-ratio"
# the `test` names outputs give their p-values
MIDP = "mcnemar-mid-p"
SCORE_TEST = "binomial-score"
# the smallest p an output states as a number: a smaller one is reported as `< P_FLOOR`
P_FLOOR = 1e-300
# below these counts an output gives no test (a stratum: descriptive) or no ratio interval,
# because none reaches nominal coverage there (bench/coverage.py measures it)
MIN_TESTED = 10
MIN_RATIO_N = 20


def normal_quantile(q: float) -> float:
    """The q-quantile of the standard normal: what `scipy.stats.norm.ppf` returns, bit for bit."""
    from scipy.special import ndtri

    return float(ndtri(q))


def _log_half_binomial(k: int, n: int) -> tuple[float, float]:
    """(log P(X = k), log P(X ≤ k)) for X ~ Binomial(n, 1/2) and k ≤ n / 2, in log space (no
    underflow: P(X = 0) of n = 1,579 is 2^-1579, far below the smallest float)."""
    from scipy.special import gammaln, logsumexp

    x = np.arange(k + 1)
    log_pmf = gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1) - n * np.log(2.0)
    return float(log_pmf[-1]), float(logsumexp(log_pmf))


def bounded(log_p: float) -> dict[str, Any]:
    """A p-value from its natural log: {"p", "p_bound", "log10_p"}: p itself (capped at 1) with
    bound "=", or `P_FLOOR` with bound "<" where p is smaller (never 0)."""
    log_p = min(log_p, 0.0)
    log10_p = log_p / np.log(10.0)
    if log10_p < np.log10(P_FLOOR):
        return {"p": P_FLOOR, "p_bound": "<", "log10_p": float(log10_p)}
    return {"p": min(1.0, float(np.exp(log_p))), "p_bound": "=", "log10_p": float(log10_p)}


def mcnemar(n10: int, n01: int) -> dict[str, Any]:
    """McNemar's test on the discordant pairs n10, n01 (Fagerland, Lydersen & Laake 2013, BMC Med
    Res Methodol 13:91, eq. for the mid-p test): with n = n10 + n01, k = min(n10, n01) and
    X ~ Binomial(n, 1/2), the exact conditional p = min(1, 2·P(X ≤ k)) and the mid-p
    p = 2·P(X ≤ k) − P(X = k), the test medvqa reports (the exact conditional one is
    conservative). (5, 0): exact 2/32 = 0.0625, mid-p 1/32 = 0.03125; (0, 1579): mid-p 2^-1579,
    reported as < 1e-300 with log10_p = −1579·log10 2 = −475.33. {"test", "p", "p_bound",
    "log10_p", "exact_p", "exact_p_bound", "exact_log10_p"}; without discordant pairs both are 1."""
    n, k = n10 + n01, min(n10, n01)
    if n == 0:
        mid, exact = bounded(0.0), bounded(0.0)
    else:
        log_pk, log_tail = _log_half_binomial(k, n)
        # 2·P(X ≤ k) − P(X = k) = P(X = k)·(2·S − 1), S = P(X ≤ k) / P(X = k) ≥ 1
        mid = bounded(log_pk + float(np.log(2 * np.exp(log_tail - log_pk) - 1)))
        exact = bounded(np.log(2.0) + log_tail)
    return {
        "test": MIDP,
        **mid,
        "exact_p": exact["p"],
        "exact_p_bound": exact["p_bound"],
        "exact_log10_p": exact["log10_p"],
    }


def mcnemar_exact(n10: int, n01: int) -> float:
    """Two-sided exact conditional McNemar p-value on the discordant pairs (binomial, p = 1/2),
    computed in log space: never 0 (at least `P_FLOOR`); 1 without any."""
    return mcnemar(n10, n01)["exact_p"]


def score_test(successes: float, n: int, p: float) -> float | None:
    """Two-sided score test of `successes` out of `n` against probability `p`: z = (x − np) /
    √(np(1 − p)), p-value 2·Φ(−|z|) in log space (never 0: at least `P_FLOOR`); the test Wilson's
    interval inverts, so `p` lies outside `wilson_ci(successes, n)` exactly when the p-value is
    below 0.05 (Wilson 1927); `binomial_ci` differs from it only within 3 counts of 0 or n (at n ≤
    100), below 0.04 and above 0.96, where no chance rate lies. None for n = 0."""
    if not n:
        return None
    if p <= 0 or p >= 1:
        return 1.0 if successes == (0 if p <= 0 else n) else P_FLOOR
    from scipy.special import log_ndtr

    z = (successes - n * p) / float(np.sqrt(n * p * (1 - p)))
    return bounded(float(np.log(2.0) + log_ndtr(-abs(z))))["p"]


def binomial_ci(successes: float, n: int, *, level: float = LEVEL) -> tuple[float, float] | None:
    """The CI of a proportion: Wilson's score interval (`wilson_ci`) with the boundary correction
    of Brown, Cai & DasGupta (2001, Stat Sci 16:101–133, §4.1.1). Next to 0 and 1 Wilson's
    limit passes too close to the count: at n = 20 it covers 0.8995 at p = 0.973, at n = 50
    0.895 at p = 0.989, where the strongest models sit. So for x = 1, ..., x* successes
    (x* = 2 for n ≤ 50, 3 for n ≤ 100, none beyond; x < n/2) the lower limit is the one-sided
    Poisson one, ½χ²(2x; 1 − level)/n, and for as many failures the upper limit likewise (1 −
    that of n − x);
    elsewhere it is Wilson's, what `scipy.stats.binomtest(...).proportion_ci(method="wilson")`
    gives (to 1e-12). Its smallest coverage over p in [0.01, 0.99] is 0.917 at n = 20, 0.922 at
    n = 50, 0.933 at n = 200, its mean 0.951–0.955 (bench/coverage.py). 1 of 20: [0.00256,
    0.236]. `successes` may be an expected (fractional) count, as imputed refusals give."""
    found = wilson_ci(successes, n, level=level)
    if found is None:
        return None
    edge = 2 if n <= 50 else 3 if n <= 100 else 0
    x = min(max(float(successes), 0.0), float(n))
    low, high = found
    if 1 <= x <= edge and x < n / 2:  # the side near 0 (at n ≤ 4 a count can be near both)
        low = _poisson_lower(x, level) / n
    if 1 <= n - x <= edge and n - x < n / 2:
        high = 1 - _poisson_lower(n - x, level) / n
    return (low, high)


def _poisson_lower(x: float, level: float) -> float:
    """The one-sided lower confidence limit of a Poisson mean from x events: ½χ²(2x; 1 − level),
    the (1 − level) quantile of Gamma(x, 1)."""
    from scipy.special import gammaincinv

    return float(gammaincinv(x, 1 - level))


def wilson_ci(successes: float, n: int, *, level: float = LEVEL) -> tuple[float, float] | None:
    """Wilson's score interval of a proportion (Wilson 1927, JASA 22:209–212; recommended for
    small n by Brown, Cai & DasGupta 2001, Stat Sci 16:101–133): the p whose score test
    (`score_test`) is not rejected at 1 − level. It contains the estimate and has width > 0 for
    every n >= 1 (0 of n: [0, z²/(n + z²)])."""
    if n == 0:
        return None
    z = normal_quantile(0.5 + level / 2)
    p = min(max(float(successes), 0.0), float(n)) / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # at 0 of n and n of n the limit is 0 (1) exactly, not its rounding
    return (0.0 if p == 0 else max(0.0, float(centre - half)), 1.0 if p == 1 else min(1.0, float(centre + half)))


def mean_of_proportions_ci(
    successes: Sequence[int], ns: Sequence[int], *, level: float = LEVEL
) -> tuple[float, float] | None:
    """CI of the unweighted mean m = Σ pᵢ / k of independent proportions pᵢ = successes[i] / ns[i]
    (a macro average): MOVER (Zou & Donner 2008; Zou, Huang & Zhang 2009) from each row's limits
    [lᵢ, uᵢ] (`binomial_ci`): m − √Σ((pᵢ − lᵢ)/k)² to m + √Σ((uᵢ − pᵢ)/k)². It is centred on the
    estimate itself, so it always contains it, and rows at 0 % or 100 % still carry their
    uncertainty. A mean of one proportion is that proportion: its own Wilson interval
    (`macro_method` names the method). None without proportions or with an empty one."""
    if not ns or min(ns) == 0:
        return None
    k = len(ns)
    if k == 1:
        return binomial_ci(successes[0], ns[0], level=level)
    p = np.asarray(successes, dtype=float) / np.asarray(ns, dtype=float)
    limits = np.asarray([binomial_ci(x, n, level=level) for x, n in zip(successes, ns)])
    m = float(p.mean())
    low = m - float(np.sqrt(np.sum(((p - limits[:, 0]) / k) ** 2)))
    high = m + float(np.sqrt(np.sum(((limits[:, 1] - p) / k) ** 2)))
    return (max(0.0, low), min(1.0, high))


def macro_method(k: int) -> str:
    """The `ci_method` of `mean_of_proportions_ci` over `k` proportions."""
    return WILSON if k == 1 else MOVER_WILSON


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
    z = normal_quantile(0.5 + level / 2)
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

        return float(
            optimize.brentq(lambda d: score(d) - target, min(bound, estimate), max(bound, estimate), xtol=1e-12)
        )

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


def ratio_ci(
    numerator: Sequence[float], denominator: Sequence[float], *, level: float = LEVEL, min_n: int = MIN_RATIO_N
) -> dict[str, Any]:
    """The delta-method interval of a ratio estimator R = Σx / Σy over n independent datapoints
    (Cochran 1977, *Sampling Techniques*, 3rd ed., §6.3–6.4: var R ≈ Σ(xᵢ − R·yᵢ)² / (n(n − 1)ȳ²)),
    with a t quantile on n − 1 degrees of freedom, clipped to [0, 1]: {"ci", "ci_method",
    "note"}. Below `min_n` datapoints, or where every residual is 0 (each datapoint has the same
    ratio), no interval: it would not reach nominal coverage (bench/coverage.py)."""
    x, y = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    n = int(x.size)
    out = {"ci": None, "ci_method": DELTA_RATIO, "note": None}
    if n < min_n:
        return {**out, "note": f"{n} datapoints: below {min_n}, no interval"}
    if y.sum() <= 0:
        return {**out, "note": "nothing to count"}
    r = x.sum() / y.sum()
    residual = x - r * y
    if np.all(np.abs(residual) < 1e-12):
        return {**out, "note": "every datapoint has the same ratio: no interval"}
    from scipy.special import stdtrit

    se = float(np.sqrt(np.sum(residual**2) / (n * (n - 1)))) / float(y.mean())
    t = float(stdtrit(n - 1, 0.5 + level / 2))
    return {**out, "ci": [max(0.0, float(r - t * se)), min(1.0, float(r + t * se))]}

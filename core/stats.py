"""Statistics for the audit and the reports. The papers prescribe none; each method is chosen so
that every estimate lies inside its interval, no interval has zero width where n >= 1, and
coverage is near nominal at small n (docs/audit.md, "Statistics", gives the references):

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
  interval of a ratio estimator with a t quantile (`ratio_ci`), from `MIN_RATIO_N` datapoints;
- a difference of two models' Δimg (or of two languages' Δ) on the items both share
  (`paired_contrast_test`): the exact sign-flip test on the per-item contrasts and the interval
  that inverts it where fewer than `SIGN_FLIP_BELOW` are non-zero (enumerated, or drawn with
  the p's standard error in a note), the bound the differing items set where at most 2 are,
  and the large-sample z interval and test (`paired_z_difference`) from there on; each pair
  of interval and test never contradicts;
- a non-accuracy headline between models (micro-F1): one seeded paired bootstrap gives the
  percentile interval and the p-value (`bootstrap_statistic`), from `MIN_HEADLINE_BOOTSTRAP_N`
  items;
  its p is never 0 but bounded by 1/B (`bootstrap_p`);
- every bootstrap interval an output prints is Hesterberg's expanded percentile interval
  (`expanded_level`, `expanded_p`: the plain percentile one covers 92 % at 20 units);
- clustered items (`--cluster`): a bootstrap resampling whole clusters (`cluster_bootstrap`; a
  difference: `bootstrap_difference` with clusters, interval and p from the same resamples),
  beside the item-level interval; every resampling goes through `resampled_sums`.

Thin wrappers over scipy, seeded so every number is reproducible. The intervals of proportions
need only `scipy.special` (its beta quantile and normal quantile, the functions `scipy.stats`
calls for them); `scipy.stats` and `scipy.optimize` (a second to import) are imported by the
tests and intervals that need them, so a run's summary does without."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# 10,000 resamples: at 20 clusters a 95 % interval's tails then rest on about 250 resamples each
# (Davison & Hinkley 1997, §5.2.3, ask for at least 1,000 and more for tail quantiles)
RESAMPLES = 10_000
_RESAMPLE_CELLS = 4_000_000  # counts drawn at once by `resampled_sums` (32 MB of them)
LEVEL = 0.95
# the `ci_method` names outputs give their intervals
WILSON = "wilson-score-bcd"  # `binomial_ci`: Wilson's, with the boundary correction
TANGO = "tango-score"
MOVER_WILSON = "mover-wilson"
BOOTSTRAP = "bootstrap-percentile"  # `bootstrap_ci`'s plain percentile interval
# the expanded percentile interval (Hesterberg 2015) of every bootstrap an output prints
EXPANDED_BOOTSTRAP = "bootstrap-expanded-percentile"
CLUSTER_BOOTSTRAP = "cluster-bootstrap-expanded-percentile"
DELTA_RATIO = "delta-method-ratio"
PAIRED_Z = "paired-z"
SIGN_FLIP = "sign-flip-inverted"  # the interval that inverts the sign-flip test
DIFFERING_BOUND = "differing-items-bound"  # a difference of Δ's where at most 2 items differ
# the `test` names outputs give their p-values
MIDP = "mcnemar-mid-p"
PAIRED_BOOTSTRAP = "paired-bootstrap"
PAIRED_Z_TEST = "paired-z-test"
SIGN_FLIP_EXACT = "sign-flip-exact-mid-p"
SIGN_FLIP_MONTE_CARLO = "sign-flip-monte-carlo-mid-p"
SCORE_TEST = "binomial-score"
# the smallest p an output states as a number: a smaller one is reported as `< P_FLOOR`
P_FLOOR = 1e-300
# below these counts an output gives no test (a stratum: descriptive) or no bootstrap / ratio
# interval, because none reaches nominal coverage there (bench/coverage.py measures it)
MIN_TESTED = 10
MIN_BOOTSTRAP_N = 20
# a non-accuracy headline between models (micro-F1): its plain percentile bootstrap covers 0.918
# at n = 20, the expanded one 0.934 at n = 20 and 0.944 at n = 50 (bench/coverage.py): it is
# given from 50 shared items, clear of the edge
MIN_HEADLINE_BOOTSTRAP_N = 50
MIN_RATIO_N = 20
# a difference of two paired Δ's: the sign-flip test below this many non-zero contrasts, the z from
# there (bench/coverage.py); its outcomes enumerated up to this many, else drawn this many times
SIGN_FLIP_BELOW = 30
SIGN_FLIP_INTERVAL_FROM = 3
EXACT_SIGN_FLIPS = 200_000  # the test: one evaluation
EXACT_INTERVAL_FLIPS = 20_000  # the interval: some 80 evaluations of its bisection
MONTE_CARLO_FLIPS = 10_000
NO_PAIRS = "no shared pairs: no interval, no test"
SAME_CONTRAST = "every item gives the same contrast: no interval, no test"


def _normal_quantile(q: float) -> float:
    """The q-quantile of the standard normal: what `scipy.stats.norm.ppf` returns, bit for bit."""
    from scipy.special import ndtri

    return float(ndtri(q))


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


def _log_half_binomial(k: int, n: int) -> tuple[float, float]:
    """(log P(X = k), log P(X ≤ k)) for X ~ Binomial(n, 1/2) and k ≤ n / 2, in log space (no
    underflow: P(X = 0) of n = 1,579 is 2^-1579, far below the smallest float)."""
    from scipy.special import gammaln, logsumexp

    x = np.arange(k + 1)
    log_pmf = gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1) - n * np.log(2.0)
    return float(log_pmf[-1]), float(logsumexp(log_pmf))


def bounded(log_p: float) -> dict:
    """A p-value from its natural log: {"p", "p_bound", "log10_p"}: p itself (capped at 1) with
    bound "=", or `P_FLOOR` with bound "<" where p is smaller (never 0)."""
    log_p = min(log_p, 0.0)
    log10_p = log_p / np.log(10.0)
    if log10_p < np.log10(P_FLOOR):
        return {"p": P_FLOOR, "p_bound": "<", "log10_p": float(log10_p)}
    return {"p": min(1.0, float(np.exp(log_p))), "p_bound": "=", "log10_p": float(log10_p)}


def mcnemar(n10: int, n01: int) -> dict:
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
    z = _normal_quantile(0.5 + level / 2)
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


def bootstrap_p(differences: Sequence[float], resamples: int) -> tuple[float, str]:
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
) -> dict:
    """Mean of `a` − mean of `b` over the same items, its percentile interval and its two-sided
    p-value from one paired bootstrap (items resampled jointly, or whole `clusters`): {"n",
    "n_units", "difference", "ci", "ci_method", "test", "p", "p_bound", "note"}: the expanded
    percentile interval (`expanded_level`) and its p (`expanded_p`). The interval excludes 0
    exactly when p < 1 − level (both read the same resamples), so the two never contradict. Below `min_n` resampled units, and where every resample agrees, neither is given
    (a note says why): a bootstrap has no nominal coverage there (bench/coverage.py)."""
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


def paired_z_difference(a: Sequence[float], b: Sequence[float], *, level: float = LEVEL) -> dict:
    """Mean of `a` − mean of `b` over the same items from the per-item contrasts dᵢ = aᵢ − bᵢ:
    the large-sample interval d̄ ± z·s/√n and the two-sided z-test from the same statistic, so
    the interval excludes 0 exactly when p < 1 − level. Not Student's t quantile: contrasts of
    right-or-wrong answers are mostly 0 where two models err on the same items, and there the t
    interval over-covers (0.979 at n = 20, the z 0.952; both 0.95 from n = 50: bench/coverage.py).
    The p is computed in log space (`bounded`): never 0.
    {"n", "difference", "ci", "ci_method", "test", "p", "p_bound", "log10_p", "note"}; no interval
    and no test where every contrast is equal (no spread to measure)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = int(d.size)
    out = {
        "n": n,
        "difference": float(d.mean()) if n else None,
        "ci": None,
        "ci_method": PAIRED_Z,
        "test": PAIRED_Z_TEST,
        "p": None,
        "p_bound": None,
        "log10_p": None,
        "note": None,
    }
    if n == 0:
        return {**out, "note": NO_PAIRS}
    if n < 2 or np.all(d == d[0]):
        return {**out, "note": SAME_CONTRAST}
    from scipy.special import log_ndtr

    se = float(d.std(ddof=1)) / float(np.sqrt(n))
    z = _normal_quantile(0.5 + level / 2)
    statistic = float(d.mean()) / se
    p = bounded(float(np.log(2.0) + log_ndtr(-abs(statistic))))
    return {**out, "ci": [float(d.mean() - z * se), float(d.mean() + z * se)], **p}


def _sign_flips(values: np.ndarray, counts: np.ndarray, seed: int, limit: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """The sign-flip distribution of contrasts grouped by value (`counts[j]` contrasts equal to
    `values[j]`): per outcome, each group's sum of signs (2·pluses − count), its probability, and
    whether the outcomes are every one (exact: while they number at most `limit`) or
    `MONTE_CARLO_FLIPS` seeded draws. A group's pluses are Binomial(count, 1/2), so Π(count + 1)
    outcomes stand for 2^n sign patterns."""
    if float(np.prod(counts + 1.0)) <= limit:
        from scipy.special import gammaln

        grids = np.meshgrid(*[np.arange(c + 1) for c in counts], indexing="ij")
        plus = np.stack([g.ravel() for g in grids], axis=1)
        log_w = gammaln(counts + 1) - gammaln(plus + 1) - gammaln(counts - plus + 1) - counts * np.log(2.0)
        return 2.0 * plus - counts, np.exp(log_w.sum(axis=1)), True
    plus = np.random.default_rng(seed).binomial(counts.astype(int), 0.5, size=(MONTE_CARLO_FLIPS, counts.size))
    return 2.0 * plus - counts, np.full(MONTE_CARLO_FLIPS, 1 / MONTE_CARLO_FLIPS), False


def sign_flip_difference(a: Sequence[float], b: Sequence[float], *, level: float = LEVEL, seed: int = 0) -> dict:
    """Mean of `a` − mean of `b` over the same items by the sign-flip (permutation) test of the
    per-item contrasts dᵢ = aᵢ − bᵢ and the interval that inverts it (Fisher 1935, §21; Good
    2005, *Permutation, Parametric, and Bootstrap Tests*). Under "the contrasts are
    symmetric about δ", each dᵢ − δ keeps its size and takes either sign with chance 1/2; the
    two-sided mid-p of T = Σ(dᵢ − δ) is P(|T*| > |T|) + P(|T*| = |T|)/2 (the p printed, as
    McNemar's mid-p; `exact_p`, P(|T*| ≥ |T|), beside it). At δ = 0 only the non-zero contrasts
    flip: four contrasts of 1 give exact p 2/16 = 0.125, mid-p 1/16 = 0.0625. The interval is the
    δ not rejected at 1 − level, its limits found by bisection with 0 tried first, so it
    excludes 0 exactly when p < 1 − level. The outcomes are enumerated exactly while they number
    at most `EXACT_SIGN_FLIPS` for the test (`EXACT_INTERVAL_FLIPS` for the interval, whose
    bisection evaluates them some 80 times), else drawn (`MONTE_CARLO_FLIPS`, seeded; the note
    gives the p's standard error, or says the interval's limits were drawn). {"n", "n_nonzero",
    "difference", "ci", "ci_method", "test", "p", "p_bound", "log10_p", "exact_p", "note"};
    neither where every contrast is equal, no interval below 5 items (where no δ is rejected)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = int(d.size)
    out = {
        "n": n,
        "n_nonzero": int(np.count_nonzero(d)),
        "difference": float(d.mean()) if n else None,
        "ci": None,
        "ci_method": SIGN_FLIP,
        "test": SIGN_FLIP_EXACT,
        "p": None,
        "p_bound": None,
        "log10_p": None,
        "exact_p": None,
        "note": None,
    }
    if n == 0:
        return {**out, "note": NO_PAIRS}
    if np.all(d == d[0]):
        return {**out, "note": SAME_CONTRAST}
    values, counts = np.unique(d, return_counts=True)
    moved = values != 0
    # at δ = 0 only the non-zero contrasts flip: the test's outcomes are theirs (exact far more often)
    flips = {
        True: _sign_flips(values, counts.astype(float), seed, EXACT_INTERVAL_FLIPS),
        False: _sign_flips(values[moved], counts[moved].astype(float), seed, EXACT_SIGN_FLIPS),
    }

    def p_at(delta: float) -> tuple[float, float]:  # (mid-p, exact p) of "symmetric about delta"
        signs, weights, _ = flips[delta != 0]
        size = np.abs(values - delta) if delta != 0 else np.abs(values[moved])
        observed = abs(float(counts @ (values - delta)))
        spread = np.abs(signs @ size)
        tie = np.abs(spread - observed) <= 1e-9 * max(1.0, observed)
        above, equal = float(weights[(spread > observed) & ~tie].sum()), float(weights[tie].sum())
        return min(1.0, above + equal / 2), min(1.0, above + equal)

    def limit(far: float) -> float:  # the crossing between the estimate (kept) and `far` (rejected)
        kept, gone = out["difference"], far
        if min(kept, gone) < 0 < max(kept, gone):  # 0 first: the interval and the test then agree
            kept, gone = (0.0, gone) if p_at(0.0)[0] >= alpha else (kept, 0.0)
        while abs(kept - gone) > 1e-10:
            mid = (kept + gone) / 2
            kept, gone = (mid, gone) if p_at(mid)[0] >= alpha else (kept, mid)
        # a limit at a contrast's value (where the distribution steps) is that value, not its neighbour
        near = [float(v) for v in values if abs(v - kept) < 1e-8 and p_at(float(v))[0] >= alpha]
        return near[0] if near else kept

    alpha = 1 - level
    mid, whole = p_at(0.0)
    said = {
        "test": SIGN_FLIP_EXACT if flips[False][2] else SIGN_FLIP_MONTE_CARLO,
        "exact_p": whole,
        **(
            bounded(float(np.log(mid)))
            if mid > 0
            else {"p": 1 / MONTE_CARLO_FLIPS, "p_bound": "<", "log10_p": -float(np.log10(MONTE_CARLO_FLIPS))}
        ),
    }
    notes = []
    if not flips[False][2]:
        se = float(np.sqrt(max(mid * (1 - mid), 1 / MONTE_CARLO_FLIPS) / MONTE_CARLO_FLIPS))
        notes.append(f"p from {MONTE_CARLO_FLIPS:,} Monte Carlo sign flips (standard error {se:.2g})")
    low_end, high_end = float(values[0]) - 1, float(values[-1]) + 1
    if p_at(low_end)[0] >= alpha or p_at(high_end)[0] >= alpha:
        return {**out, **said, "note": "; ".join([*notes, f"{n} items: too few for a sign-flip interval"])}
    if not flips[True][2]:
        notes.append(f"interval limits from {MONTE_CARLO_FLIPS:,} Monte Carlo sign flips")
    return {**out, **said, "ci": [limit(low_end), limit(high_end)], "note": "; ".join(notes) or None}


def paired_contrast_test(
    a: Sequence[float], b: Sequence[float], *, level: float = LEVEL, seed: int = 0, span: float = 2.0
) -> dict:
    """A difference of two paired Δ's (two models' Δimg on the same items) from the per-item
    contrasts, by how many are non-zero (m); `test` and `ci_method` say which method gave what:

    - m < `SIGN_FLIP_BELOW`: the exact sign-flip test and the interval that inverts it
      (`sign_flip_difference`). Two strong models that agree on most items leave a handful of
      non-zero contrasts, where the z misleads: four contrasts of 1 among 100 give z p = 0.042,
      the exact p 0.125 (mid-p 0.0625); and the z gives no interval at all where no item
      differs (bench/coverage.py);
    - m of 0, 1 or 2 (below `SIGN_FLIP_INTERVAL_FROM`): the sign-flip test (p = 1 for m = 0)
      and the bound the differing items set (`DIFFERING_BOUND`): a contrast lies within ±`span`
      (2 for two Δ's of right-or-wrong answers), so the mean lies within ±span·u, u the upper
      limit of m of n (`binomial_ci`) for the share of items that differ. The inverted
      interval covers 0.56–0.79 there (its limits stop at the observed contrasts); the bound
      covers about 0.975 or more (the one-sided level of u) and always holds 0, where the test
      cannot reject (mid-p ≥ 0.25);
    - m >= `SIGN_FLIP_BELOW`: the z interval and test (`paired_z_difference`), where the sum of
      that many contrasts is near normal.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    m, n = int(np.count_nonzero(d)), int(d.size)
    if m >= SIGN_FLIP_BELOW:
        return {**paired_z_difference(a, b, level=level), "n_nonzero": m, "exact_p": None}
    out = sign_flip_difference(a, b, level=level, seed=seed)
    if n and m < SIGN_FLIP_INTERVAL_FROM:
        if m == 0:  # nothing flips: the data cannot reject δ = 0 (as McNemar without discordant pairs)
            out.update(test=SIGN_FLIP_EXACT, p=1.0, p_bound="=", log10_p=0.0, exact_p=1.0)
        bound = span * binomial_ci(m, n, level=level)[1]
        said = f"{m} of {n} items differ: the interval is the bound they set (±{span:g} × the share that may differ)"
        out.update(ci=[-bound, bound], ci_method=DIFFERING_BOUND, note=said)
    return out


def bootstrap_statistic(
    n: int,
    statistic: Callable[[np.ndarray], float | None],
    estimate: float | None,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    min_n: int = MIN_BOOTSTRAP_N,
) -> dict:
    """The seeded percentile bootstrap of a difference no closed form covers (a non-accuracy
    headline, such as micro-F1, of one model minus another's on the same items): `statistic(idx)`
    is the difference on the items at indices `idx` (None where it is undefined), `estimate` its
    value on all n. The expanded percentile interval (`expanded_level`) and its two-sided p for
    a zero difference (`bootstrap_p`, `expanded_p`) read the same resamples: {"ci", "ci_method", "test", "p", "p_bound", "note"}. Below `min_n` items neither is
    given; an interval that would not contain the estimate or has zero width is not given."""
    out = {"ci": None, "ci_method": None, "test": PAIRED_BOOTSTRAP, "p": None, "p_bound": None, "note": None}
    if n < min_n:
        return {**out, "note": f"{n} shared items: below {min_n}, a bootstrap gives no interval and no test"}
    rng = np.random.default_rng(seed)
    dist = [d for d in (statistic(rng.integers(0, n, n)) for _ in range(resamples)) if d is not None]
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
) -> dict:
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
    values = sums[keep, 0] / sums[keep, 1]
    if not values.size or np.all(values == values[0]):
        return {**out, "note": "every resample gives the same value: no cluster interval"}
    return {**out, "ci": list(_percentile(values, expanded_level(units, level)))}


def ratio_ci(
    numerator: Sequence[float], denominator: Sequence[float], *, level: float = LEVEL, min_n: int = MIN_RATIO_N
) -> dict:
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


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0, level: float = LEVEL
) -> dict:
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

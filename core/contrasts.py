"""A difference of two paired Δ's (two models' Δimg, or two languages' Δ, on the items both
share) from the per-item contrasts (`paired_contrast_test`): the exact sign-flip test on the
contrasts and the interval that inverts it where fewer than `SIGN_FLIP_BELOW` are non-zero
(`sign_flip_difference`: enumerated, or drawn with the p's standard error in a note), the bound
the differing items set where at most 2 are, and the large-sample z interval and test
(`paired_z_difference`) from there on; each pair of interval and test never contradicts
(docs/audit.md, "Statistics", gives the references; the intervals of proportions are in
`stats`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .stats import LEVEL, binomial_ci, bounded, normal_quantile

# the `ci_method` names outputs give these intervals
PAIRED_Z = "paired-z"
SIGN_FLIP = "sign-flip-inverted"  # the interval that inverts the sign-flip test
DIFFERING_BOUND = "differing-items-bound"  # a difference of Δ's where at most 2 items differ
# the `test` names outputs give their p-values
PAIRED_Z_TEST = "paired-z-test"
SIGN_FLIP_EXACT = "sign-flip-exact-mid-p"
SIGN_FLIP_MONTE_CARLO = "sign-flip-monte-carlo-mid-p"
# a difference of two paired Δ's: the sign-flip test below this many non-zero contrasts, the z from
# there (bench/coverage.py); its outcomes enumerated up to this many, else drawn this many times
SIGN_FLIP_BELOW = 30
SIGN_FLIP_INTERVAL_FROM = 3
EXACT_SIGN_FLIPS = 200_000  # the test: one evaluation
EXACT_INTERVAL_FLIPS = 20_000  # the interval: some 80 evaluations of its bisection
MONTE_CARLO_FLIPS = 10_000
NO_PAIRS = "no shared pairs: no interval, no test"
SAME_CONTRAST = "every item gives the same contrast: no interval, no test"


def paired_z_difference(a: Sequence[float], b: Sequence[float], *, level: float = LEVEL) -> dict[str, Any]:
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
    z = normal_quantile(0.5 + level / 2)
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


def sign_flip_difference(
    a: Sequence[float], b: Sequence[float], *, level: float = LEVEL, seed: int = 0
) -> dict[str, Any]:
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
    estimate = float(d.mean())  # (the `difference`: n > 0 here)
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
        kept, gone = estimate, far
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
) -> dict[str, Any]:
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
        share = binomial_ci(m, n, level=level)
        assert share is not None  # (n > 0: a proportion has an interval)
        bound = span * share[1]
        said = f"{m} of {n} items differ: the interval is the bound they set (±{span:g} × the share that may differ)"
        out.update(ci=[-bound, bound], ci_method=DIFFERING_BOUND, note=said)
    return out

import math
import random

import numpy as np
import pytest

from medvqa.core import bootstrap, contrasts, stats


def exact_mcnemar(b: int, c: int) -> float:
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize("b,c", [(0, 0), (6, 2), (2, 6), (10, 0), (7, 7), (13, 4), (1, 30)])
def test_mcnemar_exact_matches_the_binomial_tail(b, c):
    assert stats.mcnemar_exact(b, c) == pytest.approx(exact_mcnemar(b, c), rel=1e-12)


def test_score_test_by_hand_and_it_agrees_with_the_wilson_interval():
    # 7 of 10 against p = 0.2: z = (7 − 2) / √(10·0.2·0.8) = 3.9528, two-sided p = 2Φ(−3.9528) = 7.72e-05
    # (Wilson 1927, JASA 22:209–212: the interval is the p whose score test is not rejected)
    z = 5 / math.sqrt(1.6)
    assert stats.score_test(7, 10, 0.2) == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-9)
    assert stats.score_test(7, 10, 0.2) == pytest.approx(7.7229e-05, rel=1e-4)
    assert stats.score_test(0, 0, 0.2) is None
    assert stats.score_test(0, 10_000, 0.5) == stats.P_FLOOR  # 2Φ(−100) is below 1e-300: bounded, never 0
    for k, n in ((0, 5), (3, 10), (7, 10), (17, 20), (40, 200)):
        low, high = stats.binomial_ci(k, n)
        for p in np.linspace(0.01, 0.99, 99):
            assert (low <= p <= high) == (stats.score_test(k, n, p) >= 0.05 - 1e-12), (k, n, p)


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    values = [1.0] * 30 + [0.0] * 70
    a = bootstrap.bootstrap_ci(values, seed=3, resamples=200)  # few resamples: seeds differ in the limits
    assert a == bootstrap.bootstrap_ci(values, seed=3, resamples=200)
    assert a != bootstrap.bootstrap_ci(values, seed=4, resamples=200)
    lo, hi = a
    assert lo < 0.3 < hi
    # The normal approximation of a 95 % interval for p = 0.3, n = 100 is ±0.09.
    assert 0.05 < hi - lo < 0.25


def test_resampled_sums_draw_whole_clusters_as_often_as_the_bootstrap_does():
    """Three clusters: a holds two right items (totals 2, 2), b and c one wrong item each (0, 1).
    A resample draws 3 clusters with replacement, k of them a with k ~ Binomial(3, 1/3): the
    numerator is 2k and the denominator 3 + k, so P(2k = 0, 2, 4, 6) = 8, 12, 6, 1 over 27."""
    sums = bootstrap.resampled_sums(np.array([[1, 1], [1, 1], [0, 1], [0, 1]]), ["a", "a", "b", "c"])
    assert sums.shape == (bootstrap.RESAMPLES, 2) == (10_000, 2)
    k = sums[:, 0] / 2
    assert np.array_equal(sums[:, 1], 3 + k)
    shares = [float(np.mean(k == j)) for j in range(4)]
    assert shares == pytest.approx([8 / 27, 12 / 27, 6 / 27, 1 / 27], abs=0.015)  # 3 SE at 10,000
    # seeded: the same sums again
    again = bootstrap.resampled_sums(np.array([[1, 1], [1, 1], [0, 1], [0, 1]]), ["a", "a", "b", "c"])
    assert np.array_equal(sums, again)


def test_bootstrap_ci_degenerate_inputs():
    assert bootstrap.bootstrap_ci([]) is None
    assert bootstrap.bootstrap_ci([0.4]) is None  # never a zero-width interval
    assert bootstrap.bootstrap_ci([1.0, 1.0, 1.0]) is None


def test_binomial_ci_bounds_of_zero_of_n():
    lo, hi = stats.binomial_ci(0, 5)
    z = 1.959963984540054
    assert lo == 0.0
    assert hi == pytest.approx(z * z / (5 + z * z), rel=1e-12)  # Wilson's upper bound for 0/n: z²/(n + z²)


def test_paired_bootstrap_difference_and_significance():
    rng = random.Random(0)
    a = [1.0 if rng.random() < 0.8 else 0.0 for _ in range(200)]
    b = [1.0 if rng.random() < 0.3 else 0.0 for _ in range(200)]
    res = bootstrap.paired_bootstrap(a, b, seed=1)
    assert res["n"] == 200
    assert res["difference"] == pytest.approx(sum(a) / 200 - sum(b) / 200)
    lo, hi = res["ci"]
    assert lo < res["difference"] < hi and lo > 0
    assert res["p"] < 0.01
    same = bootstrap.paired_bootstrap(a, a)
    assert same["difference"] == 0 and same["p"] == 1.0 and same["ci"] is None
    # every item differs the same way: no resample reaches 0, so p is bounded by 1/B, never 0
    apart = bootstrap.paired_bootstrap([1.0] * 4, [0.0] * 4, resamples=1000)
    assert (apart["p"], apart["p_bound"]) == (0.001, "<") and apart["ci"] is None
    with pytest.raises(ValueError, match="differ in length"):
        bootstrap.paired_bootstrap([1.0], [1.0, 0.0])


# The intervals below are our own (the papers prescribe none); the references are in docs/audit.md.
Z2 = 1.959963984540054**2  # z² of a 95 % interval, 3.841459


@pytest.mark.parametrize("n", [1, 4, 17])
def test_tango_interval_closed_forms_at_the_extremes(n):
    # Tango (1998) score interval of p10 − p01. With n10 = n01 = 0 the restricted MLE of p01 is 0
    # and Z(Δ) = −nΔ / √(nΔ(1 − Δ)), so Z = −z at Δ = z² / (n + z²): the interval is ±z²/(n+z²)
    # (n = 4: ±3.8415/7.8415 = ±0.4899), never zero-width though the estimate is 0.
    lo, hi = stats.paired_difference_ci(0, 0, n)
    assert (lo, hi) == pytest.approx((-Z2 / (n + Z2), Z2 / (n + Z2)), abs=1e-9)
    # Right on every item with, wrong on every item without (n10 = n): q̂ = (1 − Δ)/2, Z(Δ) =
    # 2·√(n/4)·√((1 − Δ)/(1 + Δ)) = z at Δ = (n − z²)/(n + z²) (n = 4: 0.0202, n = 17: 0.6314);
    # the upper limit is 1, the estimate itself.
    lo, hi = stats.paired_difference_ci(n, 0, n)
    assert lo == pytest.approx((n - Z2) / (n + Z2), abs=1e-9) and hi == 1.0
    assert stats.paired_difference_ci(0, n, n) == pytest.approx((-1.0, -(n - Z2) / (n + Z2)), abs=1e-9)


def test_tango_interval_matches_the_published_example():
    # Fagerland, Lydersen & Laake (2014), Stat Med 33:2850, their worked example (n11 = 1,
    # n12 = 1, n21 = 7, n22 = 12, N = 21): Δ̂ = (1 − 7)/21 = −0.286, Tango's interval
    # (−0.517, −0.026).
    lo, hi = stats.paired_difference_ci(1, 7, 21)
    assert (round(lo, 3), round(hi, 3)) == (-0.517, -0.026)


def test_tango_interval_contains_its_estimate_and_has_width_for_every_table():
    for n in range(1, 9):
        for n10 in range(n + 1):
            for n01 in range(n - n10 + 1):
                lo, hi = stats.paired_difference_ci(n10, n01, n)
                assert lo <= (n10 - n01) / n <= hi and hi - lo > 0.05, (n10, n01, n)
    assert stats.paired_difference_ci(0, 0, 0) is None


def test_macro_average_interval_is_mover_wilson_centred_on_the_estimate():
    # Rows 17/17 and 3/10: macro mean (1 + 0.3)/2 = 0.65. Wilson limits: 17/17 →
    # [17/(17 + z²), 1] = [0.8157, 1]; 3/10 → centre (0.3 + z²/20)/(1 + z²/10) = 0.3555, half
    # z·√(0.021 + z²/400)/(1 + z²/10) = 0.2477 → [0.1078, 0.6032]. MOVER: 0.65 − √((1 − 0.8157)²
    # + (0.3 − 0.1078)²)/2 = 0.65 − 0.1331 = 0.5169; 0.65 + √(0 + (0.6032 − 0.3)²)/2 = 0.8016.
    lo, hi = stats.mean_of_proportions_ci([17, 3], [17, 10])
    assert (lo, hi) == pytest.approx((0.5169, 0.8016), abs=2e-4)
    # every row at 100 % keeps a width: 1 − √2·((1 − 0.8157)/2) = 1 − 0.1843/√2 = 0.8697, upper 1
    assert stats.mean_of_proportions_ci([17, 17], [17, 17]) == pytest.approx((0.8697, 1.0), abs=1e-4)


def test_holm_step_down_by_hand():
    # Holm (1979): sorted p 0.01, 0.03, 0.04 of m = 3 → 3·0.01 = 0.03, max(0.03, 2·0.03) = 0.06,
    # max(0.06, 1·0.04) = 0.06; None is not a test.
    assert stats.holm([0.01, 0.04, None, 0.03]) == pytest.approx([0.03, 0.06, None, 0.06])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert stats.holm([]) == []


def test_wilson_with_expected_counts_agrees_with_whole_counts():
    for k, n in ((0, 5), (3, 10), (17, 17), (1, 1)):
        assert stats.binomial_ci(float(k), n) == pytest.approx(stats.binomial_ci(k, n), abs=1e-12)
    lo, hi = stats.binomial_ci(2.5, 10)  # between 2/10 and 3/10
    assert stats.binomial_ci(2, 10)[0] < lo < stats.binomial_ci(3, 10)[0]


def test_bootstrap_p_is_never_zero():
    assert bootstrap.bootstrap_p([0.1, 0.2, 0.3], 1000) == (0.001, "<")
    assert bootstrap.bootstrap_p([-0.1, 0.1, 0.2, 0.3], 4) == (0.5, "=")  # 2·min(1/4, 3/4)
    assert bootstrap.bootstrap_p([0.0, 0.0], 10) == (1.0, "=")


def _parity_cases():
    """(k, n) over every count of small n, both ends and a spread of counts of large n."""
    cases = [(k, n) for n in range(1, 41) for k in range(n + 1)]
    for n in (97, 500, 2000, 12_345, 48_000):
        cases += [(k, n) for k in sorted({0, 1, 2, 3, n // 7, n // 3, n // 2, (2 * n) // 3, n - 3, n - 2, n - 1, n})]
    return cases


def test_intervals_of_proportions_equal_scipy_stats():
    """Wilson's interval (`wilson_ci`; `binomial_ci` away from the ends) as
    `scipy.stats.binomtest(...).proportion_ci(method="wilson")` gives it,
    over every count of n <= 40 and both ends of large n; Wilson's z as `scipy.stats.norm.ppf`."""
    from scipy import stats as scipy_stats

    for k, n in _parity_cases():
        wilson = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert stats.wilson_ci(k, n) == pytest.approx((wilson.low, wilson.high), abs=1e-12, rel=0)
        # binomial_ci is Wilson's but within x* counts of either end (the boundary correction, below)
        edge = 2 if n <= 50 else 3 if n <= 100 else 0
        low, high = stats.binomial_ci(k, n)
        assert low == pytest.approx(wilson.low, abs=1e-12, rel=0) or 1 <= k <= edge
        assert high == pytest.approx(wilson.high, abs=1e-12, rel=0) or 1 <= n - k <= edge
        assert stats.binomial_ci(float(k), n) == stats.binomial_ci(k, n)
    for level in (0.5, 0.9, 0.95, 0.99):
        z = float(scipy_stats.norm.ppf(0.5 + level / 2))
        p, n = 7 / 20, 20
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        assert stats.wilson_ci(7, 20, level=level) == pytest.approx((centre - half, centre + half), abs=1e-15)


def test_intervals_of_proportions_do_not_import_scipy_stats():
    """A run's summary computes Wilson intervals; `scipy.stats` (a second to import) is left to
    the tests and bootstraps that need it. In a fresh interpreter, as a run has it."""
    import subprocess
    import sys

    code = (
        "import sys; from medvqa.core import stats; from medvqa.core.metrics import accuracy_ci; "
        "print(accuracy_ci(7, 10), stats.wilson_ci(3, 9), stats.binomial_ci(2.5, 10)); "
        "print(sorted(m for m in ('scipy.stats', 'scipy.optimize') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith("(0.396778147")  # 7/10: 0.397 to 0.892, as in medvqa.stats' docstring
    assert out[1] == "[]"


def test_paired_z_difference_by_hand_and_its_interval_agrees_with_its_test():
    """Ten per-item contrasts 1, 0, 0, 1, −1, 0, 1, 0, 0, 1: mean 0.3, Σ(d − d̄)² = 5 − 10·0.09 = 4.1,
    s² = 4.1/9, se = √(s²/10) = 0.21344; z = 0.3/se = 1.40556, p = 2Φ(−z) = 0.15985; the interval
    0.3 ± 1.95996·se = [−0.11833, 0.71833] (docs/audit.md, "Statistics": z, not Student's t)."""
    d = [1, 0, 0, 1, -1, 0, 1, 0, 0, 1]
    got = contrasts.paired_z_difference(d, [0] * 10)
    se = math.sqrt(4.1 / 9 / 10)
    assert got["difference"] == pytest.approx(0.3)
    assert got["ci"] == pytest.approx([0.3 - 1.959963984540054 * se, 0.3 + 1.959963984540054 * se], rel=1e-12)
    assert got["ci"] == pytest.approx([-0.11833, 0.71833], abs=1e-5)
    assert got["p"] == pytest.approx(math.erfc(0.3 / se / math.sqrt(2)), rel=1e-9)
    assert got["p"] == pytest.approx(0.15985, abs=1e-5)
    assert (got["ci_method"], got["test"]) == ("paired-z", "paired-z-test")
    rng = np.random.default_rng(3)
    for _ in range(300):
        a, b = rng.integers(-1, 2, size=25), rng.integers(-1, 2, size=25)
        out = contrasts.paired_z_difference(a, b)
        if out["ci"] is not None:
            assert (out["ci"][0] > 0 or out["ci"][1] < 0) == (out["p"] < 0.05)
    assert contrasts.paired_z_difference([1, 1, 1], [0, 0, 0])["ci"] is None  # no spread: no interval, no test


def _brute_mid_p(d, delta):
    """The sign-flip mid-p of `d` about `delta` by grouping equal contrasts: a group of k contrasts
    of size s contributes s·(2B − k), B ~ Binomial(k, 1/2), and the groups are independent."""
    from itertools import product

    from scipy.stats import binom

    values, counts = np.unique(np.asarray(d, dtype=float), return_counts=True)
    observed = abs(float(np.sum(np.asarray(d) - delta)))
    above = equal = 0.0
    for plus in product(*[range(k + 1) for k in counts]):
        t = abs(sum(abs(v - delta) * (2 * b - k) for v, k, b in zip(values, counts, plus)))
        w = float(np.prod([binom.pmf(b, k, 0.5) for k, b in zip(counts, plus)]))
        if abs(t - observed) <= 1e-9:
            equal += w
        elif t > observed:
            above += w
    return above + equal / 2


def test_four_contrasts_of_one_get_the_exact_sign_test_not_the_z():
    """Four items with contrast 1 among 100: only the four flip at δ = 0, and |T*| = 4 only when
    all four have one sign: exact p = 2/16 = 0.125, mid-p 0.125 − 0.125/2 = 0.0625. The z would say
    0.042 (s² = (4 − 100·0.04²)/99, z = 0.04/√(s²/100) = 2.03). The interval inverts the mid-p:
    below 0 every contrast − δ is positive (T is the largest of the 2^100 sums: p = 2^-100), so the
    lower limit is 0; the upper one is 3/38, a step of the mid-p (kept just below, rejected above)
    where three plus signs of the four and 61 of the 96 tie with the observed |T| = 100δ − 4:
    2(1 − δ) + δ(2·61 − 96) = 100δ − 4."""
    a = [1] * 4 + [0] * 96
    z = contrasts.paired_z_difference(a, [0] * 100)
    assert z["p"] == pytest.approx(0.04225, abs=1e-5)
    got = contrasts.paired_contrast_test(a, [0] * 100)
    assert (got["test"], got["ci_method"], got["n_nonzero"]) == ("sign-flip-exact-mid-p", "sign-flip-inverted", 4)
    assert got["exact_p"] == pytest.approx(0.125, rel=1e-12)
    assert got["p"] == pytest.approx(0.0625, rel=1e-12)
    assert got["difference"] == pytest.approx(0.04)
    low, high = got["ci"]
    assert low == 0.0 and high == pytest.approx(3 / 38, abs=1e-9)
    d = np.asarray(a, dtype=float)
    assert _brute_mid_p(d, 3 / 38 - 1e-6) >= 0.05 > _brute_mid_p(d, 3 / 38 + 1e-6)
    assert _brute_mid_p(d, -1e-6) < 0.05 <= _brute_mid_p(d, 0.0)
    assert got["p"] >= 0.05 and low <= 0 <= high  # the test does not reject, the interval holds 0


def test_sign_flip_interval_limits_are_where_its_mid_p_crosses_and_agree_with_its_test():
    """On 12 items with contrasts −1, 0, 1, 2 (a's Δimg − b's), each limit is a δ the mid-p keeps
    (≥ 0.05) with rejected δ just beyond it, checked against a grouped enumeration of the 2^12
    sign patterns; over random samples the interval excludes 0 exactly when p < 0.05."""
    d = [2, 1, 1, 1, 1, 0, 0, 0, 0, -1, 1, 2]
    got = contrasts.sign_flip_difference(d, [0] * 12)
    assert got["difference"] == pytest.approx(8 / 12)
    assert got["p"] == pytest.approx(_brute_mid_p(d, 0.0), rel=1e-12)
    low, high = got["ci"]
    assert _brute_mid_p(d, low + 1e-6) >= 0.05 > _brute_mid_p(d, low - 1e-6)
    assert _brute_mid_p(d, high - 1e-6) >= 0.05 > _brute_mid_p(d, high + 1e-6)
    rng = np.random.default_rng(5)
    for _ in range(200):
        a, b = rng.integers(-1, 2, size=15), np.where(rng.random(15) < 0.7, 0, rng.integers(-1, 2, size=15))
        out = contrasts.paired_contrast_test(a, a - b)
        if out["ci"] is not None:
            assert (out["ci"][0] > 0 or out["ci"][1] < 0) == (out["p"] < 0.05), out


def test_contrast_test_says_which_method_and_why():
    # 40 non-zero contrasts of ±1 among 60 items: the z (SIGN_FLIP_BELOW is 30)
    many = contrasts.paired_contrast_test([1] * 25 + [-1] * 15 + [0] * 20, [0] * 60)
    assert (many["test"], many["ci_method"], many["n_nonzero"]) == ("paired-z-test", "paired-z", 40)
    # one contrast of 1 among 20: exact p = P(|T*| ≥ 1) = 1, mid-p 1/2; the interval is the bound the
    # differing items set: a contrast lies in [−2, 2], and the share of items that differ is at most
    # the upper limit of 1 of 20 (Wilson's, 0.236130), so the mean lies within ±0.472261
    one = contrasts.paired_contrast_test([1] + [0] * 19, [0] * 20)
    assert (one["test"], one["ci_method"]) == ("sign-flip-exact-mid-p", "differing-items-bound")
    assert (one["p"], one["exact_p"]) == (pytest.approx(0.5), pytest.approx(1.0))
    assert one["ci"] == pytest.approx([-2 * 0.2361312, 2 * 0.2361312], abs=1e-6)
    assert one["note"].startswith("1 of 20 items differ")
    # no item differs (two strong models that agree everywhere): p = 1 and the bound of 0 of 20,
    # ±2·z²/(20 + z²) = ±2·3.8415/23.8415 = ±0.32225, where the z gave no interval at all
    none = contrasts.paired_contrast_test([1] * 18 + [0, -1], [1] * 18 + [0, -1])
    assert (none["p"], none["exact_p"], none["difference"]) == (1.0, 1.0, 0.0)
    z2 = 1.959963984540054**2
    assert none["ci"] == pytest.approx([-2 * z2 / (20 + z2), 2 * z2 / (20 + z2)], rel=1e-9)
    assert contrasts.paired_z_difference([1] * 18 + [0, -1], [1] * 18 + [0, -1])["ci"] is None
    # 25 contrasts spread over five values among 2,000 items: the interval's outcomes are too many to
    # enumerate (1,976 × ...), so drawn, and the note says so; the test's are enumerated
    d = [2] * 3 + [1] * 12 + [-1] * 8 + [-2] * 2 + [0] * 1975
    big = contrasts.paired_contrast_test(d, [0] * 2000)
    assert big["test"] == "sign-flip-exact-mid-p" and "Monte Carlo" in big["note"]
    assert big["p"] == pytest.approx(_brute_mid_p([x for x in d if x], 0.0), rel=1e-9)
    # no shared pairs is not "every item gives the same contrast"
    assert contrasts.paired_contrast_test([], [])["note"] == "no shared pairs: no interval, no test"
    assert contrasts.paired_z_difference([], [])["note"] == "no shared pairs: no interval, no test"
    assert (
        contrasts.paired_contrast_test([1, 1, 1], [0, 0, 0])["note"]
        == "every item gives the same contrast: no interval, no test"
    )


def test_a_proportion_near_0_or_1_gets_the_boundary_correction_of_brown_cai_and_dasgupta():
    """Within x* = 2 counts of 0 or n (n ≤ 50; 3 for n ≤ 100) the limit on that side is the
    one-sided Poisson one, the λ with P(Poisson(λ) ≥ x) = 0.05, over n (Brown, Cai & DasGupta 2001,
    §4.1.1): x = 1: 1 − e^−λ = 0.05, λ = −ln 0.95 = 0.051293; x = 2: e^−λ(1 + λ) = 0.95,
    λ = 0.355362; x = 3: e^−λ(1 + λ + λ²/2) = 0.95, λ = 0.817691. Elsewhere Wilson's."""
    from medvqa.core.metrics import WILSON

    assert WILSON == stats.WILSON == "wilson-score-bcd"  # the metrics layer names it as stats does
    one = -math.log(0.95)
    assert stats.binomial_ci(1, 20) == (pytest.approx(one / 20, rel=1e-9), stats.wilson_ci(1, 20)[1])
    assert stats.binomial_ci(1, 20)[0] == pytest.approx(0.0025647, abs=1e-7)  # Wilson's: 0.00888
    assert stats.binomial_ci(19, 20) == (stats.wilson_ci(19, 20)[0], pytest.approx(1 - one / 20, rel=1e-9))
    low = stats.binomial_ci(2, 50)[0] * 50
    assert math.exp(-low) * (1 + low) == pytest.approx(0.95, rel=1e-9) and low == pytest.approx(0.355362, abs=1e-6)
    low = stats.binomial_ci(3, 100)[0] * 100
    assert math.exp(-low) * (1 + low + low * low / 2) == pytest.approx(0.95, rel=1e-9)
    assert stats.binomial_ci(3, 50) == stats.wilson_ci(3, 50)  # 3 > x* = 2 at n ≤ 50
    assert stats.binomial_ci(3, 101) == stats.wilson_ci(3, 101)  # none beyond n = 100
    assert stats.binomial_ci(7, 10) == stats.wilson_ci(7, 10)
    assert stats.binomial_ci(1, 2) == stats.wilson_ci(1, 2)  # 1 of 2 is near neither side
    # its worst coverage over p near 1 at n = 20 (exact binomial sums): Wilson's 0.8995 at p = 0.973
    from scipy.stats import binom

    def coverage(interval, n, p):
        ks = np.arange(n + 1)
        limits = np.array([interval(int(k), n) for k in ks])
        inside = (limits[:, 0][None, :] <= p[:, None]) & (p[:, None] <= limits[:, 1][None, :])
        return (binom.pmf(ks[None, :], n, p[:, None]) * inside).sum(axis=1)

    assert coverage(stats.wilson_ci, 20, np.array([0.973]))[0] == pytest.approx(0.8995, abs=1e-4)
    assert coverage(stats.binomial_ci, 20, np.array([0.973]))[0] > 0.97
    assert coverage(stats.binomial_ci, 20, np.arange(0.01, 0.991, 0.001)).min() > 0.917

import math
import random

import pytest

from medvqa.core.audit import stats


def exact_mcnemar(b: int, c: int) -> float:
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize("b,c", [(0, 0), (6, 2), (2, 6), (10, 0), (7, 7), (13, 4), (1, 30)])
def test_mcnemar_exact_matches_the_binomial_tail(b, c):
    assert stats.mcnemar_exact(b, c) == pytest.approx(exact_mcnemar(b, c), rel=1e-12)


def test_binomial_test_two_sided_against_a_hand_sum():
    # 7 of 10 against p = 0.2: two-sided exact p sums every outcome no more likely than 7.
    n, k, p = 10, 7, 0.2
    pmf = [math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(n + 1)]
    expected = sum(q for q in pmf if q <= pmf[k] * (1 + 1e-7))
    assert stats.binomial_test(k, n, p) == pytest.approx(expected, rel=1e-9)
    assert stats.binomial_test(0, 0, 0.2) is None


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    values = [1.0] * 30 + [0.0] * 70
    a = stats.bootstrap_ci(values, seed=3)
    assert a == stats.bootstrap_ci(values, seed=3)
    assert a != stats.bootstrap_ci(values, seed=4)
    lo, hi = a
    assert lo < 0.3 < hi
    # The normal approximation of a 95 % interval for p = 0.3, n = 100 is ±0.09.
    assert 0.05 < hi - lo < 0.25


def test_bootstrap_ci_degenerate_inputs():
    assert stats.bootstrap_ci([]) is None
    assert stats.bootstrap_ci([0.4]) == (0.4, 0.4)
    assert stats.bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)


def test_binomial_ci_exact_bounds():
    lo, hi = stats.binomial_ci(0, 5)
    assert lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / 5), rel=1e-9)  # Clopper-Pearson upper bound for 0/n


def test_paired_bootstrap_difference_and_significance():
    rng = random.Random(0)
    a = [1.0 if rng.random() < 0.8 else 0.0 for _ in range(200)]
    b = [1.0 if rng.random() < 0.3 else 0.0 for _ in range(200)]
    res = stats.paired_bootstrap(a, b, seed=1)
    assert res["n"] == 200
    assert res["difference"] == pytest.approx(sum(a) / 200 - sum(b) / 200)
    lo, hi = res["ci"]
    assert lo < res["difference"] < hi and lo > 0
    assert res["p"] < 0.01
    same = stats.paired_bootstrap(a, a)
    assert same["difference"] == 0 and same["p"] == 1.0
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_bootstrap([1.0], [1.0, 0.0])

"""Simulated coverage of every 95 % interval medvqa prints, at n = 5, 10, 20, 50, 200.

    python bench/coverage.py [--reps 1000] [--resamples 500] [--seed 0]

Each interval is computed by medvqa's own function (`medvqa.core.audit.stats`, the MMBU
adapter's micro-F1) on data drawn from a known truth, and the share of intervals that contain
the truth is printed, among the repetitions that give one (an interval is not given where the
data have no spread, e.g. every item contributes the same). An interval an output does not give
below its minimum n (the cluster bootstrap, the ratio interval of micro-F1) prints that minimum
instead of a coverage. The truths:

- accuracy (Wilson): exact coverage averaged over p = 0.05, 0.10, ..., 0.95 (no
  simulation: the binomial probabilities of every count);
- a paired difference (Δimg, two models' accuracies; Tango): pairs with p11 = 0.45, p10 = 0.20,
  p01 = 0.10, p00 = 0.25 (Δ = 0.10);
- a macro average (MOVER-Wilson): three rows of n items each, at 0.3, 0.6 and 0.85;
- a difference of two models' Δimg (paired z): model a's pairs drawn as above, model b copying
  a's answers on 60 % of the items (they err together) and else drawn with p10 = 0.15;
- micro-F1 with boxes (delta-method ratio interval): per datapoint 1-3 gold boxes, as many
  predictions ± 1, each gold box found with a probability drawn per datapoint from Beta(3, 2);
- a difference of two models' micro-F1 with boxes (`compare`'s paired bootstrap): the boxes
  above, model b finding each box with 0.15 less chance on the same datapoints;
- the cluster bootstrap (`--cluster`): n clusters of 1-3 items sharing a case, the cluster's
  chance of a right answer drawn from Beta(3, 2) (intra-cluster correlation 1/6).

Monte Carlo standard error at 1,000 repetitions: about 0.007 near 0.95.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats as st

from medvqa.core.audit import stats
from medvqa.adapters.mmbu_hard.metrics import micro_f1

SIZES = (5, 10, 20, 50, 200)


def accuracy(n: int, reps: int, rng, resamples: int) -> float:
    ks = np.arange(n + 1)
    cis = np.array([stats.binomial_ci(int(k), n) for k in ks])
    cover = [float(np.sum(st.binom.pmf(ks, n, p) * ((cis[:, 0] <= p) & (p <= cis[:, 1]))))
             for p in np.arange(0.05, 0.951, 0.05)]
    return float(np.mean(cover))


P_PAIRS = np.array([0.45, 0.20, 0.10, 0.25])  # p11, p10, p01, p00


def tango(n: int, reps: int, rng, resamples: int) -> float:
    truth = P_PAIRS[1] - P_PAIRS[2]
    hits = 0
    for counts in rng.multinomial(n, P_PAIRS, size=reps):
        low, high = stats.paired_difference_ci(counts[1], counts[2], n)
        hits += low <= truth <= high
    return hits / reps


def macro(n: int, reps: int, rng, resamples: int) -> float:
    ps = np.array([0.3, 0.6, 0.85])
    truth = ps.mean()
    hits = 0
    for _ in range(reps):
        x = rng.binomial(n, ps)
        low, high = stats.mean_of_proportions_ci(list(x), [n] * 3)
        hits += low <= truth <= high
    return hits / reps


def _pairs(n: int, rng, p10: float) -> tuple[np.ndarray, np.ndarray]:
    p = np.array([0.45, p10, 0.10, 0.45 - p10])
    state = rng.choice(4, size=n, p=p)
    return (state <= 1).astype(float), np.isin(state, (0, 2)).astype(float)


def delta_difference(n: int, reps: int, rng, resamples: int) -> float | str:
    # model a: Δimg 0.10; model b copies a's answers with probability 0.6 (the models err on the
    # same items) and else answers with Δimg 0.05: its Δimg is 0.6·0.10 + 0.4·0.05 = 0.08
    truth = 0.10 - 0.08
    hits = given = 0
    for rep in range(reps):
        wa, ra = _pairs(n, rng, 0.20)
        wb, rb = _pairs(n, rng, 0.15)
        copy = rng.random(n) < 0.6
        wb, rb = np.where(copy, wa, wb), np.where(copy, ra, rb)
        got = stats.paired_z_difference(wa - ra, wb - rb)
        if got["ci"] is not None:
            given += 1
            hits += got["ci"][0] <= truth <= got["ci"][1]
    return hits / given


def _boxes(n: int, rng) -> list[tuple[int, int, int]]:
    gold = rng.integers(1, 4, size=n)
    predicted = np.clip(gold + rng.integers(-1, 2, size=n), 0, None)
    found = rng.beta(3, 2, size=n)
    tp = rng.binomial(np.minimum(gold, predicted), found)
    return [(int(t), int(k - t), int(g - t)) for t, k, g in zip(tp, predicted, gold)]


def _f1_truth(rng) -> float:
    rows = np.array(_boxes(400_000, rng), dtype=float)
    tp, fp, fn = rows.sum(axis=0)
    return 2 * tp / (2 * tp + fp + fn)


def micro_f1_boxes(n: int, reps: int, rng, resamples: int, truth: list[float] = []) -> float | str:
    if n < stats.MIN_RATIO_N:
        return f"n >= {stats.MIN_RATIO_N}"
    if not truth:
        truth.append(_f1_truth(np.random.default_rng(12345)))
    hits = given = 0
    for _ in range(reps):
        out = micro_f1(_boxes(n, rng))
        if out["ci"] is not None:
            given += 1
            hits += out["ci"][0] <= truth[0] <= out["ci"][1]
    return hits / given


def _f1(rows: np.ndarray) -> float | None:
    tp, fp, fn = rows.sum(axis=0)
    return 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else None


def micro_f1_difference(n: int, reps: int, rng, resamples: int) -> float | str:
    """Two models' micro-F1 with boxes on the same datapoints, b finding each box with 0.15 less
    chance on the same items (`compare`'s paired bootstrap of headline_value)."""
    if n < stats.MIN_HEADLINE_BOOTSTRAP_N:
        return f"n >= {stats.MIN_HEADLINE_BOOTSTRAP_N}"

    def draw(size: int, g: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        gold = g.integers(1, 4, size=size)
        predicted = np.clip(gold + g.integers(-1, 2, size=size), 0, None)
        found = g.beta(3, 2, size=size)
        u = g.random((size, 3))
        both = np.minimum(gold, predicted)
        out = []
        for shift in (0.0, 0.15):
            chance = np.clip(found - shift, 0, 1)
            tp = np.array([(u[i, :both[i]] < chance[i]).sum() for i in range(size)])
            out.append(np.column_stack([tp, predicted - tp, gold - tp]).astype(float))
        return out[0], out[1]

    big_a, big_b = draw(200_000, np.random.default_rng(54321))
    truth = _f1(big_a) - _f1(big_b)
    hits = given = 0
    for rep in range(reps):
        a, b = draw(n, rng)
        estimate = _f1(a) - _f1(b)

        def on(idx):
            fa, fb = _f1(a[idx]), _f1(b[idx])
            return None if fa is None or fb is None else fa - fb

        boot = stats.bootstrap_statistic(n, on, estimate, resamples=resamples, seed=rep)
        if boot["ci"] is not None:
            given += 1
            hits += boot["ci"][0] <= truth <= boot["ci"][1]
    return hits / given


def cluster(n: int, reps: int, rng, resamples: int) -> float | str:
    if n < stats.MIN_BOOTSTRAP_N:
        return f"n >= {stats.MIN_BOOTSTRAP_N}"
    a, b = 3.0, 2.0
    truth = a / (a + b)
    hits = given = 0
    for rep in range(reps):
        sizes = rng.integers(1, 4, size=n)
        chance = rng.beta(a, b, size=n)
        ids = np.repeat(np.arange(n), sizes)
        correct = (rng.random(ids.size) < chance[ids]).astype(float)
        boot = stats.cluster_bootstrap(correct, np.ones(ids.size), list(ids), resamples=resamples, seed=rep)
        if boot["ci"] is not None:
            given += 1
            hits += boot["ci"][0] <= truth <= boot["ci"][1]
    return hits / given


INTERVALS = [
    ("accuracy", stats.WILSON, accuracy),
    ("paired difference (Δimg, two models)", stats.TANGO, tango),
    ("macro average of 3 rows", stats.MOVER_WILSON, macro),
    ("Δimg of a − Δimg of b", stats.PAIRED_Z, delta_difference),
    ("micro-F1 with boxes", stats.DELTA_RATIO, micro_f1_boxes),
    ("micro-F1 of a − micro-F1 of b", stats.EXPANDED_BOOTSTRAP, micro_f1_difference),
    ("accuracy, clustered items (n clusters)", stats.CLUSTER_BOOTSTRAP, cluster),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    header = f"| interval | ci_method | " + " | ".join(f"n = {n}" for n in SIZES) + " |"
    print(header)
    print("|" + "---|" * (len(SIZES) + 2))
    for row, (label, method, fn) in enumerate(INTERVALS):
        cells = []
        for n in SIZES:  # each cell its own seeded stream: a row's numbers do not depend on the others
            value = fn(n, args.reps, np.random.default_rng([args.seed, row, n]), args.resamples)
            cells.append(value if isinstance(value, str) else f"{value:.3f}")
        print(f"| {label} | {method} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n{args.reps} repetitions, {args.resamples} bootstrap resamples, seed {args.seed}; "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

"""Coverage of every 95 % interval medvqa prints, at its worst and on average: for each interval,
the smallest and the mean share of intervals that contain the truth over a grid of true values
reaching 0.01 and 0.99, at n = 20, 50 and 200.

    python bench/coverage.py [--reps 400] [--resamples 1000] [--seed 0] [--only accuracy,tango,...]

An average over p hides where an interval fails: Wilson's averages 0.954 at n = 20 and covers
0.8995 at p = 0.973. So each cell prints `min (where) / mean`. Each interval is computed by
medvqa's own function (`medvqa.core.stats`, `.bootstrap`, `.contrasts`, `.repeats`, the MMBU
adapter's micro-F1), among the repetitions that give one (an interval is not given where the
data have no spread); an interval an output does not give below its minimum n prints that
minimum instead.

- a proportion (exact: the binomial probability of every count, no simulation) over p = 0.010,
  0.011, ..., 0.990: medvqa's `binomial_ci` and the candidates it was chosen from (plain Wilson,
  Jeffreys, mid-p Clopper-Pearson; Brown, Cai & DasGupta 2001);
- two models on the same items, or one model with and without the image (Tango's interval; exact:
  every (n10, n01)): model a right with chance p in (0.3, 0.5, 0.7, 0.9, 0.95, 0.99), b with
  p − 0.05, b copying a's answer on a share of the items from 0 (independent) to 0.95;
- a macro average of 3 rows (MOVER): rows at p, p and 1 − p, p over the grid below;
- a difference of two models' Δimg (`paired_contrast_test`, and the z alone it replaced where
  few contrasts are non-zero): model a right with the image with chance p (as above), without
  it with p − 0.1 on the half of the items the image decides; b copying a's pair on a share from
  0 to 0.95, else as a without the image's effect; "given" is the smallest share of samples
  that get an interval;
- micro-F1 with boxes (delta-method ratio): per datapoint 1-3 gold boxes, as many predictions
  ± 1, each box found with a chance drawn from Beta(5p, 5(1 − p)), p over the grid below;
- a difference of two models' micro-F1 (the expanded percentile bootstrap): the boxes above, b
  finding each box with 0.15 less chance;
- the cluster bootstrap (`--cluster`): n clusters of 1-3 items, a cluster's chance of a right
  answer drawn from Beta(5p, 5(1 − p)) (intra-cluster correlation 1/6); for Δimg
  (`bootstrap_difference` with clusters), that chance with the image and 0.1 less without it;
- the item-level interval of a run with 3 repeats (`repeats.item_interval`): each item's chance
  drawn from Beta(2p, 2(1 − p)), its 3 answers independent, or (temperature 0) one answer
  repeated; for the pooled Δimg, that chance with the image and 0.1 less without it.

Simulated cells use the grid p = 0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99 and `--reps`
repetitions per point: the Monte Carlo standard error is about 0.011 at 0.95 with 400, so a
simulated minimum over 9 points reads about 0.015 low.

Over 400 lines: one standalone script, as every file of bench/ is; its table (`INTERVALS`) pairs
each interval with the few lines that simulate its data, which read best beside it.
"""

from __future__ import annotations

import argparse
import time
from functools import cache

import numpy as np
from scipy import optimize
from scipy import stats as st
from scipy.special import gammaln

from medvqa.adapters.mmbu_hard.metrics import micro_f1
from medvqa.core import bootstrap, contrasts, repeats, stats

SIZES = (20, 50, 200)
EXACT_GRID = np.round(np.arange(0.01, 0.99 + 1e-9, 0.001), 3)
GRID = (0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99)
STRONG = (0.3, 0.5, 0.7, 0.9, 0.95, 0.99)  # two models: a's accuracy; both well above 0
AGREEMENT = (0.0, 0.5, 0.8, 0.95)  # the share of items on which b copies a's answer


# ---------------------------------------------------------------- a proportion, exact


def jeffreys(k: int, n: int) -> tuple[float, float]:
    return (
        0.0 if k == 0 else float(st.beta.ppf(0.025, k + 0.5, n - k + 0.5)),
        1.0 if k == n else float(st.beta.ppf(0.975, k + 0.5, n - k + 0.5)),
    )


def mid_p_clopper_pearson(k: int, n: int) -> tuple[float, float]:
    def upper_tail(p):  # P(X > k) + P(X = k)/2 − 0.025: the lower limit's equation
        return st.binom.sf(k, n, p) + st.binom.pmf(k, n, p) / 2 - 0.025

    def lower_tail(p):
        return st.binom.cdf(k, n, p) - st.binom.pmf(k, n, p) / 2 - 0.025

    return (
        0.0 if k == 0 else optimize.brentq(upper_tail, 1e-12, 1 - 1e-12),
        1.0 if k == n else optimize.brentq(lower_tail, 1e-12, 1 - 1e-12),
    )


def proportion(interval):
    def coverage(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]]:
        ks = np.arange(n + 1)
        cis = np.array([interval(int(k), n) for k in ks])
        pmf = st.binom.pmf(ks[None, :], n, EXACT_GRID[:, None])
        inside = (cis[:, 0][None, :] <= EXACT_GRID[:, None]) & (EXACT_GRID[:, None] <= cis[:, 1][None, :])
        return list(zip(EXACT_GRID, (pmf * inside).sum(axis=1)))

    return coverage


# ---------------------------------------------------------------- two models on the same items, exact


@cache
def _tango_table(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n10, n01 = np.array([(i, j) for i in range(n + 1) for j in range(n + 1 - i)]).T
    cis = np.array([stats.paired_difference_ci(int(i), int(j), n) for i, j in zip(n10, n01)])
    return n10, n01, cis[:, 0], cis[:, 1]


def tango(agreement: float):
    def coverage(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]]:
        n10, n01, low, high = _tango_table(n)
        log_fact = gammaln(n10 + 1) + gammaln(n01 + 1) + gammaln(n - n10 - n01 + 1)
        out = []
        for pa in STRONG:
            pb = pa - 0.05
            p10, p01 = (1 - agreement) * pa * (1 - pb), (1 - agreement) * (1 - pa) * pb
            truth = p10 - p01
            log_pmf = (
                gammaln(n + 1)
                - log_fact
                + n10 * np.log(p10)
                + n01 * np.log(p01)
                + (n - n10 - n01) * np.log1p(-p10 - p01)
            )
            out.append((pa, float(np.sum(np.exp(log_pmf) * ((low <= truth + 1e-12) & (truth - 1e-12 <= high))))))
        return out

    return coverage


# ---------------------------------------------------------------- simulated intervals


def _share(hits: int, given: int) -> float:
    return hits / given if given else float("nan")


def macro(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]]:
    out = []
    for p in GRID:
        ps = np.array([p, p, 1 - p])
        hits = 0
        for x in rng.binomial(n, ps, size=(reps, 3)):
            low, high = stats.mean_of_proportions_ci(list(x), [n] * 3)
            hits += low <= ps.mean() <= high
        out.append((p, hits / reps))
    return out


def _image_pairs(n: int, rng, p_with: float, effect: bool) -> tuple[np.ndarray, np.ndarray]:
    """(with, removed) correctness per item: right with the image with chance p_with; without it
    the same answer on half the items, else right with chance p_with − 0.1 (or p_with, no effect)."""
    with_image = rng.random(n) < p_with
    p_without = max(p_with - 0.1, 0.005) if effect else p_with
    removed = np.where(rng.random(n) < 0.5, with_image, rng.random(n) < p_without)
    return with_image.astype(float), removed.astype(float)


def delta_difference(agreement: float, test=contrasts.paired_contrast_test):
    def coverage(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float, float]]:
        out = []
        for p in STRONG:
            # Δimg of a: half the items keep their answer, the rest drop by 0.1: 0.5·(p − (p − 0.1));
            # b's own answers have no image effect, so Δimg of b = agreement · Δimg of a
            delta_a = 0.5 * (p - max(p - 0.1, 0.005))
            truth = (1 - agreement) * delta_a
            hits = given = 0
            for _ in range(reps):
                wa, ra = _image_pairs(n, rng, p, True)
                wb, rb = _image_pairs(n, rng, p, False)
                copy = rng.random(n) < agreement
                wb, rb = np.where(copy, wa, wb), np.where(copy, ra, rb)
                got = test(wa - ra, wb - rb)
                if got["ci"] is not None:
                    given += 1
                    hits += got["ci"][0] - 1e-12 <= truth <= got["ci"][1] + 1e-12
            out.append((p, _share(hits, given), given / reps))
        return out

    return coverage


def _boxes(n: int, rng, p: float) -> list[tuple[int, int, int]]:
    gold = rng.integers(1, 4, size=n)
    predicted = np.clip(gold + rng.integers(-1, 2, size=n), 0, None)
    found = rng.beta(5 * p, 5 * (1 - p), size=n)
    tp = rng.binomial(np.minimum(gold, predicted), found)
    return [(int(t), int(k - t), int(g - t)) for t, k, g in zip(tp, predicted, gold)]


def _f1(rows: np.ndarray) -> float | None:
    tp, fp, fn = rows.sum(axis=0)
    return 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else None


def micro_f1_boxes(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]] | str:
    if n < stats.MIN_RATIO_N:
        return f"n >= {stats.MIN_RATIO_N}"
    out = []
    for p in GRID:
        truth = _f1(np.array(_boxes(300_000, np.random.default_rng(12345), p), dtype=float))
        hits = given = 0
        for _ in range(reps):
            got = micro_f1(_boxes(n, rng, p))
            if got["ci"] is not None:
                given += 1
                hits += got["ci"][0] <= truth <= got["ci"][1]
        out.append((p, _share(hits, given)))
    return out


def _two_detectors(size: int, g: np.random.Generator, p: float) -> tuple[np.ndarray, np.ndarray]:
    gold = g.integers(1, 4, size=size)
    predicted = np.clip(gold + g.integers(-1, 2, size=size), 0, None)
    found = g.beta(5 * p, 5 * (1 - p), size=size)
    both = np.minimum(gold, predicted)
    u = g.random((size, 3))
    out = []
    for shift in (0.0, 0.15):
        chance = np.clip(found - shift, 0, 1)
        tp = ((u < chance[:, None]) & (np.arange(3)[None, :] < both[:, None])).sum(axis=1)
        out.append(np.column_stack([tp, predicted - tp, gold - tp]).astype(float))
    return out[0], out[1]


def micro_f1_difference(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]] | str:
    if n < bootstrap.MIN_HEADLINE_BOOTSTRAP_N:
        return f"n >= {bootstrap.MIN_HEADLINE_BOOTSTRAP_N}"
    out = []
    for p in (0.3, 0.6, 0.9):  # the bootstrap resamples in Python: three detectors, a quarter of the reps
        big_a, big_b = _two_detectors(200_000, np.random.default_rng(54321), p)
        truth = _f1(big_a) - _f1(big_b)
        hits = given = 0
        for rep in range(max(reps // 4, 50)):
            a, b = _two_detectors(n, rng, p)

            def on(idx, a=a, b=b):
                fa, fb = _f1(a[idx]), _f1(b[idx])
                return None if fa is None or fb is None else fa - fb

            estimate = _f1(a) - _f1(b)
            boot = bootstrap.bootstrap_statistic(n, on, estimate, resamples=resamples, seed=rep)
            if boot["ci"] is not None:
                given += 1
                hits += boot["ci"][0] <= truth <= boot["ci"][1]
        out.append((p, _share(hits, given)))
    return out


def cluster(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]] | str:
    if n < bootstrap.MIN_BOOTSTRAP_N:
        return f"n >= {bootstrap.MIN_BOOTSTRAP_N}"
    out = []
    for p in GRID:
        hits = given = 0
        for rep in range(reps):
            sizes = rng.integers(1, 4, size=n)
            chance = rng.beta(5 * p, 5 * (1 - p), size=n)
            ids = np.repeat(np.arange(n), sizes)
            correct = (rng.random(ids.size) < chance[ids]).astype(float)
            boot = bootstrap.cluster_bootstrap(correct, np.ones(ids.size), list(ids), resamples=resamples, seed=rep)
            if boot["ci"] is not None:
                given += 1
                hits += boot["ci"][0] <= p <= boot["ci"][1]
        out.append((p, _share(hits, given)))
    return out


def _image_effect_truth(a: float, b: float) -> float:
    """E[c − max(c − 0.1, 0)] for c ~ Beta(a, b): the Δimg of items right with chance c with the
    image and c − 0.1 without it."""
    c = np.random.default_rng(777).beta(a, b, size=2_000_000)
    return float(np.mean(c - np.maximum(c - 0.1, 0)))


def cluster_delta(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]] | str:
    if n < bootstrap.MIN_BOOTSTRAP_N:
        return f"n >= {bootstrap.MIN_BOOTSTRAP_N}"
    out = []
    for p in GRID:
        truth = _image_effect_truth(5 * p, 5 * (1 - p))
        hits = given = 0
        for rep in range(reps):
            sizes = rng.integers(1, 4, size=n)
            chance = rng.beta(5 * p, 5 * (1 - p), size=n)
            ids = np.repeat(np.arange(n), sizes)
            with_image = (rng.random(ids.size) < chance[ids]).astype(float)
            removed = (rng.random(ids.size) < np.maximum(chance[ids] - 0.1, 0)).astype(float)
            boot = bootstrap.bootstrap_difference(
                with_image, removed, clusters=list(ids), resamples=resamples, seed=rep
            )
            if boot["ci"] is not None:
                given += 1
                hits += boot["ci"][0] <= truth <= boot["ci"][1]
        out.append((p, _share(hits, given), given / reps))
    return out


def repeated_delta(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]]:
    out = []
    for p in GRID:
        truth = _image_effect_truth(2 * p, 2 * (1 - p))
        hits = given = 0
        for _ in range(reps):
            chance = rng.beta(2 * p, 2 * (1 - p), size=n)
            with_image = rng.random((n, 3)) < chance[:, None]
            removed = rng.random((n, 3)) < np.maximum(chance - 0.1, 0)[:, None]
            got = repeats.item_interval(list((with_image.astype(float) - removed).mean(axis=1)), lower=-1.0)
            if got is not None:
                given += 1
                hits += got[0] <= truth <= got[1]
        out.append((p, _share(hits, given), given / reps))
    return out


def repeated(identical: bool):
    def coverage(n: int, reps: int, rng, resamples: int) -> list[tuple[float, float]]:
        out = []
        for p in GRID:
            hits = given = 0
            for _ in range(reps):
                chance = rng.beta(2 * p, 2 * (1 - p), size=n)
                answers = rng.random((n, 1 if identical else 3)) < chance[:, None]
                got = repeats.item_interval(list(answers.mean(axis=1)))
                if got is not None:
                    given += 1
                    hits += got[0] <= p <= got[1]
            out.append((p, _share(hits, given)))
        return out

    return coverage


# a difference of two Δ's: `paired_contrast_test` picks one of three by how many items differ
DELTA_METHODS = f"{contrasts.SIGN_FLIP} / {contrasts.DIFFERING_BOUND} / {contrasts.PAIRED_Z}"
INTERVALS = [
    ("accuracy", "proportion: medvqa's (binomial_ci)", stats.WILSON, proportion(stats.binomial_ci)),
    ("accuracy", "candidate: plain Wilson", "wilson-score", proportion(stats.wilson_ci)),
    ("accuracy", "candidate: Jeffreys", "jeffreys", proportion(jeffreys)),
    ("accuracy", "candidate: mid-p Clopper-Pearson", "mid-p-clopper-pearson", proportion(mid_p_clopper_pearson)),
    *(("tango", f"paired difference, b copies a on {a:.0%}", stats.TANGO, tango(a)) for a in AGREEMENT),
    ("macro", "macro average of 3 rows", stats.MOVER_WILSON, macro),
    *(
        ("delta", f"Δimg of a − Δimg of b, b copies a on {a:.0%}", DELTA_METHODS, delta_difference(a))
        for a in AGREEMENT
    ),
    *(
        (
            "delta",
            f"candidate: the z alone, b copies a on {a:.0%}",
            contrasts.PAIRED_Z,
            delta_difference(a, contrasts.paired_z_difference),
        )
        for a in AGREEMENT
    ),
    ("f1", "micro-F1 with boxes", stats.DELTA_RATIO, micro_f1_boxes),
    ("f1diff", "micro-F1 of a − micro-F1 of b", bootstrap.EXPANDED_BOOTSTRAP, micro_f1_difference),
    ("cluster", "accuracy, clustered items (n clusters)", bootstrap.CLUSTER_BOOTSTRAP, cluster),
    ("cluster", "Δimg, clustered items (n clusters)", bootstrap.CLUSTER_BOOTSTRAP, cluster_delta),
    ("repeats", "3 repeats, item-level interval", "item-level t", repeated(False)),
    ("repeats", "3 repeats at temperature 0 (identical)", "item-level t", repeated(True)),
    ("repeats", "3 repeats, pooled Δimg", "item-level t", repeated_delta),
]


def cell(points: list[tuple] | str) -> str:
    """`min (p at the min) / mean` of a row's coverage over its grid, and where some repetitions
    give no interval, the smallest share that gets one."""
    if isinstance(points, str):
        return points
    values = [(c, p) for p, c, *_ in points if c == c]  # NaN: no interval at any repetition of that point
    if not values:
        return "none given"
    worst, where = min(values)
    given = min((g for _, _, *rest in points for g in rest), default=1.0)
    return f"{worst:.3f} (p {where:g}) / {np.mean([c for c, _ in values]):.3f}" + (
        f"; given {given:.0%}" if given < 1 else ""
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=bootstrap.RESAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only", help="comma-separated row groups: " + ", ".join(dict.fromkeys(g for g, *_ in INTERVALS))
    )
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    start = time.perf_counter()
    print("| interval | ci_method | " + " | ".join(f"n = {n}: min (at) / mean" for n in SIZES) + " |")
    print("|" + "---|" * (len(SIZES) + 2))
    for row, (group, label, method, fn) in enumerate(INTERVALS):
        if only and group not in only:
            continue
        # each cell its own seeded stream: a row's numbers do not depend on the others
        cells = [cell(fn(n, args.reps, np.random.default_rng([args.seed, row, n]), args.resamples)) for n in SIZES]
        print(f"| {label} | {method} | " + " | ".join(cells) + " |", flush=True)
    print(
        f"\n{args.reps} repetitions per simulated point, {args.resamples} bootstrap resamples, seed {args.seed}; "
        f"{time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()

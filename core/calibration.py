"""How far a model's confidence can be trusted: pure functions of per-item confidences (0-1) and
right-or-wrong verdicts, the numbers under the JSON keys `ece`, `brier`, `auroc`, `aurc` and
`risk_coverage` (docs/audit.md, "Confidence and abstention", gives the references):

- `ece`: the expected calibration error, Σ_b (n_b / n)·|accuracy_b − mean confidence_b|, over
  `BINS` equal-width bins ((0, 0.1], (0.1, 0.2], ..., Guo et al. 2017, ICML, §2; Naeini et al.
  2015), and beside it the adaptive variant over equal-mass bins (each holding about n / `BINS`
  items, boundaries half-way between neighbours: Kumar, Liang & Ma 2019, NeurIPS, the
  `get_equal_bins` of their `calibration/utils.py`, which HELM's `ece_10_bin` calls), so the
  two can be read against HELM's;
- `brier`: the mean squared difference between confidence and correctness (Brier 1950);
- `auroc`: the chance that a right answer carries more confidence than a wrong one, ties
  counting half (the Mann-Whitney form): 0.5 is confidence that says nothing;
- `risk_coverage`: answering only at or above each distinct confidence, the share of items
  answered (coverage) and the share of those that are wrong (risk); `aurc` the area under it,
  Σ (coverage step)·risk, the mean of the risks at every coverage k / n when no two
  confidences tie (Geifman & El-Yaniv 2017; Geifman, Uziel & El-Yaniv 2019, ICLR).

Each comes with the expanded percentile interval of a seeded bootstrap of items or of whole
clusters (`bootstrap.resampled_indices`), re-binning the equal-mass ECE on every resample.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .bootstrap import CLUSTER_BOOTSTRAP, EXPANDED_BOOTSTRAP, MIN_BOOTSTRAP_N, expanded_interval, resampled_indices
from .stats import LEVEL

BINS = 10  # HELM's and Guo et al.'s number of bins
EQUAL_WIDTH = "equal-width"
EQUAL_MASS = "equal-mass"
# Every statistic here is recomputed on each resample (no column sum gives it): 2,000 resamples,
# twice Davison & Hinkley's (1997, §5.2.3) minimum for a 95 % percentile interval, keep a
# 24,000-record run's intervals to seconds
RESAMPLES = 2_000
# the most points `risk_coverage` lists: one per percent of coverage
CURVE_POINTS = 100


def checked(
    confidence: Sequence[float] | np.ndarray, correct: Sequence[Any] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The two columns as arrays (confidence as floats, correct as 0/1), refusing what no metric
    here can read: different lengths, a confidence outside [0, 1] or not a number."""
    conf = np.asarray(confidence, dtype=float)
    right = np.asarray(correct, dtype=float)
    if conf.shape != right.shape or conf.ndim != 1:
        raise ValueError(f"confidence and correct differ in shape ({conf.shape} vs {right.shape})")
    bad = ~((conf >= 0) & (conf <= 1))  # NaN fails both
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"confidence {confidence[i]!r} of item {i} is not a probability in [0, 1]")
    return conf, (right > 0).astype(float)


def bin_edges(confidence: np.ndarray, bins: int = BINS, binning: str = EQUAL_WIDTH) -> np.ndarray:
    """The upper edges of the bins, the last 1.0; a confidence goes to the first bin whose edge
    is at or above it (bins closed on the right, as Guo et al.'s and Kumar et al.'s).

    Equal-mass: the sorted confidences cut into runs of ⌈n / bins⌉, an edge half-way between the
    last of one run and the first of the next, repeated edges merged (Kumar et al.'s
    `get_equal_bins`): tied confidences never straddle an edge, so a bin may hold more."""
    if binning == EQUAL_WIDTH:
        return np.arange(1, bins + 1) / bins
    if binning != EQUAL_MASS:
        raise ValueError(f"unknown binning {binning!r}: {EQUAL_WIDTH} or {EQUAL_MASS}")
    ordered = np.sort(confidence)
    if not ordered.size:
        return np.array([1.0])
    size = int(np.ceil(ordered.size / min(bins, ordered.size)))
    cuts = np.arange(size, ordered.size, size)
    return np.unique(np.append((ordered[cuts - 1] + ordered[cuts]) / 2, 1.0))


def reliability(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[Any] | np.ndarray,
    *,
    bins: int = BINS,
    binning: str = EQUAL_WIDTH,
) -> list[dict[str, Any]]:
    """The reliability diagram's rows, one per non-empty bin: {"low", "high", "n",
    "confidence" (the bin's mean), "accuracy"}."""
    conf, right = checked(confidence, correct)
    edges = bin_edges(conf, bins, binning)
    index = np.searchsorted(edges, conf, side="left")
    rows = []
    for b in np.unique(index):
        inside = index == b
        rows.append(
            {
                "low": float(edges[b - 1]) if b else 0.0,
                "high": float(edges[b]),
                "n": int(inside.sum()),
                "confidence": float(conf[inside].mean()),
                "accuracy": float(right[inside].mean()),
            }
        )
    return rows


def ece(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[Any] | np.ndarray,
    *,
    bins: int = BINS,
    binning: str = EQUAL_WIDTH,
) -> float:
    """Σ_b (n_b / n)·|accuracy_b − mean confidence_b| over the bins (`bin_edges`). Stated 95 % on
    items 60 % right: one bin, |0.60 − 0.95| = 0.35. No items is an error: there is nothing to
    calibrate."""
    values = Sample(*checked(confidence, correct), bins=bins).values()
    return values["ece"] if binning == EQUAL_WIDTH else values[_checked_binning(binning)]


def _checked_binning(binning: str) -> str:
    if binning != EQUAL_MASS:
        raise ValueError(f"unknown binning {binning!r}: {EQUAL_WIDTH} or {EQUAL_MASS}")
    return "ece_equal_mass"


def brier(confidence: Sequence[float] | np.ndarray, correct: Sequence[Any] | np.ndarray) -> float:
    """The mean of (confidence − correct)²: 0 for a model sure and right, 0.25 for one always 50 %."""
    return Sample(*checked(confidence, correct)).values()["brier"]


def auroc(confidence: Sequence[float] | np.ndarray, correct: Sequence[Any] | np.ndarray) -> float | None:
    """P(a right answer's confidence > a wrong one's) + ½·P(equal), over every right-wrong pair
    (the Mann-Whitney U over right × wrong answers). None where every answer is right or every
    one wrong (no pair)."""
    return Sample(*checked(confidence, correct)).values()["auroc"]


def aurc(confidence: Sequence[float] | np.ndarray, correct: Sequence[Any] | np.ndarray) -> float:
    """The area under the risk-coverage curve, Σ_j (coverage_j − coverage_{j−1})·risk_j over the
    distinct confidences, highest first: with no ties the mean over k = 1..n of the error rate of
    the k most confident answers. Lower is better; a model right everywhere has 0."""
    return Sample(*checked(confidence, correct)).values()["aurc"]


def risk_coverage(
    confidence: Sequence[float] | np.ndarray, correct: Sequence[Any] | np.ndarray
) -> list[dict[str, float]]:
    """The selective risk-coverage curve: {"threshold", "coverage", "risk"} for answering only
    the items at or above each distinct confidence, highest first (coverage rising to 1). Past
    `CURVE_POINTS` distinct confidences, the first point of each percent of coverage and the
    last are kept (`aurc` reads the whole curve)."""
    conf, right = checked(confidence, correct)
    if not conf.size:
        return []
    sample = Sample(conf, right)
    thresholds, coverage, risk = sample.curve(np.ones(conf.size))
    keep = np.ones(coverage.size, dtype=bool)
    if coverage.size > CURVE_POINTS:
        step = np.floor(coverage * CURVE_POINTS)
        keep = np.append(True, step[1:] != step[:-1])
        keep[-1] = True
    return [
        {"threshold": float(t), "coverage": float(c), "risk": float(r)}
        for t, c, r in zip(thresholds[keep], coverage[keep], risk[keep], strict=True)
    ]


class Sample:
    """One group's items sorted by confidence once, and every metric of it as a function of
    item weights: all ones for the estimate, how often each item was drawn for a bootstrap
    resample. A resample then costs a few weighted sums over the sorted items (no sort), so a
    24,000-item group's intervals take seconds. The one computation behind every number here."""

    def __init__(self, conf: np.ndarray, right: np.ndarray, *, bins: int = BINS) -> None:
        if not conf.size:
            raise ValueError("no items: calibration is undefined")
        self.order = np.argsort(conf, kind="stable")
        self.conf, self.right = conf[self.order], right[self.order]
        self.levels, self.level = np.unique(self.conf, return_inverse=True)  # ascending
        self.bins = bins
        self.width_bin = np.searchsorted(bin_edges(self.conf, bins, EQUAL_WIDTH), self.conf, side="left")
        self.gap = self.conf - self.right  # confidence − correct, per item

    def mass_edges(self, w: np.ndarray) -> np.ndarray:
        """`bin_edges(EQUAL_MASS)` of the items drawn `w` times each, without expanding them: the
        item at position p of the drawn, sorted list is the first whose running count passes p."""
        m = int(w.sum())
        size = int(np.ceil(m / min(self.bins, m)))
        cuts = np.arange(size, m, size)
        running = np.cumsum(w)
        below = self.conf[np.searchsorted(running, cuts - 1, side="right")]
        above = self.conf[np.searchsorted(running, cuts, side="right")]
        return np.unique(np.append((below + above) / 2, 1.0))

    def curve(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(thresholds, coverage, risk) answering at or above each distinct drawn confidence,
        highest first."""
        total = np.bincount(self.level, weights=w, minlength=self.levels.size)[::-1]
        wrong = np.bincount(self.level, weights=w * (1 - self.right), minlength=self.levels.size)[::-1]
        drawn = total > 0
        answered = np.cumsum(total)[drawn]
        return self.levels[::-1][drawn], answered / answered[-1], np.cumsum(wrong)[drawn] / answered

    def values(self, w: np.ndarray | None = None) -> dict[str, Any]:
        """{"ece", "ece_equal_mass", "brier", "auroc", "aurc"} of the items weighted by `w`."""
        w = np.ones(self.conf.size) if w is None else w
        m = float(w.sum())
        mass_bin = np.searchsorted(self.mass_edges(w), self.conf, side="left")
        right = np.bincount(self.level, weights=w * self.right, minlength=self.levels.size)
        wrong = np.bincount(self.level, weights=w * (1 - self.right), minlength=self.levels.size)
        n_right, n_wrong = float(right.sum()), float(wrong.sum())
        # right answers over wrong ones strictly below them, ties counting half
        pairs = float(np.sum(right * (np.cumsum(wrong) - wrong / 2)))
        _, coverage, risk = self.curve(w)
        return {
            "ece": float(np.abs(np.bincount(self.width_bin, weights=w * self.gap)).sum() / m),
            "ece_equal_mass": float(np.abs(np.bincount(mass_bin, weights=w * self.gap)).sum() / m),
            "brier": float(np.sum(w * self.gap**2) / m),
            "auroc": pairs / (n_right * n_wrong) if n_right and n_wrong else None,
            "aurc": float(np.sum(np.diff(coverage, prepend=0.0) * risk)),
        }


def calibration(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[Any] | np.ndarray,
    *,
    clusters: Sequence[Any] | None = None,
    bins: int = BINS,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> dict[str, Any]:
    """Every calibration number of one group of items, each with its bootstrap interval:
    {"n", "accuracy", "mean_confidence", "ece": {"value", "bins", "binning", "ci", "equal_mass":
    {"value", "bins", "binning", "ci"}, "reliability"}, "brier", "auroc", "aurc" (each {"value",
    "ci"}), "risk_coverage", "ci_method", "n_units", "note"}. Intervals resample items, or whole
    `clusters` (one id per item); below `bootstrap.MIN_BOOTSTRAP_N` units none is given (a note
    says so)."""
    conf, right = checked(confidence, correct)
    n = int(conf.size)
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster ids for {n} items")
    sample = Sample(conf, right, bins=bins)
    values = sample.values()
    mass = sample.mass_edges(np.ones(n))
    units = len(set(clusters)) if clusters is not None else n
    intervals: dict[str, list[float] | None] = dict.fromkeys(values)
    note = None
    if units < MIN_BOOTSTRAP_N:
        kind = "clusters" if clusters is not None else "items"
        note = f"{units} {kind}: below {MIN_BOOTSTRAP_N}, a bootstrap gives no interval"
    else:
        draws: dict[str, list[float]] = {k: [] for k in values}
        ids = None if clusters is None else [clusters[i] for i in sample.order]  # in the sorted order
        for idx in resampled_indices(n, ids, resamples=resamples, seed=seed):
            for key, value in sample.values(np.bincount(idx, minlength=n).astype(float)).items():
                if value is not None:
                    draws[key].append(value)
        intervals = {k: expanded_interval(v, units, level) if values[k] is not None else None for k, v in draws.items()}
    return {
        "n": n,
        "accuracy": float(right.mean()),
        "mean_confidence": float(conf.mean()),
        "ece": {
            "value": values["ece"],
            "bins": bins,
            "binning": EQUAL_WIDTH,
            "ci": intervals["ece"],
            "equal_mass": {
                "value": values["ece_equal_mass"],
                "bins": int(np.unique(np.searchsorted(mass, conf, side="left")).size),  # the non-empty ones
                "binning": EQUAL_MASS,
                "ci": intervals["ece_equal_mass"],
            },
            "reliability": reliability(conf, right, bins=bins),
        },
        "brier": {"value": values["brier"], "ci": intervals["brier"]},
        "auroc": {"value": values["auroc"], "ci": intervals["auroc"]},
        "aurc": {"value": values["aurc"], "ci": intervals["aurc"]},
        "risk_coverage": risk_coverage(conf, right),
        "ci_method": CLUSTER_BOOTSTRAP if clusters is not None else EXPANDED_BOOTSTRAP,
        "n_units": units,
        "resamples": resamples,
        "note": note,
    }

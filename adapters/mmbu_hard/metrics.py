"""Micro-averaged F1 over datapoints with its 95 % interval, per task and format, and the
closed − open difference.

Counts per record: a classification answer that is correct is a TP; a wrong answer is a FP (the
class it named) and a FN (the class it missed); a non-answer (refusal, no parseable answer, a
label outside the options, failed request, missing) is an incorrect prediction too, FP and FN,
as MMBU §4.3 counts it. A free-text answer nobody has judged yet has no score: it is left out
of the counts and reported as not judged. A detection record counts the TP / FP / FN of its
greedy box matching; a detection reply without a readable box is a FN per gold box.

Where every counted record is a classification, micro-F1 = 2TP / (2TP + 2(n − TP)) = TP / n,
the accuracy, and its interval is the exact Clopper-Pearson one; with boxes it is a seeded
percentile bootstrap over datapoints (1,000 resamples), as the paper's Table 2."""

from __future__ import annotations

import numpy as np

from medvqa.stats import binomial_ci

from .detection import box_from_text, match

RESAMPLES = 1000
CLOPPER_PEARSON, BOOTSTRAP = "clopper-pearson", "bootstrap-percentile"  # ci_method values
LEVEL = 0.95


UNJUDGED = "unjudged"


def counts(record: dict, threshold: float) -> tuple[int, int, int] | None:
    """(TP, FP, FN) of one record; None for a free-text answer not judged yet."""
    gold = record.get("gold_boxes")
    if gold is not None:
        predicted = tuple(box_from_text(p) for p in (record.get("predicted") or ()))
        return match(predicted, tuple(tuple(g) for g in gold), threshold)
    if record.get("rule") == UNJUDGED:
        return None
    if record.get("correct"):
        return 1, 0, 0
    return 0, 1, 1  # a wrong label, no parseable answer or a label outside the options (§4.3)


def f1(tp, fp, fn):
    """2TP / (2TP + FP + FN); None (numpy: nan) when there is nothing to count."""
    denom = 2 * tp + fp + fn
    return 2 * tp / denom if denom else None


def micro_f1(rows: list[tuple[int, int, int] | None], *, resamples: int = RESAMPLES, seed: int = 0,
             level: float = LEVEL) -> dict:
    """{value, n, n_unjudged, tp, fp, fn, ci, ci_method, status}: the micro-F1 of the rows'
    summed counts (None rows, answers not judged yet, are counted apart) and its interval:
    Clopper-Pearson where every row is one classification datapoint ((1, 0, 0) or (0, 1, 1):
    micro-F1 is then TP / n), else the percentile bootstrap from `resamples` resamples of the
    rows (seeded). `status` is "scored", or "not judged" when no row has a score yet."""
    n_unjudged = sum(r is None for r in rows)
    rows = [r for r in rows if r is not None]
    n = len(rows)
    tp, fp, fn = (sum(r[i] for r in rows) for i in range(3))
    value = f1(tp, fp, fn)
    out = {"value": value, "n": n, "n_unjudged": n_unjudged, "tp": tp, "fp": fp, "fn": fn, "ci": None,
           "ci_method": None, "status": "not judged" if not n and n_unjudged else "scored"}
    if n and value is not None and all(tuple(r) in ((1, 0, 0), (0, 1, 1)) for r in rows):
        return {**out, "ci": list(binomial_ci(tp, n, level=level)), "ci_method": CLOPPER_PEARSON}
    ci = None
    if n and value is not None and resamples:
        data = np.asarray(rows, dtype=float)
        idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
        sums = data[idx].sum(axis=1)
        denom = 2 * sums[:, 0] + sums[:, 1] + sums[:, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(denom > 0, 2 * sums[:, 0] / np.where(denom > 0, denom, 1), np.nan)
        values = values[~np.isnan(values)]
        alpha = (1 - level) / 2
        ci = [float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))] if len(values) else None
    if ci is not None and ci[0] < ci[1] and ci[0] <= value <= ci[1]:
        return {**out, "ci": ci, "ci_method": BOOTSTRAP}
    if n and value is not None and resamples:  # every resample agrees, or the estimate lies outside
        denom = 2 * tp + fp + fn
        return {**out, "ci": list(binomial_ci(2 * tp, denom, level=level)), "ci_method": F1_FALLBACK}
    return out


# the interval when a bootstrap of boxes degenerates: 2TP successes of 2TP + FP + FN trials
F1_FALLBACK = "clopper-pearson-2tp"

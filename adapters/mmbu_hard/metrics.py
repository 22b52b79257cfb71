"""Micro-averaged F1 over datapoints, with a seeded percentile bootstrap CI (resampling
datapoints), per task and format, and the closed − open difference.

Counts per record: a classification answer that is correct is a TP; a wrong answer is a FP (the
class it named) and a FN (the class it missed); a non-answer (refusal, unreadable, failed
request, missing) is a FN only. A detection record counts the TP / FP / FN of its greedy box
matching; a detection reply without a readable box is a FN per gold box."""

from __future__ import annotations

import numpy as np

from .detection import box_from_text, match

RESAMPLES = 1000
LEVEL = 0.95


def counts(record: dict, threshold: float) -> tuple[int, int, int]:
    """(TP, FP, FN) of one record."""
    gold = record.get("gold_boxes")
    if gold is not None:
        predicted = tuple(box_from_text(p) for p in (record.get("predicted") or ()))
        return match(predicted, tuple(tuple(g) for g in gold), threshold)
    if record.get("correct"):
        return 1, 0, 0
    if record.get("status") == "answered":
        return 0, 1, 1
    return 0, 0, 1


def f1(tp, fp, fn):
    """2TP / (2TP + FP + FN); None (numpy: nan) when there is nothing to count."""
    denom = 2 * tp + fp + fn
    return 2 * tp / denom if denom else None


def micro_f1(rows: list[tuple[int, int, int]], *, resamples: int = RESAMPLES, seed: int = 0,
             level: float = LEVEL) -> dict:
    """{value, n, tp, fp, fn, ci}: the micro-F1 of the rows' summed counts and the percentile
    bootstrap interval from `resamples` resamples of the rows (seeded)."""
    n = len(rows)
    tp, fp, fn = (sum(r[i] for r in rows) for i in range(3))
    value = f1(tp, fp, fn)
    ci = None
    if n and value is not None:
        data = np.asarray(rows, dtype=float)
        idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
        sums = data[idx].sum(axis=1)
        denom = 2 * sums[:, 0] + sums[:, 1] + sums[:, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(denom > 0, 2 * sums[:, 0] / np.where(denom > 0, denom, 1), np.nan)
        values = values[~np.isnan(values)]
        alpha = (1 - level) / 2
        ci = [float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))] if len(values) else None
    return {"value": value, "n": n, "tp": tp, "fp": fp, "fn": fn, "ci": ci}

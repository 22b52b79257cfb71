"""Micro-averaged F1 over datapoints with its 95 % interval, per task and format, and the
closed − open difference.

Counts per record: a classification answer that is correct is a TP; a wrong answer is a FP (the
class it named) and a FN (the class it missed); a non-answer (refusal, no parseable answer, a
label outside the options, failed request, missing) is an incorrect prediction too, FP and FN,
as MMBU §4.3 counts it. A free-text answer nobody has judged yet has no score: it is left out
of the counts and reported as not judged. A detection record counts the TP / FP / FN of its
greedy box matching; a detection reply without a readable box is a FN per gold box.

Where every counted record is a classification, micro-F1 = 2TP / (2TP + 2(n − TP)) = TP / n,
the accuracy, and its interval is Wilson's score interval; with boxes it is the
delta-method interval of a ratio of sums over datapoints (`medvqa.stats.ratio_ci`), from 20
datapoints (the paper's Table 2 bootstraps datapoints instead; see `micro_f1`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from medvqa.stats import WILSON, binomial_ci, ratio_ci

from .detection import box_from_text, match

LEVEL = 0.95


UNJUDGED = "unjudged"


def counts(record: Mapping[str, Any], threshold: float) -> tuple[int, int, int] | None:
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


def micro_f1(rows: list[tuple[int, int, int] | None], *, level: float = LEVEL) -> dict:
    """{value, n, n_unjudged, tp, fp, fn, ci, ci_method, status}: the micro-F1 of the rows'
    summed counts (None rows, answers not judged yet, are counted apart) and its interval:
    Wilson where every row is one classification datapoint ((1, 0, 0) or (0, 1, 1):
    micro-F1 is then TP / n), else (boxes) the delta-method interval of the ratio of sums
    2ΣTP / Σ(2TP + FP + FN) over datapoints (`medvqa.stats.ratio_ci`, Cochran 1977 §6.4), from
    `ratio_ci`'s minimum of 20 datapoints: below, and where every datapoint has the same F1, no interval and a
    `ci_note` saying why. The paper's Table 2 uses a 1,000-resample bootstrap over datapoints; it
    covers 75-91 % at n = 3-10 (bench/coverage.py), so medvqa departs from it (docs/benchmarks/
    mmbu_hard.md).
    `status` is "scored", or "not judged" when no row has a score yet."""
    n_unjudged = sum(r is None for r in rows)
    rows = [r for r in rows if r is not None]
    n = len(rows)
    tp, fp, fn = (sum(r[i] for r in rows) for i in range(3))
    value = f1(tp, fp, fn)
    out = {
        "value": value,
        "n": n,
        "n_unjudged": n_unjudged,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "ci": None,
        "ci_method": None,
        "status": "not judged" if not n and n_unjudged else "scored",
    }
    if n and value is not None and all(tuple(r) in ((1, 0, 0), (0, 1, 1)) for r in rows):
        return {**out, "ci": list(binomial_ci(tp, n, level=level)), "ci_method": WILSON}
    if n and value is not None:  # boxes: the ratio 2TP / (2TP + FP + FN) of sums over datapoints
        data = np.asarray(rows, dtype=float)
        ratio = ratio_ci(2 * data[:, 0], 2 * data[:, 0] + data[:, 1] + data[:, 2], level=level)
        return {
            **out,
            "ci": ratio["ci"],
            "ci_method": ratio["ci_method"] if ratio["ci"] else None,
            "ci_note": ratio["note"],
        }
    return out

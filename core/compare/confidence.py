"""A comparison's confidence columns, only where the runs' records carry a confidence: per model ×
benchmark × condition, the calibration numbers (`calibration_rows`) and the exam's score
answering only above a confidence threshold under the benchmark's rule for blanks
(`abstention_rows`). Both are the audit's numbers: each condition's records go through the
same `confidence_metrics` functions with the same arguments as the audit's confidence section
(`audit.confidence.condition_confidence`), so a cell of `compare` and the audit's number for the
same run are one computation. The rows are flat, as the comparison's other tables are; the
reliability bins and the risk-coverage curve ride along for the page's charts.
"""

from __future__ import annotations

from typing import Any

from .. import metrics
from ..audit.confidence import condition_confidence, verdict_text
from ..audit.pairs import Settings
from ..confidence_metrics import has_confidence
from .entries import Entry, counted_records

# (the flat name in a row, the path of its value in `calibration_of`'s numbers)
CALIBRATION_NUMBERS = [
    ("n", ("n",)),
    ("n_records", ("n_records",)),
    ("n_without_confidence", ("n_without_confidence",)),
    ("methods", ("methods",)),
    ("accuracy", ("accuracy",)),
    ("mean_confidence", ("mean_confidence",)),
    ("ece", ("ece", "value")),
    ("ece_bins", ("ece", "bins")),
    ("ece_equal_mass", ("ece", "equal_mass", "value")),
    ("brier", ("brier", "value")),
    ("auroc", ("auroc", "value")),
    ("aurc", ("aurc", "value")),
    ("ci_method", ("ci_method",)),
    ("n_units", ("n_units",)),
    ("resamples", ("resamples",)),
    ("note", ("note",)),
    ("reliability", ("ece", "reliability")),  # the reliability diagram's bins (the page's chart)
    ("risk_coverage", ("risk_coverage",)),  # the risk-coverage curve (the page's chart)
]
INTERVALS = ("ece", "brier", "auroc", "aurc")  # each with `<name>_ci_low` and `<name>_ci_high`


def _at(numbers: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        numbers = numbers[key]
    return numbers


def confidence_by_condition(entry: Entry, s: Settings) -> dict[str, dict[str, Any]]:
    """{condition: {"overall", "abstention"}} of an entry's counted records, each condition whose
    records carry a confidence (the audit's `condition_confidence`, with the entry's clusters at
    the comparison's level); {} where none does."""
    records = counted_records(entry.records, entry.benchmark)
    if not has_confidence(records):
        return {}
    clusters = entry.clusters(s.cluster)
    out = {}
    for (condition,), rows in metrics.group(records).items():
        numbers = condition_confidence(rows, entry.benchmark, clusters, list(entry.items.values()), s)
        if numbers is not None:
            out[condition] = numbers
    return out


def calibration_rows(entry: Entry, by_condition: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per condition of `confidence_by_condition`: model, benchmark, condition, then the
    calibration numbers flat (`CALIBRATION_NUMBERS`, each interval as `_ci_low` / `_ci_high`)."""
    rows = []
    for condition, numbers in by_condition.items():
        overall = numbers["overall"]
        row: dict[str, Any] = {"model": entry.model, "benchmark": entry.benchmark.name, "condition": condition}
        row.update({name: _at(overall, path) for name, path in CALIBRATION_NUMBERS})
        for name in INTERVALS:
            ci = overall[name]["ci"] or (None, None)
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = ci
        rows.append(row)
    return rows


def abstention_rows(entry: Entry, by_condition: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per condition whose abstention has a cross-fitted sheet: the rule for blanks,
    answering everything (points, the rule's verdict, the exam's own pass lines in words), the
    cross-fitted sheet (each half's threshold, points, verdicts), its gain with the interval and
    p, and the in-sample gain (biased upwards: shown for contrast)."""
    rows = []
    for condition, numbers in by_condition.items():
        a = numbers["abstention"]
        if not a or not a["cross_fitted"]:
            continue
        everything, cf = a["answer_all"], a["cross_fitted"]
        ci = cf["ci"] or (None, None)
        rows.append(
            {
                "model": entry.model,
                "benchmark": entry.benchmark.name,
                "condition": condition,
                "rule": a["rule"]["name"],
                "n": a["n"],
                "n_without_confidence": a["n_without_confidence"],
                "answer_all_points": everything["points"],
                "answer_all_passed": everything["passed"],
                "answer_all_verdict": verdict_text(everything) or None,
                "thresholds": [h["threshold"] for h in cf["halves"]],
                "points": cf["points"],
                "passed": cf["passed"],
                "verdict": verdict_text(cf) or None,
                "gain": cf["gain"],
                "gain_ci_low": ci[0],
                "gain_ci_high": ci[1],
                "ci_method": cf["ci_method"],
                "p": cf["p"],
                "in_sample_gain": a["in_sample"]["gain"],
                "note": cf["note"],
            }
        )
    return rows

"""The paired tests between models: every two models on the same benchmark and condition,
compared on the items both answered. McNemar's mid-p and Tango's score interval for accuracy (as
the audit's), a paired t over each item's mean where either model was asked --repeats K times, and
a paired bootstrap for any other headline metric (its p-value bounded by 1/B, never 0); cells
without shared items are marked unpaired, never compared. Each p carries its Holm-adjusted value
over the model pairs of its benchmark and condition.
"""

from __future__ import annotations

from itertools import combinations
from statistics import fmean

from .. import bootstrap, metrics
from ..audit.between_models import between_models_holm, paired_accuracy_test
from ..audit.pairs import Settings
from ..benchmark import Benchmark
from ..repeats import item_mean_pairs, paired_means_test
from .entries import Entry, counted_records, different_parts

TEST_COLUMNS = [
    "benchmark",
    "condition",
    "a",
    "b",
    "metric",
    "status",
    "n",
    "a_value",
    "b_value",
    "difference",
    "ci_low",
    "ci_high",
    "ci_method",
    "test",
    "p",
    "p_bound",
    "exact_p",
    "p_holm",
    "only_a",
    "only_b",
    "unreadable_pairs",
    "warning",
    "note",
]


def _paired_bootstrap_metric(bench: Benchmark, a: list[dict], b: list[dict], s: Settings) -> dict:
    """Paired bootstrap of headline(a) − headline(b) over shared items (a[i], b[i] the same
    item), resampling items jointly (`bootstrap.bootstrap_statistic`): interval and two-sided p from
    the same resamples. For metrics that are not a mean over items (micro-F1): each resample
    calls the benchmark's `headline_value`."""
    va, vb = bench.headline_value(a), bench.headline_value(b)
    difference = None if va is None or vb is None else va - vb

    def on(idx) -> float | None:
        xa, xb = bench.headline_value([a[i] for i in idx]), bench.headline_value([b[i] for i in idx])
        return None if xa is None or xb is None else xa - xb

    boot = bootstrap.bootstrap_statistic(
        len(a), on, difference, resamples=s.resamples, seed=s.seed, min_n=bootstrap.MIN_HEADLINE_BOOTSTRAP_N
    )
    ci = boot["ci"] or (None, None)
    return {
        "difference": difference,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "ci_method": boot["ci_method"],
        "p": boot["p"],
        "p_bound": boot["p_bound"],
        "note": boot["note"],
    }


def _repeated_test(ea: Entry, eb: Entry, condition: str, bench: Benchmark) -> dict:
    """Two models' accuracies under `condition` where either was asked --repeats K times: each
    item's mean over its repeats on each side, paired on the items both hold
    (`repeats.paired_means_test`), so every repeat counts and none is counted as an item."""
    _, a, b = item_mean_pairs(*(counted_records(e.by_condition[condition], bench) for e in (ea, eb)))
    test = paired_means_test(a, b)
    ci = test["ci"] or (None, None)
    k = (ea.repeats, eb.repeats)
    return {
        "a_value": fmean(a),
        "b_value": fmean(b),
        "difference": test["difference"],
        "ci_low": ci[0],
        "ci_high": ci[1],
        "ci_method": test["ci_method"],
        "test": test["test"],
        "p": test["p"],
        "p_bound": test["p_bound"],
        "note": test["note"] or f"each item's mean over its repeats ({k[0]} and {k[1]})",
    }


def test_rows(entries: list[Entry], s: Settings) -> list[dict]:
    """Every two models on the same benchmark and condition, on the items both have; each p with
    its Holm-adjusted value (`p_holm`) over the model pairs of that benchmark and condition."""
    out = []
    for ea, eb in combinations(entries, 2):
        bench = ea.benchmark
        if different_parts(ea.scope, eb.scope):
            continue  # different parts of a benchmark (one country's questions, another's): nothing to pair
        for condition in [c for c in ea.by_condition if bench.name == eb.benchmark.name and c in eb.by_condition]:
            ra, rb = ({r["item_id"]: r for r in counted_records(e.by_condition[condition], bench)} for e in (ea, eb))
            shared = sorted(set(ra) & set(rb))
            a, b = [ra[i] for i in shared], [rb[i] for i in shared]
            only_a, only_b = len(set(ra) - set(rb)), len(set(rb) - set(ra))
            row = {
                "benchmark": bench.name,
                "condition": condition,
                "a": ea.model,
                "b": eb.model,
                "metric": bench.headline_metric,
                "n": len(shared),
                "only_a": only_a,
                "only_b": only_b,
                "status": "unpaired" if not shared else "partly paired" if only_a or only_b else "paired",
                "a_value": bench.headline_value(a) if shared else None,
                "b_value": bench.headline_value(b) if shared else None,
                **dict.fromkeys(("difference", "ci_low", "ci_high", "ci_method", "test", "p", "p_bound")),
                **metrics.delta_warning([metrics.unreadable(x, y) for x, y in zip(a, b)]),
            }
            if shared and bench.headline_metric == "accuracy" and max(ea.repeats, eb.repeats) > 1:
                row.update(_repeated_test(ea, eb, condition, bench))
            elif shared and bench.headline_metric == "accuracy":  # McNemar mid-p and Tango's interval, as the audit's
                test = paired_accuracy_test([bool(x.get("correct")) for x in a], [bool(y.get("correct")) for y in b])
                row.update(
                    difference=test["difference"],
                    ci_low=test["ci"][0],
                    ci_high=test["ci"][1],
                    ci_method=test["ci_method"],
                    test=test["test"],
                    p=test["p"],
                    p_bound=test["p_bound"],
                    exact_p=test["exact_p"],
                    note=test["note"],
                )
            elif shared:  # any other headline: a paired bootstrap (without shared items, no test)
                row.update(test="paired-bootstrap", **_paired_bootstrap_metric(bench, a, b, s))
            out.append(row)
    return between_models_holm(out, [(row["benchmark"], row["condition"]) for row in out])

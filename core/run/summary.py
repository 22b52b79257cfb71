"""What a run's summary says: per condition n, accuracy with its 95 % CI and every status,
and whether the run is healthy enough to trust (its error rate, and whether any request
succeeded). Pure functions of records."""

from __future__ import annotations

from medvqa.core.scoring.score import STATUSES

DEFAULT_MAX_ERROR_RATE = 0.05
# Statuses of a request that reached the model and came back with an answer of some kind.
SUCCEEDED = ("answered", "refusal", "parse_failure")


def accuracy_with_ci(correct: int, n: int) -> dict:
    """{n, correct, accuracy, ci}: the exact (Clopper-Pearson) 95 % interval; None when n = 0."""
    from medvqa.core.audit.stats import binomial_ci  # scipy, imported on first use

    ci = binomial_ci(correct, n)
    return {"n": n, "correct": correct, "accuracy": correct / n if n else None,
            "ci": list(ci) if ci is not None else None}


def by_condition(records: list[dict]) -> dict[str, dict]:
    """{condition: {n, correct, accuracy, ci, answered, refusal, parse_failure, error, missing}},
    conditions in the order they first appear."""
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        c = counts.setdefault(r["condition"], {"n": 0, "correct": 0, **{s: 0 for s in STATUSES}})
        c["n"] += 1
        c["correct"] += bool(r.get("correct"))
        if r.get("status") in c:
            c[r["status"]] += 1
    return {cond: {**accuracy_with_ci(c["correct"], c["n"]), **{s: c[s] for s in STATUSES}}
            for cond, c in counts.items()}


def health(records: list[dict], max_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> dict:
    """{errors, error_rate, max_error_rate, failure}: `failure` is None, or says why the run's
    numbers cannot be trusted: more `error` records than `max_error_rate` of all records, or
    not one request that came back with an answer."""
    n = len(records)
    errors = sum(r.get("status") == "error" for r in records)
    rate = errors / n if n else 0.0
    failure = None
    if n and not any(r.get("status") in SUCCEEDED for r in records):
        failure = f"no request succeeded ({errors} errors, {n - errors} missing of {n} records)"
    elif rate > max_error_rate:
        failure = (f"{errors} of {n} records are errors ({100 * rate:.1f}%), above --max-error-rate "
                   f"{100 * max_error_rate:g}%")
    return {"errors": errors, "error_rate": rate, "max_error_rate": max_error_rate, "failure": failure}


def image_fallbacks(items, conditions) -> int:
    """Items that reference images whose files are missing: with a with-image condition
    requested, they are run without images (under the conditions without one) only."""
    if not any(c.with_image for c in conditions):
        return 0
    return sum(1 for it in items if not it.excluded and it.has_images and not it.image_available)

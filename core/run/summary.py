"""Whether a run is healthy enough to trust: its error rate, and whether any request succeeded.
Its numbers per condition come from the metrics layer (`medvqa.core.metrics.by_condition`).
Pure functions of records."""

from __future__ import annotations

from ..results import SUCCEEDED

DEFAULT_MAX_ERROR_RATE = 0.05


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
        failure = (
            f"{errors} of {n} records are errors ({100 * rate:.1f}%), above --max-error-rate {100 * max_error_rate:g}%"
        )
    return {"errors": errors, "error_rate": rate, "max_error_rate": max_error_rate, "failure": failure}


def image_fallbacks(items, conditions) -> int:
    """Items that reference images whose files are missing: with a with-image condition
    requested, they are run without images (under the conditions without one) only."""
    if not any(c.with_image for c in conditions):
        return 0
    return sum(1 for it in items if not it.excluded and it.has_images and not it.image_available)


def run_warnings(run_dir, reading: str | None = None, records: list[dict] | None = None) -> list[str]:
    """The parse-failure warnings (`metrics.parse_failure_warnings`) of a saved run's newest
    records read as `reading` reads them (None: the benchmark's protocol's), under its
    benchmark's rules when that benchmark is installed; `records`, the newest records when the
    caller has them (`store.read_records`), else they are read."""
    from pathlib import Path

    from .. import plugins
    from ..metrics import headline_numbers
    from .store import read_manifest, read_records

    manifest = read_manifest(Path(run_dir))
    entry = plugins.benchmarks().get(manifest["benchmark"])
    bench = entry.obj.with_convention(manifest.get("convention")) if entry else None
    records = read_records(Path(run_dir)) if records is None else records
    return headline_numbers(records, bench, reading)["warnings"]

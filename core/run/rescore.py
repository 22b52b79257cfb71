"""Re-scoring a run from its saved responses: no model is called."""

from __future__ import annotations

from pathlib import Path

from .. import order, plugins
from ..items import DataError
from .lock import locked
from .recording import rescore_record
from .saved import load_run
from .store import MANIFEST, read_all_records, rewrite_records, write_json_atomic


def rescore(run_dir: Path, convention: str | None = None) -> tuple[int, int]:
    """Re-score every record line in place (atomically), superseded ones included, so the file
    keeps its whole history and readers still take the newest record of each pair; under
    `convention` (one the benchmark offers) when given, which the manifest then records.
    Holds the run's lock from the first read to the last write: a run in progress is an error
    saying so, never a rewrite under it. Returns (record lines, lines changed)."""
    out, changed = rescore_lines(run_dir, convention)
    return len(out), changed


def rescore_lines(run_dir: Path, convention: str | None = None) -> tuple[list[dict], int]:
    """`rescore`, returning the record lines as re-scored (what the file now holds) and how many changed."""
    with locked(run_dir):
        manifest, _, benchmark, items = load_run(run_dir, records=False)
        switch = convention is not None and convention != manifest.get("convention")
        if switch:
            benchmark = benchmark.with_convention(convention)
        records = read_all_records(run_dir)
        patterns = plugins.answer_patterns()
        out = []
        for rec in records:
            if rec["item_id"] not in items:
                raise DataError(
                    "record names an item that is not in the data",
                    file=Path(run_dir) / "records.jsonl",
                    record=rec["item_id"],
                )
            out.append(
                rescore_record(benchmark, order.as_asked(items[rec["item_id"]], rec["condition"]), rec, patterns)
            )
        changed = sum(new != old for new, old in zip(out, records))
        if changed:  # a run directory is written only when something changes
            rewrite_records(run_dir, out, lock=False)
        if switch:  # after the records: an interrupted switch leaves the old name, and repeating it completes it
            write_json_atomic(Path(run_dir) / MANIFEST, {**manifest, "convention": convention})
    return out, changed

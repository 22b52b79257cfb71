"""Re-scoring a run from its saved responses: no model is called."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import plugins
from .benchmark import Benchmark
from .items import DataError, Item, fingerprint_items
from .runner import rescore_record
from .session import load_items
from .store import MANIFEST, read_all_records, read_manifest, read_records, rewrite_records, write_json_atomic


def load_run(run_dir: Path):
    """(manifest, records, benchmark, items by id) of a run directory; the benchmark scores under
    the convention the manifest records."""
    manifest = read_manifest(run_dir)
    benchmark = plugins.get_benchmark(manifest["benchmark"]).with_convention(manifest.get("convention"))
    items, _ = load_items(benchmark, manifest.get("load") or {"data": manifest.get("data"), "split": manifest.get("split")})
    if fingerprint_items(items) != manifest.get("data_fingerprint"):
        raise DataError("the benchmark data changed since this run (data fingerprint differs); "
                        "re-scoring would mix versions", file=Path(run_dir) / "manifest.json")
    return manifest, read_records(run_dir), benchmark, {it.id: it for it in items}


@dataclass(frozen=True, eq=False)  # one object per reading: compared by identity
class SavedRun:
    """A run directory as `read_run` reads it."""

    path: Path
    manifest: dict
    records: list[dict]  # the newest record of each (item, condition)
    benchmark: Benchmark
    items: dict[str, Item]  # by id, reloaded from the run's data

    @property
    def conditions(self) -> set[str]:
        return {r["condition"] for r in self.records}


def read_run(run_dir: str | Path) -> SavedRun:
    """A run directory with its items, reloaded and checked against its data fingerprint."""
    manifest, records, benchmark, items = load_run(Path(run_dir))
    return SavedRun(Path(run_dir), manifest, records, benchmark, items)


def rescore(run_dir: Path, convention: str | None = None) -> tuple[int, int]:
    """Re-score every record line in place (atomically), superseded ones included, so the file
    keeps its whole history and readers still take the newest record of each pair; under
    `convention` (one the benchmark offers) when given, which the manifest then records.
    Returns (record lines, lines changed)."""
    manifest, _, benchmark, items = load_run(run_dir)
    switch = convention is not None and convention != manifest.get("convention")
    if switch:
        benchmark = benchmark.with_convention(convention)
    records = read_all_records(run_dir)
    patterns = plugins.answer_patterns()
    out = []
    for rec in records:
        if rec["item_id"] not in items:
            raise DataError("record names an item that is not in the data", file=Path(run_dir) / "records.jsonl",
                            record=rec["item_id"])
        out.append(rescore_record(benchmark, items[rec["item_id"]], rec, patterns))
    changed = sum(new != old for new, old in zip(out, records))
    if changed:  # a run directory is written only when something changes
        rewrite_records(run_dir, out)
    if switch:  # after the records: an interrupted switch leaves the old name, and repeating it completes it
        write_json_atomic(Path(run_dir) / MANIFEST, {**manifest, "convention": convention})
    return len(out), changed

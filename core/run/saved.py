"""A saved run directory read back: its manifest, newest records and reloaded items."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

from .. import plugins
from ..benchmark import Benchmark
from ..items import DataError, Item
from .item_cache import load_checked, run_slot
from .items import load_items
from .store import gc_paused, read_manifest, read_records


def load_run(run_dir: Path, loaded: dict | None = None, *, records: bool = True):
    """(manifest, records, benchmark, items by id) of a run directory; the benchmark scores under
    the convention the manifest records. `loaded`, a dict kept by the caller across the runs of
    one command, holds the items already loaded: runs of the same data load it once. Without
    `records`, the records are not read (None)."""
    manifest = read_manifest(run_dir)
    benchmark = plugins.get_benchmark(manifest["benchmark"]).with_convention(manifest.get("convention"))
    benchmark = benchmark.with_language(manifest.get("language"))
    load, slot = run_slot(manifest)
    key = json.dumps(slot, sort_keys=True, default=str)
    if loaded is not None and key in loaded:
        by_id, fingerprint = loaded[key]
    else:
        with gc_paused():  # a kept entry only if it holds the run's items: else the data itself says what changed
            items, fingerprint = load_checked(
                benchmark,
                load,
                slot,
                lambda: load_items(benchmark, load)[0],
                lambda _, kept: kept == manifest.get("data_fingerprint"),
            )
            by_id = {it.id: it for it in items}
        if loaded is not None:
            loaded[key] = (by_id, fingerprint)
    if fingerprint != manifest.get("data_fingerprint"):
        raise DataError(
            "the benchmark data changed since this run (data fingerprint differs); re-scoring would mix versions",
            file=Path(run_dir) / "manifest.json",
        )
    return manifest, read_records(run_dir) if records else None, benchmark, by_id


@dataclass(frozen=True, eq=False)  # one object per reading: compared by identity
class SavedRun:
    """A run directory as `read_run` reads it."""

    path: Path
    manifest: dict
    records: list[dict]  # the newest record of each (item, condition)
    benchmark: Benchmark
    items: dict[str, Item]  # by id, reloaded from the run's data

    reading: str = "strict"  # how `records` are read (metrics.READINGS): as saved, strictly, unless `read_as`

    @property
    def conditions(self) -> set[str]:
        return {r["condition"] for r in self.records}

    def read_as(self, reading: str | None = None) -> SavedRun:
        """This run with its records as `reading` reads them (None: its benchmark's protocol's
        reading, `Benchmark.reading`); every output that counts a run's records reads them here."""
        from .. import metrics

        reading = metrics.reading_of(self.benchmark, reading)
        if reading == self.reading:
            return self
        if self.reading != metrics.STRICT:
            raise ValueError(f"{self.path}: records already read {self.reading}; read the run again")
        # `metrics.read` gives back the records' own dicts (strict) or new dicts (`assisted_record`)
        records = cast("list[dict]", metrics.read(self.records, reading))
        return replace(self, records=records, reading=reading)


def read_run(run_dir: str | Path, loaded: dict | None = None) -> SavedRun:
    """A run directory with its items, reloaded and checked against its data fingerprint
    (`loaded`: as `load_run` takes it)."""
    manifest, records, benchmark, items = load_run(Path(run_dir), loaded)
    return SavedRun(Path(run_dir), manifest, records, benchmark, items)


def read_runs(run_dirs: Iterable[str | Path]) -> list[SavedRun]:
    """`read_run` of each directory; runs of the same data share one loading of its items."""
    loaded: dict = {}
    return [read_run(d, loaded) for d in run_dirs]


def _holds(items: list[Item], asked: dict[str, Item]) -> bool:
    """Whether `items` hold every item of `asked` (by id) with the same fingerprint."""
    by_id = {it.id: it for it in items}
    return all(i in by_id and by_id[i].fingerprint() == it.fingerprint() for i, it in asked.items())


def whole_exam_items(run: SavedRun, loaded: dict | None = None) -> list[Item]:
    """The items of the run's data without its selection or limit. A pass verdict needs whole
    exams: a benchmark's `pass_report` given these items judges each exam the run's records
    touch, and an exam with questions the run never asked is "not evaluable", saying so.
    `loaded`, a dict kept by the caller across the runs of one command, holds the whole exams
    already loaded: runs of the same data (several models, a selection each) load it once."""
    load = dict(run.manifest.get("load") or {"data": run.manifest.get("data"), "split": run.manifest.get("split")})
    if not load.get("select") and load.get("limit") is None:
        return list(run.items.values())
    whole = {**load, "select": None, "limit": None}
    slot = [run.manifest["benchmark"], run.manifest.get("convention"), run.manifest.get("language"), whole]
    key = json.dumps(slot, sort_keys=True, default=str)
    if loaded is not None and key in loaded:
        return loaded[key]
    with gc_paused():  # a kept entry only if it holds the run's own items as they are
        items, _ = load_checked(
            run.benchmark,
            whole,
            slot,
            lambda: load_items(run.benchmark, whole)[0],
            lambda kept, _: _holds(kept, run.items),
        )
    if loaded is not None:
        loaded[key] = items
    return items

"""The runs a comparison reads, as entries: one per model × benchmark experiment (one run, or
runs of the same experiment holding different conditions, joined as the audit joins them),
with the strata each shows.

Runs of one benchmark on different data (different data fingerprints) are refused here, before
any number is computed, unless they hold different parts of it (`different_parts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import cast

from .. import metrics
from ..audit.clusters import cluster_map
from ..audit.names import experiment_labels, items_language, scope
from ..audit.pairing import manifest_language
from ..audit.runs import distinct, join_runs
from ..benchmark import Benchmark
from ..items import DataError, Item
from ..repeats import n_repeats
from ..results import is_derived, model_name
from ..run.saved import SavedRun, read_runs


def counted_records(records: Iterable[Mapping], benchmark: Benchmark) -> list[dict]:
    """The records that enter denominators (`metrics.counted`), as the dicts they are: a run's
    records are read from its JSON lines, and `metrics.counted` hands back the ones it is given."""
    return cast(list[dict], metrics.counted(records, benchmark)[0])


@dataclass
class Entry:
    """One model's experiment on one benchmark: one run, or runs of the same experiment holding
    different conditions, joined as the audit joins them."""

    benchmark: Benchmark
    model: str  # the name shown (model, or model@folder when a benchmark has it twice)
    runs: list[SavedRun]
    records: list[dict]
    items: dict[str, Item]
    scope: dict[str, str]  # `scope(runs)`: the strata on which all its records have one level
    _clusters: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def source(self) -> str:
        return " + ".join(str(run.path) for run in self.runs)

    @cached_property
    def by_condition(self) -> dict[str, list[dict]]:
        """The records of each base condition, in the order of conditions (derived ones, such as
        C+Q/forced, are the audit's)."""
        # (`metrics.group` hands back the records it is given: this entry's dicts)
        groups = cast(dict[tuple[str, ...], list[dict]], metrics.group(self.records))
        return {key[0]: rs for key, rs in groups.items() if not is_derived(key[0])}

    @cached_property
    def repeats(self) -> int:
        """How many repeats its records hold (1 without `--repeats`)."""
        return n_repeats(self.records)

    def clusters(self, level: str | None) -> dict[str, str] | None:
        """{item id: its cluster at `level`} (`cluster_map`), worked out once per level for every
        entry whose runs hold the same items (`read_runs` loads a data's items once for all its
        runs; `read_entries` gives its entries one `_clusters`): the table and the Δimg row of
        each model read it, and reading the linked sets of 24,000 items is a tenth of a second."""
        key = (
            level,
            *(id(run.items) for run in self.runs),
        )  # (the runs, and so their items, live as long as the entry)
        if key not in self._clusters:
            self._clusters[key] = cluster_map(self.benchmark, self.items.values(), level)
        return self._clusters[key]


def different_parts(a: dict[str, str], b: dict[str, str]) -> bool:
    """Whether two runs' scopes (`scope`) say they hold different parts of a benchmark: a
    stratum on which each run's items have one level, and the levels differ (country=japan,
    country=brazil)."""
    return any(k in b and a[k] != b[k] for k in a)


def _check_fingerprints(runs: Sequence[SavedRun]) -> None:
    """Refuse runs of one benchmark on different data, naming both runs and both fingerprints;
    unless they hold different parts of it (`different_parts`: one country's questions and
    another's, each run a single level of a default stratum), which are shown side by side,
    never paired."""
    seen: dict[tuple, list[tuple[Path, str | None, dict]]] = {}
    for run in runs:
        manifest = run.manifest
        # runs in two languages hold different texts of the same items: they pair (Δlang), never refused
        name, fp = (manifest.get("benchmark"), manifest_language(manifest)), manifest.get("data_fingerprint")
        part = scope([run])
        for first, first_fp, first_part in seen.get(name, []):
            if first_fp != fp and not different_parts(first_part, part):
                raise DataError(
                    f"runs of {name[0]} on different data cannot be compared: {first} has data fingerprint "
                    f"{first_fp}, {run.path} has {fp}",
                    file=run.path / "manifest.json",
                )
        seen.setdefault(name, []).append((run.path, fp, part))


def read_entries(run_dirs: Sequence[str | Path], reading: str | None = None) -> tuple[list[Entry], list[str]]:
    """The runs as entries (one per model × benchmark experiment), their records read as `reading`
    reads them (None: each benchmark's protocol's reading), with notes."""
    if not run_dirs:
        raise ValueError("no runs to compare")
    metrics.reading_of(None, reading)  # an unknown reading is refused before any run is read
    unique, notes = distinct(run_dirs, "read")
    saved = read_runs(unique)
    _check_fingerprints(saved)
    runs = [run.read_as(reading) for run in saved]
    groups, join_notes = join_runs(runs)
    notes += [n for n in join_notes if n.startswith("joined ")]
    scopes = [scope(g) for g in groups]  # (each a pass over every record: worked out once, kept by the entry)
    # the audit's and the item browser's label of each experiment (`experiment_labels`)
    labels = experiment_labels(
        [
            (
                g[0].benchmark.name,
                model_name(g[0].manifest),
                items_language(g[0].items.values()),
                " + ".join(str(run.path) for run in g),
            )
            for g in groups
        ],
        [", ".join(s.values()) for s in scopes],
    )
    entries: list[Entry] = []
    clusters: dict = {}
    for group, label, levels in zip(groups, labels, scopes):
        items = {k: v for run in group for k, v in run.items.items()}
        records = [r for run in group for r in run.records]
        entries.append(Entry(group[0].benchmark, label, list(group), records, items, levels))
        entries[-1]._clusters = clusters  # shared: models of the same data share their cluster maps
    return entries, notes


def shown_strata(entries: list[Entry], by: Iterable[str] | None, notes: list[str]) -> dict[int, dict[str, str]]:
    """For each entry, the strata shown ({name: record field}): those named (`benchmark` and
    `condition` are always columns), else its benchmark's default strata that its records hold."""
    out: dict[int, dict[str, str]] = {}
    names = None if by is None else [n for n in by if n not in ("benchmark", "condition")]
    unheld = set(names or ())
    for i, e in enumerate(entries):
        out[i], missing = metrics.held_fields(
            e.benchmark.default_strata if names is None else names, e.records, e.benchmark.stratum_aliases
        )
        unheld -= set(out[i])
        for name in missing:
            notes.append(
                f"{e.source}: records have no field {name!r}"
                + (
                    f" (a default stratum of {e.benchmark.name}): not shown"
                    if names is None
                    else f": {e.benchmark.name} is shown without it"
                )
            )
    if unheld:
        available = sorted(set().union(*(r.keys() for e in entries for r in e.records)))
        raise ValueError(
            f"no run's records have the field {', '.join(repr(n) for n in names or () if n in unheld)}; "
            f"available: {', '.join(available)}"
        )
    return out

"""Shards: one run split across machines (`medvqa run ... --shard I/N`) and merged back into
one run directory (`medvqa merge`).

A shard is a deterministic share of a run's pairs, decided by the item alone: item `id` belongs
to shard `shard_of(id, N)`, a SHA-256 of the id taken modulo N. So every (item, condition,
variant, repeat) pair of an item is in the same shard (a forced guess re-asks the item's own
refused C+Q+I, a variant is paired with its base on the same item); the share is stable under
resume (the same ids give the same shards) and under adding a condition (a new condition's pairs
go where their items already are); and shards balance as hashed ids do (800 JMed48k items in 3
shards: 246, 277 and 277). A shard is an ordinary run directory: it loads and checks the whole
data (its manifest names the same data, items, exclusions and templates as the whole run's, so
shards can be proven to be of one run), asks only its own pairs, resumes like any run, and its
manifest says which shard it is (`"shard": {"index": I, "count": N}`, indices from 0, as Slurm's
`--array=0-(N-1)` and a Kubernetes indexed Job number them).

`--shard auto` reads the index and count a scheduler sets for each of its tasks (`from_environment`):
Slurm's array job (`SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`, divided by
`SLURM_ARRAY_TASK_STEP`, of `SLURM_ARRAY_TASK_COUNT`), or a Kubernetes indexed Job's
`JOB_COMPLETION_INDEX`, whose count Kubernetes does not put in the environment: the Job gives it
as `MEDVQA_SHARD_COUNT` (its `completions`; docs/scaling.md has both recipes).

`merge_shards` checks that the directories are the shards of one run, all of them, each once,
and writes one run directory whose records are the shards' (the newest of each pair, as every
reader takes them): the records an unsharded run of the same command writes, pair for pair. It
refuses, naming what is wrong, before anything is written: a directory that is no shard; shards
of different runs (naming the fields that differ: benchmark, split, data fingerprint, model,
generation parameters, conditions, variants, templates, convention, language, repeats, forced
guess, shard count); a shard given twice; a shard missing (named, never skipped); a record of an
item that is another shard's; a shard stopped early, before it recorded every pair its manifest
counts (`"pairs"`: its items under every condition, variant and repeat; a record that is an
`error` counts, as it does in a finished run). Each shard is read holding its lock, so a shard
still being written is refused, naming its writer.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..items import DataError
from .lock import locked
from .store import IDENTITY, MANIFEST, RECORDS, RunStore, newest_records, read_all_records, read_manifest

MAX_SHARDS = 100_000  # more shards than this is a typo (a run of 24,000 items has at most that many useful ones)
# What must be equal for directories to be shards of one run: what a resume checks (the run's
# identity), with its repeats and forced guess (both change the pairs asked).
SAME_RUN = tuple(k for k in IDENTITY if k != "shard") + ("repeats", "forced_guess")
# The Kubernetes Job's count of completions, given by the Job itself (Kubernetes sets only the index).
COUNT_VARIABLE = "MEDVQA_SHARD_COUNT"


@dataclass(frozen=True)
class Shard:
    """Shard `index` (from 0) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if type(self.count) is not int or not 1 <= self.count <= MAX_SHARDS:
            raise UsageError(f"a shard count must be a whole number from 1 to {MAX_SHARDS}, not {self.count!r}")
        if type(self.index) is not int or not 0 <= self.index < self.count:
            raise UsageError(f"a shard index of {self.count} shards is from 0 to {self.count - 1}, not {self.index!r}")

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, item_id: str) -> bool:
        """Whether the pairs of item `item_id` are this shard's."""
        return shard_of(item_id, self.count) == self.index

    def manifest(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}


def shard_of(item_id: str, count: int) -> int:
    """The shard (0 to `count` − 1) of item `item_id`: the first 8 bytes of the SHA-256 of
    "medvqa-shard", a zero byte and the id, as a big-endian number, modulo `count`."""
    digest = hashlib.sha256(f"medvqa-shard\x00{item_id}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str | None, environ: Mapping[str, str] | None = None) -> Shard | None:
    """The shard `--shard` names: "I/N" (shard I, from 0, of N), "auto" (`from_environment`), or
    None for the whole run."""
    if text is None:
        return None
    if text.strip() == "auto":
        return from_environment(os.environ if environ is None else environ)
    index, slash, count = text.partition("/")
    if not slash or not index.strip().isdigit() or not count.strip().isdigit():
        raise UsageError(f"--shard takes I/N (shard I of N, I from 0 to N-1) or auto, not {text!r}")
    return Shard(int(index), int(count))


def from_environment(environ: Mapping[str, str]) -> Shard:
    """The shard a scheduler's task is: Slurm's array variables, else a Kubernetes indexed Job's
    `JOB_COMPLETION_INDEX` with `MEDVQA_SHARD_COUNT`; a `UsageError` naming them when neither is set."""

    def number(name: str, default: int | None = None) -> int:
        value = environ.get(name)
        if value is None and default is not None:
            return default
        if value is None or not value.strip().isdigit():
            raise UsageError(f"--shard auto: {name} is {value!r}, not a whole number")
        return int(value)

    if "SLURM_ARRAY_TASK_ID" in environ:
        task, count = number("SLURM_ARRAY_TASK_ID"), number("SLURM_ARRAY_TASK_COUNT")
        first, step = number("SLURM_ARRAY_TASK_MIN", 0), number("SLURM_ARRAY_TASK_STEP", 1)
        if step < 1 or task < first or (task - first) % step:
            raise UsageError(
                f"--shard auto: SLURM_ARRAY_TASK_ID {task} is not one of the array's tasks "
                f"(from {first} in steps of {step})"
            )
        return Shard((task - first) // step, count)
    if "JOB_COMPLETION_INDEX" in environ:
        return Shard(number("JOB_COMPLETION_INDEX"), number(COUNT_VARIABLE))
    raise UsageError(
        "--shard auto needs a scheduler's task variables: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT "
        f"(a Slurm array job), or JOB_COMPLETION_INDEX and {COUNT_VARIABLE} (a Kubernetes indexed Job); "
        "give --shard I/N otherwise"
    )


def shard_in(manifest: Mapping, where: Path) -> Shard:
    """The shard a run's manifest names; a `DataError` naming the manifest when it names none."""
    given = manifest.get("shard")
    try:
        if not isinstance(given, dict):
            raise UsageError("no shard")
        return Shard(given["index"], given["count"])  # (each checked by Shard)
    except (UsageError, KeyError):
        raise DataError(
            f"is not a shard (its manifest names no valid shard: {given!r}); give the directories of `run --shard`",
            file=Path(where) / MANIFEST,
        ) from None


@dataclass
class Merged:
    """What `merge_shards` wrote: the run directory, and each shard's directory and records."""

    run_dir: Path
    count: int
    shards: list[dict]  # {"shard": "I/N", "run_dir": ..., "records": n}, by index
    n_records: int

    def summary(self) -> dict:
        return {"run_dir": str(self.run_dir), "shards": self.shards, "n_records": self.n_records}


def check_shards(shard_dirs: Sequence[str | Path]) -> tuple[list[Path], list[dict], int]:
    """(the directories by shard index, their manifests, the shard count) when `shard_dirs` are
    every shard of one run, each once; else a `DataError` naming what is wrong (see the module's
    docstring)."""
    if not shard_dirs:
        raise UsageError("give the run directories of every shard")
    dirs = [Path(d) for d in shard_dirs]
    manifests = [read_manifest(d) for d in dirs]
    shards = [shard_in(m, d) for m, d in zip(manifests, dirs)]
    first, first_dir = manifests[0], dirs[0]
    for d, m, s in zip(dirs[1:], manifests[1:], shards[1:]):
        differ = [k for k in SAME_RUN if m.get(k) != first.get(k)]
        differ += ["shard count"] if s.count != shards[0].count else []
        if differ:
            raise DataError(f"is not a shard of the same run as {first_dir} (differs in: {', '.join(differ)})", file=d)
    count = shards[0].count
    by_index: dict[int, int] = {}
    for i, s in enumerate(shards):
        if s.index in by_index:
            raise DataError(f"is shard {s.label}, as {dirs[by_index[s.index]]} is: give each shard once", file=dirs[i])
        by_index[s.index] = i
    missing = [Shard(i, count).label for i in range(count) if i not in by_index]
    if missing:
        given = ", ".join(
            f"{shards[i].label} ({dirs[i]})" for i in sorted(by_index.values(), key=lambda i: shards[i].index)
        )
        raise DataError(
            f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing: every shard of the run is needed "
            f"(given: {given})",
            file=first_dir,
        )
    order = [by_index[i] for i in range(count)]
    return [dirs[i] for i in order], [manifests[i] for i in order], count


def merge_shards(shard_dirs: Sequence[str | Path], into: str | Path) -> Merged:
    """The shards in `shard_dirs` checked (`check_shards`) and merged into the new run directory
    `into` (see the module's docstring). `into` must hold no records yet."""
    dirs, manifests, count = check_shards(shard_dirs)
    records: list[dict] = []
    shards: list[dict] = []
    for index, d in enumerate(dirs):
        shard = Shard(index, count)
        with locked(d):  # no run writes the shard while it is read
            got = newest_records(read_all_records(d), held_out=True)
        for r in got:
            if not shard.holds(r["item_id"]):
                raise DataError(
                    f"holds a record of item {r['item_id']!r}, which is shard {shard_of(r['item_id'], count)}/"
                    f"{count}'s, not this shard's ({shard.label}): the shards overlap",
                    file=d / RECORDS,
                    record=f"{r['item_id']} {r['condition']}",
                )
        asked = sum("/" not in r["condition"] for r in got)  # (a forced guess is asked only after a refusal)
        planned = (manifests[index].get("shard") or {}).get("pairs")
        if isinstance(planned, int) and asked < planned:
            raise DataError(
                f"shard {shard.label} is not finished: {asked} of its {planned} pairs recorded; resume it (its own "
                "command again) before merging",
                file=d,
            )
        records += got
        shards.append({"shard": shard.label, "run_dir": str(d), "records": len(got)})
    if not records:
        raise DataError("no shard holds a record: nothing to merge (run the shards first)", file=dirs[0])
    manifest = {k: v for k, v in manifests[0].items() if k not in ("shard", "resumed")}
    manifest["merged"] = {
        "count": count,
        "shards": [{**s, "created": m.get("created")} for s, m in zip(shards, manifests)],
    }
    store = RunStore(Path(into))
    with store:
        if store.open(manifest):
            raise DataError("already holds records: merge into a new directory", file=Path(into))
        store.append_many(records)
    return Merged(Path(into), count, shards, len(records))

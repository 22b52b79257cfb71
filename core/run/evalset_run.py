"""Running an eval set (`evalset.read_set` reads one): every experiment an ordinary run, the
experiments of one server in turn and those of different servers at once, one experiment's
failure its own; `EvalResult` is what the set did (`medvqa eval --json`).

A set split across machines (`medvqa eval SET --shard I/N`) runs shard I of every experiment,
each in `<study_dir>/.shards/<I>of<N>/` under the experiment's own folder names (no experiment
folder begins with a dot, `names.path_part`); `medvqa eval SET --merge` then merges every
experiment's shards into its ordinary run directory (`shards.merge_shards`: a missing shard is
named) and compares the set as a set run on one machine is compared."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..inference.vllm_engines import ENGINES
from ..items import DataError
from .evalset import EvalSet, Experiment
from .shards import Shard, merge_shards


@dataclass
class Outcome:
    experiment: Experiment
    summary: dict | None = None
    failure: str | None = None  # why it failed (None: it succeeded)

    def as_json(self) -> dict:
        e = self.experiment
        out = {
            "benchmark": e.benchmark.benchmark,
            "language": e.language,
            "model": e.model.name or e.model.model,
            "model_string": e.model.model,
            "run_dir": str(e.run_dir),
            "ok": self.failure is None,
            "failure": self.failure,
        }
        if self.summary is not None:
            out.update(
                {
                    k: self.summary.get(k)
                    for k in ("n_records", "requested", "cache_hits", "errors", "accuracy", "usage", "cost_usd")
                }
            )
        return out


@dataclass
class EvalResult:
    study_dir: Path
    outcomes: list[Outcome]
    compare: dict | None = None  # `compare --json` of the experiments that finished
    compare_text: str | None = None
    notes: list[str] = field(default_factory=list)
    # what `medvqa contamination RUN_DIR... --json` prints of the finished experiments, where the
    # set asks for it (`EvalSet.exam_dates`); None otherwise
    contamination: dict | None = None

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.failure is not None]

    def as_json(self) -> dict:
        return {
            "study_dir": str(self.study_dir),
            "experiments": [o.as_json() for o in self.outcomes],
            "failed": [o.experiment.label for o in self.failed],
            "compare": self.compare,
            **({"contamination": self.contamination} if self.contamination is not None else {}),
            "notes": self.notes,
        }


SHARDS = ".shards"  # the folder of a study's shards, `shard_run_dir`


def shard_run_dir(s: EvalSet, e: Experiment, shard: Shard) -> Path:
    """Where shard `shard` of experiment `e` runs: `<study_dir>/.shards/<I>of<N>/<its folders>`."""
    return s.study_dir / SHARDS / f"{shard.index}of{shard.count}" / e.run_dir.relative_to(s.study_dir)


def run_options(s: EvalSet, e: Experiment, command_line: list[str], shard: Shard | None = None):
    from .options import RunOptions

    b = e.benchmark
    return RunOptions(
        benchmark=b.benchmark,
        model=e.model.model,
        data=b.data,
        sample=b.sample,
        split=b.split,
        select={k: v if isinstance(v, list) else [str(v)] for k, v in b.select.items()} if b.select else None,
        conditions=b.conditions if b.conditions is None or isinstance(b.conditions, str) else ",".join(b.conditions),
        variants=b.variants if b.variants is None or isinstance(b.variants, str) else ",".join(b.variants),
        limit=b.limit,
        convention=b.convention,
        language=e.language,
        run_dir=str(e.run_dir if shard is None else shard_run_dir(s, e, shard)),
        shard=None if shard is None else shard.label,
        seed=s.seed,
        repeats=s.repeats,
        max_error_rate=s.max_error_rate,
        model_name=e.model.name,
        backend_options=dict(e.backend_options),
        command_line=command_line,
        batch=s.batch,
        batch_poll_s=s.batch_poll_s,
    )


def run_set(
    s: EvalSet,
    *,
    progress: Callable[[str], None] | None = None,
    command_line: list[str] | None = None,
    shard: Shard | None = None,
) -> EvalResult:
    """Run (or resume) every experiment of `s`, or shard `shard` of each (see the module's docstring)."""
    from .options import run

    command_line = command_line or ["medvqa", "eval", str(s.file) if s.file else "<set>"]
    lanes: dict[str, list[Experiment]] = {}
    for e in s.experiments:
        lanes.setdefault(e.lane, []).append(e)
    outcomes: dict[int, Outcome] = {}
    lock = threading.Lock()
    total = len(s.experiments)
    started = time.monotonic()

    def say(line: str) -> None:
        if progress is not None:
            with lock:
                progress(line)

    def lane(experiments: list[Experiment]) -> None:
        for e in experiments:
            try:
                result = run(run_options(s, e, command_line, shard), progress=False)
                summary = result.summary()
                outcome = Outcome(e, summary, summary.get("failure"))
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # one experiment's failure is its own: the others go on
                outcome = Outcome(
                    e,
                    None,
                    f"{type(exc).__name__}: {exc}" if not isinstance(exc, (ValueError, DataError)) else str(exc),
                )
            with lock:
                outcomes[id(e)] = outcome
                done = len(outcomes)
                failed = sum(o.failure is not None for o in outcomes.values())
                records = sum((o.summary or {}).get("n_records", 0) for o in outcomes.values())
            finished = outcome.summary
            state = (
                f"{finished['n_records']} records ({finished['requested']} requested)"
                if finished is not None and not outcome.failure
                else f"failed: {outcome.failure}"
            )
            say(
                f"[{done}/{total}] {e.label}: {state} | set: {done - failed} done, {failed} failed, "
                f"{records} records, {time.monotonic() - started:.0f} s"
            )

    threads = [
        threading.Thread(target=lane, args=(exps,), name=f"medvqa-eval-{i}", daemon=True)
        for i, exps in enumerate(lanes.values())
    ]
    # the experiments of one vllm/ model share its engine; it is shut down before another model's
    # is built, and when the set ends (`vllm_engines`)
    with ENGINES.kept():
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():  # joined in steps, so that Ctrl-C reaches the main thread
                t.join(0.2)
    ordered = [outcomes[id(e)] for e in s.experiments]
    result = EvalResult(s.study_dir, ordered)
    return result


def merge_set(s: EvalSet) -> EvalResult:
    """Every experiment of `s` merged from its shards (`shard_run_dir`) into its run directory;
    an experiment whose shards are missing, of different runs or already merged fails on its own,
    naming why, and the others are merged."""
    outcomes = []
    for e in s.experiments:
        found = sorted((s.study_dir / SHARDS).glob(f"*/{e.run_dir.relative_to(s.study_dir)}"))
        try:
            if not found:
                raise DataError(f"no shard of {e.label} has run (medvqa eval SET --shard I/N first)", file=e.run_dir)
            merged = merge_shards(found, e.run_dir)
            outcomes.append(Outcome(e, {"n_records": merged.n_records, "shards": merged.shards}))
        except (DataError, UsageError) as exc:
            outcomes.append(Outcome(e, None, str(exc)))
    return EvalResult(s.study_dir, outcomes)

"""Everything `medvqa run` does between parsing arguments and printing: load the items,
build the backend, choose the run directory, execute with progress."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import plugins
from .conditions import parse_conditions
from .inference.cache import ResponseCache
from .items import fingerprint_items
from .runner import RunResult, RunSpec, execute
from .validation import require_valid


@dataclass
class RunOptions:
    benchmark: str
    model: str
    data: str | None = None
    sample: bool = False
    split: str | None = None
    years: list[int] | None = None
    professions: list[str] | None = None
    conditions: str = "C+Q,C+Q+I"
    limit: int | None = None
    run_dir: str | None = None
    seed: int = 0
    cache: bool = True
    cache_path: str | None = None
    allow_invalid: bool = False
    forced_guess: bool = False
    backend_options: dict[str, Any] = field(default_factory=dict)
    command_line: list[str] = field(default_factory=list)

    def load_options(self) -> dict[str, Any]:
        """What `medvqa score` needs to load the same items again."""
        return {"data": str(Path(self.data).resolve()) if self.data else None, "split": self.split,
                "sample": self.sample, "years": self.years, "professions": self.professions,
                "limit": self.limit}


def load_items(benchmark, opts: dict[str, Any]):
    split = "sample" if opts.get("sample") else opts.get("split")
    data = Path(opts["data"]) if opts.get("data") else None
    items = benchmark.load(data, split, years=opts.get("years"), professions=opts.get("professions"))
    if opts.get("limit") is not None:
        items = items[: opts["limit"]]
    return items, split or (benchmark.default_split if data else "sample")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:60] or "model"


def default_run_dir(bench: str, split: str, model: str, identity: dict) -> Path:
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return Path("runs") / f"{bench}-{split}-{_slug(model)}-{digest}"


def run(options: RunOptions, progress: bool = True) -> RunResult:
    benchmark = plugins.get_benchmark(options.benchmark)
    if options.sample and options.data:
        raise ValueError("give either --data or --sample, not both")
    conditions = parse_conditions(options.conditions)
    require_valid(benchmark, options.data, options.allow_invalid)
    items, split = load_items(benchmark, options.load_options())
    if not items:
        raise ValueError(f"no items to run for {options.benchmark} (split {split})")
    backend = plugins.get_backend(options.model, seed=options.seed, **options.backend_options)
    run_dir = Path(options.run_dir) if options.run_dir else default_run_dir(
        benchmark.name, split, options.model,
        {"data": fingerprint_items(items), "params": backend.params, "conditions": [c.value for c in conditions]})
    cache = ResponseCache(Path(options.cache_path) if options.cache_path else None) if options.cache else None
    spec = RunSpec(benchmark=benchmark, items=items, backend=backend, conditions=conditions, run_dir=run_dir,
                   split=split, data=options.load_options()["data"], cache=cache,
                   command_line=options.command_line or list(sys.argv),
                   extra_manifest={"load": options.load_options(), "backend": getattr(backend, "settings", {}),
                                   "forced_guess": options.forced_guess},
                   forced_guess=options.forced_guess)
    reporter = _progress_bar() if progress and sys.stderr.isatty() else None
    try:
        if reporter is None:
            return execute(spec)
        with reporter as update:
            return execute(spec, progress=update)
    finally:
        if cache is not None:
            cache.close()


class _progress_bar:
    """A rich progress display on stderr: done/total per condition and overall, each with its
    ETA, and a status line (requests in flight, retries, errors, cache hits, tokens, cost) read
    live from the run's state at every refresh."""

    def __enter__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        from rich.text import Text

        live: dict[str, dict] = {}

        class RunProgress(Progress):
            def get_renderables(self):
                yield self.make_tasks_table(self.tasks)
                if live:
                    yield Text(_status_line(live["state"]), style="dim")

        self._progress = RunProgress(TextColumn("[bold]{task.description:<8}"), BarColumn(bar_width=32),
                                     MofNCompleteColumn(), TimeRemainingColumn(), transient=False)
        self._progress.start()
        tasks: dict[str, Any] = {}

        def update(state: dict) -> None:
            if not tasks:
                live["state"] = state
                tasks["all"] = self._progress.add_task("all", total=state["total"])
                for cond, counts in state["conditions"].items():
                    tasks[cond] = self._progress.add_task(cond, total=counts["total"])
            for cond, counts in state["conditions"].items():
                self._progress.update(tasks[cond], completed=counts["done"])
            self._progress.update(tasks["all"], completed=state["done"])

        return update

    def __exit__(self, *exc):
        self._progress.stop()


def _status_line(state: dict) -> str:
    b = state["backend"]
    line = (f"in flight {b.get('in_flight', 0)}  retries {b.get('retries', 0)}  errors {state['errors']}  "
            f"cached {state['cached']}  tokens {b.get('prompt_tokens', 0):,}+{b.get('completion_tokens', 0):,}")
    return line + (f"  ${b['cost_usd']:.4f}" if b.get("cost_usd") else "")

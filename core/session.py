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
                   extra_manifest={"load": options.load_options()})
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
    """A rich progress bar on stderr: done/total, errors, cache hits, ETA."""

    def __enter__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(TextColumn("[bold]run"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("errors {task.fields[errors]}  cached {task.fields[cached]}"),
                                  TimeRemainingColumn(), transient=False)
        self._progress.start()
        self._task = None

        def update(state: dict) -> None:
            if self._task is None:
                self._task = self._progress.add_task("run", total=state["total"], errors=0, cached=0)
            self._progress.update(self._task, completed=state["done"], errors=state["errors"], cached=state["cached"])

        return update

    def __exit__(self, *exc):
        self._progress.stop()

"""The conformance kit's entry (`check_benchmark`): the benchmark resolved (a registered name,
or an object registered for the check's duration), every check run in order, and the plugin's
own checks: documented hooks only, the `Benchmark` surface spelt correctly."""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path
from typing import Any

from .. import hookspecs, plugins
from ..benchmark import Benchmark
from ..hookspecs import hookimpl
from ..items import Item
from .items import (
    check_conditions,
    check_gold,
    check_ids,
    check_images,
    check_languages,
    check_order,
    check_prompts,
    check_selection_keywords,
)
from .report import AddProblem, ContractError, KitReport, Problem
from .runs import check_runs

HOOKS = tuple(name for name in vars(hookspecs) if name.startswith("register_"))


SURFACE = tuple(n for n in dir(Benchmark) if not n.startswith("_"))


class _TemporaryPlugin:
    """Registers an unregistered benchmark object for the duration of the check."""

    def __init__(self, benchmark: Benchmark):
        self.benchmark = benchmark

    @hookimpl
    def register_benchmarks(self, register):
        register(self.benchmark)


def _resolve(benchmark: Benchmark | str) -> tuple[Benchmark, Any]:
    if isinstance(benchmark, str):
        return plugins.get_benchmark(benchmark), None
    if not isinstance(benchmark, Benchmark):
        raise TypeError(f"expected a medvqa.Benchmark or a registered name, got {type(benchmark).__name__}")
    found = plugins.benchmarks().get(benchmark.name)
    if found is not None:
        if found.obj is not benchmark and type(found.obj) is not type(benchmark):
            raise ValueError(
                f"a different benchmark named {benchmark.name!r} is registered by {found.plugin}; "
                "give the registered name, or another name"
            )
        return found.obj if type(found.obj) is type(benchmark) else benchmark, None
    temporary = _TemporaryPlugin(benchmark)
    plugins.manager().register(temporary, name=f"medvqa.testing:{benchmark.name}")
    return benchmark, temporary


def check_benchmark(
    benchmark: Benchmark | str,
    data: str | Path | None = None,
    *,
    split: str | None = None,
    work_dir: str | Path | None = None,
    raise_on_problems: bool = True,
) -> KitReport:
    """Check `benchmark` (a registered name or a `Benchmark` object) on the data at `data` (its
    default source when None; give `split="sample"` for a bundled sample). Runs go to
    `work_dir` (a temporary folder when None). Raises `ContractError` listing every broken
    contract unless `raise_on_problems` is False; returns the `KitReport`."""
    bench, temporary = _resolve(benchmark)
    work = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="medvqa-kit-"))
    report = KitReport(bench.name, work_dir=work)
    try:
        _check(bench, Path(data) if data is not None else None, split, work, report)
    finally:
        if temporary is not None:
            plugins.manager().unregister(temporary)
    if raise_on_problems and report.problems:
        raise ContractError(report.text())
    return report


def _check(bench: Benchmark, data: Path | None, split: str | None, work: Path, report: KitReport) -> None:
    add = report.problems.append
    report.checks.append("load")
    try:
        first = bench.load(data, split)
        second = bench.load(data, split)
    except Exception as exc:  # a loader that cannot load its own fixture says why, naming the record
        add(Problem("load", f"{type(exc).__name__}: {exc}"))
        return
    not_items = [type(x).__name__ for x in first if not isinstance(x, Item)]
    if not_items or not first:
        add(
            Problem(
                "load",
                "load() returned no items"
                if not first
                else f"load() returned {len(not_items)} objects that are not medvqa.Item ({not_items[0]})",
            )
        )
        return
    report.n_items = len(first)
    check_ids(bench, first, second, add, report)
    root = data if data is not None else bench.sample_path()
    check_gold(first, add, report)
    check_images(first, root, add, report)
    check_conditions(first, add, report)
    check_prompts(bench, first, add, report)
    check_order(bench, first, add, report)
    check_languages(bench, first, data, split, add, report)
    check_selection_keywords(bench, first, data, split, add, report)
    checked = data if data is not None else (bench.sample_path() if split == "sample" else None)
    if checked is not None:  # the data that was loaded (a download is the benchmark's own)
        report.checks.append("validate")
        for finding in bench.validate(Path(checked)):
            if getattr(finding, "level", "error") == "error":
                add(Problem("validate", str(finding), getattr(finding, "number", None)))
    check_runs(bench, first, data, split, work, add, report)
    _hooks(bench, add, report)


def _hooks(bench: Benchmark, add: AddProblem, report: KitReport) -> None:
    report.checks.append("hooks")
    found = plugins.benchmarks().get(bench.name)
    if found is not None:
        plugin = plugins.manager().get_plugin(found.plugin)
        for caller in plugins.manager().get_hookcallers(plugin) or []:
            if caller.name not in HOOKS:
                add(
                    Problem(
                        "hooks",
                        f"plugin {found.plugin} implements {caller.name}, which is not a documented "
                        f"hook ({', '.join(HOOKS)})",
                    )
                )
    for cls in type(bench).__mro__:
        if cls is Benchmark or not issubclass(cls, Benchmark):
            continue
        for name in vars(cls):
            if name.startswith("_") or name in SURFACE:
                continue
            close = difflib.get_close_matches(name, SURFACE, n=1, cutoff=0.85)
            if close:
                add(
                    Problem(
                        "hooks",
                        f"{cls.__name__}.{name} is not part of the Benchmark surface; did you mean {close[0]!r}?",
                    )
                )

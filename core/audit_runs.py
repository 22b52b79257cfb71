"""Run directories → the audit's inputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from . import plugins
from .audit import RunInput, parse_cohorts, resolve_fields
from .benchmark import Benchmark
from .items import DataError, Item
from .rescore import load_run


@dataclass(frozen=True)
class SavedRun:
    path: Path
    manifest: dict
    records: list[dict]
    benchmark: Benchmark
    items: dict[str, Item]

    @property
    def conditions(self) -> set[str]:
        return {r["condition"] for r in self.records}


def read_run(run_dir: str | Path) -> SavedRun:
    """A run directory with its items, reloaded and checked against its data fingerprint."""
    manifest, records, benchmark, items = load_run(Path(run_dir))
    return SavedRun(Path(run_dir), manifest, records, benchmark, items)


def run_input(runs: Sequence[SavedRun]) -> RunInput:
    """One audit input from runs of the same experiment (usually one run)."""
    first = runs[0]
    return RunInput(model=first.manifest["model"], records=[r for run in runs for r in run.records],
                    items=first.items, source=" + ".join(str(run.path) for run in runs),
                    patterns=plugins.answer_patterns(), stratum_aliases=first.benchmark.stratum_aliases)


def default_by(groups: Sequence[Sequence[SavedRun]]) -> tuple[str, ...]:
    """The benchmark's default strata when every run is of the same benchmark, keeping those
    every run's records hold."""
    benchmarks = {g[0].benchmark.name for g in groups}
    if len(benchmarks) != 1:
        return ()
    bench = groups[0][0].benchmark
    out = []
    for name in bench.default_strata:
        try:
            for group in groups:
                resolve_fields([name], [r for run in group for r in run.records], aliases=bench.stratum_aliases)
        except ValueError:
            continue
        out.append(name)
    return tuple(out)


def read_cohorts(path: str | Path) -> dict[str, str]:
    """Model → cohort from a YAML or JSON file (see `parse_cohorts`)."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DataError(f"not valid YAML or JSON ({exc})", file=path) from None
    return parse_cohorts(data, path)

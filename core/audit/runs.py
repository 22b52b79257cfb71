"""Run directories → the audit's inputs.

Runs of one model on the same data whose conditions do not overlap (`C+Q+I` in one run, `C+Q`
in another) are one experiment split in two: they are joined, so that their image-removal
pairs are paired exactly as in a run holding both conditions. Where a run has only one side of
the pair and no run given can complete it, a note says why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import plugins
from ..errors import UsageError
from ..items import DataError
from ..jsonl import load_yaml
from ..metrics import held_fields
from ..results import model_name
from ..run.saved import SavedRun
from ..run.saved import read_runs as read_saved_runs
from .cohorts import parse_cohorts
from .pairs import REMOVED, WITH, RunInput


def distinct(run_dirs: Sequence[str | Path], done: str = "audited") -> tuple[list[str | Path], list[str]]:
    """Each run directory once, and a note on each named twice (`... given more than once: <done> once`)."""
    unique: dict[Path, str | Path] = {}
    times: Counter = Counter()
    for run_dir in run_dirs:
        resolved = Path(run_dir).resolve()
        unique.setdefault(resolved, run_dir)
        times[resolved] += 1
    notes = [
        f"{run_dir} is given more than once: {done} once" for resolved, run_dir in unique.items() if times[resolved] > 1
    ]
    return list(unique.values()), notes


def read_runs(run_dirs: Sequence[str | Path]) -> tuple[list[SavedRun], list[str]]:
    """Each run directory once (a folder named twice is read once, with a note)."""
    dirs, notes = distinct(run_dirs)
    return read_saved_runs(dirs), notes


def run_input(runs: Sequence[SavedRun]) -> RunInput:
    """One audit input from runs of the same experiment (usually one run)."""
    first = runs[0]
    return RunInput(
        model=model_name(first.manifest),
        records=[r for run in runs for r in run.records],
        items=first.items,
        source=" + ".join(str(run.path) for run in runs),
        patterns=plugins.answer_patterns(),
        stratum_aliases=first.benchmark.stratum_aliases,
        benchmark=first.benchmark,
    )


# Manifest fields that must agree for two runs to be one experiment, and how to name each.
SAME_EXPERIMENT = {
    "benchmark": "benchmarks",
    "data_fingerprint": "data fingerprints",
    "model_name": "models",
    "params": "generation parameters",
    "templates": "templates",
}


def _short(value: Any) -> str:
    return value[:12] if isinstance(value, str) and len(value) == 64 else str(value)


def differences(a: SavedRun, b: SavedRun) -> list[str]:
    """Why `a` and `b` are not one experiment (empty when they are)."""

    def value(run: SavedRun, key: str) -> Any:
        return model_name(run.manifest) if key == "model_name" else run.manifest.get(key)

    return [
        f"{what} differ ({_short(value(a, key))} vs {_short(value(b, key))})"
        for key, what in SAME_EXPERIMENT.items()
        if value(a, key) != value(b, key)
    ]


def deployments(group: Sequence[SavedRun]) -> str:
    """For runs joined under one model name whose model strings differ (two deployments, such as
    a text model and its vision sibling), the words saying so: each side's model string, so a
    Δimg between them is read as what it is. Empty when every run has the same model string."""
    models = {run.manifest.get("model") for run in group}
    if len(models) < 2:
        return ""
    sides = "; ".join(
        f"{','.join(sorted(run.conditions))} from {run.manifest.get('model')!r} ({run.path})" for run in group
    )
    return (
        f"; different deployments under one model name: {sides}: a Δimg between them compares two "
        "deployments, not the image alone"
    )


def _conditions(group: list[SavedRun]) -> set[str]:
    return set().union(*(run.conditions for run in group))


def join_runs(runs: Sequence[SavedRun]) -> tuple[list[list[SavedRun]], list[str]]:
    """Runs grouped into experiments (in the order given) and notes on the pairing: which runs
    were joined, and why a run holding one side of image removal has no partner."""
    groups: list[list[SavedRun]] = []
    for run in runs:
        group = next((g for g in groups if not differences(g[0], run) and not _conditions(g) & run.conditions), None)
        if group is None:
            groups.append([run])
        else:
            group.append(run)
    notes = [
        f"joined {' + '.join(str(r.path) for r in g)}: one experiment of {model_name(g[0].manifest)} "
        f"on the same data, conditions {' | '.join(','.join(sorted(r.conditions)) for r in g)}" + deployments(g)
        for g in groups
        if len(g) > 1
    ]
    explained: set[frozenset] = set()  # (run, run) pairs already named, in either order
    for group in groups:
        conditions = _conditions(group)
        if (WITH in conditions) == (REMOVED in conditions):
            continue
        have, lack = (WITH, REMOVED) if WITH in conditions else (REMOVED, WITH)
        source = " + ".join(str(r.path) for r in group)
        partners = [r for r in runs if r not in group and lack in r.conditions]
        if not partners:
            notes.append(
                f"{source}: {have} records without {lack}: no image-removal pairs, and no other run "
                f"given has {lack} records"
            )
        for other in partners:
            if (pair := frozenset((group[0].path, other.path))) in explained:
                continue
            explained.add(pair)
            why = differences(group[0], other) or [
                f"both have {', '.join(sorted(conditions & other.conditions))} records"
            ]
            notes.append(f"{source} ({have}) is not paired with {other.path} ({lack}): {'; '.join(why)}")
    return groups, notes


def default_by(groups: Sequence[Sequence[SavedRun]]) -> tuple[str, ...]:
    """The benchmark's default strata when every run is of the same benchmark, keeping those
    every run's records hold."""
    if len({g[0].benchmark.name for g in groups}) != 1:
        return ()
    bench = groups[0][0].benchmark
    held = [
        held_fields(bench.default_strata, [r for run in g for r in run.records], bench.stratum_aliases)[0]
        for g in groups
    ]
    return tuple(n for n in bench.default_strata if all(n in h for h in held))


def read_cohorts(path: str | Path) -> dict[str, str]:
    """Model → cohort from a YAML or JSON file (see `parse_cohorts`)."""
    import yaml

    path = Path(path)
    try:
        data = load_yaml(path.read_text(encoding="utf-8"), file=path)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DataError(f"not valid YAML or JSON ({exc})", file=path) from None
    return parse_cohorts(data, path)


def audit_saved(
    runs: Sequence[SavedRun],
    notes: Sequence[str] = (),
    *,
    by: Sequence[str] | None = None,
    cohorts: str | Path | Mapping[str, Any] | None = None,
    refusals: str = "strict",
    examples: int = 3,
    resamples: int | None = None,
    seed: int = 0,
    reading: str | None = None,
    cluster: str | None = None,
    exam_dates: bool = False,
    cutoff: str | Mapping[str, str] | None = None,
) -> dict:
    """`medvqa.audit` of runs already read (`read_runs`; `notes`: its notes), so that a command
    that has read them for another output audits them without reading them again; the
    arguments are `medvqa.audit`'s (`by`: a sequence of names, None for the default strata).
    With `exam_dates` (or a `cutoff`), the document adds the runs' exam-date curves
    (`exam_dates_of`) where their records carry exam years."""
    from .. import bootstrap
    from ..metrics import reading_summary
    from .analysis import audit as audit_runs
    from .clusters import cluster_notes, default_cluster
    from .pairing import language_pairs
    from .pairs import Settings

    runs = [run.read_as(reading) for run in runs]
    said = reading_summary(runs)
    groups, joined = join_runs(runs)
    notes = [*notes, *joined]
    cluster = default_cluster([g[0].benchmark for g in groups], cluster)
    settings = Settings(
        by=tuple(by) if by is not None else default_by(groups),
        refusals=refusals,
        resamples=resamples or bootstrap.RESAMPLES,
        seed=seed,
        examples=examples,
        cluster=cluster,
    )
    if isinstance(cohorts, Mapping):
        model_cohorts: dict[str, str] | None = parse_cohorts(dict(cohorts))
    else:
        model_cohorts = read_cohorts(cohorts) if cohorts is not None else None
    inputs = [run_input(g) for g in groups]
    notes += cluster_notes([r.benchmark for r in inputs], cluster)
    doc = audit_runs(inputs, settings, model_cohorts)
    if languages := language_pairs(groups, settings):
        doc["paired_language"] = languages
        notes += [
            f"paired by language ({key}): {' with '.join(sec['runs'])}, under {', '.join(sec['conditions'])}"
            for key, sec in languages.items()
        ]
    if exam_dates or cutoff is not None:
        if (dates := exam_dates_of(runs, cutoff, reading)) is not None:
            doc["exam_dates"] = dates
    return {**doc, **said, "notes": notes}


def exam_dates_of(runs: Sequence[SavedRun], cutoff: str | Mapping[str, str] | None, reading: str | None) -> dict | None:
    """The exam-date curves of the audited runs (`contamination.curves.exam_date_curves`, the
    records read as the audit reads them), each model's split at its `cutoff` (one for all, or by
    model name); None when no record carries an exam year and no cutoff is given. A cutoff for
    runs without years, or for a model no run holds, is refused, naming it."""
    from ..contamination.curves import exam_date_curves, has_years

    if not any(has_years(run.records) for run in runs):
        if cutoff is not None:
            raise UsageError("--cutoff: no record of these runs carries an exam year (the curves need one)")
        return None
    if isinstance(cutoff, Mapping):
        models = {model_name(run.manifest) for run in runs}
        for name in cutoff:
            if name not in models:
                raise UsageError(
                    f"--cutoff {name}=...: no run of a model named {name!r} (models: {', '.join(sorted(models))})"
                )
        return exam_date_curves(runs, {m: cutoff.get(m) for m in sorted(models)}, reading)
    return exam_date_curves(runs, cutoff, reading)

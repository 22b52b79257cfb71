"""The names of audited experiments: one label each in every output that names them
(`experiment_labels`, `model_names`), the part of a benchmark an experiment holds (`scope`) and
the language its items are written in (`items_language`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import metrics
from ..items import Item
from .pairs import RunInput


def experiment_labels(
    experiments: Sequence[tuple[str, str, str, str]], parts: Sequence[str] | None = None
) -> list[str]:
    """The one label of each experiment (benchmark, model name, language of its items, its run's
    path) in every output that names experiments (audit, compare, the item browser): among the
    experiments of one benchmark, the model's name where no other has it; else the model's name
    with what tells its experiments apart in brackets, the part of the benchmark they hold
    (`parts`, one per experiment: "brazil" for a run of Brazil's questions) and their language:
    `model [brazil, pt]`, `model [brazil, en]`, `model [ja]`; `model@folder` (`model@path` where
    even the folder names repeat) only where these do not tell them apart."""
    parts = list(parts) if parts is not None else [""] * len(experiments)
    of_model: dict[tuple[str, str], list[int]] = {}
    for i, (bench, model, _, _) in enumerate(experiments):
        of_model.setdefault((bench, model), []).append(i)

    def qualified(i: int) -> str:
        bench, model, _, _ = experiments[i]
        group = of_model[(bench, model)]
        if len(group) == 1:
            return model
        differ = [
            values
            for values in ([parts[j] for j in group], [experiments[j][2] for j in group])
            if len(set(values)) > 1 and all(values)
        ]
        return f"{model} [{', '.join(values[group.index(i)] for values in differ)}]" if differ else folder(i)

    def folder(i: int) -> str:
        return f"{experiments[i][1]}@{Path(experiments[i][3]).name or i}"

    def path(i: int) -> str:
        return f"{experiments[i][1]}@{experiments[i][3] or i}"

    labels = [qualified(i) for i in range(len(experiments))]
    for fallback in (folder, path):  # a label two experiments of a benchmark share: its folder, then its path
        seen = Counter((e[0], label) for e, label in zip(experiments, labels))
        labels = [fallback(i) if seen[(experiments[i][0], label)] > 1 else label for i, label in enumerate(labels)]
    return labels


def scope(runs: Sequence[Any]) -> dict[str, str]:
    """The benchmark's default strata on which every record of the experiment (saved runs, or
    `RunInput`s) has one and the same level ({"country": "japan"} for a run of Japan's
    questions): what tells two experiments of one model and language on different parts of a
    benchmark apart."""
    bench = runs[0].benchmark
    if bench is None:
        return {}
    records = [r for run in runs for r in run.records]
    fields, _ = metrics.held_fields(bench.default_strata, records, bench.stratum_aliases)
    out: dict[str, str] = {}
    if not records:
        return out
    for name, rec_field in fields.items():
        level = str(records[0].get(rec_field))
        if all(str(r.get(rec_field)) == level for r in records):  # (stops at the first other level)
            out[name] = level
    return out


def model_names(runs: list[RunInput]) -> list[str]:
    """The audited runs' labels (`experiment_labels`); one model audited on two benchmarks is
    `model (benchmark)` on each, as the audit lists models without a benchmark column."""
    labels = experiment_labels(
        [(getattr(r.benchmark, "name", ""), r.model, items_language(r.items.values()), r.source) for r in runs],
        [", ".join(scope([r]).values()) for r in runs],
    )
    seen = Counter(labels)
    return [
        label if seen[label] == 1 else f"{label} ({getattr(r.benchmark, 'name', i)})"
        for i, (label, r) in enumerate(zip(labels, runs))
    ]


def items_language(items: Iterable[Item]) -> str:
    """The one language `items` are written in ("" where they mix languages)."""
    held = {it.language for it in items}
    return next(iter(held)) if len(held) == 1 else ""

"""Runs of several models on several benchmarks, side by side (`medvqa compare`): what the
comparison holds (`Comparison`, and its `--json` document) and the one function that computes it
from run directories (`compare_runs`).

Each cell is the benchmark's own headline metric over one condition's newest records (`table`);
the same condition across benchmarks lines up, and the visual-reliance view (Δimg, `C+Q+I` vs
`C+Q` on the same items) is computed exactly as the audit computes it (`deltas`). Models are
compared on the items both answered (`between_models`). Every interval names its method
(`ci_method`). Runs of one benchmark on different data are refused (`entries`).

Pure functions of saved runs: no model is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import metrics
from ..audit.clusters import cluster_notes, default_cluster, intervals_statement
from ..audit.pairing import language_delta_rows, manifest_language
from ..audit.pairs import Settings
from ..bootstrap import RESAMPLES
from ..render import json_rows
from ..results import model_name
from ..usage import usage_by_condition
from .between_models import TEST_COLUMNS, test_rows
from .confidence import abstention_rows, calibration_rows, confidence_by_condition
from .deltas import (
    DELTA_COLUMNS,
    DELTA_LANG_COLUMNS,
    DELTA_VARIANT_COLUMNS,
    REMOVED,
    WITH,
    delta_row,
    variant_delta_rows,
)
from .entries import read_entries, shown_strata
from .panels import panel_rows
from .passes import pass_rows
from .repeats import study_repeats
from .table import CLUSTER_COLUMNS, OTHER_CORRECT, PUBLISHED_COLUMNS, TABLE_COLUMNS, table_rows, whole_counts


@dataclass
class Comparison:
    """What `compare` computes: the long table (one row per model × benchmark × condition ×
    stratum level), Δimg per benchmark × model (and the Δ of each image variant where the runs
    hold variant records), the paired tests between models, pass verdicts
    (one row per model × exam × criterion) where a benchmark has them, the calibration and the
    abstention under the exam's rule for blanks where records carry a confidence, and notes on
    how runs were read."""

    table: pd.DataFrame
    delta_img: pd.DataFrame
    tests: pd.DataFrame
    delta_lang: pd.DataFrame = field(default_factory=pd.DataFrame)  # per model × benchmark × condition
    # per model × benchmark × variant (`deltas.variant_delta_rows`): empty without variant records
    delta_variants: pd.DataFrame = field(default_factory=pd.DataFrame)
    pass_lines: list[dict] = field(default_factory=list)
    # per model × benchmark × condition whose records carry a confidence (`confidence`): empty without
    calibration: list[dict] = field(default_factory=list)
    abstention: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    runs: list[dict] = field(default_factory=list)
    by: dict[str, list[str]] = field(default_factory=dict)  # benchmark -> strata shown
    # {"reading": the reading of every run (or "mixed"), "readings": {benchmark: reading}}
    reading: dict = field(default_factory=lambda: {"reading": metrics.STRICT, "readings": {}})
    repeats: list[dict] = field(default_factory=list)  # runs asked --repeats K times: `compare.repeats.study_repeats`
    usage: list[dict] = field(default_factory=list)  # tokens and cost per model × benchmark × condition
    # what the intervals are (item-level; with --cluster, the cluster level beside): `intervals_statement`
    intervals: dict = field(default_factory=lambda: intervals_statement(None))
    panels: list[dict] = field(default_factory=list)  # per benchmark: its table by stratum × model × language
    # the runs read, by path (not in the JSON): the page's audits and item browser use them, not a second read
    saved_runs: dict = field(default_factory=dict, repr=False)

    def as_json(self) -> dict:
        return {
            **self.reading,
            "intervals": self.intervals,
            "by": self.by,
            "table": json_rows(self.table),
            "delta_img": json_rows(self.delta_img),
            **({"delta_variants": json_rows(self.delta_variants)} if not self.delta_variants.empty else {}),
            "delta_lang": json_rows(self.delta_lang),
            **({"calibration": self.calibration} if self.calibration else {}),
            **({"abstention": self.abstention} if self.abstention else {}),
            "tests": json_rows(self.tests),
            "pass_lines": self.pass_lines,
            "panels": self.panels,
            "runs": self.runs,
            "notes": self.notes,
            **({"repeats": self.repeats} if self.repeats else {}),
            **({"usage": self.usage} if self.usage else {}),
        }


def compare_runs(
    run_dirs: Sequence[str | Path],
    *,
    by: Iterable[str] | None = None,
    resamples: int | None = None,
    seed: int = 0,
    reading: str | None = None,
    cluster: str | None = None,
) -> Comparison:
    entries, notes = read_entries(run_dirs, reading)
    cluster = default_cluster([e.benchmark for e in entries], cluster)
    settings = Settings(resamples=resamples or RESAMPLES, seed=seed, cluster=cluster)
    notes += cluster_notes([e.benchmark for e in entries], cluster)
    fields = shown_strata(entries, list(by) if by is not None else None, notes)
    rows = [row for i, e in enumerate(entries) for row in table_rows(e, fields[i], settings)]
    deltas = [delta_row(e, settings) for e in entries if {WITH, REMOVED} <= e.by_condition.keys()]
    notes += [
        f"{e.source}: no {WITH} and {REMOVED} records of the same items: no Δimg for {e.model} on {e.benchmark.name}"
        for e in entries
        if not {WITH, REMOVED} <= e.by_condition.keys()
    ]
    variant_deltas = [row for e in entries for row in variant_delta_rows(e, settings)]
    tests = test_rows(entries, settings)
    confidence = [(e, confidence_by_condition(e, settings)) for e in entries]
    notes += [
        f"{e.source}: {k} repeats: the Δimg table and the tests between models pair each item's mean over its "
        "repeats; Δlang and the audit's transition tables pair one record per item and condition (the last "
        "repeat's); the section over repeats gives each repeat and the pooled Δ"
        for e in entries
        if (k := e.repeats) > 1
    ]
    delta_lang = pd.DataFrame(
        language_delta_rows([e.runs for e in entries], settings),
        columns=[*DELTA_LANG_COLUMNS, *(CLUSTER_COLUMNS if cluster else [])],
    )
    whole_exams: dict = {}  # each data's whole exams, loaded once for all its entries
    passes = [row for e in entries for row in pass_rows(e, notes, whole_exams)]
    runs = [
        {
            "benchmark": e.benchmark.name,
            "model": e.model,
            "model_string": e.runs[0].manifest["model"],
            "model_name": model_name(e.runs[0].manifest),
            "language": manifest_language(e.runs[0].manifest),
            "scope": e.scope,
            "runs": [str(r.path) for r in e.runs],
            "data_fingerprint": e.runs[0].manifest.get("data_fingerprint"),
            "conditions": list(e.by_condition),
        }
        for e in entries
    ]
    shown: dict[str, list[str]] = {}
    for i, e in enumerate(entries):  # each benchmark's strata, as its entries show them
        shown[e.benchmark.name] = list(dict.fromkeys([*shown.get(e.benchmark.name, []), *fields[i]]))
    other = metrics.with_assisted(
        [*TABLE_COLUMNS, *(CLUSTER_COLUMNS if cluster else [])], rows
    )  # the other reading's columns, where an extraction exists
    said = [c for c in PUBLISHED_COLUMNS if any(c in r for r in rows)]
    frame = whole_counts(pd.DataFrame(rows, columns=[c for c in other if c not in OTHER_CORRECT] + said))
    panels = panel_rows(json_rows(frame), runs, passes, shown, entries)
    return Comparison(
        table=frame,
        panels=panels,
        delta_img=whole_counts(pd.DataFrame(deltas, columns=[*DELTA_COLUMNS, *(CLUSTER_COLUMNS if cluster else [])])),
        delta_variants=whole_counts(
            pd.DataFrame(variant_deltas, columns=[*DELTA_VARIANT_COLUMNS, *(CLUSTER_COLUMNS if cluster else [])])
        )
        if variant_deltas
        else pd.DataFrame(),
        tests=whole_counts(pd.DataFrame(tests, columns=TEST_COLUMNS)),
        delta_lang=whole_counts(delta_lang),
        pass_lines=passes,
        calibration=[row for e, numbers in confidence for row in calibration_rows(e, numbers)],
        abstention=[row for e, numbers in confidence for row in abstention_rows(e, numbers)],
        notes=notes,
        runs=runs,
        by=shown,
        reading=metrics.reading_summary(run for e in entries for run in e.runs),
        intervals=intervals_statement(cluster),
        repeats=study_repeats(entries),
        saved_runs={str(run.path): run for e in entries for run in e.runs},
        usage=[
            {"model": e.model, "benchmark": e.benchmark.name, "condition": c, **u}
            for e in entries
            for c, u in usage_by_condition(e.records).items()
        ],
    )

"""Runs of several models on several benchmarks, side by side (`medvqa compare`).

Each cell is the benchmark's own headline metric (`Benchmark.headline`) over one condition's
newest records, with n, the non-answer rates and the 95 % interval; the same condition across
benchmarks lines up, and the visual-reliance view (Δimg, `C+Q+I` vs `C+Q` on the same items)
is computed exactly as the audit computes it. Models are compared on the items both answered:
McNemar's exact test and Tango's score interval for accuracy, a paired bootstrap for any other
headline metric (its p-value bounded by 1/B, never 0); cells without shared items are marked
unpaired, never compared. Every interval names its method (`ci_method`). Runs of one benchmark on different
data (different data fingerprints) are refused.

Pure functions of saved runs: no model is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from pathlib import Path
from statistics import fmean

import pandas as pd

from .. import bootstrap, metrics
from ..audit.analysis import (
    REMOVED,
    WITH,
    RunInput,
    Settings,
    between_models_holm,
    cluster_map,
    cluster_notes,
    default_cluster,
    experiment_labels,
    flat_row,
    intervals_statement,
    items_language,
    pair_image_removal,
    paired_accuracy_test,
    paired_section,
)
from ..audit.pairing import language_delta_rows, manifest_language, scope, scope_text
from ..audit.runs import distinct, join_runs
from ..benchmark import Benchmark
from ..items import DataError, Item
from ..passlines import PassLines
from ..render import json_rows
from ..repeats import item_mean_pairs, n_repeats, paired_means_test, paired_repeats
from ..results import NON_ANSWERS, STATUSES, is_derived, model_name
from ..run.saved import SavedRun, read_runs, whole_exam_items
from ..bootstrap import RESAMPLES
from ..usage import usage_by_condition
from .repeats import study_repeats

TABLE_COLUMNS = [
    "model",
    "benchmark",
    "condition",
    "stratum",
    "level",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "n",
    "n_excluded",
    "uncounted",
    *STATUSES,
    "non_answer_rate",
    *(f"{s}_rate" for s in NON_ANSWERS),
    "runs",
]
# an import of published results that carries their accuracy: it beside medvqa's (overall rows)
# `published_artifact`: the importer's name for why the published number is not the model's (an
# artifact of the published scoring), where it named one
PUBLISHED_COLUMNS = ("published_accuracy", "published_correct", "published_artifact")
# the table shows the other reading's accuracy, interval and extractions, not its count correct
OTHER_CORRECT = ("assisted_correct", "strict_correct")
# a paired row's test: McNemar's mid-p (`mcnemar_p`, its bound) with the exact conditional p beside it
PAIRED_TEST = ["test", "mcnemar_p", "mcnemar_p_bound", "mcnemar_exact_p"]
# with --cluster: the cluster-bootstrap interval beside the item-level one
CLUSTER_COLUMNS = ["cluster_ci_low", "cluster_ci_high", "cluster_ci_method", "cluster_level", "n_clusters"]
DELTA_COLUMNS = [
    "model",
    "benchmark",
    "scope",
    "n",
    "a_with",
    "a_removed",
    "delta_img",
    "ci_low",
    "ci_high",
    "ci_method",
    *PAIRED_TEST,
    "n_unpaired",
    "unreadable_pairs",
    "warning",
    "note",
]
DELTA_LANG_COLUMNS = [
    "model",
    "benchmark",
    "condition",
    "languages",
    "scope",
    "n",
    "a_local",
    "a_other",
    "delta_lang",
    "ci_low",
    "ci_high",
    "ci_method",
    *PAIRED_TEST,
    "n_unpaired",
    "unreadable_pairs",
    "warning",
    "note",
]
TEST_COLUMNS = [
    "benchmark",
    "condition",
    "a",
    "b",
    "metric",
    "status",
    "n",
    "a_value",
    "b_value",
    "difference",
    "ci_low",
    "ci_high",
    "ci_method",
    "test",
    "p",
    "p_bound",
    "exact_p",
    "p_holm",
    "only_a",
    "only_b",
    "unreadable_pairs",
    "warning",
    "note",
]
OVERALL = "overall"
# columns that count records, items or clusters: whole numbers in every frame and in --json, where a
# column with a missing value would otherwise turn them into floats (`extracted: 60.0`)
COUNT_COLUMNS = (
    "n",
    "n_excluded",
    "uncounted",
    *STATUSES,
    "extracted",
    *OTHER_CORRECT,
    "published_correct",
    "n_clusters",
    "n_unpaired",
    "unreadable_pairs",
    "only_a",
    "only_b",
)


def _whole_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its count columns as whole numbers (a missing one stays missing)."""
    return frame.astype({c: "Int64" for c in COUNT_COLUMNS if c in frame.columns})


@dataclass
class Entry:
    """One model's experiment on one benchmark: one run, or runs of the same experiment holding
    different conditions, joined as the audit joins them."""

    benchmark: Benchmark
    model: str  # the name shown (model, or model@folder when a benchmark has it twice)
    runs: list[SavedRun]
    records: list[dict]
    items: dict[str, Item]
    _clusters: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def source(self) -> str:
        return " + ".join(str(run.path) for run in self.runs)

    @cached_property
    def by_condition(self) -> dict[str, list[dict]]:
        """The records of each base condition, in the order of conditions (derived ones, such as
        C+Q/forced, are the audit's)."""
        return {key[0]: rs for key, rs in metrics.group(self.records).items() if not is_derived(key[0])}

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


@dataclass
class Comparison:
    """What `compare` computes: the long table (one row per model × benchmark × condition ×
    stratum level), Δimg per benchmark × model, the paired tests between models, pass verdicts
    (one row per model × exam × criterion) where a benchmark has them, and notes on how runs
    were read."""

    table: pd.DataFrame
    delta_img: pd.DataFrame
    tests: pd.DataFrame
    delta_lang: pd.DataFrame = field(default_factory=pd.DataFrame)  # per model × benchmark × condition
    pass_lines: list[dict] = field(default_factory=list)
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
            "delta_lang": json_rows(self.delta_lang),
            "tests": json_rows(self.tests),
            "pass_lines": self.pass_lines,
            "panels": self.panels,
            "runs": self.runs,
            "notes": self.notes,
            **({"repeats": self.repeats} if self.repeats else {}),
            **({"usage": self.usage} if self.usage else {}),
        }


# ---------------------------------------------------------------- reading runs


def _parts(a: dict[str, str], b: dict[str, str]) -> bool:
    """Whether two runs' scopes (`scope`) say they hold different parts of a benchmark: a
    stratum on which each run's items have one level, and the levels differ (country=japan,
    country=brazil)."""
    return any(k in b and a[k] != b[k] for k in a)


def _check_fingerprints(runs: Sequence[SavedRun]) -> None:
    """Refuse runs of one benchmark on different data, naming both runs and both fingerprints;
    unless they hold different parts of it (`_parts`: one country's questions and another's,
    each run a single level of a default stratum), which are shown side by side, never paired."""
    seen: dict[tuple, list[tuple[Path, str, dict]]] = {}
    for run in runs:
        manifest = run.manifest
        # runs in two languages hold different texts of the same items: they pair (Δlang), never refused
        name, fp = (manifest.get("benchmark"), manifest_language(manifest)), manifest.get("data_fingerprint")
        part = scope([run])
        for first, first_fp, first_part in seen.get(name, []):
            if first_fp != fp and not _parts(first_part, part):
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
        [", ".join(scope(g).values()) for g in groups],
    )
    entries, clusters = [], {}
    for group, label in zip(groups, labels):
        items = {k: v for run in group for k, v in run.items.items()}
        entries.append(Entry(group[0].benchmark, label, list(group), [r for run in group for r in run.records], items))
        entries[-1]._clusters = clusters  # shared: models of the same data share their cluster maps
    return entries, notes


def _strata(entries: list[Entry], by: Iterable[str] | None, notes: list[str]) -> dict[int, dict[str, str]]:
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
            f"no run's records have the field {', '.join(repr(n) for n in names if n in unheld)}; "
            f"available: {', '.join(available)}"
        )
    return out


# ---------------------------------------------------------------- the table


def _row(entry: Entry, condition: str, stratum: str, level: str, records: list[dict], n_excluded: int | None) -> dict:
    c = metrics.cell(records, entry.benchmark)
    n, counts = c.n, {s: c.statuses.get(s, 0) for s in STATUSES}
    # where an extractor read some parse failures, its accuracy beside the strict one (the table keeps ASSISTED_COLUMNS)
    return {
        "model": entry.model,
        "benchmark": entry.benchmark.name,
        "condition": condition,
        "stratum": stratum,
        "level": level,
        "metric": c.metric,
        "value": c.value,
        "ci_low": c.ci[0] if c.ci else None,
        "ci_high": c.ci[1] if c.ci else None,
        "ci_method": c.ci_method,
        "n": n,
        "n_excluded": n_excluded,
        "uncounted": c.uncounted,
        **counts,
        "non_answer_rate": (n - counts["answered"]) / n if n else None,
        **{f"{s}_rate": counts[s] / n if n else None for s in NON_ANSWERS},
        **metrics.assisted_columns(c),
        "runs": entry.source,
    }


def _cluster_columns(entry: Entry, records: list[dict], clusters: dict[str, str] | None, s: Settings) -> dict:
    """A table row's cluster-bootstrap interval of its accuracy (`CLUSTER_COLUMNS`); {} without
    --cluster. A headline other than accuracy gets none (its `cluster_ci_method` says so)."""
    if clusters is None:
        return {}
    kept = metrics.counted(records, entry.benchmark)[0]
    if entry.benchmark.headline_metric != metrics.ACCURACY or not kept:
        return {
            "cluster_ci_low": None,
            "cluster_ci_high": None,
            "cluster_ci_method": None,
            "cluster_level": s.cluster,
            "n_clusters": None,
        }
    boot = bootstrap.cluster_bootstrap(
        [float(bool(r.get("correct"))) for r in kept],
        [1.0] * len(kept),
        [clusters.get(r["item_id"], r["item_id"]) for r in kept],
        resamples=s.resamples,
        seed=s.seed,
    )
    ci = boot["ci"] or (None, None)
    return {
        "cluster_ci_low": ci[0],
        "cluster_ci_high": ci[1],
        "cluster_ci_method": boot["ci_method"] if boot["ci"] else None,
        "cluster_level": s.cluster,
        "n_clusters": boot["n_clusters"],
    }


def published(entry: Entry) -> dict[str, dict]:
    """{condition: what the published results say} of an entry's runs imported from published
    results that carry their accuracy (the manifest's `imported.published`, as `report` shows it)."""
    out: dict[str, dict] = {}
    for run in entry.runs:
        out.update((run.manifest.get("imported") or {}).get("published") or {})
    return out


def table_rows(entry: Entry, fields: dict[str, str], s: Settings = Settings()) -> list[dict]:
    excluded = entry.runs[0].manifest.get("excluded") or []
    clusters = entry.clusters(s.cluster)
    intervals: dict[tuple[int, ...], dict] = {}

    def cluster_columns(records: list[dict]) -> dict:
        """`_cluster_columns`, once per set of records: a stratum of one level (every record of one
        profession) holds its condition's records again, and resampling them again gives the same."""
        key = tuple(map(id, records))  # (every record lives as long as the entry)
        if key not in intervals:
            intervals[key] = _cluster_columns(entry, records, clusters, s)
        return intervals[key]

    rows = []
    said = published(entry)
    for condition, records in entry.by_condition.items():
        rows.append(
            {
                **_row(entry, condition, OVERALL, "", records, metrics.excluded_counts(excluded, condition)[()]),
                **cluster_columns(records),
            }
        )
        if condition in said:  # an import of published results: their accuracy beside medvqa's
            rows[-1].update(
                published_accuracy=said[condition].get("accuracy"),
                published_correct=said[condition].get("correct"),
                **({"published_artifact": a} if (a := said[condition].get("artifact")) else {}),
            )
        for name, rec_field in fields.items():
            n_ex = metrics.excluded_counts(excluded, condition, [rec_field])
            for (_, level), group in metrics.group(records, [rec_field]).items():
                rows.append({**_row(entry, condition, name, level, group, n_ex[(level,)]), **cluster_columns(group)})
    return rows


def delta_row(entry: Entry, s: Settings) -> dict:
    """An entry's Δimg, as the audit's image-removal section computes it (strict: a refusal is wrong)."""
    run = RunInput(
        model=entry.model,
        records=metrics.counted(entry.records, entry.benchmark)[0],
        items=entry.items,
        source=entry.source,
    )
    clusters = entry.clusters(s.cluster)
    section = paired_section(*pair_image_removal(run), {}, s, clusters=clusters)
    row = {
        "model": entry.model,
        "benchmark": entry.benchmark.name,
        "scope": scope_text(entry.runs),
        **flat_row(section, ("a_with", "a_removed", "delta_img")),
    }
    if (k := entry.repeats) > 1:
        row.update(_pooled_delta(run.records, k, clusters, s))
    return row


def _pooled_delta(records: list[dict], k: int, clusters: dict[str, str] | None, s: Settings) -> dict:
    """The Δimg columns of a run asked --repeats K times: pooled over its repeats (each item's mean
    difference, `repeats.paired_repeats`; the summary's and the section over repeats' number) with
    the item-level t test (`paired_means_test`), in place of one repeat's transition table."""
    side = {c: [r for r in records if r["condition"] == c] for c in (WITH, REMOVED)}
    pooled = paired_repeats(side[WITH], side[REMOVED])["pooled"]
    shared, a, b = item_mean_pairs(side[WITH], side[REMOVED])
    test = paired_means_test(a, b)
    ci = pooled["ci"] or (None, None)
    out = {
        "n": pooled["n_items"],
        "a_with": fmean(a) if a else None,
        "a_removed": fmean(b) if b else None,
        "delta_img": pooled["delta"],
        "ci_low": ci[0],
        "ci_high": ci[1],
        "ci_method": pooled["ci_method"],
        "test": test["test"],
        "mcnemar_p": None,
        "mcnemar_p_bound": None,
        "mcnemar_exact_p": None,
        "note": f"pooled over {k} repeats (each item's mean): paired t over items, "
        + (f"p {test['p']:.3g}" if test["p"] is not None else test["note"]),
    }
    if clusters is not None:
        boot = bootstrap.cluster_bootstrap(
            [x - y for x, y in zip(a, b)],
            [1.0] * len(a),
            [clusters.get(i, i) for i in shared],
            resamples=s.resamples,
            seed=s.seed,
        )
        low, high = boot["ci"] or (None, None)
        out.update(
            cluster_ci_low=low,
            cluster_ci_high=high,
            cluster_ci_method=boot["ci_method"] if boot["ci"] else None,
            n_clusters=boot["n_clusters"],
        )
    return out


# ---------------------------------------------------------------- tests between models


def _paired_bootstrap_metric(bench: Benchmark, a: list[dict], b: list[dict], s: Settings) -> dict:
    """Paired bootstrap of headline(a) − headline(b) over shared items (a[i], b[i] the same
    item), resampling items jointly (`bootstrap.bootstrap_statistic`): interval and two-sided p from
    the same resamples. For metrics that are not a mean over items (micro-F1): each resample
    calls the benchmark's `headline_value`."""
    va, vb = bench.headline_value(a), bench.headline_value(b)
    difference = None if va is None or vb is None else va - vb

    def on(idx) -> float | None:
        xa, xb = bench.headline_value([a[i] for i in idx]), bench.headline_value([b[i] for i in idx])
        return None if xa is None or xb is None else xa - xb

    boot = bootstrap.bootstrap_statistic(
        len(a), on, difference, resamples=s.resamples, seed=s.seed, min_n=bootstrap.MIN_HEADLINE_BOOTSTRAP_N
    )
    ci = boot["ci"] or (None, None)
    return {
        "difference": difference,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "ci_method": boot["ci_method"],
        "p": boot["p"],
        "p_bound": boot["p_bound"],
        "note": boot["note"],
    }


def _repeated_test(ea: Entry, eb: Entry, condition: str, bench: Benchmark) -> dict:
    """Two models' accuracies under `condition` where either was asked --repeats K times: each
    item's mean over its repeats on each side, paired on the items both hold
    (`repeats.paired_means_test`), so every repeat counts and none is counted as an item."""
    _, a, b = item_mean_pairs(*(metrics.counted(e.by_condition[condition], bench)[0] for e in (ea, eb)))
    test = paired_means_test(a, b)
    ci = test["ci"] or (None, None)
    k = (ea.repeats, eb.repeats)
    return {
        "a_value": fmean(a),
        "b_value": fmean(b),
        "difference": test["difference"],
        "ci_low": ci[0],
        "ci_high": ci[1],
        "ci_method": test["ci_method"],
        "test": test["test"],
        "p": test["p"],
        "p_bound": test["p_bound"],
        "note": test["note"] or f"each item's mean over its repeats ({k[0]} and {k[1]})",
    }


def test_rows(entries: list[Entry], s: Settings) -> list[dict]:
    """Every two models on the same benchmark and condition, on the items both have; each p with
    its Holm-adjusted value (`p_holm`) over the model pairs of that benchmark and condition."""
    out = []
    for ea, eb in combinations(entries, 2):
        bench = ea.benchmark
        if _parts(scope(ea.runs), scope(eb.runs)):
            continue  # different parts of a benchmark (one country's questions, another's): nothing to pair
        for condition in [c for c in ea.by_condition if bench.name == eb.benchmark.name and c in eb.by_condition]:
            ra, rb = ({r["item_id"]: r for r in metrics.counted(e.by_condition[condition], bench)[0]} for e in (ea, eb))
            shared = sorted(set(ra) & set(rb))
            a, b = [ra[i] for i in shared], [rb[i] for i in shared]
            only_a, only_b = len(set(ra) - set(rb)), len(set(rb) - set(ra))
            row = {
                "benchmark": bench.name,
                "condition": condition,
                "a": ea.model,
                "b": eb.model,
                "metric": bench.headline_metric,
                "n": len(shared),
                "only_a": only_a,
                "only_b": only_b,
                "status": "unpaired" if not shared else "partly paired" if only_a or only_b else "paired",
                "a_value": bench.headline_value(a) if shared else None,
                "b_value": bench.headline_value(b) if shared else None,
                **dict.fromkeys(("difference", "ci_low", "ci_high", "ci_method", "test", "p", "p_bound")),
                **metrics.delta_warning([metrics.unreadable(x, y) for x, y in zip(a, b)]),
            }
            if shared and bench.headline_metric == "accuracy" and max(ea.repeats, eb.repeats) > 1:
                row.update(_repeated_test(ea, eb, condition, bench))
            elif shared and bench.headline_metric == "accuracy":  # McNemar mid-p and Tango's interval, as the audit's
                test = paired_accuracy_test([x.get("correct") for x in a], [y.get("correct") for y in b])
                row.update(
                    difference=test["difference"],
                    ci_low=test["ci"][0],
                    ci_high=test["ci"][1],
                    ci_method=test["ci_method"],
                    test=test["test"],
                    p=test["p"],
                    p_bound=test["p_bound"],
                    exact_p=test["exact_p"],
                    note=test["note"],
                )
            elif shared:  # any other headline: a paired bootstrap (without shared items, no test)
                row.update(test="paired-bootstrap", **_paired_bootstrap_metric(bench, a, b, s))
            out.append(row)
    return between_models_holm(out, [(row["benchmark"], row["condition"]) for row in out])


# ---------------------------------------------------------------- pass lines


def pass_rows(entry: Entry, notes: list[str], loaded: dict | None = None) -> list[dict]:
    """The benchmark's pass verdicts on this entry's records, one row per exam × criterion; a
    verdict needs whole exams: each run's data without its selection (see whole_exam_items,
    which `loaded` lets load each data once across entries), so a run's verdicts are those of
    `report --pass`, and runs joined into one entry are judged on their exams together."""
    if entry.benchmark.pass_on_whole_exams:  # as `report --pass` judges each run: joined runs, their exams together
        items = list({it.id: it for run in entry.runs for it in whole_exam_items(run, loaded)}.values())
    else:
        items = list(entry.items.values())
    result = entry.benchmark.pass_report(items, entry.records)
    if result is None:
        return []
    if not isinstance(result, PassLines):
        notes.append(
            f"{entry.source}: {entry.benchmark.name}'s pass report is not verdict rows (medvqa.PassLines): "
            "not shown; see medvqa report --pass"
        )
        return []
    notes += [f"pass lines of {entry.model} on {entry.benchmark.name}: {n}" for n in result.notes]
    return [
        {"model": entry.model, "benchmark": entry.benchmark.name, **row.model_dump(mode="json")} for row in result.rows
    ]


# ---------------------------------------------------------------- panels: stratum × model × language


def panel_rows(
    table: list[dict], runs: list[dict], pass_lines: list[dict], by: dict[str, list[str]], entries: list[Entry]
) -> list[dict]:
    """Per benchmark with a stratum shown, its headline cells laid out as a figure of panels: one
    panel per level of its first stratum (a country), one group per model, one bar per language,
    and each panel's pass line where the benchmark's pass verdicts name that level (`scope`). A
    cell points at its row of the table (`row`), and, where the experiment holds that level alone, at
    its overall row (`overall_row`: the published accuracy beside medvqa's, where the run was
    imported from published results): the values are the table's, never recomputed.
    The condition is C+Q+I where held (the model saw the image), else the first."""
    out = []
    # an experiment is its model on its benchmark: one model name may head runs of several exams,
    # each in its own language
    ranks = {
        (e.benchmark.name, e.model): (
            e.benchmark.offered_languages.index(lang)
            if (lang := manifest_language(e.runs[0].manifest)) in e.benchmark.offered_languages
            else len(e.benchmark.offered_languages)
        )
        for e in entries
    }
    info = {(r["benchmark"], r["model"]): r for r in runs}
    for bench, strata in by.items():
        if not strata:
            continue
        stratum = strata[0]
        rows = [(i, r) for i, r in enumerate(table) if r["benchmark"] == bench and r["stratum"] == stratum]
        conditions = list(dict.fromkeys(r["condition"] for _, r in rows))
        if not rows:
            continue
        condition = WITH if WITH in conditions else conditions[0]
        overall = {
            (r["model"], r["condition"]): i
            for i, r in enumerate(table)
            if r["benchmark"] == bench and r["stratum"] == OVERALL
        }
        cells = [
            {
                "level": r["level"],
                "model": info[bench, r["model"]]["model_name"],
                "language": info[bench, r["model"]]["language"],
                "experiment": r["model"],
                "row": i,
            }
            for i, r in rows
            if r["condition"] == condition
        ]
        for c in cells:  # an experiment of this level alone: its overall row (the published accuracy, where imported)
            if info[bench, c["experiment"]]["scope"].get(stratum) == c["level"]:
                c["overall_row"] = overall[(c["experiment"], condition)]
        languages = sorted(
            dict.fromkeys(c["language"] for c in cells),
            key=lambda lang: min(ranks[bench, c["experiment"]] for c in cells if c["language"] == lang),
        )
        lines: dict[str, float] = {}
        for p in pass_lines:
            level, scope_ = p.get("scope", {}).get(stratum), p.get("scope", {})
            if (
                p["benchmark"] == bench
                and level is not None
                and scope_.get("condition", condition) == condition
                and p.get("unit") == "share"
                and isinstance(p.get("required"), (int, float))
            ):
                lines.setdefault(level, p["required"])
        out.append(
            {
                "benchmark": bench,
                "stratum": stratum,
                "condition": condition,
                "levels": sorted(dict.fromkeys(c["level"] for c in cells)),
                "models": list(dict.fromkeys(c["model"] for c in cells)),
                "languages": languages,
                "cells": cells,
                "pass_lines": lines,
            }
        )
    return out


# ---------------------------------------------------------------- the whole comparison


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
    fields = _strata(entries, list(by) if by is not None else None, notes)
    rows = [row for i, e in enumerate(entries) for row in table_rows(e, fields[i], settings)]
    deltas = [delta_row(e, settings) for e in entries if {WITH, REMOVED} <= e.by_condition.keys()]
    notes += [
        f"{e.source}: no {WITH} and {REMOVED} records of the same items: no Δimg for {e.model} on {e.benchmark.name}"
        for e in entries
        if not {WITH, REMOVED} <= e.by_condition.keys()
    ]
    tests = test_rows(entries, settings)
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
            "scope": scope(e.runs),
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
    frame = _whole_counts(pd.DataFrame(rows, columns=[c for c in other if c not in OTHER_CORRECT] + said))
    panels = panel_rows(json_rows(frame), runs, passes, shown, entries)
    return Comparison(
        table=frame,
        panels=panels,
        delta_img=_whole_counts(pd.DataFrame(deltas, columns=[*DELTA_COLUMNS, *(CLUSTER_COLUMNS if cluster else [])])),
        tests=_whole_counts(pd.DataFrame(tests, columns=TEST_COLUMNS)),
        delta_lang=_whole_counts(delta_lang),
        pass_lines=passes,
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

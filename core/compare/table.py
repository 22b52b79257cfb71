"""The long table of a comparison: one row per model × benchmark × condition × stratum level,
each cell the benchmark's own headline metric (`Benchmark.headline`) over one condition's newest
records, with n, the non-answer rates and the 95 % interval (with --cluster, the cluster-bootstrap
interval beside it), and, for runs imported from published results, the published accuracy.
Also the columns every frame of a comparison keeps as whole numbers (`whole_counts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from .. import bootstrap, metrics
from ..audit.pairs import Settings
from ..results import NON_ANSWERS, STATUSES
from .entries import Entry

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
# with --cluster: the cluster-bootstrap interval beside the item-level one
CLUSTER_COLUMNS = ["cluster_ci_low", "cluster_ci_high", "cluster_ci_method", "cluster_level", "n_clusters"]
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
    "n11",
    "n10",
    "n01",
    "n00",
)


def whole_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its count columns as whole numbers (a missing one stays missing)."""
    return frame.astype({c: "Int64" for c in COUNT_COLUMNS if c in frame.columns})


def _row(
    entry: Entry, condition: str, stratum: str, level: str, records: Sequence[Mapping], n_excluded: int | None
) -> dict:
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


def cluster_interval_columns(
    entry: Entry, records: Sequence[Mapping], clusters: dict[str, str] | None, s: Settings
) -> dict:
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


def table_rows(entry: Entry, fields: dict[str, str], s: Settings) -> list[dict]:
    excluded = entry.runs[0].manifest.get("excluded") or []
    clusters = entry.clusters(s.cluster)
    intervals: dict[tuple[int, ...], dict] = {}

    def cluster_columns(records: Sequence[Mapping]) -> dict:
        """`cluster_interval_columns`, once per set of records: a stratum of one level (every record of one
        profession) holds its condition's records again, and resampling them again gives the same."""
        key = tuple(map(id, records))  # (every record lives as long as the entry)
        if key not in intervals:
            intervals[key] = cluster_interval_columns(entry, records, clusters, s)
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

"""Clusters of linked items and what a document's intervals are: the cluster level an audit or
a comparison resamples (`default_cluster`), notes for the benchmarks without it
(`cluster_notes`), each item's cluster (`cluster_map`), and the statement of the intervals
every document that prints them carries (`intervals_statement`, `intervals_text`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..items import Item


def _levels(benchmark: Any) -> tuple[str, ...]:
    return tuple(getattr(benchmark, "cluster_levels", ()) or ())


NO_CLUSTER = "none"  # `--cluster none`: item-level intervals only, whatever the benchmarks declare


def default_cluster(benchmarks: Iterable[Any], cluster: str | None) -> str | None:
    """The cluster level of a document's cluster intervals: `cluster` as given, None for
    `NO_CLUSTER`, and when not given the first level (the finest) of the first benchmark that
    declares any. Linked questions and exam blocks are not independent draws (item-level
    intervals cover 0.87–0.89 where linked questions share a case: docs/audit.md), so a benchmark
    that says which items are linked gets the cluster interval unless it is switched off."""
    if cluster == NO_CLUSTER:
        return None
    if cluster is not None:
        return cluster
    return next((levels[0] for b in benchmarks if (levels := _levels(b))), None)


def cluster_notes(benchmarks: Iterable[Any], level: str | None) -> list[str]:
    """Notes for the benchmarks that do not declare cluster `level` (their outputs keep
    item-level intervals only); a ValueError naming the levels there are when none declares it."""
    if level is None:
        return []
    benchmarks = list({getattr(b, "name", str(i)): b for i, b in enumerate(benchmarks)}.values())
    missing = [b for b in benchmarks if level not in _levels(b)]
    if len(missing) == len(benchmarks):
        declared = sorted({lv for b in benchmarks for lv in _levels(b)})
        raise ValueError(
            f"no benchmark of these runs declares the cluster level {level!r}; "
            + (f"levels: {', '.join(declared)}" if declared else "they declare no clusters")
        )
    return [
        f"{getattr(b, 'name', 'a benchmark')} declares no cluster level {level!r}: item-level intervals only"
        for b in missing
    ]


def cluster_map(benchmark: Any, items: Iterable[Item], level: str | None) -> dict[str, str] | None:
    """{item id: its cluster at `level`} under the benchmark's declared clusters
    (`Benchmark.clusters`); an item outside every cluster of that level is a cluster of its own.
    None without a level, or for a benchmark that does not declare it (`cluster_notes` says so)."""
    if level is None or level not in _levels(benchmark):
        return None
    items = list(items)
    declared = benchmark.clusters(items)
    return {it.id: str(declared.get(it.id, {}).get(level) or it.id) for it in items}


ITEM_LEVEL = (
    "item-level: items treated as independent draws, so the intervals generalise to a population "
    "of items like these (for the fixed exam itself, its accuracy is a count, not an estimate)"
)


def intervals_statement(cluster: str | None) -> dict:
    """What a document's intervals are: {"item": the item-level statement, "cluster": the cluster
    level of the cluster-bootstrap intervals beside them (`default_cluster`; None with --cluster
    none or where no benchmark declares clusters)}. Every
    document that prints intervals carries it."""
    return {
        "item": ITEM_LEVEL,
        "cluster": cluster,
        **(
            {
                "cluster_statement": f"cluster bootstrap over {cluster} (whole {cluster}s resampled): the intervals "
                f"generalise to a population of {cluster}s like these (--cluster none: item-level only)"
            }
            if cluster
            else {}
        ),
    }


def intervals_text(doc: dict) -> str:
    said = doc.get("intervals") or intervals_statement(None)
    return said["item"] + (f"; beside them, {said['cluster_statement']}" if said.get("cluster") else "") + "."

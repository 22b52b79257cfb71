"""The audit's inputs and its image-removal pairs: one model's run (`RunInput`), the settings
of an audit (`Settings`), a run indexed by (item, condition) (`IndexedRun`) and the pairing of
each image item's `C+Q+I` record with its `C+Q` record (`pair_image_removal`), credited under a
refusal convention (`pair_values`).

A pair is in one of four transition states: p11 (correct in both), p10 (correct only with the
image), p01 (correct only without it) and p00 (wrong in both); `transitions` turns pairs into the
table of these states, `sections` into the audit's other sections.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from .. import bootstrap, metrics, stats
from ..conditions import IMAGE_REMOVAL
from ..items import DataError, Item
from ..metrics import level_keys
from ..scoring.score import chance_of_correct

WITH, REMOVED = (c.value for c in IMAGE_REMOVAL)
STATES = ("p11", "p10", "p01", "p00")
CONVENTIONS = ("strict", "conditional", "imputed")


@dataclass(frozen=True)
class RunInput:
    """One model's run: its records, the items they name, the language patterns used to
    score them (they decide ordering items' chance and which stems describe options) and the
    stratum aliases its benchmark declares."""

    model: str
    records: list[dict]
    items: dict[str, Item]
    source: str = ""
    patterns: tuple = ()
    stratum_aliases: Mapping[str, str] = field(default_factory=dict)
    # whose rules decide which records count (`Benchmark.counts`) and how answers are keyed
    benchmark: Any = None


@dataclass(frozen=True)
class Settings:
    """How an audit reads its runs: the strata (`by`), the refusal convention, the bootstrap's
    resamples and seed, the examples per state and the cluster level of the cluster intervals."""

    by: tuple[str, ...] = ()
    refusals: str = "strict"
    resamples: int = bootstrap.RESAMPLES
    seed: int = 0
    examples: int = 3
    cluster: str | None = None  # a cluster level the benchmark declares: cluster-bootstrap intervals beside

    def __post_init__(self) -> None:
        if self.refusals not in CONVENTIONS:
            raise ValueError(f"unknown refusal convention {self.refusals!r}; choose {', '.join(CONVENTIONS)}")


@dataclass(frozen=True)
class Pair:
    """One item's two records that differ in one thing: with the image and with it removed (or,
    in the language pairing, in the first and the second language)."""

    item: Item
    with_image: Mapping
    removed: Mapping


@dataclass
class IndexedRun:
    """A run indexed for the audit."""

    input: RunInput
    by_key: dict[tuple[str, str], Mapping]
    fields: dict[str, str]  # requested --by name -> record field
    pairs: list[Pair] = field(default_factory=list)
    unpaired: dict[str, list[str]] = field(default_factory=dict)
    forced_accuracy: float | None = None
    chances: dict[str, float | None] = field(default_factory=dict)  # by item id, computed once

    def chance(self, item: Item) -> float | None:
        """The chance of a random answer being correct on `item` under the run's language patterns
        (they decide ordering items' chance); None without a gold answer or for gold formats outside
        choice scoring, which have no fixed chance."""
        if item.id not in self.chances:
            try:
                self.chances[item.id] = chance_of_correct(item, self.input.patterns) if item.gold is not None else None
            except ValueError:
                self.chances[item.id] = None
        return self.chances[item.id]


# ---------------------------------------------------------------- indexing and strata


def counted_input(run: RunInput) -> RunInput:
    """The run on the records that count under its benchmark's rules (`Benchmark.counts`)."""
    counted, _ = metrics.counted(run.records, run.benchmark)
    # (`counted` keeps some of the run's own records: dicts, as they are)
    return replace(run, records=cast(list[dict], counted))


def index_records(run: RunInput) -> dict[tuple[str, str], Mapping]:
    """The run's records by (item id, condition); a record naming an item not in the data is a
    `DataError`."""
    out: dict[tuple[str, str], Mapping] = {}
    for rec in run.records:
        if rec.get("item_id") not in run.items:
            raise DataError(
                "record names an item that is not in the data",
                file=Path(run.source) / "records.jsonl" if run.source else None,
                record=str(rec.get("item_id")),
            )
        out[(rec["item_id"], rec["condition"])] = rec
    return out


def group_by_level(entries: Iterable[tuple[Mapping, Any]], field_name: str) -> dict[str, list]:
    """{stratum key: [payload, ...]} in sorted key order."""
    out: dict[str, list] = {}
    for record, payload in entries:
        for key in dict.fromkeys(level_keys(record.get(field_name))):
            out.setdefault(key, []).append(payload)
    return dict(sorted(out.items()))


def mean_or_none(values: Sequence[float]) -> float | None:
    """The mean of `values`; None for none."""
    return float(np.mean(values)) if len(values) else None


def wilson_interval(values: Sequence[float]) -> list[float] | None:
    """The Wilson interval of a proportion of per-item credits (expected
    counts where refusals are imputed)."""
    ci = stats.binomial_ci(float(np.sum(values)), len(values))
    return list(ci) if ci is not None else None


# ---------------------------------------------------------------- image-removal pairs


def pair_image_removal(
    run: RunInput, by_key: Mapping[tuple[str, str], Mapping] | None = None
) -> tuple[list[Pair], dict[str, list[str]]]:
    """Pairs (`C+Q+I`, `C+Q`) for every image item, and the image items left unpaired, by
    reason. An item whose images are not available here is paired only when it has both records
    (predictions imported from a source that showed the image)."""
    by_key = index_records(run) if by_key is None else by_key
    pairs: list[Pair] = []
    unpaired: dict[str, list[str]] = {}
    for item in run.items.values():
        if item.excluded or not item.has_images:
            continue
        with_rec, removed_rec = by_key.get((item.id, WITH)), by_key.get((item.id, REMOVED))
        if with_rec is not None and removed_rec is not None:  # (an imported run's source saw the image)
            pairs.append(Pair(item, with_rec, removed_rec))
            continue
        if not item.image_available:
            reason = "image not available"
        elif with_rec is None:
            reason = f"no {WITH} record"
        else:
            reason = f"no {REMOVED} record"
        unpaired.setdefault(reason, []).append(item.id)
    return pairs, unpaired


def _correctness(record: Mapping, convention: str, forced_accuracy: float | None) -> float | None:
    """A record's credit under a refusal convention; None drops it (conditional)."""
    if record.get("status") == "refusal":
        if convention == "conditional":
            return None
        if convention == "imputed":
            return forced_accuracy
    return 1.0 if record.get("correct") else 0.0


def pair_values(
    pairs: list[Pair], convention: str = "strict", forced_accuracy: float | None = None
) -> list[tuple[Pair, float, float]]:
    """(pair, credit with image, credit image removed); conditional drops a pair whenever
    either side was refused."""
    credits = [
        (
            p,
            _correctness(p.with_image, convention, forced_accuracy),
            _correctness(p.removed, convention, forced_accuracy),
        )
        for p in pairs
    ]
    return [(p, cw, cr) for p, cw, cr in credits if cw is not None and cr is not None]


def has_paired_refusal(pairs: list[Pair]) -> bool:
    """Whether a record of any pair is a refusal (where the refusal conventions differ)."""
    return any(r.get("status") == "refusal" for p in pairs for r in (p.with_image, p.removed))


def state_of(pair: Pair) -> str:
    """The pair's transition state under strict scoring: p11, p10, p01 or p00."""
    w, r = bool(pair.with_image.get("correct")), bool(pair.removed.get("correct"))
    return f"p{int(w)}{int(r)}"

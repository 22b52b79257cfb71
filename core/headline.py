"""A group's headline number, typed: `Headline` (what `Benchmark.headline` returns) and the
accuracy every accuracy cell is computed by (`accuracy`), on the ground floor so that the
adapter surface (`benchmark`) and the metrics layer (`metrics`) both reach it from above.

An accuracy is correct / n over the records that are not held out; its 95 % interval is
Wilson's score interval with the boundary correction (`stats.binomial_ci`, named `WILSON`), or,
when the records are repeats of their items (`--repeats K`), the item-level interval over each
item's mean (`repeats.item_ci`): the repeats of one item are not more items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from .repeats import item_ci, item_means
from .results import RecordDict, as_records

ACCURACY = "accuracy"
# the interval of an accuracy: `stats.binomial_ci`'s, named as `stats.WILSON` names it (kept apart so
# that importing the metrics layer imports no numpy; tests/core/test_stats.py keeps the two equal)
WILSON = "wilson-score-bcd"


class Headline(TypedDict):
    """A group's headline metric: its name, value, n, 95 % interval [low, high] (None without
    one) and the interval's method."""

    metric: str
    value: float | None
    n: int
    ci: list[float] | None
    ci_method: str | None
    # a benchmark's word on its value, where it has one (MMBU-hard: "scored", or "not judged"
    # while no open answer has a verdict)
    status: NotRequired[str]


@dataclass(frozen=True)
class Accuracy:
    """The accuracy of a group of records: n counts records (item × repeat), `repeats` the
    repeats they hold and `n_items` the items (None without repeats)."""

    n: int
    correct: int
    value: float | None
    ci: tuple[float, float] | None
    ci_method: str | None
    repeats: int = 1
    n_items: int | None = None


def live(records: Iterable[Mapping[str, Any]]) -> list[RecordDict]:
    """The records that are not held out (their answers withheld: never scored)."""
    return [r for r in as_records(records) if not r.get("held_out")]


def accuracy_ci(correct: int, n: int) -> tuple[float, float] | None:
    """The 95 % interval of correct / n (`WILSON`); None when n = 0."""
    from .stats import binomial_ci  # numpy and scipy, imported on first use

    return binomial_ci(correct, n)


def accuracy(records: Iterable[Mapping[str, Any]]) -> Accuracy:
    """The `Accuracy` of the `live` records among `records`."""
    kept = live(records)
    n = len(kept)
    correct = len([r for r in kept if r.get("correct")])
    repeats = len({r.get("repeat") or 0 for r in kept})
    if repeats > 1:
        means = item_means(kept)
        ci, method = item_ci(means)
        return Accuracy(n, correct, correct / n, ci, method, repeats, len(means))
    return Accuracy(n, correct, correct / n if n else None, accuracy_ci(correct, n), WILSON if n else None)

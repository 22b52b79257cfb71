"""What the scoring chain reads and what it gives: `AnswerConventions` (how a benchmark's
answers are read and scored, from `Benchmark.answer_conventions`; docs/scoring.md) and `Score`
(one response's verdict)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..items import Item


@dataclass(frozen=True)
class Score:
    correct: bool
    status: str  # answered | refusal | parse_failure | error | missing
    predicted: tuple[str, ...] | None
    rule: str | None


@dataclass(frozen=True)
class AnswerConventions:
    """How a benchmark's answers are read and scored (docs/scoring.md). The defaults are
    JMed48k's chain; `Benchmark.answer_conventions` returns the benchmark's own."""

    # the JSON key that holds the answer: {"answer": [...]}; Polish PES uses "response"
    answer_key: str = "answer"
    # a prediction saved in the benchmark's own format (a record with "saved": true, written by
    # an importer, never a live reply) that joins labels with commas or writes them together
    # ("a,c", "a, c", "AC") names a set of labels; live replies are never split this way
    saved_label_sets: bool = False
    # scores items whose gold the chain does not score (free text, boxes): score_open(item,
    # response_text) -> Score; without it such items raise ValueError
    score_open: Callable[[Item, str], Score] | None = None
    # a named scoring convention's last word on an answer (another tool's normalisation and
    # comparison, reproduced): final_score(item, response_text, chain_score, saved) -> Score, called
    # with what the chain read; None keeps the chain's score
    final_score: Callable[[Item, str, Score, bool], Score] | None = None


# The conventions of a caller that names none (JMed48k's chain): one shared instance, as a
# frozen dataclass allows.
DEFAULT_CONVENTIONS = AnswerConventions()

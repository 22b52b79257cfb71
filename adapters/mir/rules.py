"""The MIR's own rules, as the shared data's SOURCE.txt ("The exam's rules") states them:

- 200 scored questions (1-200) and 10 reserve questions (201-210); each annulled question is
  replaced by the next reserve question, in order (`official_numbers`). In 2026 seven are
  annulled (13, 50, 64, 139, 142, 161 and the reserve 208): the official 200 are 1-200 without
  the six annulled ones, and the reserves 201-206.
- Net score: right − wrong/3; a blank answer scores 0 (`net_score`). Here a blank is a record
  with no readable option: a refusal, a reply the rules cannot read, a failed or missing request.
- The repository scores models on the valid items (203 of 210 in 2026) and scales to 200 by
  200/203 (`scaled_to_200`).
- 2026's best official candidate: 188 of 200 right (`BEST_CANDIDATE`), a reference line.

Pure functions of numbers and records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SCORED = 200  # questions 1-200 score; 201-210 are reserves
WRONG_PENALTY = 1 / 3  # each wrong answer takes away a third of a right one
BEST_CANDIDATE = {2026: 188}  # right answers of 200 of the year's best official candidate


def official_numbers(n_questions: int, annulled: Iterable[int]) -> list[int]:
    """The questions that count in the official exam: 1-200 without the annulled ones, each
    replaced by the next reserve question (201, 202, ...) that is not annulled itself, in order.
    Fewer than 200 when the reserves run out."""
    annulled = set(annulled)
    kept = [n for n in range(1, min(SCORED, n_questions) + 1) if n not in annulled]
    reserves = [n for n in range(SCORED + 1, n_questions + 1) if n not in annulled]
    return kept + reserves[: SCORED - len(kept)]


@dataclass(frozen=True)
class Sheet:
    """One exam's answer sheet: right, wrong and blank answers and the net score."""

    right: int
    wrong: int
    blank: int

    @property
    def n(self) -> int:
        return self.right + self.wrong + self.blank

    @property
    def net(self) -> float:
        return net_score(self.right, self.wrong)


def net_score(right: int, wrong: int) -> float:
    """right − wrong/3 (a blank scores 0). MIR 2025, o1 Pro: 183 right, 17 wrong → 177.33."""
    return right - wrong * WRONG_PENALTY


def blank(record: dict) -> bool:
    """No option was marked: a refusal, an unreadable reply, a failed or missing request."""
    return not record.get("predicted")


def sheet(records: Iterable[dict]) -> Sheet:
    """Right, wrong and blank over `records` (one per question)."""
    right = wrong = empty = 0
    for r in records:
        if blank(r):
            empty += 1
        elif r.get("correct"):
            right += 1
        else:
            wrong += 1
    return Sheet(right, wrong, empty)


def scaled_to_200(right: int, valid: int) -> float | None:
    """The repository's 200-question equivalent of `right` of `valid` items (200/203 in 2026)."""
    return right * SCORED / valid if valid else None

"""The Data Contamination Quiz's estimate (Golchin & Surdeanu, TACL 13, 2025), computed exactly as
its authors' code computes it, from the examined model's answers to the quizzes.

The quiz, in brief: a generator model writes four word-level perturbations of an instance
(A-D). The Bias Detector Quiz (BDQ) shows the four, with "E) None of the provided options."; the
original is not among them, so every A-D answer shows a liking for a position. A position is
*non-preferred* when it was picked less often than chance. For each non-preferred position x, a
Bias Compensator Quiz (BCQ) puts the original at x in place of the perturbation there; a model
that has seen the instance verbatim picks x. The estimate is an interval: the upper bound is
the best BCQ's share of correct picks, the lower bound that share corrected for the bias the BDQ
showed at its position (Cohen's kappa), or the second-best BCQ's share when that is higher.

The authors' code (github.com/shahriargolchin/DCQ, commit 04bd66b) fixes every detail kept here:

- `src/helpers/option_counter.py`, `letter_counter`: an answer is lower-cased and each letter
  counted as a whole word (`\\b{letter}\\b`), summed over the column; a blank answer counts
  nothing and still counts in n (`len(df)`). A cell pandas reads as missing ("", "N/A",
  "None", ... `PANDAS_MISSING`) counts nothing either: "N/A" would otherwise count an A.
- `calculate_non_preferred_options`: a position is non-preferred when its BDQ count is below
  ceil(n / 5); E never is; when none is, all of A-D are.
- `QuizPerformance.calculate_best_quiz_performance`: the BCQs are sorted by their correct picks,
  most first, ties broken by the smaller BDQ count at that position; upper = best / n;
  kappa = (best - BDQ count at that position) / (n - BDQ count there); lower =
  max(kappa, second best / n).
- `src/helpers/experiment_result_saver.py`: the report prints every share and the level as
  percentages with two decimals (`report`).

Where medvqa departs, it says so: with a single non-preferred position the authors' code fails
(it reads a second BCQ that does not exist); here the lower bound is then kappa alone
(`DcqEstimate.second`, None). An empty quiz is a DataError, not a division by zero.

Pure: answers in, an estimate out; `parse_results` reads the text of a results CSV in the
authors' layout that the caller has read."""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .items import DataError

POSITIONS = ("a", "b", "c", "d")
LETTERS = (*POSITIONS, "e")  # E: "None of the provided options."
BDQ_COLUMN = "bdq_results"
BCQ_COLUMN = "bcq_results_for_position_{}"
# The cells `pandas.read_csv` reads as missing by default (its `na_values`), which the authors'
# counter therefore skips: "N/A" and "n/a" hold a whole-word "a" that would otherwise count.
PANDAS_MISSING = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)
# A published quiz row holds the instance and five texts as long as it: a code instance of
# HumanEval is a few kilobytes. csv's own limit (128 KiB a field) is raised to this, no further.
MAX_FIELD = 16 * 1024 * 1024
_WORDS = {letter: re.compile(rf"\b{letter}\b") for letter in LETTERS}


def letter_count(answers: Sequence[str | None], letter: str) -> int:
    """How many times `letter` occurs as a whole word in the lower-cased `answers` (None, a missing
    answer, counts nothing). An answer naming two letters counts for both, as the authors'
    counter does."""
    pattern = _WORDS[letter]
    return sum(len(pattern.findall(answer.lower())) for answer in answers if answer is not None)


def letter_counts(answers: Sequence[str | None]) -> dict[str, int]:
    """The count of each letter A-E in `answers` (`letter_count`)."""
    return {letter: letter_count(answers, letter) for letter in LETTERS}


def chance_count(n: int) -> int:
    """The count below which a position is non-preferred: ceil(n / 5), one answer in five options."""
    return math.ceil(n / 5)


def non_preferred_positions(bdq_counts: Mapping[str, int], n: int) -> list[str]:
    """The positions A-D the BDQ picked fewer than `chance_count(n)` times, in order; all four
    when none was."""
    below = [p for p in POSITIONS if bdq_counts[p] < chance_count(n)]
    return below or list(POSITIONS)


@dataclass(frozen=True)
class DcqEstimate:
    """The quiz's result for one examined model on one set of instances: the letter counts of the
    BDQ and of each BCQ (keyed by the position the original was put in), the non-preferred
    positions, and the level as an interval of fractions (`lower`, `upper`)."""

    n: int
    bdq: dict[str, int]
    non_preferred: list[str]
    bcq: dict[str, dict[str, int]]
    best: str  # the BCQ position with the most correct picks (ties: the smaller BDQ count)
    kappa: float
    second: float | None  # the second-best BCQ's share of correct picks; None with one BCQ
    lower: float
    upper: float

    def shares(self, counts: Mapping[str, int]) -> dict[str, float]:
        return {letter.upper(): counts[letter] / self.n for letter in LETTERS}

    def as_json(self) -> dict[str, Any]:
        """The estimate as printed by `medvqa contamination --json`: letters in capitals, shares
        as fractions, and the level's line as the authors' report prints it."""
        return {
            "n": self.n,
            "bdq": {"counts": {k.upper(): v for k, v in self.bdq.items()}, "shares": self.shares(self.bdq)},
            "non_preferred": [p.upper() for p in self.non_preferred],
            "bcq": {
                p.upper(): {"counts": {k.upper(): v for k, v in c.items()}, "shares": self.shares(c)}
                for p, c in self.bcq.items()
            },
            "best": self.best.upper(),
            "kappa": self.kappa,
            "second": self.second,
            "level": {"lower": self.lower, "upper": self.upper},
            "printed": level_line(self.lower, self.upper),
        }


def estimate(bdq_answers: Sequence[str | None], bcq_answers: Mapping[str, Sequence[str | None]]) -> DcqEstimate:
    """The estimate from the examined model's raw answers: `bdq_answers`, one per instance, and
    `bcq_answers`, per position (a-d), one per instance in the same order. Only the BCQs of the
    non-preferred positions count (the authors take no others); one of them missing, or a column
    of another length, is a ValueError."""
    n = len(bdq_answers)
    if n == 0:
        raise ValueError("the quiz has no instances: no contamination level can be estimated")
    bdq = letter_counts(bdq_answers)
    positions = non_preferred_positions(bdq, n)
    bcq: dict[str, dict[str, int]] = {}
    for p in positions:
        answers = bcq_answers.get(p)
        if answers is None:
            raise ValueError(
                f"position {p.upper()} is non-preferred (the BDQ picked it {bdq[p]} times, below "
                f"{chance_count(n)} of {n}) but there are no Bias Compensator Quiz answers for it"
            )
        if len(answers) != n:
            raise ValueError(f"the BCQ at position {p.upper()} has {len(answers)} answers, the BDQ {n}")
        bcq[p] = letter_counts(answers)
    # most correct picks first; a tie goes to the position the model liked less in the BDQ
    ranked = sorted(positions, key=lambda p: (-bcq[p][p], bdq[p]))
    best = ranked[0]
    top = bcq[best][best]
    kappa = (top - bdq[best]) / (n - bdq[best])
    second = bcq[ranked[1]][ranked[1]] / n if len(ranked) > 1 else None
    lower = kappa if second is None else max(kappa, second)
    return DcqEstimate(
        n=n,
        bdq=bdq,
        non_preferred=positions,
        bcq=bcq,
        best=best,
        kappa=kappa,
        second=second,
        lower=lower,
        upper=top / n,
    )


def percent(share: float) -> str:
    """A share as the authors' report prints it: `78.79%`."""
    return f"{share * 100:.2f}%"


def level_line(lower: float, upper: float) -> str:
    return f"Detected Contamination Level: [{percent(lower)}, {percent(upper)}]"


def report(est: DcqEstimate) -> str:
    """The authors' report (`data_contamination_report_for_<file>.txt`) of an estimate, line for line."""
    rule = "=" * 50
    lines = ["BDQ results (positional biases):"]
    lines += [f"Option {k}: {percent(v)}" for k, v in est.shares(est.bdq).items()]
    lines += [f"Non-preferred Options: {', '.join(p.upper() for p in est.non_preferred)}", rule]
    for p, counts in est.bcq.items():
        lines.append(f"BCQ results with correct answers in position {p.upper()}:")
        lines += [f"Option {k}: {percent(v)}" for k, v in est.shares(counts).items()]
        lines.append(rule)
    lines.append(level_line(est.lower, est.upper))
    return "\n".join(lines) + "\n"


def parse_results(text: str, *, file: str) -> tuple[list[str | None], dict[str, list[str | None]]]:
    """The BDQ answers and the BCQ answers by position from the text of a results CSV in the
    authors' layout (a header row naming `bdq_results` and `bcq_results_for_position_<x>`; any
    other columns, the instance and its options, are kept out). A cell pandas reads as missing is
    None. A file without the BDQ column or with a row of the wrong width is a DataError naming
    `file` and the row (counted from 1 after the header, with its line)."""
    limit = csv.field_size_limit()
    csv.field_size_limit(MAX_FIELD)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
        lines = _row_lines(text)
    except csv.Error as exc:
        raise DataError(f"not a CSV file ({exc})", file=file) from None
    finally:
        csv.field_size_limit(limit)
    if not rows:
        raise DataError("the file is empty (a header row naming bdq_results is expected)", file=file)
    header = rows[0]
    if BDQ_COLUMN not in header:
        raise DataError(
            f"no column {BDQ_COLUMN!r}: a results file of the Data Contamination Quiz names the examined model's "
            f"Bias Detector Quiz answers so (its columns are {', '.join(header[:12])})",
            file=file,
            record="row 0 (the header)",
        )
    columns = {BDQ_COLUMN: header.index(BDQ_COLUMN)}
    for p in POSITIONS:
        name = BCQ_COLUMN.format(p)
        if name in header:
            columns[name] = header.index(name)
    bdq: list[str | None] = []
    bcq: dict[str, list[str | None]] = {p: [] for p in POSITIONS if BCQ_COLUMN.format(p) in columns}
    body = [(i, row) for i, row in enumerate(rows[1:], start=1) if row]  # csv.reader gives [] for a blank line
    if not body:
        raise DataError("the file has a header and no rows", file=file)
    for i, row in body:
        if len(row) != len(header):
            raise DataError(
                f"{len(row)} fields where the header names {len(header)}",
                file=file,
                record=f"row {i} (line {lines[i]})",
            )
        bdq.append(answer_cell(row[columns[BDQ_COLUMN]]))
        for p, answers in bcq.items():
            answers.append(answer_cell(row[columns[BCQ_COLUMN.format(p)]]))
    return bdq, bcq


def answer_cell(value: str) -> str | None:
    """A cell of an answer column: None where pandas reads it as missing (`PANDAS_MISSING`), else as it is."""
    return None if value in PANDAS_MISSING else value


def _row_lines(text: str) -> list[int]:
    """The line on which each row of the CSV `text` starts (1-based), by row index: a quoted field
    spans lines, so a row's number and its line differ."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    starts, previous = [], 0
    for _ in reader:
        starts.append(previous + 1)
        previous = reader.line_num
    return starts


def estimate_results(text: str, *, file: str) -> DcqEstimate:
    """The estimate of a results CSV in the authors' layout (`parse_results`), its problems
    DataErrors naming `file`."""
    bdq, bcq = parse_results(text, file=file)
    try:
        return estimate(bdq, bcq)
    except ValueError as exc:
        raise DataError(str(exc), file=file) from None

"""Would the model have scored more had it left its least sure answers blank? An exam's score
under a confidence threshold, by the exam's own rule for blanks, with the threshold chosen on one
half of the items and reported on the other (docs/audit.md, "Confidence and abstention").

- `BlankRule`: what an exam gives a right, a wrong and a blank answer, its pass mark in those
  points, and a limit on prohibited choices; a benchmark declares its own
  (`Benchmark.blank_rule`), core knows none. `PLAIN`, the default, is an exam where a blank
  scores what a wrong answer does: abstaining can only lose there.
- `Answers` (one group's items) and its `sheet`: right, wrong, blank, prohibited choices and
  points answering only at or above a threshold (an item without a confidence is always
  answered: nothing ranks it; an item with no readable answer is blank whatever the threshold).
- `abstention`: the points at every distinct confidence, the threshold that maximises points
  on all the items (in-sample, shown for contrast: it is chosen on the very items it is scored
  on, so its gain is biased upwards), and the cross-fitted result: the items split in two
  halves by a seeded draw (whole clusters kept together), the threshold that maximises points
  on each half (of equal points the one with fewer prohibited choices, then the lowest) applied
  to the other, both directions added up, beside answering everything;
  the gain's interval is a paired bootstrap of the per-item points (`bootstrap_difference`),
  clusters honoured, given the thresholds chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .bootstrap import bootstrap_difference

SEED = 0  # the split's seed: the same run gives the same halves
SHOWN = 101  # the most thresholds `by_threshold` lists (every one is searched)


@dataclass(frozen=True)
class BlankRule:
    """How an exam scores an answer sheet: points for a right, a wrong and a blank answer; the
    points needed to pass (`pass_mark`, None where the exam has no pass mark on this score); at
    most `prohibited_limit` prohibited choices (None where there are none); where the rule comes
    from (`source`)."""

    name: str
    right: float = 1.0
    wrong: float = 0.0
    blank: float = 0.0
    pass_mark: float | None = None
    prohibited_limit: int | None = None
    source: str = ""

    def points(self, right: int, wrong: int, blank: int) -> float:
        return right * self.right + wrong * self.wrong + blank * self.blank

    def passed(self, points: float, prohibited: int) -> bool | None:
        """The verdict: the pass mark reached and the prohibited choices within their limit;
        None where the rule has neither."""
        if self.pass_mark is None and self.prohibited_limit is None:
            return None
        return (self.pass_mark is None or points >= self.pass_mark) and (
            self.prohibited_limit is None or prohibited <= self.prohibited_limit
        )


PLAIN = BlankRule(name="plain (a blank scores as a wrong answer)", source="no rule for blanks declared")


@dataclass(frozen=True)
class Answers:
    """One group's items as the threshold sees them: confidence (NaN where none was read),
    correct, blank (no readable answer) and prohibited (the answer holds a prohibited choice)."""

    confidence: np.ndarray
    correct: np.ndarray
    blank: np.ndarray
    prohibited: np.ndarray

    @classmethod
    def of(
        cls,
        confidence: Sequence[float | None],
        correct: Sequence[Any],
        blank: Sequence[Any] | None = None,
        prohibited: Sequence[Any] | None = None,
    ) -> Answers:
        n = len(confidence)
        conf = np.array([np.nan if c is None else float(c) for c in confidence], dtype=float)
        return cls(
            conf,
            np.asarray(correct, dtype=bool),
            np.zeros(n, dtype=bool) if blank is None else np.asarray(blank, dtype=bool),
            np.zeros(n, dtype=bool) if prohibited is None else np.asarray(prohibited, dtype=bool),
        )

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> Answers:
        """From records: `confidence`, `correct`, blank where nothing was read (`predicted`
        empty: a refusal, an unreadable reply, a failed or missing request), and `prohibited`
        where a benchmark marked it."""
        rows = list(records)
        return cls.of(
            [r.get("confidence") for r in rows],
            [bool(r.get("correct")) for r in rows],
            [not r.get("predicted") for r in rows],
            [bool(r.get("prohibited")) for r in rows],
        )

    def subset(self, index: np.ndarray) -> Answers:
        return Answers(self.confidence[index], self.correct[index], self.blank[index], self.prohibited[index])

    def answered(self, threshold: float | None) -> np.ndarray:
        """Whether each item is answered at `threshold` (None: every readable answer)."""
        if threshold is None:
            return ~self.blank
        keep = np.isnan(self.confidence) | (np.nan_to_num(self.confidence, nan=0.0) >= threshold)
        return ~self.blank & keep

    def item_points(self, rule: BlankRule, threshold: float | None) -> np.ndarray:
        answered = self.answered(threshold)
        return np.where(answered, np.where(self.correct, rule.right, rule.wrong), rule.blank)

    def sheet(self, rule: BlankRule, threshold: float | None) -> dict[str, Any]:
        """{"threshold", "right", "wrong", "blank", "prohibited", "points", "passed"} at
        `threshold` (None: answering everything readable)."""
        answered = self.answered(threshold)
        right = int((answered & self.correct).sum())
        wrong = int((answered & ~self.correct).sum())
        blank = int(self.confidence.size - right - wrong)
        prohibited = int((answered & self.prohibited).sum())
        points = rule.points(right, wrong, blank)
        return {
            "threshold": threshold,
            "right": right,
            "wrong": wrong,
            "blank": blank,
            "prohibited": prohibited,
            "points": points,
            "passed": rule.passed(points, prohibited),
        }

    def thresholds(self) -> list[float]:
        """The distinct confidences, lowest first: answering at or above the lowest answers
        every item that has a confidence."""
        return [float(t) for t in np.unique(self.confidence[~np.isnan(self.confidence)])]

    def scan(self, rule: BlankRule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(thresholds, points, prohibited choices) at every distinct confidence, lowest first,
        from running sums over the items sorted once (a threshold costs no pass over the items)."""
        ranked = ~np.isnan(self.confidence)
        levels, level = np.unique(self.confidence[ranked], return_inverse=True)
        # what answering (rather than leaving blank) adds, per readable ranked item
        change = np.where(self.correct, rule.right, rule.wrong) - rule.blank
        change = np.where(self.blank, 0.0, change)[ranked]
        added = np.bincount(level, weights=change, minlength=levels.size)
        above = np.cumsum(added[::-1])[::-1]  # answering every item at or above each level
        base = float(self.item_points(rule, None)[~ranked].sum()) + rule.blank * int(ranked.sum())
        chosen = (self.prohibited & ~self.blank)[ranked].astype(float)
        prohibited = np.cumsum(np.bincount(level, weights=chosen, minlength=levels.size)[::-1])[::-1]
        always = int((self.prohibited & ~self.blank & ~ranked).sum())
        return levels, base + above, always + prohibited

    def best(self, rule: BlankRule) -> float | None:
        """The threshold that maximises the points; of equal points the one with the fewest
        prohibited choices (a prohibited option is never the right one, so leaving it blank costs
        no points where a blank scores as a wrong answer), then the lowest (answering most). None
        where no item has a confidence."""
        levels, points, prohibited = self.scan(rule)
        if not levels.size:
            return None
        order = np.lexsort((levels, prohibited, -points))  # last key first: most points, fewest prohibited, lowest
        return float(levels[int(order[0])])


def shown_thresholds(answers: Answers) -> list[float]:
    """The thresholds `by_threshold` lists: every distinct confidence, or past `SHOWN` of them,
    `SHOWN` spread evenly from the lowest to the highest."""
    levels = answers.thresholds()
    if len(levels) <= SHOWN:
        return levels
    return [levels[int(i)] for i in np.unique(np.linspace(0, len(levels) - 1, SHOWN).round())]


def halves(n: int, clusters: Sequence[Any] | None = None, *, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Two halves of n items by a seeded draw, as boolean masks: ⌊units / 2⌋ of the units (items,
    or whole clusters) in the first, the rest in the second."""
    ids = list(range(n)) if clusters is None else list(clusters)
    units = list(dict.fromkeys(ids))
    order = np.random.default_rng(seed).permutation(len(units))
    first = {units[i] for i in order[: len(units) // 2]}
    mask = np.array([u in first for u in ids], dtype=bool)
    return mask, ~mask


def abstention(
    answers: Answers,
    rule: BlankRule,
    *,
    clusters: Sequence[Any] | None = None,
    seed: int = SEED,
    verdict: Callable[[np.ndarray], Any] | None = None,
) -> dict[str, Any]:
    """The exam's score with and without abstaining: {"rule", "n", "n_without_confidence",
    "answer_all", "by_threshold", "in_sample", "cross_fitted"} (see the module's docstring).

    `cross_fitted`: {"seed", "halves": [{"n", "threshold" (chosen on this half), "points" (the
    other half's, at it)}], the sheet's counts and "points" and "passed" over all items, "gain"
    (its points − answering everything's), and the gain's interval ("ci", "ci_method", "p",
    "note": a paired bootstrap of per-item points, totals)}.

    `verdict(answered)` (the items answered, a mask): the exam's own verdict on that sheet, added to
    every sheet as "verdict" (the benchmark's pass lines, where it has them: `confidence_metrics`)."""
    n = int(answers.confidence.size)
    everything = answers.sheet(rule, None)

    def judged(sheet: dict[str, Any], answered: np.ndarray) -> dict[str, Any]:
        return sheet if verdict is None else {**sheet, "verdict": verdict(answered)}

    everything = judged(everything, answers.answered(None))
    out: dict[str, Any] = {
        "rule": asdict(rule),
        "n": n,
        "n_without_confidence": int(np.isnan(answers.confidence).sum()),
        "answer_all": everything,
        "by_threshold": [judged(answers.sheet(rule, t), answers.answered(t)) for t in shown_thresholds(answers)],
        "in_sample": None,
        "cross_fitted": None,
    }
    chosen = answers.best(rule)
    if chosen is None:
        return out
    in_sample = judged(answers.sheet(rule, chosen), answers.answered(chosen))
    out["in_sample"] = {**in_sample, "gain": in_sample["points"] - everything["points"]}
    first, second = halves(n, clusters, seed=seed)
    policy = np.zeros(n, dtype=float)
    rows = []
    answered = np.zeros(n, dtype=bool)
    for fit, report in ((first, second), (second, first)):
        t = answers.subset(fit).best(rule)  # None where this half has no confidence: answer all
        policy[report] = answers.subset(report).item_points(rule, t)
        answered[report] = answers.subset(report).answered(t)
        rows.append(
            {
                "chosen_on": int(fit.sum()),
                "threshold": t,
                "reported_on": int(report.sum()),
                "points": float(policy[report].sum()),
            }
        )
    right = int((answered & answers.correct).sum())
    wrong = int((answered & ~answers.correct).sum())
    prohibited = int((answered & answers.prohibited).sum())
    # counted from the sheet as answering everything's points are, so an equal sheet gains exactly 0
    points = rule.points(right, wrong, n - right - wrong)
    baseline = answers.item_points(rule, None)
    interval = bootstrap_difference(policy.tolist(), baseline.tolist(), clusters=clusters)
    scale = float(n)  # the bootstrap's mean difference per item, as a total over the n items
    out["cross_fitted"] = {
        **({} if verdict is None else {"verdict": verdict(answered)}),
        "seed": seed,
        "halves": rows,
        "right": right,
        "wrong": wrong,
        "blank": n - right - wrong,
        "prohibited": prohibited,
        "points": points,
        "passed": rule.passed(points, prohibited),
        "gain": points - everything["points"],
        "ci": None if interval["ci"] is None else [v * scale for v in interval["ci"]],
        "ci_method": interval["ci_method"],
        "p": interval["p"],
        "note": interval["note"],
    }
    return out

"""A group of records' confidence numbers, computed here once for every output that shows them
(the audit's `confidence` section, its page, `--json` and the Python API): the calibration
metrics (`calibration.calibration`) over the records that carry a confidence, and the exam's
score answering only above a confidence threshold (`abstention.abstention`) under the
benchmark's rule for blanks (`Benchmark.blank_rule`).

A record's confidence is its `confidence` field, a probability in [0, 1], and how it was read
is `confidence_method` (`stated`: the model's own number in its JSON answer; `logprobs`: the
probability mass of the chosen label among the option labels). A record without one (no
confidence asked, an unreadable one, a failed request) is left out of the calibration metrics,
and always answered in the abstention (nothing ranks it); both say how many.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from . import calibration
from .abstention import PLAIN, Answers, abstention
from .metrics import counted

if TYPE_CHECKING:
    from .benchmark import Benchmark
    from .items import Item

CONFIDENCE = "confidence"
METHOD = "confidence_method"


def has_confidence(records: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any record carries a confidence (the audit's section is shown only then)."""
    return any(r.get(CONFIDENCE) is not None for r in records)


def methods(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """{how the confidence was read: records}, over the records that carry one."""
    return dict(sorted(Counter(str(r.get(METHOD)) for r in records if r.get(CONFIDENCE) is not None).items()))


def calibration_of(
    records: Sequence[Mapping[str, Any]],
    benchmark: Benchmark | None = None,
    clusters: Mapping[str, str] | None = None,
    *,
    resamples: int = calibration.RESAMPLES,
    seed: int = 0,
) -> dict[str, Any] | None:
    """`calibration.calibration` of the counted records that carry a confidence, with {"n_records"
    (every counted record), "n_without_confidence", "methods"} beside; None where none does.
    `clusters` ({item id: cluster}) resamples whole clusters."""
    kept, _ = counted(records, benchmark)
    rows = [r for r in kept if r.get(CONFIDENCE) is not None]
    if not rows:
        return None
    ids = [clusters.get(r["item_id"], r["item_id"]) for r in rows] if clusters is not None else None
    numbers = calibration.calibration(
        [float(r["confidence"] or 0.0) for r in rows],
        [bool(r.get("correct")) for r in rows],
        clusters=ids,
        resamples=resamples,
        seed=seed,
    )
    return {
        "n_records": len(kept),
        "n_without_confidence": len(kept) - len(rows),
        "methods": methods(rows),
        **numbers,
    }


def abstention_of(
    records: Sequence[Mapping[str, Any]],
    benchmark: Benchmark | None = None,
    clusters: Mapping[str, str] | None = None,
    *,
    items: Sequence[Item] | None = None,
    seed: int = 0,
    part: bool = False,
) -> dict[str, Any] | None:
    """`abstention.abstention` of the counted records (one condition's: one answer per item)
    under the benchmark's rule for blanks (`PLAIN` without a benchmark); None where no record
    carries a confidence. Given the `items`, every sheet also carries the benchmark's own pass
    lines on it (`verdict`, `pass_lines`'s rows): `Benchmark.pass_report` of the records with the answers
    left blank made blanks (`blanked`), so an exam's verdict under any threshold is the one its
    `report --pass` gives.

    `part`: the records are one part of the exam (a stratum's level): the points are that
    part's, under the rule's points for right, wrong and blank, with no verdict (`passed` null,
    no pass lines): a pass mark and a limit on prohibited choices are the whole exam's."""
    kept, _ = counted(records, benchmark)
    if not has_confidence(kept):
        return None
    rule = benchmark.blank_rule() if benchmark is not None else PLAIN
    if part:
        rule = replace(rule, pass_mark=None, prohibited_limit=None)
    ids = [clusters.get(r["item_id"], r["item_id"]) for r in kept] if clusters is not None else None
    verdict = None
    if benchmark is not None and items is not None and not part:
        chosen = list(items)

        def verdict(answered: np.ndarray) -> list[dict[str, Any]] | None:
            return pass_lines(
                benchmark, chosen, [dict(r) if a else blanked(r) for r, a in zip(kept, answered, strict=True)]
            )

    answers = Answers.from_records(kept)
    if benchmark is not None and items is not None:  # the benchmark marks its prohibited choices
        by_id = {it.id: it for it in items}
        marked = [r["item_id"] in by_id and benchmark.prohibited_choice(by_id[r["item_id"]], r) for r in kept]
        answers = Answers(answers.confidence, answers.correct, answers.blank, np.array(marked, dtype=bool))
    return abstention(answers, rule, clusters=ids, seed=seed, verdict=verdict)


ABSTAINED = "abstained"  # the rule of a record left blank below the confidence threshold


def blanked(record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` as a blank answer: nothing predicted, not correct, a declined answer (`refusal`)
    whose rule says it was left blank under the threshold."""
    return {**record, "predicted": None, "correct": False, "status": "refusal", "rule": ABSTAINED}


def pass_lines(benchmark: Benchmark, items: list[Item], records: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The benchmark's pass lines on `records` (`Benchmark.pass_report`) as rows {"exam",
    "criterion", "status", "points", "required", "margin"}; None where it has none."""
    lines = benchmark.pass_report(items, records)
    if lines is None:
        return None
    keep = ("exam", "criterion", "status", "points", "required", "margin")
    return [{k: getattr(row, k) for k in keep} for row in lines.rows]

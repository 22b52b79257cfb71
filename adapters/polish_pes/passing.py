"""PES pass lines per configuration: the written test is passed at 60 % of the questions, and
since 2022 a result of at least 70 % exempts the candidate from the oral part.

The exam of a row is one set (VQA, QA) and configuration of the run's model; its two criteria
are the pass line and the oral exemption, each with the accuracy reached (a share), the margin
in percentage points (negative: below) and whether it clears the line. The 70 % line is judged
on the items from 2022 on only; it is not evaluable without any.
"""

from __future__ import annotations

from medvqa import PassLines, PassVerdict
from medvqa.metrics import cell

PASS_LINE = 0.60
ORAL_EXEMPTION_LINE = 0.70
ORAL_EXEMPTION_SINCE = 2022
CONDITIONS = ("C", "C+Q", "C+I", "C+Q+I")
SETS = {"vqa": "VQA", "qa": "QA"}


def _verdict(exam: str, criterion: str, records: list[dict], line: float, what: str) -> PassVerdict:
    if not records:
        return PassVerdict(
            exam=exam, criterion=criterion, status="not evaluable", required=line, unit="share", note=f"no items {what}"
        )
    share = cell(records).accuracy
    return PassVerdict(
        exam=exam,
        criterion=criterion,
        status="pass" if share >= line else "fail",
        points=share,
        required=line,
        maximum=1.0,
        margin=share - line,
        unit="share",
        note=f"{len(records)} items {what}",
    )


def pass_lines(records: list[dict]) -> PassLines:
    rows = []
    for key, label in SETS.items():
        for cond in CONDITIONS:
            rs = [r for r in records if r.get("set") == key and r.get("condition") == cond]
            if not rs:
                continue
            recent = [r for r in rs if (r.get("year") or 0) >= ORAL_EXEMPTION_SINCE]
            rows += [
                _verdict(f"{label} {cond}", "pass line", rs, PASS_LINE, "in all sessions"),
                _verdict(
                    f"{label} {cond}",
                    "oral exemption",
                    recent,
                    ORAL_EXEMPTION_LINE,
                    f"in sessions since {ORAL_EXEMPTION_SINCE}",
                ),
            ]
    note = (
        f"PES pass line {PASS_LINE:.0%}; oral exemption at {ORAL_EXEMPTION_LINE:.0%} "
        f"(sessions since {ORAL_EXEMPTION_SINCE})"
    )
    return PassLines(rows=rows, notes=[note])

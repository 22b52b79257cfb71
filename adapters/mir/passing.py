"""The MIR's reference line (`medvqa report RUN --pass`, `medvqa compare`).

The MIR ranks candidates; it has no pass mark in the shared data's SOURCE.txt. What it gives is
2026's best official candidate, 188 of 200 right: one row per year and answer sheet
(`exam.sheets`) compares the model's right answers on the official 200 with it, `pass` meaning
the line was reached, with the margin (right − 188) and the net score in the note. A year
without a published best candidate (2024) is `not evaluable`.
"""

from __future__ import annotations

from medvqa import PassLines, PassVerdict

from . import exam, rules

CRITERION = "best candidate (reference)"


def reference_lines(items: list, records: list[dict]) -> PassLines:
    excluded = [{"item_id": it.id, "year": it.meta.get("year")} for it in items if it.excluded]
    sheets, notes = exam.sheets(records, excluded)
    rows = []
    for s in sheets:
        official, best = s.official_sheet, rules.BEST_CANDIDATE.get(s.year)
        name = f"MIR {s.year} ({s.name})"
        note = (
            f"{official.right} right, {official.wrong} wrong, {official.blank} blank of the official "
            f"{official.n}; net {official.net:.2f}"
        )
        if best is None:
            rows.append(
                PassVerdict(
                    exam=name,
                    criterion=CRITERION,
                    status="not evaluable",
                    points=official.right,
                    maximum=official.n,
                    note=f"no best candidate published for {s.year}; {note}",
                )
            )
            continue
        rows.append(
            PassVerdict(
                exam=name,
                criterion=CRITERION,
                status="pass" if official.right >= best else "fail",
                points=official.right,
                required=best,
                maximum=rules.SCORED,
                margin=official.right - best,
                note=note,
            )
        )
    return PassLines(
        rows=rows,
        title="MIR reference line: the best official candidate",
        notes=[
            "The MIR has no pass mark here: the line is the year's best official candidate (2026: "
            "188 of 200 right); pass = reached it. Counted on the official 200 (annulled questions "
            "replaced by the reserves, in order).",
            *notes,
        ],
    )

"""`medvqa report RUN --table mir`: the MIR scored as the exam scores it, and by stratum.

- `exam`: per year and answer sheet (`exam.sheets`: with images, without images): on every valid
  question (annulled ones in no denominator) right, wrong, blank and accuracy with its 95 % Wilson
  interval, and the repository's 200-question equivalent (right × 200/valid); on the official
  200 (`rules.official_numbers`: each annulled question replaced by the next reserve) right,
  wrong, blank and the net score (right − wrong/3); the year's best official candidate (188 of
  200 in 2026) as a reference line and the margin to it (right on the official 200 − 188).
- `by_block`, `by_difficulty`, `by_impugnable`, `by_subject` (2026, the academy's table),
  `by_specialty` (2024), `by_image`: accuracy per condition and level (the metrics layer's
  `table`: every question once per condition, under `unknown` where its source gives no value;
  a question under several subjects once under each).

Pure functions of the records and the manifest's excluded (annulled) items.
"""

from __future__ import annotations

import pandas as pd

from medvqa.metrics import is_derived, table
from medvqa.tables import Table, Tables

from . import exam, rules

EXAM_COLUMNS = [
    "year",
    "sheet",
    "valid",
    "right",
    "wrong",
    "blank",
    "accuracy",
    "ci_low",
    "ci_high",
    "scaled_to_200",
    "official",
    "official_right",
    "official_wrong",
    "official_blank",
    "net_score",
    "best_candidate",
    "margin_to_best",
]
STRATA = (
    ("by_block", "block", "the academy's block (IMAGENES, RESERVA, a subject's code)"),
    ("by_difficulty", "difficulty", "the academy's difficulty, 1 (easy) to 5"),
    ("by_impugnable", "impugnable", "whether the academy expected the question to be challenged"),
    ("by_subject", "subjects", "the academy's subjects (a question counts once under each)"),
    ("by_specialty", "specialty", "the 2024 workbook's specialty"),
    ("by_image", "image", "questions 1-25 go with an image"),
)
UNKNOWN, NONE = "unknown", "none"  # the metrics layer's levels of a record without a value, with an empty list
WITHOUT = (
    "the academy's table (2026) leaves some cells empty and has no other year; "
    "the specialty is the 2024 workbook's alone"
)


def exam_rows(sheets: list[exam.ExamSheet]) -> list[dict]:
    rows = []
    for s in sheets:
        valid, official, acc = s.valid, s.official_sheet, s.accuracy
        best = rules.BEST_CANDIDATE.get(s.year)
        rows.append(
            {
                "year": s.year,
                "sheet": s.name,
                "valid": valid.n,
                "right": valid.right,
                "wrong": valid.wrong,
                "blank": valid.blank,
                "accuracy": acc.accuracy,
                "ci_low": acc.ci[0] if acc.ci else None,
                "ci_high": acc.ci[1] if acc.ci else None,
                "scaled_to_200": _round(rules.scaled_to_200(valid.right, valid.n)),
                "official": official.n,
                "official_right": official.right,
                "official_wrong": official.wrong,
                "official_blank": official.blank,
                "net_score": _round(official.net),
                "best_candidate": best,
                "margin_to_best": official.right - best if best is not None else None,
            }
        )
    return rows


def tables(records: list[dict], manifest: dict, benchmark) -> Tables:
    excluded = manifest.get("excluded") or []
    base = [r for r in records if not is_derived(r["condition"])]  # forced guesses are the audit's
    sheets, notes = exam.sheets(base, excluded)
    annulled = "; ".join(
        f"{year}: {', '.join(x['item_id'].rsplit('-', 1)[1] for x in excluded if x.get('year') == year)}"
        for year in sorted({x.get("year") for x in excluded})
    )
    exam_notes = [
        "Net score = right − wrong/3 on the official 200; a blank (a refusal, an unreadable reply, a failed "
        "or missing request) scores 0.",
        "The official 200: questions 1-200 without the annulled ones, each replaced by the next reserve "
        "question (201-210) in order.",
        f"Annulled questions (in no denominator): {annulled or 'none'}.",
        "accuracy: right of every valid question (the repository's figure); scaled_to_200: right × 200/valid.",
        "best_candidate: the year's best official candidate's right answers of 200 (2026: 188), a reference "
        "line; margin_to_best = official_right − best_candidate.",
    ]
    # without a sheet the table is empty: why comes first
    exam_notes = [*notes, *exam_notes] if not sheets else [*exam_notes, *notes]
    out = [
        Table(
            "exam",
            "MIR per year and answer sheet: valid questions, official 200, net score",
            pd.DataFrame(exam_rows(sheets), columns=EXAM_COLUMNS),
            exam_notes,
        )
    ]
    for name, field, what in STRATA:
        # every question counts in every table: one its source gives no value is under `unknown`
        if any(r.get(field) not in (None, [], "") for r in base):
            frame = table(base, [field], benchmark, excluded)
            notes = [f"{field}: {what}."]
            if frame[field].isin((UNKNOWN, NONE)).any():
                notes.append(
                    f"`{UNKNOWN}` (`{NONE}` for subjects): questions whose source gives no {field} ({WITHOUT})."
                )
            out.append(Table(name, f"Accuracy by {field}", frame, notes))
    return Tables(out)


def _round(value: float | None) -> float | None:
    """Points to two decimals, as the repository prints them (177.33)."""
    return None if value is None else round(value, 2)

"""Pass lines as typed rows: one `PassVerdict` per exam × criterion, held by `PassLines`, which
every benchmark's `pass_report` returns and `report --pass` and `compare` render through the one
table renderer (`core/render.py`).

A row's `points`, `required`, `maximum` and `margin` are in the criterion's `unit`: exam
points (or, for a limit such as `<=3` 禁忌肢 answers, a count), or a `share` of the questions
(fractions, shown as percentages, margins as percentage points). An exam with several criteria
has one more row, criterion `overall`, holding the exam's verdict, its smallest margin, and the
items the exam's owner scored differently (`treatments`).

A row may say which records it judged (`scope`: record fields and their values, e.g.
`{"country": "japan", "condition": "C+Q+I"}`), so that a figure drawn by stratum can put each
line in its panel (`medvqa compare --figure`).

An exam's verdict is `pass` only when every criterion was decided and met. When every criterion
that could be decided is met but some could not be (their own rows say `not evaluable` and
why), it is `pass on the evaluable criteria`, and `not_evaluated` names those criteria: a
reader, or a script testing `status == "pass"`, never takes it for a full pass. A failed
criterion is decisive: `fail` whatever could not be evaluated.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from .render import Table, Tables, percent, points

if TYPE_CHECKING:
    import pandas as pd

PASS, FAIL, NOT_EVALUABLE = "pass", "fail", "not evaluable"
PASS_ON_EVALUABLE = "pass on the evaluable criteria"
OVERALL = "overall"
COLUMNS = ["exam", "criterion", "status", "points", "required", "maximum", "margin", "note", "treatments"]


class PassVerdict(BaseModel):
    """One exam × criterion: the points reached, the line required, the maximum, the verdict
    and the margin to the line (negative: below it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    exam: str  # "Physician 2022", "VQA C+Q+I"
    criterion: str  # the criterion's name ("hisshu", "total", "kinki"), or "overall" for the exam's verdict
    status: Literal["pass", "fail", "not evaluable", "pass on the evaluable criteria"]
    points: int | float | None = None
    required: int | float | str | None = None  # the line, or a stated limit ("<=3")
    maximum: int | float | None = None
    margin: int | float | None = None
    unit: Literal["points", "share"] = "points"
    treatments: tuple[str, ...] = ()  # "item id: how it was scored"
    note: str = ""
    not_evaluated: tuple[str, ...] = ()  # an exam's row: the criteria its verdict could not weigh
    scope: dict[str, str] = {}  # the records judged, by field: {"country": "japan", "condition": "C+Q+I"}

    def shown(self) -> dict[str, str]:
        """The row as a person reads it: shares as percentages, margins signed."""

        def value(v: int | float | str | None, signed: bool = False) -> str:
            if v is None or isinstance(v, str):
                return "–" if v is None else v
            if self.unit == "share":
                return f"{points(v)} pp" if signed else f"{percent(v)} %"
            if isinstance(v, int):
                return f"{v:+d}" if signed else str(v)
            return f"{v:+g}" if signed else f"{v:g}"

        return {
            "exam": self.exam,
            "criterion": self.criterion,
            "status": self.status,
            "points": value(self.points),
            "required": value(self.required),
            "maximum": value(self.maximum),
            "margin": value(self.margin, signed=True),
            "note": self.note,
            "treatments": "; ".join(self.treatments),
        }


class PassLines(BaseModel):
    """A benchmark's pass report (`Benchmark.pass_report`): verdict rows, the convention they
    were judged under, and notes (e.g. how that convention departs from the official one)."""

    rows: list[PassVerdict]
    notes: list[str] = []
    convention: str | None = None
    title: str = "Pass lines"
    reading: str | None = None  # the reading of the records judged (set by the command that reads them)

    def frame(self, shown: bool = False) -> pd.DataFrame:
        """One row per verdict: raw values (lists of treatments joined), or `shown` as text."""
        import pandas as pd

        rows = [
            r.shown() if shown else {**r.model_dump(exclude={"unit", "scope"}), "treatments": "; ".join(r.treatments)}
            for r in self.rows
        ]
        return pd.DataFrame(rows, columns=COLUMNS)

    def as_json(self) -> dict:
        """What `medvqa report RUN --pass --json` prints: {convention, notes, rows, reading}."""
        return self.model_dump(mode="json", exclude={"title"})

    def render(self, fmt: str) -> str:
        """The rows as one table in `text`, `md`, `csv`, `latex`, `html` or `json`."""
        if fmt == "json":
            return json.dumps(self.as_json(), ensure_ascii=False, indent=1, allow_nan=False) + "\n"
        frame = self.frame(shown=fmt != "csv")
        notes = ([f"convention: {self.convention}"] if self.convention else []) + self.notes
        return Tables([Table("pass_lines", self.title, frame, notes)], reading=self.reading).render(fmt)

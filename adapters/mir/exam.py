"""A run's answer sheets: per year, the one answer per question that the exam's rules score.

A run holds records per (question, condition); a candidate answers each question once. Two
sheets are read from a run, each only where it covers every valid question of the year:

- `with images` (con imágenes): the C+Q+I answer of each image question, the C+Q answer of the
  others: the exam as printed.
- `without images` (sin imágenes): the C+Q answer of every question (GPT-4 in 2024 was asked so).

The year's valid questions are its 210 (SOURCE.txt: 200 scored and 10 reserve) less the
annulled ones (the manifest's excluded items): a sheet that covers fewer (a run of the image
questions only, a selection) is not an exam, and the tables say why it is not shown. The
official 200 are the sheet's questions whose item is `official` (`rules.official_numbers`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from medvqa.metrics import Cell, cell, is_derived

from . import rules

QUESTIONS = 210  # 200 scored and 10 reserve questions a year
WITH_IMAGES, WITHOUT_IMAGES = "with images", "without images"


@dataclass(frozen=True)
class ExamSheet:
    year: int
    name: str  # WITH_IMAGES or WITHOUT_IMAGES
    records: list[dict]  # one per valid question, in question order
    annulled: tuple[str, ...]  # the year's annulled questions (item ids): in no denominator

    @property
    def valid(self) -> rules.Sheet:
        return rules.sheet(self.records)

    @property
    def official(self) -> list[dict]:
        return [r for r in self.records if r.get("official")]

    @property
    def official_sheet(self) -> rules.Sheet:
        return rules.sheet(self.official)

    @property
    def accuracy(self) -> Cell:
        """Accuracy on every valid question (the repository's figure: 203 in 2026)."""
        return cell(self.records)


def _pick(records: list[dict], name: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for r in records:
        if name == WITHOUT_IMAGES and r["condition"] == "C+Q":
            out[r["item_id"]] = r
        elif name == WITH_IMAGES:
            if r["condition"] == "C+Q+I" or (r["condition"] == "C+Q" and not r.get("image")):
                out[r["item_id"]] = r
    return out


def sheets(records: Iterable[dict], excluded: Iterable[dict] = ()) -> tuple[list[ExamSheet], list[str]]:
    """The run's complete sheets per year, and a note for each sheet left out (incomplete)."""
    records = [r for r in records if not is_derived(r["condition"])]
    excluded = list(excluded)
    out, notes = [], []
    for year in sorted({r.get("year") for r in records} - {None}):
        annulled = tuple(x["item_id"] for x in excluded if x.get("year") == year)
        valid = QUESTIONS - len(annulled)
        of_year = [r for r in records if r.get("year") == year]
        partial, complete = [], False
        for name in (WITH_IMAGES, WITHOUT_IMAGES):
            picked = _pick(of_year, name)
            if not picked:
                continue
            if len(picked) != valid:
                partial.append(
                    f"MIR {year} {name}: answers to {len(picked)} of the {valid} valid questions; "
                    "not an exam sheet, not shown"
                )
                continue
            complete = True
            ordered = sorted(picked.values(), key=lambda r: int(r.get("number") or 0))
            out.append(ExamSheet(year, name, ordered, annulled))
        notes += [] if complete else partial  # a year with a sheet needs no word on its partial one
    return out, notes

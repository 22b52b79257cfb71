"""The MIR benchmark: Spain's residency entrance exam, 2024 and 2026 (210 questions each, four
options numbered 1-4, questions 1-25 on an image), scored as the exam scores it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from medvqa import Benchmark, BlankRule, Condition, Item, Template, order_patterns

from . import loader, rules, templates


class MIR(Benchmark):
    name = "mir"
    title = "MIR: Spain's residency entrance exam (Ministerio de Sanidad), 2024 and 2026"
    language = "es"
    # option phrases that refer to the others keep an item in its order (`--variants order`)
    order_bound_patterns = order_patterns("es")
    strata = (
        "year",
        "number",
        "part",
        "official",
        "image",
        "specialty",
        "block",
        "difficulty",
        "subjects",
        "impugnable",
    )
    default_strata = ("year",)
    stratum_aliases = {"subject": "subjects", "especialidad": "specialty", "bloque": "block"}
    selection_keywords = {"years": "year"}  # `--years 2026`
    default_conditions = (Condition.CQ, Condition.CQI)
    forced_guess_instruction = templates.FORCED_GUESS
    confidence_instruction = templates.CONFIDENCE_INSTRUCTION
    # the repository scores the option a model names, as written: the rules alone
    reading = "strict"
    validation_rules = loader.RULES

    def load(
        self, path: Path | None = None, split: str | None = None, *, select: Mapping | None = None, **keywords: Any
    ) -> list[Item]:
        """Both years' items from the folder `path` (`../shared/data/mir`: 2024/ and 2026/),
        annulled questions excluded; `years=` selects by year."""
        self.checked_split(split)
        wanted = self.keyword_selection(select, **keywords)
        if path is None:
            raise ValueError(
                "mir needs --data PATH: a folder holding 2024/MIR24GPT_final.xlsx and/or "
                "2026/MIR26.xlsx (see docs/benchmarks/mir.md)"
            )
        asked = {str(y) for y in wanted.get("year") or ()}  # read only the workbooks of the years asked
        years = tuple(y for y in loader.YEARS if str(y) in asked) or loader.YEARS
        return self.select_items(loader.load(Path(path), years).items, wanted)

    def template(self, item: Item) -> Template:
        return templates.TEMPLATE

    def validate(self, path: Path) -> list:
        """Each quirk of the published workbooks, one finding per item (all warnings)."""
        return loader.load(Path(path)).findings

    def report_tables(self, records: list[dict], manifest: dict):
        """Per year: right, wrong, blank and net on the official 200, accuracy on every valid
        item, the best candidate as a reference line; accuracy by block, specialty and subject."""
        from .tables import tables

        return tables(records, manifest, self)

    def blank_rule(self) -> BlankRule:
        """The net score (`rules.net_score`): +1 right, −1/3 wrong, 0 blank (the +3 / −1 / 0 of
        the answer sheet, divided by 3). The MIR has no pass mark: the reference line counts
        right answers, which leaving blanks cannot raise."""
        return BlankRule(
            name="MIR net score",
            right=1.0,
            wrong=-rules.WRONG_PENALTY,
            blank=0.0,
            source="SOURCE.txt, the exam's rules: each wrong answer subtracts one third of a right one; "
            "a blank scores 0",
        )

    def pass_report(self, items: list[Item], records: list[dict]):
        """The MIR has no pass mark: the reference line is 2026's best official candidate."""
        from .passing import reference_lines

        return reference_lines(items, records)

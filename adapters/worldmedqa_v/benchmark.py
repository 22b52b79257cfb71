"""The WorldMedQA-V benchmark: four countries' exam questions with one image each, in the local
language (`--language local`, the default) and in English (`--language en`); `--select
country=japan` keeps one country."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from medvqa import AnswerConventions, Benchmark, Finding, Item, Template, order_patterns

from .matching import VLMEVALKIT, VLMEVALKIT_EXACT, exact_score, vlmevalkit_score

# One template for both languages, so that a pair of runs differs in the item's language only;
# its words are VLMEvalKit's multiple-choice prompt, with medvqa's JSON answer format.
TEMPLATE = Template(
    name="worldmedqa-v",
    question_header="Question: ",
    options_header="Options:",
    option_line="{label}. {text}",
    instruction=(
        "Please select the correct answer from the options above. Answer with the option label only, "
        'as JSON: {{"answer": ["<label>"]}}. Valid labels: {labels}.'
    ),
)
# A unit with no number before it: the Japanese stems lost some numbers ("か月の男児", "体重 kg").
_LOST_NUMBER = re.compile(r"(?:^|[^0-9０-９.\s])\s*(?:か月|kg\b)")


class WorldMedQAV(Benchmark):
    name = "worldmedqa_v"
    title = "WorldMedQA-V: exam questions with images from Brazil, Israel, Japan and Spain, local and English"
    language = "local"
    # option phrases that refer to the others keep an item in its order (`--variants order`)
    order_bound_patterns = order_patterns("pt", "he", "ja", "es", "en")
    languages = ("local", "en")  # "local": each country's own (pt, he, ja, es); the records hold the code
    strata = ("country",)
    default_strata = ("country",)
    conventions = (VLMEVALKIT, VLMEVALKIT_EXACT)
    # The authors' protocol (VLMEvalKit; shared data worldmedqa-v-japan/SOURCE.txt: the published
    # `*_gpt-4o-mini_result.xlsx` and `_acc.csv`) reads a reply by exact matching, then takes an
    # extractor model's option where matching fails: the assisted reading.
    reading = "assisted"
    pass_on_whole_exams = False  # a passing threshold per country of the records (passing.py), no whole exam
    validation_rules = {
        "lost-number": "a stem with a unit but not its number, as published (a warning)",
        "repeated-index": "an index that holds several questions, each kept as an item (a warning)",
    }

    def load(
        self,
        path: Path | None = None,
        split: str | None = None,
        *,
        select: Mapping | None = None,
        sheet: str | None = None,
        **keywords: Any,
    ) -> list[Item]:
        """The items of WorldMedQA-V's tables at `path` (the Hub's when None), or of one VLMEvalKit
        table that carries them (`path` a file, read at `sheet` for a workbook; its country from
        its name, else from `select`'s one country), in the benchmark's language."""
        from . import hub, loader

        self.checked_split(split)
        wanted = self.keyword_selection(select, **keywords)  # it declares none: any keyword is an error
        root = Path(path) if path is not None else hub.download()
        countries = [str(c) for c in (select or {}).get("country") or []] or None
        return self.select_items(loader.load(root, self.active_language, countries, sheet=sheet), wanted)

    def template(self, item: Item) -> Template:
        return TEMPLATE

    def answer_conventions(self) -> AnswerConventions:
        return AnswerConventions(
            final_score=exact_score if self.active_convention == VLMEVALKIT_EXACT else vlmevalkit_score
        )

    def report_tables(self, records: list[dict], manifest: dict):
        from .tables import tables

        return tables(records, manifest, self)

    def pass_report(self, items: list[Item], records: list[dict]):
        """Each country's passing threshold as the paper's Figure 2 draws it, per country,
        language and condition (`passing.py`)."""
        from .passing import pass_lines

        return pass_lines(records, self)

    def validate(self, path: Path) -> list:
        """Stems that lost a number, and indices that hold several questions (a warning each): the
        published tables' own quirks. `path` is a folder of WorldMedQA-V's tables, one VLMEvalKit
        table, or a folder of those (the first table of each country and language: a folder import
        checks that the others hold the same items)."""
        from . import loader

        path = Path(path)
        if path.is_dir() and not any(loader.TABLE.fullmatch(f.name) for f in path.rglob("*")):
            from .sources import tables_under

            first = {}
            for source in tables_under(path)[0]:
                first.setdefault(source.group, source.file)
            found = [(f, self.with_language(language).load(f)) for (_, language), f in sorted(first.items())]
        else:
            found = [(path, self.load(path))]
        findings = []
        for file, items in found:
            findings += [
                Finding(
                    file=str(file),
                    section=None,
                    number=it.id,
                    rule="lost-number",
                    level="warning",
                    message="the stem has a unit without its number, as published",
                )
                for it in items
                if _LOST_NUMBER.search(it.question)
            ]
            findings += repeated_indices(items, str(file))
        return findings


def repeated_indices(items: list[Item], file: str) -> list[Finding]:
    """One warning per index that holds several questions (Israel's 84 in the published tables):
    each question is an item (`israel-84`, `israel-84#2`) and counts, as the published accuracy
    counts it."""
    groups: dict[tuple, list[Item]] = {}
    for it in items:
        groups.setdefault((it.meta["country"], it.meta["index"]), []).append(it)
    return [
        Finding(
            file=file,
            section=None,
            number=f"{country}-{index}",
            rule="repeated-index",
            level="warning",
            message=f"index {index} holds {len(its)} different questions: "
            + ", ".join(f"{it.id} (gold {it.gold.raw})" for it in its)
            + "; each is an item and counts, as in the published accuracy",
        )
        for (country, index), its in groups.items()
        if len(its) > 1
    ]

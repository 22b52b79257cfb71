"""The JMed48k benchmark: Japanese MHLW national exams of eleven professions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from medvqa import Benchmark, Item, Template, order_patterns

from . import hub, loader, templates
from .professions import specialty_key
from .validate import RULES

SAMPLE = Path(__file__).parent / "sample"


def _year(value: Any) -> int:
    if not str(value).strip().isdigit():
        raise ValueError(f"year {value!r} is not a year (e.g. 2025)")
    return int(value)


class JMed48k(Benchmark):
    name = "jmed48k"
    title = "JMed48k: Japanese MHLW national exams of 11 professions (2005-2025)"
    language = "ja"
    # option phrases that refer to the others keep an item in its order (`--variants order`)
    order_bound_patterns = order_patterns("ja")
    splits = ("full", "eval", "sample")
    default_split = "eval"
    strata = (
        "profession",
        "year",
        "section",
        "has_image",
        "dominant_type",
        "image_types",
        "image_as_options",
        "answer_format",
    )
    default_strata = ("profession", "dominant_type")
    stratum_aliases = {"image_type": "dominant_type"}  # `--by image_type`
    # a linked question set shares one case text ("次の文を読み、41、42の問いに答えよ。"); the exam
    # block (profession, year, section) is the coarser level
    cluster_levels = ("case", "block")
    selection_keywords = {"years": "year", "professions": "profession"}  # `--years`, `--professions`
    forced_guess_instruction = templates.FORCED_GUESS
    confidence_instruction = templates.CONFIDENCE_INSTRUCTION
    validation_rules = RULES

    def clusters(self, items: Sequence[Item]) -> dict[str, dict[str, str]]:
        """`block`: the exam block; `case`: the linked question set sharing a case text
        (`medvqa.mhlw.case_clusters`)."""
        from medvqa.mhlw import case_clusters

        blocks = {it.id: f"{it.meta.get('profession')} {it.meta.get('year')} {it.meta.get('section')}" for it in items}
        return case_clusters(items, blocks)

    def load(
        self,
        path: Path | None = None,
        split: str | None = None,
        *,
        select: Mapping[str, Sequence[str]] | None = None,
        **keywords: Sequence[Any] | None,
    ) -> list[Item]:
        """`select` on `profession` (any alias) and `year` chooses release cells before they are
        read; other fields filter the items. `years=` and `professions=` add to them
        (`selection_keywords`)."""
        select = self.keyword_selection(select, **keywords)
        years = [_year(y) for y in select.pop("year", None) or []]
        professions = select.pop("profession", None)
        split = self.checked_split(split)
        if split == "sample":
            path = SAMPLE
        if path is None:  # full / eval without --data: JMed48k-Eval from the Hugging Face Hub
            path = hub.download()
        selected = loader.cells(path)
        if professions:
            specs = {specialty_key(p) for p in professions}
            selected = [c for c in selected if c.specialty in specs]
        if years:
            selected = [c for c in selected if c.year in set(years)]
        elif split == "eval":
            selected = loader.eval_cells(selected)
        return self.select_items(list(loader.iter_items(selected)), select)

    def template(self, item: Item) -> Template:
        return templates.MULTIMODAL if item.has_images else templates.TEXT_ONLY

    def sample_path(self) -> Path:
        return SAMPLE

    def validate(self, path: Path) -> list:
        """Every finding about the release folder at `path` (see `validate.py` for the rules)."""
        from .validate import validate_release

        return validate_release(path)

    def extract(self, **options: Any):
        """MHLW PDFs → a release cell (`medvqa extract jmed48k`, in `commands.py`); see
        `extract/`."""
        from .extract import extract

        return extract(**options)

    def report_tables(self, records: list[dict], manifest: dict):
        """Accuracy by profession for text-only and image items, by image type, and the
        exclusions per profession-year (`medvqa report RUN --table jmed48k`)."""
        from .tables import jmed48k_tables

        return jmed48k_tables(records, manifest.get("excluded") or [])

    def pass_report(self, items: list[Item], records: list[dict]):
        """Pass / fail / not evaluable per profession-year (`medvqa report RUN --pass`)."""
        from medvqa.mhlw import evaluate, pass_lines

        return pass_lines(evaluate(items, records))

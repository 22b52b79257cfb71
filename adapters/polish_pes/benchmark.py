"""The Polish PES VQA benchmark: image-containing PES specialist-exam questions (CEM sessions
2023-2026) in four input configurations, with a text-only QA control set run in C and C+Q."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from medvqa import AnswerConventions, Benchmark, Condition, Item, Template, order_patterns

from . import hub, loader, prompts

SPLITS = {"full": ("vqa", "qa"), "vqa": ("vqa",), "qa": ("qa",)}
HUB_SPLIT = "text-2018-2022"
OTHER_BELOW = 10  # specialties with fewer VQA items are pooled as "Other specialties" in tables
OTHER_BELOW_ENV = "MEDVQA_PES_OTHER_BELOW"

# The user message: the question (in C+Q and C+Q+I), the attached image(s) (in C+I and C+Q+I),
# the options as "A. ..." lines. The instruction is in the system prompt, so nothing follows.
_BODY = dict(
    question_header="",
    options_header="",
    option_line="{label}. {text}",
    instruction="",
    numeric_instruction="",
    extra=(
        ("system_with_question", prompts.SYSTEM_WITH_QUESTION),
        ("system_options_only", prompts.SYSTEM_OPTIONS_ONLY),
    ),
)
TEMPLATE = Template(name="polish_pes-pl", **_BODY)


class PolishPES(Benchmark):
    name = "polish_pes"
    title = "Polish PES VQA: image questions of the Polish Board Certification Examination (2023-2026)"
    language = "pl"
    # option phrases that refer to the others keep an item in its order (`--variants order`)
    order_bound_patterns = order_patterns("pl", "en")
    splits = (*SPLITS, HUB_SPLIT)
    default_split = "full"
    strata = (
        "set",
        "year",
        "quarter",
        "specialty",
        "sheet",
        "image_importance",
        "visual_domain",
        "human_n",
        "human_correct",
    )
    default_strata = ("specialty", "image_importance", "visual_domain")
    stratum_aliases = {"visual_domains": "visual_domain", "domain": "visual_domain"}
    selection_keywords = {"years": "year", "professions": "specialty"}  # `--professions Kardiologia`
    default_conditions = (Condition.C, Condition.CQ, Condition.CI, Condition.CQI)
    forced_guess_instruction = prompts.FORCED_GUESS
    confidence_instruction = prompts.CONFIDENCE_INSTRUCTION
    validation_rules = loader.RULES

    def __init__(self, other_below: int | None = None):
        if other_below is None:
            raw = os.environ.get(OTHER_BELOW_ENV)
            try:
                other_below = int(raw) if raw else OTHER_BELOW
            except ValueError:
                raise ValueError(f"{OTHER_BELOW_ENV}={raw!r}: a whole number of VQA items is expected") from None
        self.other_below = other_below

    def load(
        self,
        path: Path | None = None,
        split: str | None = None,
        *,
        select: Mapping[str, list[str]] | None = None,
        **keywords: Any,
    ) -> list[Item]:
        """Items of `split` (full: VQA then QA; vqa; qa; text-2018-2022: the Hub text set)
        from the folder `path`; `select` keeps items whose strata take one of the listed values
        (`Benchmark.select_items`; `years=` and `professions=` are read as `select` on year and
        specialty)."""
        split = self.checked_split(split)
        wanted = self.keyword_selection(select, **keywords)
        if split == HUB_SPLIT:
            items = hub.text_items(Path(path) if path is not None else hub.download())
        elif path is None:
            raise ValueError(
                "polish_pes needs --data PATH: no copy of the PES VQA set is published; "
                f"lay it out as docs/benchmarks/polish_pes.md describes (or run --split {HUB_SPLIT} "
                f"for the Hub text set {hub.REPO_ID})"
            )
        else:
            items = loader.read_items(Path(path), SPLITS[split])
        return self.select_items(items, wanted)

    def template(self, item: Item) -> Template:
        return TEMPLATE

    def render(self, item: Item, condition: Condition, *, suffix: str | None = None) -> list[dict]:
        """The condition's system prompt, then the question, image(s) and options; the image
        is attached, never announced."""
        system = prompts.SYSTEM_WITH_QUESTION if condition.with_question else prompts.SYSTEM_OPTIONS_ONLY
        return [{"role": "system", "content": system}, *TEMPLATE.render(item, condition, suffix=suffix)]

    def answer_conventions(self) -> AnswerConventions:
        return AnswerConventions(answer_key="response")

    def response_schema(self, item: Item) -> dict:
        return prompts.RESPONSE_SCHEMA

    def validate(self, path: Path) -> list:
        return list(loader.iter_findings(Path(path)))

    def report_tables(self, records: list[dict], manifest: dict):
        """Accuracy per configuration (VQA and QA), by specialty, by image importance, by
        visual domain, the human reference and the exclusions per sheet
        (`medvqa report RUN --table polish_pes`)."""
        from .tables import pes_tables

        return pes_tables(records, manifest.get("excluded") or [], other_below=self.other_below)

    def pass_report(self, items: list[Item], records: list[dict]):
        """The 60 % pass line and the 70 % oral-exemption line per configuration."""
        from .passing import pass_lines

        return pass_lines(records)

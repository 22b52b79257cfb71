"""Three benchmarks from one adapter: KokushiMD-10 and its two public predecessors, IgakuQA and
YakugakuQA, which share its item shape and MHLW's conventions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from medvqa import Benchmark, BlankRule, Item, Template, order_patterns

from . import conventions, templates
from .common import DEFAULT_STRATA, STRATA
from .professions import profession_key
from .validate import RULES


class _MhlwExam(Benchmark):
    language = "ja"
    # option phrases that refer to the others keep an item in its order (`--variants order`)
    order_bound_patterns = order_patterns("ja", "en")
    strata = STRATA
    default_strata = DEFAULT_STRATA
    headline_metric = "accuracy"
    forced_guess_instruction = templates.FORCED_GUESS
    confidence_instruction = templates.CONFIDENCE_INSTRUCTION
    conventions = (conventions.MHLW,)
    selection_keywords = {"years": "year", "professions": "profession"}  # `--years`, `--professions`
    validation_rules = RULES
    # a linked question set shares one case text ("次の文を読み、40、41の問いに答えよ。"); the exam
    # block (round and block letter) is the coarser level
    cluster_levels = ("case", "block")

    def clusters(self, items: Sequence[Item]) -> dict[str, dict[str, str]]:
        """`block`: the exam block; `case`: the linked question set sharing a case text
        (`medvqa.mhlw.case_clusters`)."""
        from medvqa.mhlw import case_clusters

        blocks = {
            it.id: f"{it.meta.get('profession') or ''} {it.meta.get('block') or it.meta.get('section')}".strip()
            for it in items
        }
        return case_clusters(items, blocks)

    def _load(self, path: Path) -> list[Item]:
        raise NotImplementedError

    def _default_path(self) -> Path:
        raise ValueError(f"{self.name} has no download: pass --data PATH (a local copy of the data)")

    def load(
        self, path: Path | None = None, split: str | None = None, *, select: Mapping | None = None, **keywords: Any
    ) -> list[Item]:
        split = self.checked_split(split)
        wanted = self.keyword_selection(select, **keywords)
        items = self._load(Path(path) if path is not None else self._default_path())
        if "profession" in wanted:  # under any alias (English, Japanese, the release's short name): the items' name
            wanted["profession"] = [profession_key(p) for p in wanted["profession"]]
        return self.select_items(items, wanted)

    def template(self, item: Item) -> Template:
        if item.language == "en":
            return templates.MULTIMODAL_EN if item.has_images else templates.TEXT_ONLY_EN
        return templates.MULTIMODAL if item.has_images else templates.TEXT_ONLY

    def answer_conventions(self):
        return conventions.answer_conventions(self.active_convention)

    def validate(self, path: Path) -> list:
        from .validate import validate

        return validate(self, Path(path))

    def counts(self, record) -> bool:
        """Under MHLW's own convention a withdrawn item (採点除外) is in no denominator; the
        authors' scripts (`igakuqa`, `kokushimd10`) count it as they do, with its 0 points."""
        return not (self.active_convention == conventions.MHLW and record.get("withdrawn"))

    def report_tables(self, records: list[dict], manifest: dict):
        from .tables import tables

        return tables(self, records, manifest)

    def pass_report(self, items: list[Item], records: list[dict]):
        from .passing import pass_report

        return pass_report(items, records, self.active_convention)

    def blank_rule(self) -> BlankRule:
        """MHLW scores a blank as a wrong answer (no point, no penalty); what leaving an answer
        blank can save is a 禁忌肢 choice, which the pass lines limit (`pass_report` gives the
        verdict on each sheet). Points here count right answers, not MHLW's weights."""
        return BlankRule(
            name="MHLW (a blank scores as a wrong answer; 禁忌肢 choices limited by the pass lines)",
            source="the pass lines of report --pass (medvqa.mhlw): points per part and a limit on 禁忌肢 choices",
        )

    def prohibited_choice(self, item: Item, record: Mapping[str, Any]) -> bool:
        """The answer contains a 禁忌肢 option where the data marks them (`kinki`)."""
        return bool(set(record.get("predicted") or ()) & set(item.meta.get("kinki") or ()))


class IgakuQA(_MhlwExam):
    name = "igakuqa"
    title = "IgakuQA: Japanese physician licensing exams 2018-2022 (112th-116th)"
    conventions = (conventions.MHLW, conventions.IGAKUQA, conventions.KOKUSHIMD10)
    # the release's `*_translate.jsonl` hold every item's stem and options in English
    languages = ("ja", "en")

    @property
    def forced_guess_instruction(self) -> str:  # in the language the items are asked in
        return templates.FORCED_GUESS_EN if self.active_language == "en" else templates.FORCED_GUESS

    @property
    def confidence_instruction(self) -> str:  # in the language the items are asked in
        return templates.CONFIDENCE_INSTRUCTION_EN if self.active_language == "en" else templates.CONFIDENCE_INSTRUCTION

    def _load(self, path: Path) -> list[Item]:
        from . import igakuqa

        return igakuqa.load(path, language=self.active_language)


class YakugakuQA(_MhlwExam):
    name = "yakugakuqa"
    title = "YakugakuQA: Japanese pharmacist licensing exams"
    # its release ships no translation: Japanese only (as KokushiMD-10)
    languages = ("ja",)

    def _load(self, path: Path) -> list[Item]:
        from . import yakugakuqa

        return yakugakuqa.load(path)


class KokushiMD10(_MhlwExam):
    name = "kokushimd10"
    title = "KokushiMD-10: ten Japanese national healthcare licensing exams 2020-2024"
    languages = ("ja",)  # the release is in Japanese only
    conventions = (conventions.MHLW, conventions.KOKUSHIMD10)

    def _load(self, path: Path) -> list[Item]:
        from . import release

        return release.load(path)

    def _default_path(self) -> Path:
        from . import hub

        return hub.download()

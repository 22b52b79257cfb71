"""The adapter surface: what a benchmark plugin provides.

Subclass `Benchmark`, fill in `name`, `load` and `template`, and register an instance from a
`register_benchmarks` hook. Everything else has a sensible default.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .conditions import Condition
from .items import Item
from .messages import Message, Template

if TYPE_CHECKING:
    from .scoring import Score


@dataclass(frozen=True)
class AnswerConventions:
    """How a benchmark's answers are read and scored (docs/scoring.md). The defaults are
    JMed48k's chain; `Benchmark.answer_conventions` returns the benchmark's own."""

    # the JSON key that holds the answer: {"answer": [...]}; Polish PES uses "response"
    answer_key: str = "answer"
    # a prediction saved in the benchmark's own format (a record with "saved": true, written by
    # an importer, never a live reply) that joins labels with commas or writes them together
    # ("a,c", "a, c", "AC") names a set of labels; live replies are never split this way
    saved_label_sets: bool = False
    # scores items whose gold the chain does not score (free text, boxes): score_open(item,
    # response_text) -> Score; without it such items raise ValueError
    score_open: Callable[[Item, str], Score] | None = None


class Benchmark:
    name: str = ""
    title: str = ""
    language: str = "en"
    splits: tuple[str, ...] = ("full",)
    default_split: str = "full"
    # Item.meta fields copied into every record, so reports and audits can stratify by them.
    strata: tuple[str, ...] = ()
    # Added to a refused image-removed request to ask for a best guess (in the exam's language).
    forced_guess_instruction: str = ("If you are unsure, give your single best guess anyway; "
                                     "an answer is required.")

    def load(self, path: Path | None = None, split: str | None = None, **options: Any) -> list[Item]:
        """Items of `split` from `path` (or the benchmark's default source)."""
        raise NotImplementedError

    def template(self, item: Item) -> Template:
        """The template used for `item`; its hash lands in the run manifest."""
        return Template(name="default")

    def render(self, item: Item, condition: Condition, *, suffix: str | None = None) -> list[Message]:
        return self.template(item).render(item, condition, suffix=suffix)

    def sample_path(self) -> Path | None:
        """A small bundled sample in the benchmark's release layout, if it ships one."""
        return None

    def record_fields(self, item: Item) -> dict[str, Any]:
        """Strata written into each record of `item`."""
        return {name: item.meta.get(name) for name in self.strata}

    def answer_conventions(self) -> AnswerConventions:
        """How this benchmark's answers are read and scored; JMed48k's chain by default."""
        return AnswerConventions()

    def validate(self, path: Path) -> list:
        """`medvqa.core.validation.Finding`s about the data at `path` (`medvqa validate`,
        and `medvqa run` refuses error-level findings); none by default."""
        return []

    # Optional, looked up by `medvqa report`:
    #   report_tables(records, manifest) -> object with .render(fmt)   (--table NAME)
    #   pass_report(items, records) -> object with .as_json(), .text()  (--pass)

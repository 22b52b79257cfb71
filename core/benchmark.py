"""The adapter surface: what a benchmark plugin provides.

Subclass `Benchmark`, fill in `name`, `load` and `template`, and register an instance from a
`register_benchmarks` hook. Everything else a benchmark may offer (official tables, pass lines,
extraction, default strata, its headline metric, answer conventions) is declared here with a
default, so callers never probe for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

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


class Tables(Protocol):
    """A benchmark's official tables (`Benchmark.report_tables`)."""

    def render(self, fmt: str) -> str:
        """The tables as `md`, `csv`, `latex` or `json` text."""


class PassLines(Protocol):
    """Pass / fail per exam against official criteria (`Benchmark.pass_report`)."""

    def as_json(self) -> Any:
        """What `medvqa report RUN --pass --json` prints."""

    def text(self) -> str:
        """The human-readable report."""


class Benchmark:
    """What a benchmark offers, each part declared with a default: a subclass fills in `name`
    and `load` and overrides what it has."""

    name: str = ""
    title: str = ""
    language: str = "en"
    splits: tuple[str, ...] = ("full",)
    default_split: str = "full"
    # Item.meta fields copied into every record, so reports and audits can stratify by them.
    strata: tuple[str, ...] = ()
    # The strata tables and audits show when the user names none (`medvqa audit` without --by).
    default_strata: tuple[str, ...] = ()
    # Other names `--by` accepts for a record field: {"alias": "record field"}.
    stratum_aliases: Mapping[str, str] = MappingProxyType({})
    # The metric that sums up a run of this benchmark (accuracy, micro_f1, points, ...).
    headline_metric: str = "accuracy"
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

    def judge(self) -> Any:
        """The `medvqa.JudgePrompt` with which a judge model scores this benchmark's free-text
        answers (`medvqa judge`, `medvqa run --judge`); None when it has none."""
        return None

    def validate(self, path: Path) -> list:
        """`Finding`s about the data at `path` (`medvqa validate`, and `medvqa run` refuses
        error-level findings); none by default."""
        return []

    def report_tables(self, records: list[dict], manifest: dict) -> Tables | None:
        """The benchmark's official tables (`medvqa report RUN --table NAME`); None when it
        has none."""
        return None

    def pass_report(self, items: list[Item], records: list[dict]) -> PassLines | None:
        """Pass / fail / not evaluable per exam (`medvqa report RUN --pass`); None when the
        benchmark has no pass criteria."""
        return None

    def extract(self, **options: Any) -> Any:
        """Source documents → the benchmark's release layout; the adapter's own command
        (`register_commands`) exposes it. Benchmarks without an extractor raise."""
        raise NotImplementedError(f"benchmark {self.name} has no extractor")

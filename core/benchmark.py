"""The adapter surface: what a benchmark plugin provides.

Subclass `Benchmark`, fill in `name`, `load` and `template`, and register an instance from a
`register_benchmarks` hook. Everything else a benchmark may offer (official tables, pass lines,
extraction, default strata, its headline metric, answer conventions) is declared here with a
default, so callers never probe for it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from . import order
from .abstention import PLAIN, BlankRule
from .conditions import Condition
from .errors import UsageError
from .headline import Headline, accuracy
from .items import Item
from .messages import Message, Template
from .scoring.conventions import AnswerConventions

if TYPE_CHECKING:
    from .passlines import PassLines
    from .render import Tables
    from .scoring.judge import JudgePrompt
    from .validation import Finding


def _values(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]


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
    # Levels of clustered items, finest first (`clusters` names each item's): items that share a
    # case text, or sit in one exam block, are not independent draws. `--cluster LEVEL` (audit,
    # compare) gives cluster-bootstrap intervals beside the item-level ones. None by default.
    cluster_levels: tuple[str, ...] = ()
    # Other names `--by` accepts for a record field: {"alias": "record field"}.
    stratum_aliases: Mapping[str, str] = MappingProxyType({})
    # Keywords `load` takes as shorthands for `select`: {"keyword": "item field"}. Each one is also
    # a `medvqa run` option: {"subjects": "subject"} makes `load(subjects=["anatomy"])` and
    # `--subjects anatomy` mean `select={"subject": ["anatomy"]}` (`keyword_selection`). Core
    # declares no keyword of its own: an adapter names its exam's.
    selection_keywords: Mapping[str, str] = MappingProxyType({})
    # What `medvqa run` asks for when the user names no --conditions.
    default_conditions: tuple[Condition, ...] = (Condition.CQ, Condition.CQI)
    # The metric that sums up a run of this benchmark (accuracy, micro_f1, points, ...).
    headline_metric: str = "accuracy"
    # The reading its protocol scores with (docs/scoring.md): "strict" (the rules alone) or
    # "assisted" (an extractor's answer where the rules cannot read the reply, as VLMEvalKit
    # does). Every output's headline uses it unless `--reading` says otherwise; the other reading
    # stands beside it.
    reading: str = "strict"
    # Added to a refused image-removed request to ask for a best guess (in the exam's language).
    forced_guess_instruction: str = "If you are unsure, give your single best guess anyway; an answer is required."
    # Added after the answer instruction under `--variants confidence` (in the exam's language): the
    # JSON answer then carries `confidence`, 0-100, which the answer reader records.
    confidence_instruction: str = (
        "In the same JSON object, also give your confidence that your answer is right, as a number from 0 "
        'to 100 under "confidence" (for example "confidence": 80).'
    )
    # The names of the scoring conventions the benchmark offers, its default first (`--convention`).
    conventions: tuple[str, ...] = ()
    # The convention this object scores under (`with_convention`); None is the default one.
    convention: str | None = None
    # The languages the benchmark's items exist in (`medvqa run --language CODE`), the exam's own
    # first; item ids are the same in every language, so runs in two languages pair item by item.
    # Empty: the items exist in `language` only.
    languages: tuple[str, ...] = ()
    # The language this object loads and renders (`with_language`); None is the first one offered.
    selected_language: str | None = None
    # The rules `validate` checks, each with what it checks in a few words: {"rule": "..."}.
    # `medvqa validate` prints one line per rule with its count of findings, 0 included, so the
    # user sees what was checked; a finding under a rule not listed here is counted all the same.
    validation_rules: Mapping[str, str] = MappingProxyType({})
    # Whether `pass_report` judges whole exams (True: it is given the run's data without its
    # selection, reloaded, so an exam the run asked only part of is "not evaluable"); False: its
    # verdicts judge the records given (a line per stratum level), and it is given the run's items.
    pass_on_whole_exams: bool = True
    # Phrases of an option that ties the options to their order (`--variants order` keeps such an
    # item in its order): {regular expression, searched case-insensitively in each option's text:
    # why}. `order.order_patterns("ja")` gives the common ones of a language; none by default.
    order_bound_patterns: Mapping[str, str] = MappingProxyType({})

    @property
    def offered_languages(self) -> tuple[str, ...]:
        """The languages `--language` accepts: `languages`, else `language` alone."""
        return tuple(self.languages) or (self.language,)

    @property
    def active_language(self) -> str:
        """The language in force: the one chosen, else the first one offered."""
        return self.selected_language or self.offered_languages[0]

    def with_language(self, code: str | None) -> Benchmark:
        """This benchmark loading its items in the language `code` (a copy; None keeps this one).
        `load` and `template` consult `self.active_language`; a code the benchmark does not offer
        is a ValueError naming those it does."""
        if code is None or code == self.active_language:
            return self
        if code not in self.offered_languages:
            raise ValueError(
                f"unknown language {code!r} for {self.name}; it offers: {', '.join(self.offered_languages)}"
            )
        chosen = copy.copy(self)
        chosen.selected_language = code
        return chosen

    @property
    def active_convention(self) -> str | None:
        """The convention in force: the one chosen, else the benchmark's default (None when it
        offers none)."""
        return self.convention or (self.conventions[0] if self.conventions else None)

    def with_convention(self, name: str | None) -> Benchmark:
        """This benchmark scoring under the convention `name` (a copy; None keeps this one).
        Everything that reads answers, tables and pass lines consults `self.convention`."""
        if name is None or name == self.convention:
            return self
        if name not in self.conventions:
            offered = ", ".join(self.conventions) if self.conventions else "none"
            raise UsageError(f"unknown convention {name!r} for {self.name}; it offers: {offered}")
        chosen = copy.copy(self)
        chosen.convention = name
        return chosen

    def load(
        self,
        path: Path | None = None,
        split: str | None = None,
        *,
        select: Mapping[str, Sequence[str]] | None = None,
        **options: Any,
    ) -> list[Item]:
        """Items of `split` from `path` (or the benchmark's default source), keeping only those
        that `select` admits (`medvqa run --select field=value`; see `select_items`)."""
        raise NotImplementedError

    def checked_split(self, split: str | None) -> str:
        """`split`, or `default_split` when None; a split the benchmark does not offer is a
        ValueError naming those it does (what every `load` checks first)."""
        split = split or self.default_split
        if split not in self.splits:
            raise ValueError(f"unknown split {split!r} for {self.name}; choose from {', '.join(self.splits)}")
        return split

    def keyword_selection(
        self, select: Mapping[str, Sequence[Any]] | None = None, **keywords: Sequence[Any] | None
    ) -> dict[str, list[str]]:
        """`select` with the benchmark's `selection_keywords` added to their fields, as their
        `medvqa run` options add to `--select`; every value as text (as `select_items` reads one
        value or a comma-separated string), a field or keyword without values left out. A
        keyword the benchmark does not declare is an error naming those it does."""

        def text(values: Any) -> list[str]:
            return [str(v) for v in (values.split(",") if isinstance(values, str) else _values(values))]

        wanted = {name: text(values) for name, values in (select or {}).items() if values}
        given = {name: values for name, values in keywords.items() if values}
        if unknown := [name for name in given if name not in self.selection_keywords]:
            takes = ", ".join(f"{k} (--{k.replace('_', '-')}, field {f})" for k, f in self.selection_keywords.items())
            raise UsageError(
                f"{self.name} takes no option {', '.join(map(repr, unknown))}; its selection keywords: "
                f"{takes or 'none'}; select={{FIELD: [...]}} (--select FIELD=V1,V2) selects on any "
                "field of its items"
            )
        for name, values in given.items():
            wanted.setdefault(self.selection_keywords[name], []).extend(text(values))
        return wanted

    def select_items(self, items: list[Item], select: Mapping[str, Sequence[str]] | None) -> list[Item]:
        """The items whose stratum `field` (a key of `Item.meta`, or a `stratum_aliases` name)
        equals one of the given values (a list, one value or a comma-separated string), for every
        field of `select`; values compare as text, case ignored, and a list-valued stratum
        matches when any of its values does. A field no item has is an error naming the fields
        there are."""
        for name, values in (select or {}).items():
            field = self.stratum_aliases.get(name, name)
            if items and not any(field in it.meta for it in items):
                known = sorted({k for it in items for k in it.meta})
                raise UsageError(
                    f"--select {name}: {self.name} items have no field {field!r}; fields: {', '.join(known)}"
                )
            # values as a list, or (from Python) one value or a comma-separated string
            wanted = {
                str(v).strip().casefold() for v in (values.split(",") if isinstance(values, str) else _values(values))
            }
            items = [it for it in items if wanted & {str(v).casefold() for v in _values(it.meta.get(field))}]
        return items

    def template(self, item: Item) -> Template:
        """The template used for `item`; its hash lands in the run manifest."""
        return Template(name="default")

    def render(self, item: Item, condition: Condition, *, suffix: str | None = None) -> list[Message]:
        return self.template(item).render(item, condition, suffix=suffix)

    def sample_path(self) -> Path | None:
        """A small bundled sample in the benchmark's release layout, if it ships one."""
        return None

    def record_fields(self, item: Item) -> dict[str, Any]:
        """Strata written into each record of `item`, and the item's `language` when the benchmark
        offers several."""
        fields = {name: item.meta.get(name) for name in self.strata}
        if len(self.offered_languages) > 1:
            fields["language"] = item.language
        return fields

    def clusters(self, items: Sequence[Item]) -> dict[str, dict[str, str]]:
        """{item id: {level of `cluster_levels`: the id of the cluster the item belongs to}} over
        `items` (all of them at once: a linked set's opening question names its members); an item
        missing from a level is a cluster of its own there. None declared by default."""
        return {}

    def reorder_refusal(self, item: Item) -> str | None:
        """Why `item`'s options cannot be shown in another order (`--variants order`), or None
        when they can: `order.refusal` under `order_bound_patterns`. A benchmark whose items hold
        another reason (options that are steps of one procedure, say) overrides this."""
        return order.refusal(item, self.order_bound_patterns)

    def answer_conventions(self) -> AnswerConventions:
        """How this benchmark's answers are read and scored; JMed48k's chain by default."""
        return AnswerConventions()

    def response_schema(self, item: Item) -> dict[str, Any] | None:
        """The JSON schema of the answer object that backends with structured output ask for
        on `item`'s requests (it is part of each request's key); None: their default schema,
        `{"answer": [<label>, ...]}`."""
        return None

    def headline(self, records: Sequence[Mapping[str, Any]]) -> Headline:
        """The headline metric over `records` (one group's counted records: `medvqa.metrics`
        has already left out what `counts` refuses): {"metric", "value", "n", "ci": [low, high]
        | None, "ci_method"}. The default is accuracy with its Wilson 95 %
        interval; a benchmark scored otherwise (micro-F1, points) overrides it, and
        `medvqa.metrics` then shows its value in every table."""
        acc = accuracy(records)
        return {
            "metric": self.headline_metric,
            "value": acc.value,
            "n": acc.n,
            "ci": list(acc.ci) if acc.ci is not None else None,
            "ci_method": acc.ci_method,
        }

    def counts(self, record: Mapping[str, Any]) -> bool:
        """Whether `record` enters denominators under the convention in force (every record by
        default). A benchmark whose exam authority took items out of scoring (withdrawn items)
        says so here once, and every summary, table, comparison and audit follows."""
        return True

    def headline_value(self, records: Sequence[Mapping[str, Any]]) -> float | None:
        """The headline metric's value alone, without its interval: what a bootstrap between
        models (`medvqa compare`) computes on every resample. By default `headline`'s value; a
        benchmark whose `headline` computes a costly interval overrides this too."""
        return self.headline(records)["value"]

    def judge(self) -> JudgePrompt | None:
        """The `medvqa.JudgePrompt` with which a judge model scores this benchmark's free-text
        answers (`medvqa judge`, `medvqa run --judge`); None when it has none."""
        return None

    def validate(self, path: Path) -> list[Finding]:
        """`Finding`s about the data at `path` (`medvqa validate`, and `medvqa run` refuses
        error-level findings); none by default. Each names a rule of `validation_rules`."""
        return []

    def report_tables(self, records: list[dict], manifest: dict) -> Tables | None:
        """The benchmark's official tables (`medvqa report RUN --table NAME`): a
        `medvqa.tables.Tables`, or any object whose `render(fmt)` writes them; None when it has
        none."""
        return None

    def pass_report(self, items: list[Item], records: list[dict]) -> PassLines | None:
        """Pass / fail / not evaluable per exam as typed verdict rows (`medvqa.PassLines`),
        shown by `medvqa report RUN --pass` and `medvqa compare`; None when the benchmark has no
        pass criteria. `items` are `medvqa.Item`s: the whole exams the run touches, or the run's
        own items when `pass_on_whole_exams` is False; `records` are dicts, the newest record of
        each (item, condition) under the reading asked for."""
        return None

    def blank_rule(self) -> BlankRule:
        """How the exam scores a blank answer beside a right and a wrong one, its pass mark and
        its limit on prohibited choices (`medvqa.BlankRule`): the audit's abstention section
        scores the model under a confidence threshold by it. By default `PLAIN`: a blank scores
        as a wrong answer, so leaving an answer blank can only lose."""
        return PLAIN

    def prohibited_choice(self, item: Item, record: Mapping[str, Any]) -> bool:
        """Whether `record`'s answer to `item` picks an option the exam prohibits (an answer a
        candidate is failed for choosing too often): the abstention counts them at every
        threshold, and of equal points chooses the threshold with fewer. None by default."""
        return False

    def extract(self, **options: Any) -> object:
        """Source documents → the benchmark's release layout; the adapter's own command
        (`register_commands`) exposes it. Benchmarks without an extractor raise."""
        raise NotImplementedError(f"benchmark {self.name} has no extractor")

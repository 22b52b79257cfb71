"""Format-aware scoring (JMed48k Appendix B.5–B.6).

A single key must equal the gold key; a multi-key set must equal the gold set (no partial
credit); with official alternatives any one alternative suffices, each under its own rule; an
ordering item (several gold keys and a sequence cue in the stem) compares position by
position; a numeric-slot item (digit gold, no options, a numeric-entry cue in the stem or
`answer_format == "numeric"`) compares the digits joined in order ("1.2" → "12").
Non-answers stay in the denominator as incorrect, with their status.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from .items import Item
from .memo import IdentityMemo
from .normalize import CompiledPatterns, LanguagePatterns, compile_patterns, keys_of, read_keys

_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_NON_DIGIT = re.compile(r"[^0-9]")
_CHOICE_FORMATS = ("single", "multi", "alternatives")


@dataclass(frozen=True)
class Score:
    correct: bool
    status: str  # answered | refusal | parse_failure | error | missing
    predicted: tuple[str, ...] | None
    rule: str | None


def score(item: Item, response_text: str | None, *, error: str | None = None,
          patterns: Sequence[LanguagePatterns] = ()) -> Score:
    """Score one response. `error` set means the request failed; no text means no response."""
    return Score(*score_fields(item, response_text, error, compile_patterns(patterns)))


def score_fields(item: Item, response_text: str | None, error: str | None,
                 rules: CompiledPatterns) -> tuple[bool, str, tuple[str, ...] | None, str | None]:
    """`score` as a plain (correct, status, predicted, rule) tuple, for callers scoring many
    responses."""
    hit = _PREPARED.entries.get((id(item), id(rules)))
    if hit is None or hit[0] is not item or hit[1] is not rules:
        hit = (item, rules, _PREPARED.get(item, rules, _prepare))
    keys, targets, sets = hit[2]
    if error is not None:
        return _ERROR
    if response_text is None:
        return _MISSING
    predicted, status, rule = read_keys(keys, response_text, rules)
    if predicted is None:
        return False, status, None, rule
    if sets is not None:  # every alternative compares as a set of keys
        return frozenset(predicted) in sets, status, predicted, rule
    return _correct(targets, predicted), status, predicted, rule


_ERROR = (False, "error", None, None)
_MISSING = (False, "missing", None, None)


def is_correct(item: Item, predicted: Sequence[str], patterns: Sequence[LanguagePatterns] = ()) -> bool:
    rules = compile_patterns(patterns)
    return _correct(_targets_of(item, rules), tuple(predicted))


def _correct(targets: tuple[tuple[str, object], ...], predicted: tuple[str, ...]) -> bool:
    given = None
    for mode, target in targets:
        if mode == "numeric":
            if _NON_DIGIT.sub("", "".join(predicted)) == target:
                return True
        elif mode == "ordering":
            if predicted == target:
                return True
        else:  # single and set: a repeated key is still one key
            given = set(predicted) if given is None else given
            if given == target:
                return True
    return False


# Per (item, rules): the item's valid answers and what a prediction is compared with; the gold
# is checked here, so an item that cannot be scored fails on its first record.
_PREPARED = IdentityMemo()


def _prepare(item: Item, rules: CompiledPatterns) -> tuple:
    """(valid answers, targets, the targets as one set of key sets when all compare as sets)."""
    targets = _compute_targets(item, rules)
    sets = (frozenset(target for _, target in targets)
            if all(mode in ("single", "set") for mode, _ in targets) else None)
    return keys_of(item), targets, sets


def _targets_of(item: Item, rules: CompiledPatterns) -> tuple[tuple[str, object], ...]:
    """(mode, what a prediction is compared with) per gold alternative; checks the gold first."""
    return _PREPARED.get(item, rules, _prepare)[1]


def _compute_targets(item: Item, rules: CompiledPatterns) -> tuple[tuple[str, object], ...]:
    _require_choice_gold(item)
    modes = [(_mode(item, alt, rules), alt) for alt in item.gold.alternatives]
    return tuple((mode, _NON_DIGIT.sub("", "".join(alt)) if mode == "numeric"
                  else alt if mode == "ordering" else frozenset(alt)) for mode, alt in modes)


def scoring_mode(item: Item, patterns: Sequence[LanguagePatterns] = ()) -> str:
    """The item's rule: "single", "set", "ordering", "numeric" or "alternatives"."""
    _require_choice_gold(item)
    alternatives = item.gold.alternatives
    if len(alternatives) > 1:
        return "alternatives"
    return _mode(item, alternatives[0], compile_patterns(patterns))


def chance_of_correct(item: Item, patterns: Sequence[LanguagePatterns] = ()) -> float | None:
    """Probability that a uniform random guess of the asked number of keys is scored correct:
    1/k for one key, 1/C(k,m) for an m-key set, 1/P(k,m) for an ordering, summed over the
    distinct alternatives. None for numeric slots, free text and boxes."""
    gold = item.gold
    if gold is None or gold.format not in _CHOICE_FORMATS or not item.options:
        return None
    rules = compile_patterns(patterns)
    k = len(item.options)
    m = item.n_select or len(gold.alternatives[0])
    hits: set = set()
    for alt in gold.alternatives:
        mode = _mode(item, alt, rules)
        if mode == "numeric":
            return None
        if len(set(alt)) == m <= k:
            hits.add((mode, alt if mode == "ordering" else frozenset(alt)))
    return sum(1 / (math.perm(k, m) if mode == "ordering" else math.comb(k, m)) for mode, _ in hits)


def _require_choice_gold(item: Item) -> None:
    if item.gold is None:
        raise ValueError(f"item {item.id} has no usable gold answer; excluded items are not scored")
    if item.gold.format not in _CHOICE_FORMATS:
        raise ValueError(f"item {item.id}: gold format {item.gold.format!r} is not scored by these rules")


def _mode(item: Item, alt: tuple[str, ...], rules: CompiledPatterns) -> str:
    if all(_NUMBER.fullmatch(k) for k in alt) and (
            item.answer_format == "numeric" or (not item.options and rules.numeric_cue.search(item.question))):
        return "numeric"
    if len(alt) > 1:
        if item.n_select is None and rules.ordering_cue.search(item.question):
            return "ordering"
        return "set"
    return "single"

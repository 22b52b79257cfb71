"""Format-aware scoring (JMed48k Appendix B.5–B.6): single key, multi-key set, alternatives,
ordering and numeric slots; non-answers are incorrect, with their status. Gold the chain does
not score (free text, boxes) goes to the benchmark's `AnswerConventions.score_open`."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from ..items import Gold, Item
from .conventions import DEFAULT_CONVENTIONS, AnswerConventions, Score
from .normalize import normalize
from .patterns import CompiledPatterns, LanguagePatterns, compile_patterns

CHOICE_FORMATS = ("single", "multi", "alternatives")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_NON_DIGIT = re.compile(r"[^0-9]")


def score(
    item: Item,
    response_text: str | None,
    *,
    error: str | None = None,
    patterns: Sequence[LanguagePatterns] = (),
    conventions: AnswerConventions = DEFAULT_CONVENTIONS,
    saved: bool = False,
) -> Score:
    """Score one response: `error` set means the request failed, no text means no response,
    `saved` marks a prediction saved in the benchmark's own format."""
    score_open = _open_scorer(item, conventions)
    if error is not None:
        return Score(False, "error", None, None)
    if response_text is None:
        return Score(False, "missing", None, None)
    if score_open is not None:
        return score_open(item, response_text)
    read = normalize(item, response_text, patterns, conventions, saved=saved)
    correct = read.predicted is not None and _correct(item, read.predicted, compile_patterns(patterns))
    chain = Score(correct, read.status, read.predicted, read.rule)
    return chain if conventions.final_score is None else conventions.final_score(item, response_text, chain, saved)


def keys_correct(item: Item, predicted: Sequence[str], patterns: Sequence[LanguagePatterns] = ()) -> bool:
    """Whether option keys `predicted` are a correct answer to `item` under the format-aware rules
    (set, ordering, numeric slots, alternatives): how an extractor's reading is scored."""
    return _correct(item, tuple(predicted), compile_patterns(patterns))


def scoring_mode(item: Item, patterns: Sequence[LanguagePatterns] = ()) -> str:
    """The item's rule: "single", "set", "ordering", "numeric" or "alternatives"."""
    _open_scorer(item, DEFAULT_CONVENTIONS)
    alternatives = _gold(item).alternatives
    if len(alternatives) > 1:
        return "alternatives"
    return _mode(item, alternatives[0], compile_patterns(patterns))


def _correct(item: Item, predicted: tuple[str, ...], rules: CompiledPatterns) -> bool:
    for alt in _gold(item).alternatives:
        mode = _mode(item, alt, rules)
        if (
            mode == "numeric"
            and _NON_DIGIT.sub("", "".join(predicted)) == _NON_DIGIT.sub("", "".join(alt))
            or mode == "ordering"
            and predicted == alt
            or mode in ("single", "set")
            and set(predicted) == set(alt)
        ):  # a repeated key is one key
            return True
    return False


def _mode(item: Item, alt: tuple[str, ...], rules: CompiledPatterns) -> str:
    if all(_NUMBER.fullmatch(k) for k in alt) and (
        item.answer_format == "numeric" or (not item.options and rules.numeric_cue.search(item.question))
    ):
        return "numeric"
    if len(alt) > 1:
        return "ordering" if item.n_select is None and rules.ordering_cue.search(item.question) else "set"
    return "single"


def _gold(item: Item) -> Gold:
    """The item's gold answer; an item without one (an excluded item) is a ValueError."""
    if item.gold is None:
        raise ValueError(f"item {item.id} has no usable gold answer; excluded items are not scored")
    return item.gold


def _open_scorer(item: Item, conventions: AnswerConventions) -> Callable[[Item, str], Score] | None:
    """The benchmark's scorer of an item the answer chain does not score (free text, boxes); None
    for a choice item, which the chain scores."""
    gold = _gold(item)
    if gold.format in CHOICE_FORMATS:
        return None
    if conventions.score_open is None:
        raise ValueError(
            f"item {item.id}: gold format {gold.format!r} is not scored by the answer "
            "chain, and the benchmark declares no AnswerConventions.score_open"
        )
    return conventions.score_open


def chance_of_correct(item: Item, patterns: Sequence[LanguagePatterns] = ()) -> float | None:
    """Chance that a uniform guess of the asked number of keys is correct: 1/k, 1/C(k,m) for an
    m-key set, 1/P(k,m) for an ordering, summed over distinct alternatives; None if not a choice."""
    gold = item.gold
    if gold is None or gold.format not in CHOICE_FORMATS or not item.options:
        return None
    rules = compile_patterns(patterns)
    k, m = len(item.options), item.n_select or len(gold.alternatives[0])
    modes = [(_mode(item, alt, rules), alt) for alt in gold.alternatives]
    if any(mode == "numeric" for mode, _ in modes):
        return None
    hits = {(mode, alt if mode == "ordering" else frozenset(alt)) for mode, alt in modes if len(set(alt)) == m <= k}
    return sum(1 / (math.perm(k, m) if mode == "ordering" else math.comb(k, m)) for mode, _ in hits)

"""Answer normalisation: the rule chain that turns a model's reply into option keys.

The chain is JMed48k's (Appendix B.3–B.6). A JSON answer (`{"answer": [...]}`, also inside a
code fence or after prose) is read first; otherwise the text goes through Rules 0–7 in order and
the first rule that yields a valid key wins. A candidate that is not a valid key is rejected;
nothing is ever guessed. Languages add answer phrases, scoring cues and refusal sentences
through `LanguagePatterns`, contributed by adapters; `ENGLISH` always applies.

For items without options (numeric slots) a valid answer is a number (digits with an optional
decimal point) instead of an option key, and the label rules (2 and 7) do not apply.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from operator import methodcaller
from typing import Any, Sequence

from .items import Item
from .literals import GatedPatterns
from .memo import IdentityMemo

# What an answer phrase may name: a number, a Latin label (ASCII or full-width) or a circled
# digit, optionally behind quotes, brackets or Markdown bold. Adapters reuse it in their regexes.
ANSWER_TOKEN = r"""[\s*"'「『(（\[【]*(?P<ans>\d+(?:[.．]\d+)?|[A-Za-zＡ-Ｚａ-ｚ]+|[①-⑩])"""


@dataclass(frozen=True)
class LanguagePatterns:
    """Regexes one language contributes (matched case-insensitively)."""

    language: str
    answer: tuple[str, ...] = ()  # answer phrases with a named group (?P<ans>...) → Rule 6
    ordering_cues: tuple[str, ...] = ()  # a stem cue → ordering scoring
    numeric_cues: tuple[str, ...] = ()  # a stem cue → numeric-slot scoring
    refusal: tuple[str, ...] = ()  # declining sentences


ENGLISH = LanguagePatterns(
    language="en",
    # "the answer is", "correct answer:", "final answer is" ...: the words before "answer" never
    # change which token is read, so they are left out of the pattern (tests check the two agree)
    answer=(rf"\banswer\s*(?:is\s*:?|:)\s*{ANSWER_TOKEN}",),
    ordering_cues=(r"\border\b(?!\s+to\b)",),
    numeric_cues=(r"\bcalculate\b",),
    refusal=(r"\b(?:cannot|can ?not|can't|unable to)\s+(?:determine|answer)\b",),
)


@dataclass(frozen=True)
class Normalized:
    predicted: tuple[str, ...] | None  # keys in answer order; None when nothing valid
    status: str  # "answered" | "refusal" | "parse_failure"
    rule: str | None  # "json", "rule1".."rule7", "fallback"


@dataclass(frozen=True)
class CompiledPatterns:
    """`ENGLISH` plus the given patterns, compiled once."""

    answer: tuple[re.Pattern, ...]
    ordering_cue: re.Pattern
    numeric_cue: re.Pattern
    refusal: re.Pattern
    # the same patterns with their literal gates (see `literals`), for reading many responses
    answer_gated: GatedPatterns = GatedPatterns(())
    refusal_gated: GatedPatterns = GatedPatterns(())


def compile_patterns(patterns: Sequence[LanguagePatterns] = ()) -> CompiledPatterns:
    if type(patterns) is tuple:  # immutable: the last one asked for is remembered by identity
        last = _LAST_COMPILED
        if last[0] is patterns:
            return last[1]
        compiled = _compile(patterns)
        _LAST_COMPILED[:] = (patterns, compiled)
        return compiled
    return _compile(tuple(patterns))


_LAST_COMPILED: list = [None, None]  # (patterns tuple, its CompiledPatterns)


@lru_cache(maxsize=64)
def _compile(patterns: tuple[LanguagePatterns, ...]) -> CompiledPatterns:
    every = tuple(dict.fromkeys((ENGLISH, *patterns)))
    answer = []
    for lang in every:
        for rx in lang.answer:
            compiled = re.compile(rx, re.IGNORECASE)
            if "ans" not in compiled.groupindex:
                raise ValueError(f"answer pattern {rx!r} ({lang.language}) has no (?P<ans>...) group")
            answer.append(compiled)

    def union(field: str) -> re.Pattern:
        return re.compile("|".join(f"(?:{rx})" for lang in every for rx in getattr(lang, field)),
                          re.IGNORECASE)

    refusals = [re.compile(rx, re.IGNORECASE) for lang in every for rx in lang.refusal]
    return CompiledPatterns(tuple(answer), union("ordering_cues"), union("numeric_cues"), union("refusal"),
                            GatedPatterns(answer), GatedPatterns(refusals))


# Rule 0
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_FULLWIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}  # ！..～ → !..~
_HAS_FULLWIDTH = re.compile("[\uff01-\uff5e]")
_TRAILING = " .,;:!?。．、，；：！？…"
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# Rules 2, 4, 5 (Rule 7 reads the last character before trailing punctuation: ①–⑩)
_LABEL_DOT = re.compile(r"(?P<ans>[^\s.．。]{1,3})\s*[.．。]\s*\S")
_BOXED = re.compile(r"oxed\s*\{\s*(?:\\text(?:bf)?\s*\{)?\s*(?P<ans>[^{}]*?)\s*\}", re.IGNORECASE)
_PAREN_TAIL = re.compile(rf"[(（]\s*(?P<ans>[^()（）]{{1,10}}?)\s*[)）][{re.escape(_TRAILING)}]*$")
_CLOSING = (")", "）")  # Rule 5 needs one of these as the last character before trailing punctuation
# JSON
_ARROW = re.compile(r"->|→")
_DECODER = json.JSONDecoder(strict=False)  # control characters inside strings are Rule 0's job
# `{"answer": ["a", ...]}` with strings free of quotes and escapes, read without json
_JSON_WS = r"[ \t\n\r]*"
_PLAIN_STRING = re.compile(r'"([^"\\]*)"')
_PLAIN_ANSWER = re.compile(rf'\{{{_JSON_WS}"answer"{_JSON_WS}:{_JSON_WS}\[{_JSON_WS}'
                           rf'(?P<body>(?:"[^"\\]*"(?:{_JSON_WS},{_JSON_WS}"[^"\\]*")*)?){_JSON_WS}\]{_JSON_WS}\}}')


def clean(text: str, *, upper: bool = False) -> str:
    """Rule 0: drop control characters, collapse whitespace, uppercase for letter labels."""
    if not text.isprintable():
        text = " ".join(_CONTROL.sub("", text).split())  # str.split() splits on exactly re's \s
    elif "  " in text or text[:1] == " " or text[-1:] == " ":  # printable: no control characters,
        text = " ".join(text.split())  # and " " is its only whitespace (tested)
    return text.upper() if upper else text


class _Keys:
    """What counts as a valid answer for one item."""

    __slots__ = ("by_key", "by_text", "keys", "numeric", "letters", "gold_sets", "gold_singles", "longest")

    def __init__(self, item: Item):
        self.keys = frozenset(o.key for o in item.options)
        self.numeric = not item.options
        used = self.keys or (item.gold.keys if item.gold else frozenset())
        self.letters = bool(used) and all(k.isascii() and k.isalpha() for k in used)
        self.by_text = {t: o.key for o in item.options if (t := clean(o.text).casefold())}
        self.by_key = {o.label.casefold(): o.key for o in item.options}
        self.by_key.update((k.casefold(), k) for k in self.keys)
        self.gold_sets = frozenset(frozenset(alt) for alt in item.gold.alternatives) if item.gold else frozenset()
        self.gold_singles = frozenset(next(iter(alt)) for alt in self.gold_sets if len(alt) == 1)
        # casefold() and the full-width mapping never shorten a string: longer candidates name nothing
        self.longest = sys.maxsize if self.numeric else max(map(len, (*self.by_key, *self.by_text)), default=0)

    def resolve(self, candidate: str) -> str | None:
        """The key a candidate names, or None. Numbers for items without options."""
        c = candidate.strip()
        if len(c) > self.longest:
            return None
        if not c.isascii() and _HAS_FULLWIDTH.search(c):
            c = c.translate(_FULLWIDTH)
        if self.numeric:
            return c if _NUMBER.fullmatch(c) else None
        c = c.casefold()
        return self.by_key.get(c) or self.by_text.get(c)

    def quick(self, element: str) -> str | None:
        """An element that already is an option text, key, label or number (Rule 1 before 3)."""
        if self.numeric:
            return element if _NUMBER.fullmatch(element) else None
        c = element.casefold()
        return self.by_text.get(c) or self.by_key.get(c)


_KEYS = IdentityMemo()


def keys_of(item: Item) -> _Keys:
    """What counts as a valid answer for the item, gathered once per item."""
    return _KEYS.get(item, None, _new_keys)


def _new_keys(item: Item, _: None) -> _Keys:
    return _Keys(item)


def normalize(item: Item, text: str, patterns: Sequence[LanguagePatterns] = ()) -> Normalized:
    """Turn a raw response into the item's keys (or a refusal / parse failure)."""
    return Normalized(*read_answer(item, text, compile_patterns(patterns)))


def read_answer(item: Item, text: str, rules: CompiledPatterns) -> tuple[tuple[str, ...] | None, str, str | None]:
    """`normalize` as a plain (predicted, status, rule) tuple, for callers scoring many responses."""
    return read_keys(keys_of(item), text, rules)


def read_keys(keys: _Keys, text: str, rules: CompiledPatterns) -> tuple[tuple[str, ...] | None, str, str | None]:
    """`read_answer` with the item's valid answers already gathered (`keys_of`)."""
    found, value = _json_answer(text)
    if found:
        return _from_json(keys, rules, value, text)
    cleaned = clean(text, upper=keys.letters)
    hit = _apply_rules(cleaned, keys, rules)
    if hit is not None:
        return (hit[0],), "answered", hit[1]
    return _unresolved(keys, rules, [cleaned], cleaned)


def _json_answer(text: str) -> tuple[bool, Any]:
    """The `answer` value of the last JSON object in the text that has one."""
    if '"answer"' not in text:
        return False, None
    if text.startswith('{"answer": ["') and text.endswith('"]}') and len(text) > 15 and "\\" not in text:
        # the form structured output gives: strings without quotes or escapes read as they stand;
        # when every quote inside is part of a '", "' separator, splitting on it is what json reads
        inner = text[13:-3]
        if inner.count('"') == 2 * inner.count('", "'):
            return True, inner.split('", "')
    if text.count("{") == 1 and (m := _PLAIN_ANSWER.match(text, text.find("{"))):
        return True, _PLAIN_STRING.findall(m["body"])  # what json would read: the only object
    return _decoded_answer(text)


def _decoded_answer(text: str) -> tuple[bool, Any]:
    """`_json_answer` with the json decoder only: the whole text, else every `{` before the
    last `"answer"` key (the general path, and the reference for the shortcut)."""
    if '"answer"' not in text:
        return False, None
    if text.lstrip()[:1] == "{":
        try:
            obj = _DECODER.decode(text)
        except ValueError:
            pass
        else:
            if isinstance(obj, dict) and "answer" in obj:
                return True, obj["answer"]
    end = text.rfind('"answer"')
    for start in reversed([m.start() for m in re.finditer(r"\{", text[:end])][-50:]):
        try:
            obj, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(obj, dict) and "answer" in obj:
            return True, obj["answer"]
    return False, None


def _from_json(keys: _Keys, rules: CompiledPatterns, value: Any, text: str) -> tuple:
    if type(value) is list:
        if not value:
            return _EMPTY_JSON
        elements = value
    elif isinstance(value, str):
        elements = [p for p in (s.strip() for s in _ARROW.split(value)) if p] or [value]
    else:
        elements = [value]
    predicted = []
    for element in elements:
        if type(element) is str:  # most answers: a bare key, as a string
            key = keys.quick(element) or _ruled_key(element, keys, rules)
        else:
            key = _element_key(element, keys, rules)
        if key is None:
            as_is = ([clean(str(e), upper=keys.letters) for e in elements]
                     if all(_is_scalar(e) for e in elements) else [])
            return _unresolved(keys, rules, as_is, clean(text))
        predicted.append(key)
    return tuple(predicted), "answered", "json"


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _element_key(element: Any, keys: _Keys, rules: CompiledPatterns) -> str | None:
    if not _is_scalar(element):
        return None
    raw = str(element)
    return keys.quick(raw) or _ruled_key(raw, keys, rules)


def _ruled_key(raw: str, keys: _Keys, rules: CompiledPatterns) -> str | None:
    """The key Rules 1–7 read from one JSON element."""
    hit = _apply_rules(clean(raw, upper=keys.letters), keys, rules)
    return hit[0] if hit else None


def _apply_rules(s: str, keys: _Keys, rules: CompiledPatterns) -> tuple[str, str] | None:
    """Rules 1–7 on a Rule-0 string: (key, rule) of the first rule with a valid key."""
    if not s:
        return None
    if len(s) <= keys.longest and (key := keys.by_text.get(s.casefold())) is not None:
        return key, "rule1"
    if not keys.numeric and (m := _LABEL_DOT.match(s)) and (key := keys.resolve(m["ans"])):
        return key, "rule2"
    tail = s.rstrip(_TRAILING)
    if key := keys.resolve(tail):
        return key, "rule3"
    lower = s.lower()
    if "oxed" in lower:  # no other character matches o, x, e or d case-insensitively (tested)
        for boxed in reversed(_BOXED.findall(s)):
            if key := keys.resolve(boxed):
                return key, "rule4"
    last = tail[-1:]
    if last in _CLOSING and (m := _PAREN_TAIL.search(s)) and (key := keys.resolve(m["ans"])):
        return key, "rule5"
    phrases = rules.answer_gated.finditer(s, lower)
    if len(phrases) > 1:
        phrases.sort(key=_ANS_START)
    for m in reversed(phrases):
        if key := keys.resolve(m["ans"]):
            return key, "rule6"
    if not keys.numeric and "①" <= last <= "⑩":  # a circled digit ends the text
        digit = str(ord(last) - ord("①") + 1)
        if digit in keys.keys:
            return digit, "rule7"
    return None


def _unresolved(keys: _Keys, rules: CompiledPatterns, candidates: list[str], whole: str) -> tuple:
    """Fallback: the Rule-0 strings as they are, compared with the gold as sets."""
    if (candidates[0] in keys.gold_singles if len(candidates) == 1 else
            candidates and frozenset(candidates) in keys.gold_sets):
        return tuple(candidates), "answered", "fallback"
    if rules.refusal_gated.search(whole):
        return _REFUSAL
    return _PARSE_FAILURE


_ANS_START = methodcaller("start", "ans")
_EMPTY_JSON = (None, "refusal", "json")
_REFUSAL = (None, "refusal", None)
_PARSE_FAILURE = (None, "parse_failure", None)

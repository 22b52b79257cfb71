"""The answer reader: JMed48k Appendix B.3–B.5, one function per rule, applied in order.

`normalize` reads JSON first, then a saved prediction where the benchmark declares it, then a
plain arrow chain, then Rules 0–7 and the fallback; the first step that gives valid keys wins.
A candidate that is not one of the item's labels is rejected, never guessed. docs/scoring.md
gives each rule's sentence in the protocol with an example."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..items import Item
from .conventions import DEFAULT_CONVENTIONS, AnswerConventions
from .patterns import CompiledPatterns, LanguagePatterns, compile_patterns

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TRAILING = " .,;:!?。．、，；：！？…"
_LABEL_DOT = re.compile(r"(?P<ans>[^\s.．。]{1,3})\s*[.．。]\s*\S")
_BOXED = re.compile(r"oxed\s*\{\s*(?:\\text(?:bf)?\s*\{)?\s*(?P<ans>[^{}]*?)\s*\}", re.IGNORECASE)
_PAREN_TAIL = re.compile(rf"[(（]\s*(?P<ans>[^()（）]{{1,10}}?)\s*[)）][{re.escape(_TRAILING)}]*$")
_FULLWIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}  # ！..～ → !..~, ０-９, Ａ-Ｚ, ａ-ｚ
# one number (12, 1.2, 1,200) or a circled digit; B.5 keeps a number's digits and strips the rest
_NUMBER = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?|[①-⑳]")
_NON_DIGIT = re.compile(r"[^0-9]")
_DECODER = json.JSONDecoder(strict=False)  # control characters inside strings are Rule 0's job
_FENCE = re.compile(r"```(?:json)?(.*?)```", re.DOTALL | re.IGNORECASE)
_ARROW = re.compile(r"->|→")
_SEPARATOR = re.compile(r"[\s,，、]+")


@dataclass(frozen=True)
class Normalized:
    predicted: tuple[str, ...] | None  # keys in answer order; None when nothing valid
    status: str  # "answered" | "refusal" | "parse_failure"
    rule: str | None  # "json", "saved", "arrows", "rule1".."rule7", "fallback"


def normalize(
    item: Item,
    text: str,
    patterns: Sequence[LanguagePatterns] = (),
    conventions: AnswerConventions = DEFAULT_CONVENTIONS,
    *,
    saved: bool = False,
) -> Normalized:
    """Read a raw reply as the item's keys, a refusal or a parse failure. `saved` marks a
    prediction saved in the benchmark's own format (`AnswerConventions.saved_label_sets`)."""
    labels, rules = item_labels(item), compile_patterns(patterns)
    found, value = read_json(text, conventions.answer_key)
    if found:  # B.5: a list element by element, a string split at arrows, each through Rules 0–7
        elements = [part for v in (value if isinstance(value, list) else [value]) for part in split_arrows(v)]
        if not elements:
            return Normalized(None, "refusal", "json")  # B.6: an empty answer list declines
        scalar = all(isinstance(e, (str, int, float)) and not isinstance(e, bool) for e in elements)
        cleaned = [rule0_clean(str(e), labels.letters) for e in elements] if scalar else []
        hits = [apply_rules(c, labels, rules) for c in cleaned]
        read = [hit[0] for hit in hits if hit is not None]
        if scalar and len(read) == len(hits):
            return Normalized(tuple(read), "answered", "json")
        return fallback(cleaned, text, labels, rules)
    s = rule0_clean(text, labels.letters)
    if saved and conventions.saved_label_sets and (keys := saved_label_set(s, labels)):
        return Normalized(keys, "answered", "saved")
    # a plain arrow chain names option keys; a numeric slot's reply is read as one number instead
    chain = (
        [labels.resolve(part) for part in split_arrows(s.rstrip(_TRAILING))]
        if _ARROW.search(s) and not labels.numeric
        else []
    )
    chained = [key for key in chain if key]
    if len(chain) > 1 and len(chained) == len(chain):  # nothing but an arrow chain of valid labels, as in JSON
        return Normalized(tuple(chained), "answered", "arrows")
    if hit := apply_rules(s, labels, rules):
        return Normalized((hit[0],), "answered", hit[1])
    return fallback([s], text, labels, rules)


def read_json(text: str, key: str = "answer") -> tuple[bool, Any]:
    """(found, value): `key`'s value in the last JSON object that has it (an object without it
    is searched inside), else a JSON array that is the whole reply or a whole fenced block."""
    found, value = False, None
    at = text.find("{") if f'"{key}"' in text else -1
    while at >= 0:
        try:
            obj, end = _DECODER.raw_decode(text, at)
        except RecursionError:  # nested deeper than the decoder reads: no answer in there
            break
        except ValueError:
            obj, end = {}, at + 1
        if key in obj:
            found, value = True, obj[key]
        at = text.find("{", end if key in obj else at + 1)
    if found:
        return found, value
    for block in (*_FENCE.findall(text), text):
        if (block := block.strip()).startswith("["):
            try:
                return True, _DECODER.decode(block)
            except (ValueError, RecursionError):
                pass
    return False, None


def split_arrows(value: Any) -> list[Any]:
    """A string with arrows (`->`, `→`) as its non-empty parts; anything else as itself."""
    parts = [part.strip() for part in _ARROW.split(value)] if isinstance(value, str) else []
    return [p for p in parts if p] or [value]


def saved_label_set(s: str, labels: ItemLabels) -> tuple[str, ...] | None:
    """A saved prediction's labels, joined by commas or spaces (`a,c`, `a, c`) or run together
    (`AC`), when every one is valid; None otherwise and for items without options."""
    parts = [] if labels.numeric else [p for p in _SEPARATOR.split(s) if p]
    if len(parts) == 1 and not labels.resolve(parts[0]):
        parts = list(parts[0])
    keys = [key for p in parts if (key := labels.resolve(p))]
    return tuple(keys) if parts and len(keys) == len(parts) else None


def rule0_clean(text: str, upper: bool = False) -> str:
    """Rule 0: strip control characters (U+0000–U+0008, U+000B–U+000C, U+000E–U+001F, U+007F;
    tab, LF and CR stay), collapse whitespace; uppercase for items labelled with letters."""
    text = " ".join(_CONTROL.sub("", text).split())
    return text.upper() if upper else text


def rule1_option_text(s: str, labels: ItemLabels, patterns: CompiledPatterns) -> str | None:
    """Rule 1: the full text of an option, case and surrounding whitespace ignored → its key."""
    return labels.by_text.get(s.casefold())


def rule2_label_dot(s: str, labels: ItemLabels, patterns: CompiledPatterns) -> str | None:
    """Rule 2: a valid label, then `.`, `．` or `。`, then more text → the label."""
    m = None if labels.numeric else _LABEL_DOT.match(s)
    return labels.resolve(m["ans"]) if m else None


def rule3_bare_label(s: str, labels: ItemLabels, patterns: CompiledPatterns) -> str | None:
    """Rule 3: after trailing punctuation is stripped, exactly a valid label."""
    return labels.resolve(s.rstrip(_TRAILING))


def rule4_boxed(s: str, labels: ItemLabels, patterns: CompiledPatterns) -> str | None:
    """Rule 4: `\\boxed{N}`, also `oxed{N}` (a JSON "\\b" read as a backspace that Rule 0
    stripped); the last one that names a valid label."""
    return next((key for c in reversed(_BOXED.findall(s)) if (key := labels.resolve(c))), None)


def rule5_parenthesised(s: str, labels: ItemLabels, patterns: CompiledPatterns) -> str | None:
    """Rule 5: a trailing `(N)` or full-width `（N）`."""
    m = _PAREN_TAIL.search(s)
    return labels.resolve(m["ans"]) if m else None


def rule6_answer_phrase(s: str, labels: ItemLabels, patterns: CompiledPatterns) -> str | None:
    """Rule 6: an answer phrase (`the answer is N`, `answer: N`, and those of the exam's language,
    `LanguagePatterns.answer`); the last one that names a valid label."""
    found = sorted((m for rx in patterns.answer for m in rx.finditer(s)), key=lambda m: m.start("ans"))
    return next((key for m in reversed(found) if (key := labels.resolve(m["ans"]))), None)


def rule7_circled_digit(s: str, labels: ItemLabels, patterns: CompiledPatterns) -> str | None:
    """Rule 7: a trailing circled digit ①…⑩, when its digit is an option key."""
    last = s.rstrip(_TRAILING)[-1:]
    digit = str(ord(last) - ord("①") + 1) if "①" <= last <= "⑩" else None
    return digit if digit in labels.keys else None


RULES = (
    rule1_option_text,
    rule2_label_dot,
    rule3_bare_label,
    rule4_boxed,
    rule5_parenthesised,
    rule6_answer_phrase,
    rule7_circled_digit,
)


def apply_rules(s: str, labels: ItemLabels, patterns: CompiledPatterns) -> tuple[str, str] | None:
    """Rules 1–7 in order on a Rule-0 string: (key, "ruleN") of the first that names a valid key."""
    for rule in RULES if s else ():
        if key := rule(s, labels, patterns):
            return key, rule.__name__[:5]
    return None


def fallback(candidates: list[str], text: str, labels: ItemLabels, patterns: CompiledPatterns) -> Normalized:
    """Fallback: the Rule-0 strings as they are, compared with the gold as sets; else a refusal
    when the reply holds a declining sentence (B.6; read after NFKC, so half-width kana and
    punctuation match), else a parse failure."""
    if candidates and frozenset(candidates) in labels.gold_sets:
        return Normalized(tuple(candidates), "answered", "fallback")
    declines = patterns.refusal.search(unicodedata.normalize("NFKC", rule0_clean(text)))
    status = "refusal" if declines else "parse_failure"
    return Normalized(None, status, None)


class ItemLabels:
    """What counts as a valid answer for one item: its keys, printed labels and option texts."""

    def __init__(self, item: Item):
        self.keys = frozenset(o.key for o in item.options)
        self.numeric = not item.options
        used = self.keys or (item.gold.keys if item.gold else frozenset())
        self.letters = bool(used) and all(k.isascii() and k.isalpha() for k in used)
        self.by_text = {t: o.key for o in item.options if (t := rule0_clean(o.text).casefold())}
        self.by_label = {o.label.casefold(): o.key for o in item.options} | {k.casefold(): k for k in self.keys}
        self.gold_sets = {frozenset(alt) for alt in item.gold.alternatives} if item.gold else set()
        self.longest = max(map(len, [*self.by_label, *self.by_text]), default=0)  # longer names nothing

    def resolve(self, candidate: str) -> str | None:
        """The key a candidate names (a key, label or option text; case and full-width forms
        ignored), or None. For items without options (numeric slots, B.5): the digits of the one
        number the candidate holds, whatever is written around it (`約600 mL`, `= 600`, `~600`,
        `600 (mL)`, `40%`); None when it holds no number or several (`6 0 0`, `3 × 200 = 600`)."""
        c = candidate.strip()
        if self.numeric:
            numbers = _NUMBER.findall(c.translate(_FULLWIDTH))
            return _NON_DIGIT.sub("", numbers[0]) or None if len(numbers) == 1 else None
        if len(c) > self.longest:
            return None
        c = c.translate(_FULLWIDTH).casefold()
        return self.by_label.get(c) or self.by_text.get(c)


_LABELS: dict[tuple[str, str], tuple[Item, ItemLabels]] = {}


def item_labels(item: Item) -> ItemLabels:
    """The item's labels, computed once per item: cached by (benchmark, id), and an entry serves
    only the item object it was computed from, so an item sharing an id never reads another's."""
    hit = _LABELS.get((item.benchmark, item.id))
    if hit is None or hit[0] is not item:
        hit = _LABELS[(item.benchmark, item.id)] = (item, ItemLabels(item))
    return hit[1]

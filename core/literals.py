"""Literal gates: a cheap necessary condition for a regex to match.

Answer phrases and refusal sentences are matched case-insensitively, which keeps Python's
regex engine from skipping ahead to a likely start: it tries the whole pattern at every
position of every response. Most responses contain none of the words those patterns are built
on, so each pattern gets a gate, the literal strings one of which every match must contain,
checked with `str.find`. A gate only ever says "cannot match" when the regex could not match;
when it may, the regex runs as before (from the first place a match could start, when that is
known), so what is matched never changes.

A literal is compared exactly as the regex engine compares it:
- characters without case (kana, kanji, digits, punctuation) are compiled as plain literals
  even under IGNORECASE, so `str.find` on the text is exact;
- ASCII literals with letters are found in the text's `lower()` when the text is *plain*:
  ASCII, or free of "İ", "ı" and "ſ", the only characters besides the Kelvin sign that the
  engine matches to an ASCII letter while `lower()` does not turn them into it (and "İ" is the
  only character `lower()` turns into two, so positions agree too);
- otherwise the literals are searched with a regex of the literals alone, under the pattern's
  own flags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

try:  # the engine's own parser: the gate is read from exactly what re compiles
    from re import _constants as _c, _parser as _sp
except ImportError:  # pragma: no cover - a Python without it just gets no gates
    _sp = None

_MATCHING_FLAGS = re.IGNORECASE | re.ASCII | re.UNICODE
_ASCII = [chr(i) for i in range(128)]
NOT_PLAIN = "İıſ"  # see the module docstring; tests check the list against every code point
_NOT_PLAIN = re.compile(f"[{NOT_PLAIN}]")


def plain_lower(text: str) -> str | None:
    """`text.lower()` when the text is plain, else None."""
    return text.lower() if text.isascii() or not _NOT_PLAIN.search(text) else None


@dataclass(frozen=True)
class Need:
    """Literals one of which occurs in every text the regex matches, and how to look for them."""

    literals: tuple[str, ...]
    uncased: bool  # compared exactly with `str.find`
    folded: tuple[str, ...] | None  # the literals as found in a plain text's lower(); None: no shortcut
    in_ascii: bool  # whether an ASCII text can hold one of them
    regex: re.Pattern  # the literals alone, under the pattern's flags

    def find(self, text: str, lower: str | None) -> int:
        """Where the first of the literals occurs; -1 if none does. `lower` is
        `plain_lower(text)`."""
        if self.uncased:
            literals = self.literals
        elif lower is not None and self.folded is not None:
            literals, text = self.folded, lower
        else:
            m = self.regex.search(text)
            return -1 if m is None else m.start()
        found = -1
        for lit in literals:
            at = text.find(lit)
            if at >= 0 and (found < 0 or at < found):
                found = at
        return found


@dataclass(frozen=True)
class Gate:
    """What every text the regex matches contains: `first`, and each of `also`."""

    first: Need
    lead: int | None  # a match starts at most this many characters before `first`; None: unknown
    also: tuple[Need, ...] = ()

    @property
    def literals(self) -> tuple[str, ...]:
        return self.first.literals

    @property
    def in_ascii(self) -> bool:
        """Whether an ASCII text can hold what the gate asks for."""
        return all(need.in_ascii for need in (self.first, *self.also))

    def start(self, text: str, lower: str | None = None) -> int:
        """-1 when the regex cannot match `text`; otherwise a position no match starts before
        (0 when that is not known). `lower` is `plain_lower(text)`."""
        found = self.first.find(text, lower)
        if found < 0:
            return -1
        for need in self.also:
            if need.find(text, lower) < 0:
                return -1
        return 0 if self.lead is None else max(0, found - self.lead)


class GatedPatterns:
    """Patterns with their gates, laid out for scanning many texts. Each text is first screened
    with one search for every gate's literals at once; past the screen, a gate that is one
    literal is checked inline, and an ASCII text skips the patterns no ASCII text can match."""

    __slots__ = ("_ascii", "_plain", "_other")

    def __init__(self, patterns: Sequence[re.Pattern]):
        gated = [(rx, gate_for(rx)) for rx in patterns]
        self._ascii = _Steps([(rx, g) for rx, g in gated if g is None or g.in_ascii], plain=True)
        self._plain = _Steps(gated, plain=True)
        self._other = _Steps(gated, plain=False)

    def finditer(self, text: str, lower: str | None = None) -> list[re.Match]:
        """Every pattern's `finditer(text)`, in pattern order. `lower`: `text.lower()`, if at hand."""
        out: list[re.Match] = []
        for rx, start in self._starts(text, lower, "steps"):
            out.extend(rx.finditer(text, start))
        return out

    def search(self, text: str, lower: str | None = None) -> bool:
        """Whether any pattern matches somewhere in `text`. `lower`: `text.lower()`, if at hand."""
        for rx, start in self._starts(text, lower, "cheap_first"):
            if rx.search(text, start):
                return True
        return False

    def _starts(self, text: str, lower: str | None, order: str):
        """(pattern, position no match starts before) for each pattern that may match `text`."""
        if text.isascii():
            steps = self._ascii
        elif _NOT_PLAIN.search(text):
            steps, lower = self._other, None
        else:
            steps = self._plain
        if lower is None and steps is not self._other:
            lower = text.lower()
        if not steps.always and not (steps.in_text is not None and steps.in_text.search(text)) \
                and not (steps.in_lower is not None and steps.in_lower.search(lower)):
            return
        for rx, literal, on_lower, lead, gate in getattr(steps, order):
            if literal is not None:
                at = (lower if on_lower else text).find(literal)
                if at >= 0:
                    yield rx, (0 if lead is None else at - lead if at > lead else 0)
            elif gate is None:
                yield rx, 0
            elif (at := gate.start(text, lower)) >= 0:
                yield rx, at


class _Steps:
    """One layout: the steps, and the screen (literals to find in the text, in lower(), or
    `always` when some pattern cannot be screened)."""

    __slots__ = ("steps", "cheap_first", "in_text", "in_lower", "always")

    def __init__(self, gated: list[tuple[re.Pattern, Gate | None]], plain: bool):
        self.steps = tuple(_step(rx, gate, plain) for rx, gate in gated)
        # for a yes/no search the order is free: one-literal gates first
        self.cheap_first = tuple(sorted(self.steps, key=lambda step: step[1] is None))
        in_text: list[str] = []
        in_lower: list[str] = []
        self.always = False
        for _rx, gate in gated:
            if gate is None:
                self.always = True
            elif gate.first.uncased:
                in_text.extend(gate.first.literals)
            elif plain and gate.first.folded is not None:
                in_lower.extend(gate.first.folded)
            else:
                self.always = True
        self.in_text = _any_of(in_text)
        self.in_lower = _any_of(in_lower)


def _any_of(literals: list[str]) -> re.Pattern | None:
    """A search for any of the literals, exactly as `str.find` compares."""
    return re.compile("|".join(map(re.escape, dict.fromkeys(literals)))) if literals else None


def _step(rx: re.Pattern, gate: Gate | None, plain: bool) -> tuple:
    """(pattern, literal to find, find it in lower()?, lead, gate to ask otherwise)."""
    if gate is not None and not gate.also and len(gate.first.literals) == 1:
        if gate.first.uncased:
            return rx, gate.first.literals[0], False, gate.lead, None
        if plain and gate.first.folded is not None:
            return rx, gate.first.folded[0], True, gate.lead, None
    return rx, None, False, None, gate


def gate_for(rx: re.Pattern) -> Gate | None:
    """The gate of a compiled str pattern, or None when no literal is required."""
    if _sp is None or not isinstance(rx.pattern, str):
        return None
    try:
        parsed = _sp.parse(rx.pattern, rx.flags)
    except Exception:  # noqa: BLE001 - never stand in the way of a pattern re accepted
        return None
    candidates = _candidates(parsed.data, top=True)
    if not candidates:
        return None
    ranked = sorted(candidates, key=_rank, reverse=True)
    literals, index = ranked[0]
    lead = None
    if index is not None:
        hi = _sp.SubPattern(parsed.state, parsed.data[:index]).getwidth()[1]
        lead = hi if hi < _c.MAXREPEAT else None
    flags = rx.flags & _MATCHING_FLAGS
    return Gate(_need(literals, flags), lead, tuple(_need(lits, flags) for lits, _ in ranked[1:1 + _ALSO]))


_ALSO = 2  # further required literals checked, after the best one


def _need(literals: tuple[str, ...], flags: int) -> Need:
    return Need(literals, _uncased(literals, flags), _folded(literals, flags),
                any(all(_ascii_class(c, flags) for c in lit) for lit in literals),
                re.compile("|".join(map(re.escape, literals)), flags))


def _rank(candidate) -> tuple:
    literals, index = candidate
    return min(map(len, literals)), index is not None, -len(literals)


def _candidates(items, top: bool = False) -> list[tuple[tuple[str, ...], int | None]]:
    """Each entry: literals one of which every match of the sequence contains, and the index of
    the literal run in a top-level sequence (None elsewhere)."""
    candidates: list[tuple[tuple[str, ...], int | None]] = []
    run: list[str] = []
    run_at = 0
    for i, (op, av) in enumerate(items):
        if op is _c.LITERAL:
            if not run:
                run_at = i
            run.append(chr(av))
            continue
        if run:
            candidates.append((("".join(run),), run_at if top else None))
            run = []
        inner = None
        if op is _c.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if not (add_flags or del_flags):  # scoped flags would change how literals compare
                inner = _best(sub.data)
        elif op is _c.ATOMIC_GROUP:
            inner = _best(av.data)
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT) and av[0] >= 1:
            inner = _best(av[2].data)
        elif op is _c.BRANCH:
            alternatives = [_best(branch.data) for branch in av[1]]
            if all(alternatives):
                inner = tuple(dict.fromkeys(lit for alt in alternatives for lit in alt))
        if inner:
            candidates.append((_shortest_first(inner), None))
    if run:
        candidates.append((("".join(run),), run_at if top else None))
    return candidates


def _best(items) -> tuple[str, ...] | None:
    candidates = _candidates(items)
    return max(candidates, key=_rank)[0] if candidates else None


def _shortest_first(literals: tuple[str, ...]) -> tuple[str, ...]:
    """Drop literals that contain another (the shorter one occurs wherever the longer does)."""
    kept: list[str] = []
    for lit in sorted(literals, key=len):
        if not any(k in lit for k in kept):
            kept.append(lit)
    return tuple(kept)


def _uncased(literals: tuple[str, ...], flags: int) -> bool:
    if not flags & re.IGNORECASE:
        return True
    return all(c.lower() == c == c.upper() for lit in literals for c in lit)


def _folded(literals: tuple[str, ...], flags: int) -> tuple[str, ...] | None:
    """The literals in lower() form, when all are ASCII and each character is matched only by
    characters lower() turns into that form (checked against the engine over ASCII; beyond
    ASCII only NOT_PLAIN and the Kelvin sign match ASCII letters)."""
    if not all(lit.isascii() for lit in literals):
        return None
    for lit in literals:
        for c in lit:
            if _ascii_class(c, flags) != (c.lower(),):
                return None
    return tuple(lit.lower() for lit in literals)


@lru_cache(maxsize=1024)
def _ascii_class(c: str, flags: int) -> tuple[str, ...]:
    """The lower() forms of the ASCII characters the engine matches to literal `c`."""
    one = re.compile(re.escape(c), flags)
    return tuple(sorted({a.lower() for a in _ASCII if one.fullmatch(a)}))

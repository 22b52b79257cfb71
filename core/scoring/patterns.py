"""Language patterns: the answer phrases (Rule 6), scoring cues and refusal sentences each
language contributes through the `register_answer_patterns` hook; `ENGLISH` always applies, and
so do the refusal sentences of every language medvqa ships (`refusals.REFUSALS`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .refusals import refusal_sentences

# What an answer phrase may name: a number, a Latin label (ASCII or full-width) or a circled
# digit, optionally behind quotes, brackets or Markdown bold. Adapters reuse it in their regexes.
ANSWER_TOKEN = r"""[\s*"'「『(（\[【]*(?P<ans>\d+(?:[.．]\d+)?|[A-Za-zＡ-Ｚａ-ｚ]+|[①-⑩])"""


@dataclass(frozen=True)
class LanguagePatterns:
    """Regexes one language contributes (matched case-insensitively); `ENGLISH` always applies."""

    language: str
    answer: tuple[str, ...] = ()  # answer phrases with a named group (?P<ans>...) → Rule 6
    ordering_cues: tuple[str, ...] = ()  # a stem cue → ordering scoring
    numeric_cues: tuple[str, ...] = ()  # a stem cue → numeric-slot scoring
    refusal: tuple[str, ...] = ()  # declining sentences beyond those of `refusals.REFUSALS` (an exam's own)
    option_cues: tuple[str, ...] = ()  # what follows an option label when a stem describes that option


ENGLISH = LanguagePatterns(
    language="en",
    answer=(rf"\b(?:(?:the|correct|final)\s+)*answer\s*(?:is\s*:?|:)\s*{ANSWER_TOKEN}",),
    ordering_cues=(r"\border\b(?!\s+to\b)",),
    numeric_cues=(r"\bcalculate\b",),
    option_cues=(r"\s+(?:is|shows)\b",),
)


@dataclass(frozen=True)
class CompiledPatterns:
    answer: tuple[re.Pattern, ...]
    ordering_cue: re.Pattern
    numeric_cue: re.Pattern
    refusal: re.Pattern
    option_cue: re.Pattern


@lru_cache(maxsize=64)
def _compile(patterns: tuple[LanguagePatterns, ...]) -> CompiledPatterns:
    every = tuple(dict.fromkeys((ENGLISH, *patterns)))
    answer = tuple(re.compile(rx, re.IGNORECASE) for lang in every for rx in lang.answer)
    if missing := [rx.pattern for rx in answer if "ans" not in rx.groupindex]:
        raise ValueError(f"answer patterns without a (?P<ans>...) group: {missing}")

    def union(regexes) -> re.Pattern:
        return re.compile("|".join(f"(?:{rx})" for rx in dict.fromkeys(regexes)), re.IGNORECASE)

    def of(field: str) -> list[str]:
        return [rx for lang in every for rx in getattr(lang, field)]

    return CompiledPatterns(
        answer,
        union(of("ordering_cues")),
        union(of("numeric_cues")),
        union([*refusal_sentences(), *of("refusal")]),
        union(of("option_cues")),
    )


def compile_patterns(patterns: Sequence[LanguagePatterns] = ()) -> CompiledPatterns:
    """`ENGLISH` and the given patterns, with every language's refusal sentences, compiled once."""
    return _compile(tuple(patterns))

"""Japanese answer phrases, scoring cues and refusals; the number of keys a stem asks for."""

from __future__ import annotations

import re

from medvqa.core.patterns import ANSWER_TOKEN, LanguagePatterns

_COLON = r"\s*[:：]\s*"

JAPANESE = LanguagePatterns(
    language="ja",
    answer=(
        rf"正解は\s*{ANSWER_TOKEN}",
        rf"答えは\s*{ANSWER_TOKEN}",
        rf"解答{_COLON}{ANSWER_TOKEN}",
        rf"答え{_COLON}{ANSWER_TOKEN}",
    ),
    ordering_cues=("順に", "順番"),
    numeric_cues=(rf"解答{_COLON}①", "①②", "求めよ"),
    refusal=("回答できません", "判断できません", "お答えできません", "答えられません"),
)

_KANJI_DIGITS = {c: i for i, c in enumerate("一二三四五六七八九", start=1)}
_SELECT = re.compile(r"([0-9０-９]+|[一二三四五六七八九])\s*つ\s*選べ")


def select_count(stem: str) -> int | None:
    """How many keys the stem asks for ("2つ選べ", "２つ選べ", "二つ選べ" → 2); None if unstated."""
    m = _SELECT.search(stem)
    if m is None:
        return None
    count = m.group(1)
    return _KANJI_DIGITS.get(count) or int(count)

"""Helpers every Japanese exam adapter needs: the Japanese answer patterns, how many options a
stem asks for, and full-width clean-up.

    >>> from medvqa.ja import JAPANESE, fold, select_count
    >>> select_count("誤っているのはどれか。２つ選べ。")
    2
"""

from __future__ import annotations

import re
import unicodedata

from medvqa.core.scoring.patterns import ANSWER_TOKEN, LanguagePatterns

__all__ = [
    "ANSWER_INSTRUCTION",
    "CONFIDENCE_INSTRUCTION",
    "FORCED_GUESS",
    "JAPANESE",
    "SYSTEM_PROMPT",
    "fold",
    "normalize_width",
    "select_count",
]

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
    # refusal sentences: medvqa.core.scoring.refusals, which holds every language's
    option_cues=(r"\s*[はが]",),  # "A は…", "①が…": the stem describes that option
)

# The prompt sentences every Japanese exam adapter shares (JMed48k Appendix K.3's wording); a
# `medvqa.Template` formats {labels} and {n} in the instruction.
SYSTEM_PROMPT = "あなたは日本の医療系国家試験を解く専門家です。"
ANSWER_INSTRUCTION = (
    '回答は選択肢の記号のみを、次の JSON 形式で出力してください: {{"answer": ["記号"]}}\n'
    "選択肢の記号: {labels}\n選ぶ数: {n}つ"
)
FORCED_GUESS = "確信が持てない場合でも、最も可能性が高いと考える選択肢を必ず選んで回答してください。"
CONFIDENCE_INSTRUCTION = (
    '同じ JSON オブジェクトに、回答が正しいと考える確信度を 0 から 100 の数値で "confidence" として加えてください'
    '（例: "confidence": 80）。'
)

_KANJI_DIGITS = {c: i for i, c in enumerate("一二三四五六七八九", start=1)}
_SELECT = re.compile(r"([0-9０-９]+|[一二三四五六七八九])\s*つ\s*選べ")


def select_count(stem: str) -> int | None:
    """How many options the stem asks for ("2つ選べ", "２つ選べ", "二つ選べ" → 2); None when
    it does not say."""
    m = _SELECT.search(stem)
    if m is None:
        return None
    count = m.group(1)
    return _KANJI_DIGITS.get(count) or int(count)


def normalize_width(text: str | None) -> str:
    """NFKC with surrounding whitespace stripped: full-width Latin letters, digits and
    punctuation become ASCII ("Ａ１：" → "A1:"), half-width katakana become full-width, circled
    digits become digits ("①" → "1"). None reads as ""."""
    return unicodedata.normalize("NFKC", text or "").strip()


def fold(text: str) -> str:
    """A matching key: `normalize_width` with every whitespace removed ("２ つ 選べ" →
    "2つ選べ"). For comparing and searching; never written out."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))

"""Polish answer phrases and refusal sentences, contributed through `register_answer_patterns`.

Rule 6 reads `Odpowiedź: C`, `Prawidłowa odpowiedź to C`, `Poprawna odpowiedź: C`,
`Odpowiedź prawidłowa to C`, `Wybieram odpowiedź C`; a reply without an answer that holds a
declining sentence (`Nie mogę odpowiedzieć…`, `Nie jestem w stanie określić…`) is a refusal.
The reader upper-cases replies for letter-labelled items, so every pattern is matched
case-insensitively.
"""

from __future__ import annotations

from medvqa import ANSWER_TOKEN, LanguagePatterns

_ANSWER = r"odpowied[źz]\w*"  # odpowiedź, odpowiedzią, odpowiedz (without diacritics)
_RIGHT = r"(?:prawidłow|poprawn|właściw)\w*"

POLISH = LanguagePatterns(
    language="pl",
    answer=(
        rf"\b{_ANSWER}\s*[:：]\s*{ANSWER_TOKEN}",
        rf"\b{_RIGHT}\s+{_ANSWER}\s*(?:to|jest|brzmi)?\s*[:：]?\s*{ANSWER_TOKEN}",
        rf"\b{_ANSWER}\s+{_RIGHT}\s*(?:to|jest)?\s*[:：]?\s*{ANSWER_TOKEN}",
        rf"\bwybieram\s+(?:{_ANSWER}\s+)?{ANSWER_TOKEN}",
    ),
    refusal=(
        r"\bnie\s+(?:mogę|moge|potrafię|potrafie)\s+(?:jednoznacznie\s+)?(?:odpowiedzieć|udzielić|wskazać|określić|ustalić|ocenić)",
        r"\bnie\s+jestem\s+w\s+stanie\b",
        r"\bnie\s+(?:da\s+się|można)\s+(?:jednoznacznie\s+)?(?:odpowiedzieć|określić|ustalić|wskazać)",
        r"\bodmawiam\b",
    ),
    option_cues=(r"\s+(?:jest|przedstawia)\b",),
)

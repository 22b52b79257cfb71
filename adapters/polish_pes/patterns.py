"""Polish answer phrases, contributed through `register_answer_patterns`.

Rule 6 reads `Odpowiedź: C`, `Prawidłowa odpowiedź to C`, `Poprawna odpowiedź: C`,
`Odpowiedź prawidłowa to C`, `Wybieram odpowiedź C`. Polish refusal sentences (`Nie mogę
odpowiedzieć…`, `Nie jestem w stanie określić…`) are a language's, not this exam's: they are
in `medvqa.core.scoring.refusals` with every other language's, and apply to every reply.
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
    option_cues=(r"\s+(?:jest|przedstawia)\b",),
)

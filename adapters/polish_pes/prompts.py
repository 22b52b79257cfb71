"""The Polish system prompts, the answer schema and the forced-guess sentence.

Two system prompts, as the PES VQA paper (arXiv 2608.12928, Appendix A) describes them: one for
the configurations that show the question text (C+Q, C+Q+I), one for those that show only the
answer choices (C, C+I), which says that only the options are given and asks for the most
likely answer. Neither mentions images: an image is attached, never announced, so removing it
changes nothing in the text. The reply is `{"response": "<LETTER>"}`; with structured output
the JSON schema below (Appendix A.3) constrains it.

These texts are written to the paper's description of Appendix A; the appendix itself was not
available when they were written, so they must be checked against it when it is.
"""

from __future__ import annotations

LETTERS = ("A", "B", "C", "D", "E")

SYSTEM_WITH_QUESTION = (
    "Jesteś lekarzem specjalistą i rozwiązujesz test Państwowego Egzaminu Specjalizacyjnego (PES). "
    "Otrzymasz pytanie jednokrotnego wyboru oraz pięć odpowiedzi oznaczonych literami A, B, C, D i E; "
    "dokładnie jedna z nich jest prawidłowa. Wybierz prawidłową odpowiedź. "
    'Odpowiedz wyłącznie obiektem JSON w postaci {"response": "<LITERA>"}, gdzie <LITERA> to jedna '
    "z liter A, B, C, D lub E, bez żadnych wyjaśnień."
)

SYSTEM_OPTIONS_ONLY = (
    "Jesteś lekarzem specjalistą i rozwiązujesz test Państwowego Egzaminu Specjalizacyjnego (PES). "
    "Otrzymasz wyłącznie pięć odpowiedzi do pytania jednokrotnego wyboru, oznaczonych literami A, B, C, D i E, "
    "bez treści pytania; dokładnie jedna z nich jest prawidłowa. Na podstawie samych odpowiedzi wybierz tę, "
    "która najprawdopodobniej jest prawidłowa. "
    'Odpowiedz wyłącznie obiektem JSON w postaci {"response": "<LITERA>"}, gdzie <LITERA> to jedna '
    "z liter A, B, C, D lub E, bez żadnych wyjaśnień."
)

# Appendix A.3: exactly one required string field `response`, one of A-E, nothing else.
RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {"response": {"type": "string", "enum": list(LETTERS)}},
    "required": ["response"],
    "additionalProperties": False,
}

FORCED_GUESS = ("Jeśli nie masz pewności, i tak wskaż jedną, najbardziej prawdopodobną odpowiedź; "
                "odpowiedź jest wymagana.")

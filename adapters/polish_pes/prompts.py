"""The Polish system prompts, the answer schema and the forced-guess sentence.

The two system prompts are the PES VQA paper's own (arXiv 2608.12928, Appendix A.1 for the
configurations that show the question text, C+Q and C+Q+I; Appendix A.2 for those that show
only the answer options, C and C+I), quoted verbatim in Polish, the language every experiment
used. Neither mentions images: an image is attached, never announced, so removing it changes
nothing in the text. The reply is `{"response": "<LETTER>"}`; with structured output the JSON
schema below (Appendix A.3) constrains it.
"""

from __future__ import annotations

LETTERS = ("A", "B", "C", "D", "E")

_FORMAT = (
    "Wybierz dokładnie jedną odpowiedź spośród: A, B, C, D, E. "
    'Zwróć wyłącznie poprawny obiekt JSON w następującej strukturze: {"response": "<LETTER>"} '
    "Zastąp <LETTER> jedną wybraną literą: A, B, C, D albo E. "
    'Pole "response" musi być typu string. '
    "Bez wyjaśnień, bez komentarzy, bez dodatkowego tekstu."
)

# Appendix A.1: configurations with the question text (C+Q, C+Q+I).
SYSTEM_WITH_QUESTION = "Odpowiadasz na pytania jednokrotnego wyboru A–E z testu medycznego dla lekarzy. " + _FORMAT

# Appendix A.2: configurations without the question text (C, C+I).
SYSTEM_OPTIONS_ONLY = (
    "Odpowiadasz na pytania jednokrotnego wyboru A–E z testu medycznego dla lekarzy. "
    "Nie otrzymujesz treści pytania. Masz tylko odpowiedzi A–E. "
    "Mimo braku treści pytania spróbuj wskazać najbardziej prawdopodobną poprawną odpowiedź. " + _FORMAT
)

# Appendix A.3: exactly one required string field `response`, one of A-E, nothing else.
RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {"response": {"type": "string", "enum": list(LETTERS)}},
    "required": ["response"],
    "additionalProperties": False,
}

CONFIDENCE_INSTRUCTION = (
    "W tym samym obiekcie JSON podaj też swoją pewność, że odpowiedź jest poprawna, jako liczbę od 0 do 100 "
    'w polu "confidence" (na przykład "confidence": 80).'
)
FORCED_GUESS = (
    "Jeśli nie masz pewności, i tak wskaż jedną, najbardziej prawdopodobną odpowiedź; odpowiedź jest wymagana."
)

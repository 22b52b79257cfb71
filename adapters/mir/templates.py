"""The Spanish words around a MIR item and the Spanish answer phrases.

The template asks for the option's number in medvqa's JSON format; it never announces the
image, so a run without it (C+Q) differs from one with it (C+Q+I) in the image alone. Spanish
refusal sentences ("no puedo ver ni analizar imágenes") are a language's, not this exam's: they
are in medvqa's refusal list with every other language's and apply to every reply.
"""

from __future__ import annotations

from medvqa import ANSWER_TOKEN, LanguagePatterns, Template

TEMPLATE = Template(
    name="mir-es",
    system="Eres un médico que responde a preguntas del examen MIR. Cada pregunta tiene una sola respuesta correcta.",
    question_header="Pregunta: ",
    options_header="Opciones:",
    option_line="{label}. {text}",
    instruction=(
        'Responde solo con el número de la opción correcta, en JSON: {{"answer": ["<número>"]}}. '
        "Números válidos: {labels}."
    ),
)
FORCED_GUESS = "Si no estás seguro, da igualmente tu mejor respuesta; la respuesta es obligatoria."
CONFIDENCE_INSTRUCTION = (
    "En el mismo objeto JSON, indica también tu confianza en que la respuesta es correcta, como un número "
    'de 0 a 100 en "confidence" (por ejemplo "confidence": 80).'
)

_ANSWER = r"respuesta(?:\s+(?:correcta|final))?"
_OPTION = r"(?:(?:la|el)\s+)?(?:opci[oó]n\s+|n[uú]mero\s+)?"

SPANISH = LanguagePatterns(
    language="es",
    answer=(
        rf"\b{_ANSWER}\s*[:：]\s*{_OPTION}{ANSWER_TOKEN}",
        rf"\b{_ANSWER}\s+es\s*[:：]?\s*{_OPTION}{ANSWER_TOKEN}",
        rf"\b(?:la\s+)?opci[oó]n\s+correcta\s+es\s*[:：]?\s*{_OPTION}{ANSWER_TOKEN}",
        rf"\b(?:elijo|escojo|selecciono|marco)\s+{_OPTION}{ANSWER_TOKEN}",
    ),
    option_cues=(r"\s+(?:es|corresponde)\b",),
)

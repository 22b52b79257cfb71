"""The checks a quiz's variant must pass (`check_variant`): a word-level paraphrase of an exam
question keeps its numbers, its drugs and its sides of the body, or it is a second right answer
or a wrong question. The checks read digits and words in Latin script, plus the few Japanese
and Hebrew words for a side in `LATERALITY`: a drug written in katakana, or a side named in
other words, is not checked (docs/audit.md, "Contamination")."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

# Stems of international nonproprietary names (WHO's stem book), as word endings: a variant in
# which such a word appears or disappears has changed a drug.
DRUG_STEMS = (
    "mab",
    "nib",
    "pril",
    "sartan",
    "olol",
    "dipine",
    "statin",
    "cillin",
    "mycin",
    "micin",
    "floxacin",
    "cycline",
    "azole",
    "prazole",
    "vir",
    "parin",
    "tidine",
    "triptan",
    "afil",
    "caine",
    "azepam",
    "azolam",
    "oxetine",
    "triptyline",
    "gliptin",
    "gliflozin",
    "glutide",
    "semide",
    "thiazide",
    "sone",
    "olone",
    "platin",
    "taxel",
    "rubicin",
    "profen",
    "coxib",
    "parib",
    "lukast",
    "tropium",
    "terol",
    "dronate",
    "xaban",
    "gatran",
)
_DRUG = re.compile(rf"\b[A-Za-z]{{3,}}(?:{'|'.join(DRUG_STEMS)})\b", re.I)
# Words naming a side of the body, by side, in the exams' languages (English, Polish, Spanish,
# Japanese, Hebrew): a variant must name each side as often as the original.
LATERALITY = {
    "left": r"\bleft\b|\blew(?:y|a|e|ego|ej|ym|ą|ych)\b|\bizquierd[oa]s?\b|左|שמאל",
    "right": r"\bright\b|\bpraw(?:y|a|e|ego|ej|ym|ą|ych)\b|\bderech[oa]s?\b|右|ימין",
    "both": r"\bbilateral(?:ly)?\b|\bobustronn\w*\b|両側|דו.צדדי",
}
_SIDES = {side: re.compile(pattern, re.I) for side, pattern in LATERALITY.items()}
# Digits, with a decimal point or comma inside a number (3.5, 3,5), full-width digits as digits.
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def numbers(text: str) -> Counter[str]:
    """The numbers of `text` (full-width digits read as digits), with how often each occurs."""
    return Counter(_NUMBER.findall(unicodedata.normalize("NFKC", text)))


def drugs(text: str) -> Counter[str]:
    """The words of `text` ending in a drug stem (`DRUG_STEMS`), lower-cased, with their counts."""
    return Counter(m.lower() for m in _DRUG.findall(text))


def sides(text: str) -> Counter[str]:
    """How often `text` names each side of the body (`LATERALITY`)."""
    return Counter({side: len(p.findall(text)) for side, p in _SIDES.items()})


def squeezed(text: str) -> str:
    """`text` with every run of whitespace one space: variants differing only so are the same."""
    return " ".join(text.split())


def check_variant(original: str, variant: str, others: Sequence[str] = ()) -> str | None:
    """Why `variant` cannot stand beside `original` in a quiz, or None when it can; `others` are
    the variants accepted before it."""
    if not variant.strip():
        return "empty"
    if squeezed(variant) == squeezed(original):
        return "identical to the original"
    if any(squeezed(variant) == squeezed(o) for o in others):
        return "the same as another variant"
    if numbers(variant) != numbers(original):
        return f"changes the numbers ({_listed(numbers(original))} in the original, {_listed(numbers(variant))} here)"
    if drugs(variant) != drugs(original):
        return f"changes a drug name ({_listed(drugs(original))} in the original, {_listed(drugs(variant))} here)"
    if sides(variant) != sides(original):
        return "changes the side of the body (left, right, both)"
    return None


def _listed(counts: Counter[str]) -> str:
    return ", ".join(sorted(counts.elements())) or "none"

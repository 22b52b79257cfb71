"""Character classes and text clean-up shared by every reader.

Text is kept as printed (full-width digits and letters, chemical and isotope notation); only
the spaces that typesetting added are removed. `medvqa.ja.fold` normalises a copy for matching only.
"""

from __future__ import annotations

import re

SUPERSCRIPTS = dict(zip("0123456789+-−=()nmi", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿᵐⁱ"))
SUBSCRIPTS = dict(zip("0123456789+-−=()aeoxhklmnpst", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜ"))

_SPACE = re.compile(r"[ \u3000\xa0]+")


def is_wide(ch: str) -> bool:
    """True for characters set on the full-width grid (kana, kanji, Japanese punctuation,
    full-width forms). Spaces next to them are typesetting, never content."""
    if not ch:
        return False
    o = ord(ch)
    return (
        0x2E80 <= o <= 0x9FFF
        or 0xF900 <= o <= 0xFAFF
        or 0xFF00 <= o <= 0xFFEF
        or 0x3000 <= o <= 0x303F
        or 0x2460 <= o <= 0x24FF
        or 0x2500 <= o <= 0x25FF
        or ch in "〈〉《》「」『』【】〔〕―…・"
    )


def superscript(ch: str) -> str:
    return SUPERSCRIPTS.get(ch, ch)


def subscript(ch: str) -> str:
    return SUBSCRIPTS.get(ch, ch)


def clean(text: str) -> str:
    """Collapse whitespace; drop every space that touches a full-width character (justified
    spreading such as `補 体`, and the gap typesetting puts between Japanese and Latin);
    keep single spaces between Latin words. Tabs (column gaps) become spaces too."""
    text = _SPACE.sub(" ", text.replace("\t", " ").replace("\n", " ")).strip()
    out = []
    for i, ch in enumerate(text):
        if ch == " " and (is_wide(text[i - 1]) or is_wide(text[i + 1])):
            continue
        out.append(ch)
    return "".join(out)

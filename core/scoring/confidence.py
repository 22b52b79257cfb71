"""A reply's confidence, read two ways and recorded with the way (`confidence_method`):

- `stated`: the number the model wrote beside its answer, `{"answer": [...], "confidence": 85}`
  (0-100, as the confidence prompt asks), read from the same JSON object by the answer reader's
  `read_json`; a value that is no number from 0 to 100 (text, a boolean, 120, NaN) is null,
  never guessed from;
- `logprobs`: where the server returned token log-probabilities (`logprobs` / `top_logprobs`
  of an OpenAI-compatible server or vLLM), the probability mass of the chosen label among the
  option labels at the position where the answer names it: Σ p(chosen label) / Σ p(any option
  label) over the alternatives the server listed there (the sampled token among them). Several
  chosen labels: the product of each label's share at its own position. The answer's position is
  the first token naming a chosen label after the last `"answer"` key of the reply (the object
  `read_json` reads), or from the start for a reply without one.

Pure functions of a reply, its token log-probabilities and the item.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..items import Item
from .normalize import read_json

STATED = "stated"
LOGPROBS = "logprobs"
CONFIDENCE_KEY = "confidence"
_PERCENT = re.compile(r"^\s*(\d{1,3}(?:\.\d+)?)\s*%?\s*$")
# what surrounds a label inside a token: spaces, quotes, brackets, JSON punctuation
_WRAPPING = " \t\n\"'[](){}.,:;"


def stated_confidence(text: str | None) -> tuple[bool, float | None]:
    """(stated, confidence in 0-1): whether the reply's JSON answer carries a `confidence` key,
    and its value / 100 where it is a number from 0 to 100 (or such a number as text, "85" or
    "85 %"); None where it is anything else."""
    if not text or f'"{CONFIDENCE_KEY}"' not in text:
        return False, None
    found, value = read_json(text, CONFIDENCE_KEY)
    if not found or isinstance(value, list):  # (a bare JSON array is an answer, not a confidence)
        return False, None
    if isinstance(value, str) and (m := _PERCENT.match(value)):
        value = float(m.group(1))
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
        return True, None
    return True, float(value) / 100


def _bare(token: str) -> str:
    return token.strip(_WRAPPING).casefold()


def label_share(position: Mapping[str, Any], chosen: str, labels: set[str]) -> float | None:
    """The chosen label's share of the option labels' probability at one token `position`
    ({"token", "logprob", "top": [[token, logprob], ...]}): None where no alternative there is
    an option label besides nothing at all."""
    alternatives = {str(t): float(lp) for t, lp in position.get("top") or []}
    alternatives.setdefault(str(position.get("token")), float(position.get("logprob", -math.inf)))
    mass: dict[str, float] = {}
    for token, logprob in alternatives.items():
        if (bare := _bare(token)) in labels and math.isfinite(logprob):
            mass[bare] = mass.get(bare, 0.0) + math.exp(logprob)
    total = sum(mass.values())
    return mass.get(chosen, 0.0) / total if total > 0 else None


def logprob_confidence(
    tokens: Sequence[Mapping[str, Any]], predicted: Sequence[str] | None, item: Item
) -> float | None:
    """The probability mass of the predicted labels among the item's option labels (the module's
    docstring): None without a prediction, without options, or where a predicted label is named
    at no token."""
    if not predicted or not item.options or not tokens:
        return None
    label_of = {o.key: str(o.label).casefold() for o in item.options}
    labels = set(label_of.values())
    text = "".join(str(t.get("token", "")) for t in tokens)
    start_char = text.rfind('"answer"')
    start, seen = 0, 0
    if start_char >= 0:
        for i, t in enumerate(tokens):
            seen += len(str(t.get("token", "")))
            if seen > start_char + len('"answer"'):
                start = i + 1
                break
    share = 1.0
    for key in predicted:
        chosen = label_of.get(key)
        if chosen is None:
            return None
        at = next((i for i in range(start, len(tokens)) if _bare(str(tokens[i].get("token", ""))) == chosen), None)
        if at is None:
            return None
        part = label_share(tokens[at], chosen, labels)
        if part is None:
            return None
        share *= part
        start = at + 1
    return share


def confidence_fields(
    item: Item, text: str | None, predicted: Sequence[str] | None, tokens: Sequence[Mapping[str, Any]] | None
) -> dict[str, Any]:
    """The record's confidence fields: {"confidence", "confidence_method"} from the stated
    number where the reply states one (null where it is unreadable), else from the token
    log-probabilities where the server gave them; {} where neither was asked for, so a record
    without a confidence has no such field."""
    stated, value = stated_confidence(text)
    if stated:
        return {"confidence": value, "confidence_method": STATED}
    if tokens:
        return {"confidence": logprob_confidence(tokens, predicted, item), "confidence_method": LOGPROBS}
    return {}

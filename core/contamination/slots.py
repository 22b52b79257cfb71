"""Slot guessing (Deng et al., NAACL 2024, "Investigating data contamination in modern
benchmarks", the TS-Guessing "question-multichoice" setting): one wrong option of a question is
masked and the model is asked to write it back. A wrong option is not implied by the question
the way the right answer is; a model that restores it word for word has most likely read the
exam. The exact-match rate is the paper's measure; the normalised rate beside it forgives case,
width, punctuation and spacing.

The prompt and the reading follow the reference implementation of the paper's authors' group
(ntunlp/LLMSanitize, `closed_data_methods/ts_guessing_question_multichoice.py`): the prompt word
for word (`PROMPT`), and a reply cut after "<letter>:" to its first sentence when it names the
letter (`read_reply`); the exact match is of the lower-cased texts. Where medvqa departs: the
masked option is chosen by a seeded draw per item (the same option for every model and every
run), not an unseeded one; and the reply is compared with the masked option itself, as the paper
describes, where one version of that implementation compares it with the right answer.

Only items with a single right answer and at least two wrong options are asked (the mask must
leave a wrong option shown beside it); the others are counted in `skipped`. Each rate has
Wilson's score interval with the boundary correction (`stats.binomial_ci`), over the items asked."""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..items import Item

PROMPT_HEAD = """Please fill in the [] in option {letter} based on your benchmark knowledge.

The crucial rule is that you should provide a different answer in other options below.

Question: {question}
Options:"""
PROMPT_TAIL = "\n\nReply with answer only."
SLOT_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 256, "response_format": "none"}
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_NOT_WORD = re.compile(r"[\W_]+", re.U)


def masked_option(item: Item, seed: int = 0) -> int | None:
    """The index of the option to mask: a wrong one drawn by `seed` and the item's id, or None when
    the item has not a single right answer and two wrong options."""
    if item.gold is None or len(item.gold.keys) != 1:
        return None
    wrong = [i for i, o in enumerate(item.options) if o.key not in item.gold.keys]
    if len(wrong) < 2:
        return None
    return random.Random(f"{seed}:{item.id}").choice(wrong)


def prompt(item: Item, masked: int) -> str:
    """The question with its options lettered A, B, ... and option `masked` as `[MASK]`."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    lines = [PROMPT_HEAD.format(letter=letters[masked], question=item.question.strip())]
    for i, option in enumerate(item.options):
        lines.append(f"{letters[i]}: [{'MASK' if i == masked else option.text}]")
    return "\n".join(lines) + PROMPT_TAIL


def read_reply(text: str | None, letter: str) -> str:
    """The reply's guess: after "<letter>:", its first sentence, when the reply names the letter;
    else the reply as it is. Brackets around the guess are dropped."""
    reply = (text or "").strip()
    if f"{letter}:" in reply:
        reply = reply.split(f"{letter}:")[1].strip()
        reply = _SENTENCE_END.split(reply, maxsplit=1)[0].strip()
    if reply.startswith("[") and reply.endswith("]"):
        reply = reply[1:-1].strip()
    return reply


def normalised(text: str) -> str:
    """`text` compared loosely: NFKC (full width as half), case folded, without punctuation and spaces."""
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


def guess_slots(
    items: Iterable[Item],
    model: str,
    *,
    seed: int = 0,
    backend_options: dict[str, Any] | None = None,
    cache: bool = True,
    cache_path: str | Path | None = None,
) -> dict[str, Any]:
    """`model` asked to restore one masked wrong option of each item through the one request path;
    the exact and normalised match rates with their intervals, what it took, and each guess."""
    from .. import stats
    from ..inference.base import Request, Response, request_key
    from ..inference.cache import ResponseCache
    from ..inference.path import RequestPath, backend_for
    from .quiz import prompt_hash, spent

    backend = backend_for(model, backend_options or {}, SLOT_DEFAULTS)
    params = {**backend.params, "slot_prompt": prompt_hash(PROMPT_HEAD + PROMPT_TAIL)}
    asked, skipped = [], 0
    for item in items:
        masked = masked_option(item, seed)
        if masked is None:
            skipped += 1
            continue
        messages = [{"role": "user", "content": prompt(item, masked)}]
        key = request_key(backend.model, params, messages, backend.endpoint)
        asked.append((Request(item=item, condition="slot", messages=messages, key=key), masked))
    masks = {req.item.id: masked for req, masked in asked}
    guesses: dict[str, dict[str, Any]] = {}

    def done(req: Request, response: Response, value: Any, attempts: int) -> bool:
        masked = masks[req.item.id]
        letter = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[masked]
        truth = req.item.options[masked].text
        guess = read_reply(response.text, letter) if response.error is None else ""
        guesses[req.item.id] = {
            "masked": letter,
            "option": truth,
            "guess": guess,
            "exact": guess.lower() == truth.strip().lower(),
            "normalised": bool(normalised(guess)) and normalised(guess) == normalised(truth),
            "error": response.error,
        }
        return response.error is None

    response_cache = ResponseCache(Path(cache_path) if cache_path else None) if cache else None
    path = RequestPath(backend, response_cache)
    try:
        path.send([req for req, _ in asked], done, dedupe=True)
    finally:
        if response_cache is not None:
            response_cache.close()
    n = len(guesses)
    out: dict[str, Any] = {"model": model, "seed": seed, "n": n, "skipped": skipped}
    for name in ("exact", "normalised"):
        k = sum(g[name] for g in guesses.values())
        ci = stats.binomial_ci(k, n) if n else None
        out[name] = {"matches": k, "rate": k / n if n else None, "ci": list(ci) if ci else None}
    out.update(spent(path), errors=sum(g["error"] is not None for g in guesses.values()))
    out["ci_method"] = stats.WILSON
    out["guesses"] = guesses
    return out

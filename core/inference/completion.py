"""A chat completion read into a `Response`: the answer's text (secrets scrubbed), the reasoning
the provider gave beside it, a refusal, the finish reason when the answer was cut off, the token
counts and what the answer cost.

The litellm backend reads every answer here, whether litellm or the `openai` SDK brought it
(`openai_compatible.py`), and so does the batch path (`batch.py`) for a batch's output lines.
An answer without a usable completion raises `UnreadableResponse`: it is retried like a server
error, then recorded as an error, never cached.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..usage import token_count, usage_cost
from .base import Response
from .output import writable_text
from .reasoning import message_reasoning, reasoning_tokens

# what a response keeps of the server's token log-probabilities: enough for a multiple-choice
# answer and its reasoning's end, bounded whatever a server sends
MAX_LOGPROB_TOKENS = 4096
MAX_TOP_LOGPROBS = 20


class UnreadableResponse(Exception):
    """A 2xx answer without a usable completion (retried like a server error)."""

    status_code = 200


def read_completion(
    result: Any,
    latency_s: float,
    *,
    stats: dict[str, Any],
    scrub: Callable[[str], str],
    price: tuple[float, float] | None,
    price_per_token: tuple[float, float] | None,
) -> Response:
    """The completion's text (`scrub`bed), with the reasoning the provider gave beside it
    (`reasoning.message_reasoning`) and the finish reason when it is `length`. A provider's
    refusal (`message.refusal`) is the text of a `refusal` response; an answer with neither
    content nor reasoning raises `UnreadableResponse`, so it is retried, then recorded as an
    error, never cached. Reasoning without content is an answer (the record says whether
    the reasoning was cut off).

    Its tokens and cost are added to `stats`. The cost is at `price` (USD per million prompt and
    completion tokens: `--price`) where it is given, else at `price_per_token` (litellm's price
    of the model, for an answer the SDK brought), else litellm's own cost of the call."""
    try:
        choice = result.choices[0]
        message = choice.message
        text = message.content
    except (AttributeError, IndexError, TypeError) as exc:
        raise UnreadableResponse(f"no completion in the answer ({exc})") from None
    refusal = getattr(message, "refusal", None)
    refused = refusal if isinstance(refusal, str) and refusal.strip() else None
    reasoning = message_reasoning(message)
    answered = isinstance(text, str) and bool(text.strip())
    if not answered and refused is None and reasoning is None:
        raise UnreadableResponse(f"the answer has no content (content: {text!r})")
    finish = getattr(choice, "finish_reason", None)
    usage = getattr(result, "usage", None)
    prompt, completion = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
    tokens: dict[str, int | float | None] = {"prompt_tokens": prompt, "completion_tokens": completion}
    if (thought := reasoning_tokens(usage)) != 0:
        tokens["reasoning_tokens"] = thought
    for name, count in tokens.items():
        stats[name] = stats.get(name, 0) + (count or 0)
    if prompt is None or completion is None:
        cost = 0.0  # unknown: the record's usage says why
    elif price:
        cost = (prompt * price[0] + completion * price[1]) / 1e6
    elif price_per_token is not None:  # litellm's price of the model, per token
        cost = prompt * price_per_token[0] + completion * price_per_token[1]
    else:
        cost = usage_cost((getattr(result, "_hidden_params", None) or {}).get("response_cost")) or 0.0
    stats["cost_usd"] += cost
    if cost:  # what this answer cost, so that any grouping of records sums it
        tokens["cost_usd"] = round(cost, 10)
    thinking = scrub(writable_text(reasoning)) if reasoning is not None else None
    cut_off = "length" if finish == "length" else None
    if answered or refused is None:  # neither answered nor refused: reasoning alone (else raised above)
        return Response(
            text=scrub(writable_text(text if isinstance(text, str) else "")),
            usage=tokens,
            latency_s=latency_s,
            reasoning=thinking,
            finish_reason=cut_off,
            logprobs=token_logprobs(getattr(choice, "logprobs", None)),
        )
    return Response(
        text=scrub(writable_text(refused)),
        refusal=True,
        usage=tokens,
        latency_s=latency_s,
        reasoning=thinking,
        finish_reason=cut_off,
    )


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _logprob(value: Any) -> float | None:
    """A log-probability: a finite number at most 0 (a probability at most 1), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value > 0:
        return None
    return float(value)


def token_logprobs(logprobs: Any) -> list[dict[str, Any]] | None:
    """The completion's token log-probabilities (OpenAI's `choices[0].logprobs.content`, an
    object or a dict: from litellm, the SDK, a batch line or the cache) as [{"token", "logprob",
    "top": [[token, logprob], ...]}], read as untrusted: at most `MAX_LOGPROB_TOKENS` tokens and
    `MAX_TOP_LOGPROBS` alternatives each, an alternative that is no token with a log-probability
    left out. None where the server sent none, or a token entry that is unreadable (no
    confidence is better than one read from a damaged list)."""
    content = _field(logprobs, "content") if logprobs is not None else None
    if not isinstance(content, list) or not content:
        return None
    out = []
    for entry in content[:MAX_LOGPROB_TOKENS]:
        token, logprob = _field(entry, "token"), _logprob(_field(entry, "logprob"))
        if not isinstance(token, str) or logprob is None:
            return None
        top = _field(entry, "top_logprobs")
        if top is None:
            top = _field(entry, "top")
        alternatives = []
        for alt in (top if isinstance(top, list) else [])[:MAX_TOP_LOGPROBS]:
            pair = alt if isinstance(alt, list) and len(alt) == 2 else (_field(alt, "token"), _field(alt, "logprob"))
            if isinstance(pair[0], str) and (lp := _logprob(pair[1])) is not None:
                alternatives.append([pair[0], lp])
        out.append({"token": token, "logprob": logprob, "top": alternatives})
    return out


def _count(usage: Any, name: str) -> int | None:
    """A token count of `usage`: 0 where the server gives none, None where it gives one that
    is no count (null in the record)."""
    n = getattr(usage, name, None)
    return 0 if n is None else token_count(n)

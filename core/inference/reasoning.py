"""A reply's reasoning, apart from its answer.

Reasoning models give their reasoning in one of two places, and medvqa reads neither as the
answer:

- a field of the message beside `content`: `reasoning_content` (vLLM's reasoning parsers,
  DeepSeek, and litellm, which puts every provider's reasoning there), `reasoning` (newer vLLM,
  OpenRouter), or litellm's `thinking_blocks` (`[{"type": "thinking", "thinking": ...}]`,
  Anthropic's); the backend reads them (`message_reasoning`);
- leading `<think>…</think>` or `<thinking>…</thinking>` blocks in the text itself (a server
  without a reasoning parser); `split_reply` takes them off the front. A block that is never
  closed is all reasoning: the reply was cut off inside it. A reply whose opening tag was in
  the prompt (the chat templates of DeepSeek-R1 and Qwen3 end the prompt with `<think>`) starts
  with the reasoning and has only the closing tag; what stands before it is reasoning too.

A reply with reasoning and no answer after it, cut off (by `max_tokens`: finish reason
`length`, or inside an unclosed block), is `cut_off`: the runner records it as a
`parse_failure` with the reason "reasoning cut off" (`REASONING_CUT_OFF`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..usage import token_count

REASONING_CUT_OFF = "reasoning cut off"
_OPEN = re.compile(r"\A\s*<(think|thinking)>", re.IGNORECASE)
_CLOSE_ONLY = re.compile(r"</(think|thinking)>", re.IGNORECASE)


@dataclass(frozen=True)
class Reply:
    answer: str | None  # the text after the reasoning (None: no text at all)
    reasoning: str | None  # every piece of reasoning, in order, joined by a blank line
    cut_off: bool  # reasoning and no answer: the reply ended inside its reasoning


def split_reply(text: str | None, reasoning: str | None = None, finish_reason: str | None = None) -> Reply:
    """`text` (the message's content) without its leading reasoning blocks, and the reasoning
    (the provider's field `reasoning` first, then the blocks). See the module's docstring."""
    pieces = [reasoning] if reasoning and reasoning.strip() else []
    answer, unclosed = text, False
    while answer is not None and (opened := _OPEN.match(answer)):
        tag = opened.group(1)
        close = re.search(rf"</{tag}>", answer[opened.end() :], re.IGNORECASE)
        if close is None:  # never closed: the rest is reasoning
            pieces.append(answer[opened.end() :].strip())
            answer, unclosed = "", True
            break
        pieces.append(answer[opened.end() : opened.end() + close.start()].strip())
        answer = answer[opened.end() + close.end() :]
    if (
        answer
        and not pieces
        and (close := _CLOSE_ONLY.search(answer))
        and not re.search(rf"<{close.group(1)}>", answer[: close.start()], re.IGNORECASE)
    ):
        pieces.append(answer[: close.start()].strip())  # the opening tag was the prompt's
        answer = answer[close.end() :]
    if answer is not None and pieces:
        answer = answer.strip()
    joined = "\n\n".join(p for p in pieces if p) or None
    cut_off = bool(pieces) and not (answer or "").strip() and (unclosed or finish_reason == "length")
    return Reply(answer=answer, reasoning=joined, cut_off=cut_off)


def message_reasoning(message: Any) -> str | None:
    """The reasoning a chat message carries beside its content (`reasoning_content`,
    `reasoning`, or the text of litellm's `thinking_blocks`), None when it carries none."""
    for name in ("reasoning_content", "reasoning"):
        value = _field(message, name)
        if isinstance(value, str) and value.strip():
            return value
    blocks = _field(message, "thinking_blocks")
    if isinstance(blocks, list):
        texts = [t for b in blocks if isinstance(t := _field(b, "thinking"), str) and t.strip()]
        if texts:
            return "\n\n".join(texts)
    return None


def reasoning_tokens(usage: Any) -> int | None:
    """The reasoning tokens a provider reports among the completion tokens
    (`usage.completion_tokens_details.reasoning_tokens`), 0 when it reports none, None when what
    it reports is no count (`usage.token_count`)."""
    details = _field(usage, "completion_tokens_details")
    value = _field(details, "reasoning_tokens")
    return 0 if value is None else token_count(value)


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    try:
        return getattr(obj, name, None)
    except Exception:  # a provider object whose attribute lookup fails: it has no such field
        return None

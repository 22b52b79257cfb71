"""A run's record of one answer: made from a backend's response (`make_record`) or again from
its saved response (`rescore_record`), scored under the benchmark's answer conventions.

A record keeps the raw response, its score (`predicted`, `status`, `correct`, `rule`) and the
item's strata, and its confidence where the reply states one or the server gave token
log-probabilities (`scoring.confidence`). The reply's reasoning is kept apart from the answer,
never read as it; an answer or reasoning longer than the run's cap is cut and the record says so;
an answer the reader could not read (the reader raised) is a `parse_failure` keeping the reason,
and the run goes on.
"""

from __future__ import annotations

import math

from ..benchmark import Benchmark
from ..inference.base import Response
from ..inference.reasoning import REASONING_CUT_OFF, split_reply
from ..items import Item
from ..scoring.confidence import LOGPROBS, confidence_fields
from ..scoring.judge import apply_verdict
from ..scoring.score import score
from ..usage import recorded_usage
from .store import HELD_OUT

# The fields every record has, in the order a record is written.
RECORD_FIELDS = (
    "item_id",
    "condition",
    "key",
    "response",
    "error",
    "usage",
    "latency_s",
    "cached",
    "predicted",
    "status",
    "correct",
    "rule",
)
# A record whose answer could not be read (the reader raised) keeps the reason in this field.
SCORING_ERROR = "scoring_error"
MAX_REASON_CHARS = 500
# The rule of a record whose provider refused in its own field (`message.refusal`).
PROVIDER_REFUSAL = "provider-refusal"
# What a record keeps of an answer, and of its reasoning, in bytes of UTF-8; a longer one is cut
# there, and its record says so in this field (true). A truncated answer or reasoning is never cached.
DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024
TRUNCATED = "truncated"
REASONING_TRUNCATED = "reasoning_truncated"
# The rule of a record whose reply ended inside its reasoning (its `reason`: "reasoning cut off").
REASONING_RULE = "reasoning-cut-off"


def make_record(
    benchmark: Benchmark,
    item: Item,
    condition: str,
    key: str,
    response: Response,
    patterns: tuple = (),
    max_response_bytes: int | None = None,
) -> dict:
    """One record: the raw response, its score, and the item's strata. The reply's reasoning
    (the provider's field, leading `<think>` blocks: `reasoning.split_reply`) is kept in
    `reasoning`, never read as the answer; a reply cut off inside its reasoning is a
    `parse_failure` with the reason "reasoning cut off". `max_response_bytes` caps the answer
    (the record says `truncated`) and the reasoning (`reasoning_truncated`) each."""
    reply = split_reply(response.text, response.reasoning, response.finish_reason)
    text, cut = _cut(reply.answer, max_response_bytes)
    reasoning, reasoning_cut = _cut(reply.reasoning, max_response_bytes)
    predicted, status, correct, rule, fields, reason = scored_safely(
        benchmark, item, text, response.error, patterns, refused=response.refusal, cut_off=reply.cut_off
    )
    record = {
        "item_id": item.id,
        "condition": condition,
        "key": key,
        "response": text,
        "error": response.error,
        "usage": recorded_usage(response.usage),  # whatever the backend, cache or file gave: counts or null
        "latency_s": round(response.latency_s, 4) if math.isfinite(response.latency_s) else 0.0,
        "cached": response.cached,
        "predicted": predicted,
        "status": status,
        "correct": correct,
        "rule": rule,
        **fields,
        # where the reply states a confidence or the server gave token log-probabilities
        **confidence_fields(item, text, predicted, response.logprobs),
    }
    _reasoning_fields(record, reasoning, response.finish_reason, rule)
    if cut:
        record[TRUNCATED] = True
    if reasoning_cut:
        record[REASONING_TRUNCATED] = True
    if reason is not None:
        record[SCORING_ERROR] = reason
    return record


def _reasoning_fields(record: dict, reasoning: str | None, finish_reason: str | None, rule: str | None) -> None:
    """The fields a reasoning reply adds to its record (none for any other reply)."""
    if reasoning is not None:
        record["reasoning"] = reasoning
    if finish_reason is not None:
        record["finish_reason"] = finish_reason
    if rule == REASONING_RULE:
        record["reason"] = REASONING_CUT_OFF


def rescore_record(benchmark: Benchmark, item: Item, record: dict, patterns: tuple = ()) -> dict:
    """`record` with its score and strata computed again from its saved response; every other
    field (including those added by other tools) kept. A record marked `"saved": true` holds a
    prediction saved in the benchmark's own format (see `AnswerConventions`). Reasoning still
    inside the response (a record written before medvqa kept it apart) moves to `reasoning`."""
    reply = split_reply(record.get("response"), None, record.get("finish_reason"))
    cut_off = record.get("rule") == REASONING_RULE or reply.cut_off
    predicted, status, correct, rule, fields, reason = scored_safely(
        benchmark,
        item,
        reply.answer,
        record.get("error"),
        patterns,
        bool(record.get("saved")),
        refused=record.get("rule") == PROVIDER_REFUSAL,
        cut_off=cut_off,
    )
    out = {**record, "predicted": predicted, "status": status, "correct": correct, "rule": rule, **fields}
    _reread_confidence(out, item, record.get("predicted"))
    if reply.reasoning is not None:  # the response held reasoning blocks
        out["response"] = reply.answer
        _reasoning_fields(
            out,
            "\n\n".join(filter(None, (record.get("reasoning"), reply.reasoning))),
            record.get("finish_reason"),
            rule,
        )
    elif rule == REASONING_RULE:
        out["reason"] = REASONING_CUT_OFF
    out.pop(SCORING_ERROR, None)
    if reason is not None:
        out[SCORING_ERROR] = reason
    return apply_verdict(out)  # a judge's verdict on a free-text answer survives re-scoring


def _reread_confidence(out: dict, item: Item, before: list[str] | None) -> None:
    """A re-scored record's confidence: a stated one read again from the saved response (the one
    reader, as `make_record` read it); one from token log-probabilities kept while the answer
    read is the same, and null where it changed (the tokens are not kept in the record, and the
    old share was the old answer's)."""
    read = confidence_fields(item, out.get("response"), out.get("predicted"), None)
    if read:
        out.update(read)
    elif out.get("confidence_method") == LOGPROBS and out.get("predicted") != before:
        out["confidence"] = None


def _cut(text: str | None, max_bytes: int | None) -> tuple[str | None, bool]:
    """(`text` cut to at most `max_bytes` bytes of UTF-8, on a character boundary; whether it was
    cut). None keeps every byte."""
    if max_bytes is None or text is None or len(text) * 4 <= max_bytes:
        return text, False
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text, False
    return data[:max_bytes].decode("utf-8", "ignore"), True


def scored(
    benchmark: Benchmark, item: Item, text: str | None, error: str | None, patterns: tuple, saved: bool = False
) -> tuple:
    """(predicted as a list, status, correct, rule, the item's strata), under the benchmark's
    answer conventions."""
    s = score(item, text, error=error, patterns=patterns, conventions=benchmark.answer_conventions(), saved=saved)
    predicted = None if s.predicted is None else list(s.predicted)
    return predicted, s.status, s.correct, s.rule, benchmark.record_fields(item)


def scored_safely(
    benchmark: Benchmark,
    item: Item,
    text: str | None,
    error: str | None,
    patterns: tuple,
    saved: bool = False,
    *,
    refused: bool = False,
    cut_off: bool = False,
) -> tuple:
    """`scored` and the reason the answer could not be read (None when it could). A provider's
    refusal is status `refusal`; any exception while reading or scoring one answer (a reader
    bug, an answer nested too deeply) makes that record a `parse_failure` and the run goes on."""
    try:
        if item.held_out:  # answers withheld: the response is kept for export, never scored
            status = (
                "error" if error is not None else "refusal" if refused else "missing" if text is None else "answered"
            )
            return None, status, None, "held-out", {**benchmark.record_fields(item), HELD_OUT: True}, None
        if refused and error is None:
            return None, "refusal", False, PROVIDER_REFUSAL, benchmark.record_fields(item), None
        if cut_off and error is None:
            return None, "parse_failure", False, REASONING_RULE, benchmark.record_fields(item), None
        return (*scored(benchmark, item, text, error, patterns, saved), None)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"[:MAX_REASON_CHARS]
        return None, "parse_failure", False, None, benchmark.record_fields(item), reason

"""The assisted reading: an extractor model reads the answers the strict reader could not.

Strict scoring (the rule chain of `normalize`, the papers' protocol) marks prose it cannot read
as `parse_failure`, and that stays the headline. `extract_run` (`run/extract.py`) sends each such record, and only
those, to an extractor model with the question, the options and the response, and asks which
option label(s) the response chose (or NONE). The reply is read by `ExtractorPrompt.read`; an
unreadable reply is asked again (up to `max_attempts`). The record keeps its strict `status`,
`predicted` and `correct` untouched and gains `assisted`: `{predicted, correct, source,
extractor, prompt, prompt_version, prompt_hash, key, response, error, cached, attempts}`.
`medvqa.core.metrics` counts the assisted accuracy from it, beside the strict one.

Requests go through the one request path (`RequestPath`: cache, preflight, retries, resume),
the prompt's hash is part of each request key, and a record already read by the same extractor
under the same prompt costs no request.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TypedDict

from ..items import Item
from ..messages import Message

EXTRACTOR_SOURCE = "extractor"
# What the extractor is sent besides its backend's own settings: prose in, labels out, no JSON mode.
EXTRACTOR_BACKEND_DEFAULTS = {"response_format": "none"}
CHOICE_GOLD = ("single", "multi", "alternatives")

PROMPT = """You read an examinee's answer to a multiple-choice question and report which option label(s) \
the answer chose. Do not answer the question yourself and do not judge whether the answer is right.

Question:
{question}

Options:
{options}

The examinee's answer:
{response}

Reply with the chosen label{plural} only{several}, or NONE if the answer chooses no option or cannot be read \
as a choice.
{choose}Valid labels: {labels}."""

_SPLIT = re.compile(r"[\s,、，;/]+")


class AssistedReading(TypedDict):
    """What an extractor made of one parse failure: `record["assisted"]`, beside the strict reading."""

    predicted: list[str] | None  # the option keys read ([] for NONE); None: unreadable
    correct: bool
    source: str  # EXTRACTOR_SOURCE
    extractor: str  # the extractor model
    prompt: str
    prompt_version: str
    prompt_hash: str
    key: str  # the extractor request's cache key
    response: str | None  # the extractor's reply
    error: str | None
    cached: bool
    attempts: int  # requests made for it (0: from the cache)


class ExtractorPrompt:
    """The extractor's prompt (versioned; `hash` covers its name, version and template) and its
    reader."""

    name: str = "choice-extractor"
    version: str = "1"
    template: str = PROMPT
    # an unreadable reply is asked again, up to this many requests in all
    max_attempts: int = 3

    @property
    def hash(self) -> str:
        data = json.dumps([self.name, self.version, self.template], ensure_ascii=False)
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    def messages(self, item: Item, record: dict) -> list[Message] | None:
        """The extractor's messages for `record` of `item`; None when the item has no options
        to choose from (numeric, free-text or box answers are not extracted)."""
        if not item.options or item.gold is None or item.gold.format not in CHOICE_GOLD:
            return None
        several = (item.n_select or 1) > 1 or item.gold.format == "multi"
        options = "\n".join(f"{o.label}. {o.text}" for o in item.options)
        text = self.template.format(
            question=item.question,
            options=options,
            response=record.get("response") or "",
            plural="s" if several else "",
            several=", separated by commas" if several else "",
            choose=f"Choose {item.n_select}. " if item.n_select and item.n_select > 1 else "",
            labels=", ".join(o.label for o in item.options),
        )
        return [{"role": "user", "content": text}]

    def read(self, item: Item, text: str | None) -> tuple[str, ...] | None:
        """The option keys the reply names (() for NONE), or None when the reply is not a list of
        the item's labels. A JSON object `{"answer": ...}` is read as its answer; a number as its text
        (numeric labels: "1", `{"answer": [2, 4]}`)."""
        if text is None:
            return None
        text = text.strip()
        try:
            got = json.loads(text)
        except ValueError:
            got = text
        if isinstance(got, dict) and "answer" in got:
            got = got["answer"]

        def label(
            t: object,
        ) -> object:  # a numeric label ("1", {"answer": [3]}) is read as its text, not as JSON's number
            return str(t) if isinstance(t, int) and not isinstance(t, bool) else t

        got = [label(t) for t in got] if isinstance(got, list) else label(got)
        if isinstance(got, str):
            got = [t for t in _SPLIT.split(got.strip().rstrip(".。")) if t]
        if not isinstance(got, list) or not all(isinstance(t, str) for t in got):
            return None
        if [t.upper() for t in got] == ["NONE"] or not got:
            return ()
        by_label = {o.label.upper(): o.key for o in item.options}
        keys = [by_label.get(t.strip().upper()) for t in got]
        found = [k for k in keys if k is not None]
        if len(found) != len(keys):
            return None
        return tuple(dict.fromkeys(found))


def is_extracted(record: dict, model: str, prompt_hash: str) -> bool:
    done = record.get("assisted") or {}
    return (
        done.get("source") == EXTRACTOR_SOURCE
        and done.get("extractor") == model
        and done.get("prompt_hash") == prompt_hash
        and done.get("error") is None
    )

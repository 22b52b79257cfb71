"""The assisted reading: an extractor model reads the answers the strict reader could not.

Strict scoring (the rule chain of `normalize`, the papers' protocol) marks prose it cannot read
as `parse_failure`, and that stays the headline. `extract_run` sends each such record, and only
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
from pathlib import Path
from typing import Any, Callable

from medvqa.core.inference.base import Request, request_key
from medvqa.core.inference.path import RequestPath, WriteBatch, backend_for
from medvqa.core.items import Item
from medvqa.core.messages import Message

EXTRACTOR_SOURCE = "extractor"
# What the extractor is sent besides its backend's own settings: prose in, labels out, no JSON mode.
EXTRACTOR_BACKEND_DEFAULTS = {"response_format": "none"}
CHOICE_GOLD = ("single", "multi", "alternatives")

PROMPT = """You read an examinee's answer to a multiple-choice question and report which option label(s) the answer chose. Do not answer the question yourself and do not judge whether the answer is right.

Question:
{question}

Options:
{options}

The examinee's answer:
{response}

Reply with the chosen label{plural} only{several}, or NONE if the answer chooses no option or cannot be read as a choice.
{choose}Valid labels: {labels}."""

_SPLIT = re.compile(r"[\s,、，;/]+")


class ExtractorPrompt:
    """The extractor's prompt (versioned; `hash` covers its name, version and template) and its
    reader."""

    name = "choice-extractor"
    version = "1"
    template = PROMPT
    max_attempts = 3

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
            question=item.question, options=options, response=record.get("response") or "",
            plural="s" if several else "", several=", separated by commas" if several else "",
            choose=f"Choose {item.n_select}. " if item.n_select and item.n_select > 1 else "",
            labels=", ".join(o.label for o in item.options))
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
        def label(t):  # a numeric label ("1", {"answer": [3]}) is read as its text, not as JSON's number
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
        if any(k is None for k in keys):
            return None
        return tuple(dict.fromkeys(keys))


def is_extracted(record: dict, model: str, prompt_hash: str) -> bool:
    done = record.get("assisted") or {}
    return (done.get("source") == EXTRACTOR_SOURCE and done.get("extractor") == model
            and done.get("prompt_hash") == prompt_hash and done.get("error") is None)


def extract_run(run_dir: str | Path, model: str, *, backend_options: dict[str, Any] | None = None,
                cache: bool = True, cache_path: str | Path | None = None,
                prompt: ExtractorPrompt | None = None, progress: Callable[[str], None] | None = None) -> dict:
    """Read the newest parse-failure records of a saved run with extractor `model`; return what
    was extractable, asked, found in the cache, already read and left unread."""
    from medvqa.core.inference.cache import ResponseCache
    from medvqa.core.metrics import headline_numbers
    from medvqa.core.run.saved import read_run
    from medvqa.core.run.store import RunStore
    from medvqa.core.scoring.score import keys_correct

    spec = prompt or ExtractorPrompt()
    run_dir = Path(run_dir)
    saved = read_run(run_dir)
    current = {(r["item_id"], r["condition"]): r for r in saved.records}
    extractable: dict[tuple[str, str], list[Message]] = {}
    for pair, rec in current.items():
        if rec.get("status") == "parse_failure" and not rec.get("held_out"):
            messages = spec.messages(saved.items[rec["item_id"]], rec)
            if messages is not None:
                extractable[pair] = messages
    pending = [pair for pair in extractable if not is_extracted(current[pair], model, spec.hash)]
    stats = {"run_dir": str(run_dir), "extractor": model, "prompt": spec.name, "prompt_version": spec.version,
             "prompt_hash": spec.hash, "n_extractable": len(extractable), "extracted": 0, "requested": 0,
             "cache_hits": 0, "unread": 0, "already_extracted": len(extractable) - len(pending)}
    if pending:
        backend = backend_for(model, backend_options or {}, EXTRACTOR_BACKEND_DEFAULTS)
        params = {**backend.params, "extractor_prompt": spec.hash}
        requests = [Request(item=saved.items[p[0]], condition=p[1], messages=extractable[p],
                            key=request_key(backend.model, params, extractable[p], backend.endpoint)) for p in pending]
        store = RunStore(run_dir)
        store.open({**saved.manifest, "extractor": {"model": model, "prompt": spec.name, "version": spec.version,
                                                    "prompt_hash": spec.hash}})
        written = WriteBatch(store)
        response_cache = ResponseCache(Path(cache_path) if cache_path else None) if cache else None
        path = RequestPath(backend, response_cache)

        def done(req: Request, response, keys, attempts: int) -> bool:
            error = response.error
            if error is None and keys is None:
                error = f"unreadable extraction after {attempts} request(s)"
            item = req.item
            assisted = {"predicted": list(keys) if keys is not None else None,
                        "correct": bool(keys) and keys_correct(item, keys),
                        "source": EXTRACTOR_SOURCE, "extractor": model, "prompt": spec.name,
                        "prompt_version": spec.version, "prompt_hash": spec.hash, "key": req.key,
                        "response": response.text, "error": error, "cached": response.cached, "attempts": attempts}
            pair = (item.id, req.condition)
            current[pair] = {**current[pair], "assisted": assisted}
            written.add(current[pair])
            stats["extracted"] += 1
            stats["unread"] += keys is None
            return keys is not None

        try:
            with store:
                try:
                    path.send(requests, done, read=lambda req, text: spec.read(req.item, text),
                              max_attempts=spec.max_attempts, dedupe=True,
                              again=(lambda n: progress(f"{model}: {n} unreadable extraction(s), asking again"))
                              if progress else None)
                finally:  # what was read reaches the file, even on Ctrl-C
                    written.flush()
                    stats["requested"], stats["cache_hits"] = path.requested, path.cache_hits
        finally:
            if response_cache is not None:
                response_cache.close()
    numbers = headline_numbers(current.values(), saved.benchmark)  # the protocol's reading, the other beside it
    stats["reading"], stats["conditions"] = numbers["reading"], numbers["conditions"]
    return stats


"""`extract_run`: a saved run's unreadable replies (parse failures) read by an extractor model,
each reading appended as the record's assisted reading (the extractor's prompt and reader are
`scoring.extract`'s `ExtractorPrompt`; see there)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

from .. import order
from ..inference.base import Request, Response, request_key
from ..inference.path import RequestPath, WriteBatch, backend_for
from ..messages import Message
from ..scoring.extract import (
    EXTRACTOR_BACKEND_DEFAULTS,
    EXTRACTOR_SOURCE,
    AssistedReading,
    ExtractorPrompt,
    is_extracted,
)


class ExtractSummary(TypedDict):
    """What `extract_run` returns (`medvqa score --extractor --json` prints it as `extracted`; a
    run's summary keeps it so)."""

    run_dir: str
    extractor: str
    prompt: str
    prompt_version: str
    prompt_hash: str
    n_extractable: int  # parse failures the extractor reads
    extracted: int  # records given an assisted reading now
    requested: int  # requests sent to the extractor
    cache_hits: int  # readings found in the response cache
    unread: int  # records the extractor could not read either
    already_extracted: int  # records this extractor had read under this prompt before
    reading: str  # the headline numbers' reading (`metrics.headline_numbers`)
    conditions: dict[str, dict]  # {condition: `Cell.as_dict()`} after extracting


def extract_run(
    run_dir: str | Path,
    model: str,
    *,
    backend_options: dict[str, Any] | None = None,
    cache: bool = True,
    cache_path: str | Path | None = None,
    prompt: ExtractorPrompt | None = None,
    progress: Callable[[str], None] | None = None,
) -> ExtractSummary:
    """Read the newest parse-failure records of a saved run with extractor `model`; return what
    was extractable, asked, found in the cache, already read and left unread."""
    from ..inference.cache import ResponseCache
    from ..metrics import headline_numbers
    from ..scoring.score import keys_correct
    from .saved import read_run
    from .store import RunStore

    spec = prompt or ExtractorPrompt()
    run_dir = Path(run_dir)
    saved = read_run(run_dir)
    current = {(r["item_id"], r["condition"]): r for r in saved.records}
    extractable: dict[tuple[str, str], list[Message]] = {}
    for pair, rec in current.items():
        if rec.get("status") == "parse_failure" and not rec.get("held_out"):
            messages = spec.messages(order.as_asked(saved.items[rec["item_id"]], rec["condition"]), rec)
            if messages is not None:
                extractable[pair] = messages
    pending = [pair for pair in extractable if not is_extracted(current[pair], model, spec.hash)]
    counts = {"extracted": 0, "requested": 0, "cache_hits": 0, "unread": 0}
    if pending:
        backend = backend_for(model, backend_options or {}, EXTRACTOR_BACKEND_DEFAULTS)
        params = {**backend.params, "extractor_prompt": spec.hash}
        requests = [
            Request(
                item=order.as_asked(saved.items[p[0]], p[1]),
                condition=p[1],
                messages=extractable[p],
                key=request_key(backend.model, params, extractable[p], backend.endpoint),
            )
            for p in pending
        ]
        store = RunStore(run_dir)
        store.open(
            {
                **saved.manifest,
                "extractor": {"model": model, "prompt": spec.name, "version": spec.version, "prompt_hash": spec.hash},
            }
        )
        written = WriteBatch(store)
        response_cache = ResponseCache(Path(cache_path) if cache_path else None) if cache else None
        path = RequestPath(backend, response_cache)

        def done(req: Request, response: Response, keys: tuple[str, ...] | None, attempts: int) -> bool:
            error = response.error
            if error is None and keys is None:
                error = f"unreadable extraction after {attempts} request(s)"
            item = req.item
            assisted = AssistedReading(
                predicted=list(keys) if keys is not None else None,
                correct=keys is not None and bool(keys) and keys_correct(item, keys),
                source=EXTRACTOR_SOURCE,
                extractor=model,
                prompt=spec.name,
                prompt_version=spec.version,
                prompt_hash=spec.hash,
                key=req.key,
                response=response.text,
                error=error,
                cached=response.cached,
                attempts=attempts,
            )
            pair = (item.id, req.condition)
            current[pair] = {**current[pair], "assisted": assisted}
            written.add(current[pair])
            counts["extracted"] += 1
            counts["unread"] += keys is None
            return keys is not None

        try:
            with store:
                try:
                    path.send(
                        requests,
                        done,
                        read=lambda req, text: spec.read(req.item, text),
                        max_attempts=spec.max_attempts,
                        dedupe=True,
                        again=(lambda n: progress(f"{model}: {n} unreadable extraction(s), asking again"))
                        if progress
                        else None,
                    )
                finally:  # what was read reaches the file, even on Ctrl-C
                    written.flush()
                    counts["requested"], counts["cache_hits"] = path.requested, path.cache_hits
        finally:
            if response_cache is not None:
                response_cache.close()
    numbers = headline_numbers(current.values(), saved.benchmark)  # the protocol's reading, the other beside it
    return ExtractSummary(
        run_dir=str(run_dir),
        extractor=model,
        prompt=spec.name,
        prompt_version=spec.version,
        prompt_hash=spec.hash,
        n_extractable=len(extractable),
        extracted=counts["extracted"],
        requested=counts["requested"],
        cache_hits=counts["cache_hits"],
        unread=counts["unread"],
        already_extracted=len(extractable) - len(pending),
        reading=numbers["reading"],
        conditions=numbers["conditions"],
    )

"""One request path: the runner, the judge and the answer extractor send their requests here.

`RequestPath` holds one backend and (optionally) the response cache. `send` answers a batch of
requests: the cache first, then the backend, whose `preflight()` runs once before the first
request the backend is sent; requests with the same key are asked once and their answer given
to each. A reader (`read(request, text)`) turns an answer into a value; an answer it cannot read is asked
again, up to `max_attempts` requests in all (a judge's unreadable verdict, an extractor's
unreadable label), and a cached answer it cannot read counts as a miss. Every request ends as
one call of `done(request, response, value, attempts)`, whose return says whether the answer may
be cached (the runner keeps a truncated or unreadable answer out). What was asked and what came
from the cache is counted in `requested` and `cache_hits`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from .base import Backend, Request, Response
from .cache import ResponseCache
from .vllm_engines import ENGINES

# done(request, response, value read from it (None without a reader), requests made: 0 from the cache)
Done = Callable[[Request, Response, Any, int], bool]


def backend_for(model: str, options: dict[str, Any], defaults: dict[str, Any] | None = None) -> Backend:
    """The backend of `model` with `options` over `defaults` (a judge's or an extractor's
    settings); a backend that takes no such setting (a baseline) is built without the defaults."""
    from .. import plugins

    try:
        return plugins.get_backend(model, **{**(defaults or {}), **options})
    except TypeError:
        return plugins.get_backend(model, **options)


class RequestPath:
    """Requests through `backend`, with `cache` when the backend's answers are worth caching."""

    def __init__(
        self, backend: Backend, cache: ResponseCache | None = None, preflight: Callable[[], None] | None = None
    ):
        """`preflight`: the check made before the first request (default: the backend's); a
        run's repeats share the first repeat's path's (`RequestPath.preflight`)."""
        self.backend = backend
        self.cache = cache if backend.cacheable else None
        self._preflight: Callable[[], None] | None = preflight or backend.preflight
        self.requested = 0
        self.cache_hits = 0

    def preflight(self) -> None:
        """The backend's preflight, once in the life of this path."""
        if self._preflight is not None:
            check, self._preflight = self._preflight, None
            check()

    def send(
        self,
        requests: Iterable[Request],
        done: Done,
        *,
        read: Callable[[Request, str | None], Any] | None = None,
        max_attempts: int = 1,
        dedupe: bool = False,
        again: Callable[[int], None] | None = None,
    ) -> None:
        """Answer every request of `requests` (see the module's docstring). With `dedupe`, requests
        sharing a key are asked once; `again(n)` is told how many answers are asked again."""
        same: dict[str, list[Request]] = {}
        order: list[Request] = []
        for req in requests:
            if dedupe and req.key in same:
                same[req.key].append(req)
                continue
            same.setdefault(req.key, []).append(req)
            order.append(req)
        hits = self.cache.get_many(list(same)) if self.cache is not None and order else {}
        misses = []
        for req in order:
            group = same[req.key] if dedupe else [req]
            hit = hits.get(req.key)
            value = read(req, hit.text) if hit is not None and read is not None else None
            if hit is None or (read is not None and value is None):
                misses.append(req)
                continue
            self.cache_hits += len(group)
            for each in group:
                done(each, hit, value, 0)
        if misses:
            self.preflight()
        with ENGINES.kept():  # an answer asked again goes to the engine that gave the first (`vllm_engines`)
            for attempt in range(1, max(1, max_attempts) + 1):
                if not misses:
                    break
                retry = []
                self.requested += len(misses)
                for req, response in self.backend.generate(iter(misses)):
                    value = read(req, response.text) if read is not None and response.error is None else None
                    if read is not None and value is None and response.error is None and attempt < max_attempts:
                        retry.append(req)
                        continue
                    keep = False
                    for each in same[req.key] if dedupe else [req]:
                        keep = done(each, response, value, attempt) or keep
                    if keep and self.cache is not None and not response.cached and response.error is None:
                        self.cache.put(req.key, self.backend.model, response)
                misses = retry
                if misses and again is not None:
                    again(len(misses))


class WriteBatch:
    """Records on their way to a run's file (`RunStore`): written together every `size` records or
    `seconds`, and at `flush` (verdicts and extractions arrive faster than one write each is worth)."""

    def __init__(self, store, size: int = 64, seconds: float = 0.5):
        self.store, self.size, self.seconds = store, size, seconds
        self.records: list[dict] = []
        self.since = time.monotonic()

    def add(self, record: dict) -> None:
        self.records.append(record)
        if len(self.records) >= self.size or time.monotonic() - self.since >= self.seconds:
            self.flush()

    def flush(self) -> None:
        self.store.append_many(self.records)
        self.records = []
        self.since = time.monotonic()

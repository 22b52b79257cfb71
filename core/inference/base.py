"""The backend base class: requests in, responses out.

A backend receives an iterable of `Request`s and yields `(request, response)` pairs as they
complete, in any order. It never raises for a single failed request: the failure is a
`Response` with `error` set, so the run store can record it.

`Backend` is the public base class (`medvqa.Backend`). A subclass sets `model` and `params` and
implements `generate`; every other capability is declared here with its default, and callers
use it without probing:

- `endpoint` (None): a JSON-able dict of where its requests go (provider, server URL,
  deployments), hashed into every request key, so that two servers never share cached answers;
- `cacheable` (True): whether its answers are worth caching (the baselines' cost nothing);
- `preflight()` (does nothing): called once before the first request of a run is sent; it raises
  `PreflightError` (from `preflight.py`) with one line saying what is wrong (unknown model,
  refused credentials, unreachable server);
- `settings` (empty): how its requests are executed (concurrency, timeouts, prices), recorded in
  the run's manifest but in no request key;
- `params_left_out` (empty): default parameters not sent, each with the reason, for the manifest;
- `stats` (None): live counters (`in_flight`, `retries`, tokens, cost) the progress line shows.

A backend written against the older protocol (any object with `model`, `params` and
`generate`) is wrapped by `as_backend` where backends are built, so it keeps working.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the plugins that subclass `Backend` load at start-up: no pydantic before a request
    from ..items import Item
    from ..messages import Message


# Bumped whenever the fields hashed into a key change: keys of an older schema never match.
KEY_SCHEMA = 2
# The parameter naming the file a replay run's answers came from (its hash); one of
# `SOURCE_PARAMS`.
REPLAY_PARAM = "replay_sha256"
# Parameters that name where a run's saved answers came from, not how a model generated them:
# kept in the manifest (a resumed run replays the same file), left out where runs are matched by
# how they were generated (two languages of one model pair when their generation parameters agree).
SOURCE_PARAMS = frozenset({REPLAY_PARAM})


def generation_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """A manifest's `params` without the `SOURCE_PARAMS`: what the model was asked with."""
    return {k: v for k, v in (params or {}).items() if k not in SOURCE_PARAMS}


def request_key(
    model: str,
    params: dict[str, Any],
    messages: list[Message],
    endpoint: dict[str, Any] | None = None,
    response_schema: dict[str, Any] | None = None,
    repeat: int = 0,
) -> str:
    """Content address of a request: the key schema, the endpoint (provider, server), the
    model, every generation parameter sent (the response format included), the benchmark's
    answer schema when it declares one, the repeat index past the first (`--repeats`: each
    repeat is its own answer), and the messages (images by the hash of their bytes)."""
    fields = {"schema": KEY_SCHEMA, "endpoint": endpoint or {}, "model": model, "params": params}
    if response_schema is not None:  # absent otherwise, so keys of other benchmarks stay as they were
        fields["response_schema"] = response_schema
    if repeat:  # absent for the first, so a run's first repeat shares the answers of a run without repeats
        fields["repeat"] = repeat
    payload = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    h = hashlib.sha256(payload.encode())
    h.update(b"\x00")
    from ..messages import messages_for_key

    h.update(messages_for_key(messages).encode())
    return h.hexdigest()


def backend_request_key(
    backend: Backend, messages: list[Message], response_schema: dict[str, Any] | None = None, repeat: int = 0
) -> str:
    """`request_key` of `messages` sent by `backend` (with the benchmark's answer schema), as
    repeat `repeat` of the run."""
    return request_key(backend.model, backend.params, messages, backend.endpoint, response_schema, repeat)


@dataclass
class Request:
    item: Item
    condition: str
    messages: list[Message]
    key: str
    # the answer object's JSON schema the benchmark declares (`Benchmark.response_schema`);
    # backends with structured output send it instead of their default, baselines answer in it
    response_schema: dict[str, Any] | None = None
    repeat: int = 0  # which of the run's repeats asks it (`--repeats`)


@dataclass
class Response:
    text: str | None = None
    error: str | None = None
    # token counts (None: a count the server gave that is no count) and `cost_usd`, in USD
    usage: dict[str, int | float | None] = field(default_factory=dict)
    latency_s: float = 0.0
    cached: bool = False
    refusal: bool = False  # `text` is the provider's own refusal (OpenAI's `message.refusal`)
    # the reasoning the provider gave beside the text (`reasoning.message_reasoning`); reasoning
    # inside the text (`<think>` blocks) stays in `text` until the record is made (`reasoning.split_reply`)
    reasoning: str | None = None
    finish_reason: str | None = None  # "length": cut off by max_tokens; None: not said or "stop"
    # the answer's token log-probabilities where the server returned them (`logprobs` asked for):
    # [{"token", "logprob", "top": [[token, logprob], ...]}] (`completion.token_logprobs`)
    logprobs: list[dict[str, Any]] | None = None


_NOTHING: Mapping[str, Any] = MappingProxyType({})


class Backend:
    """Base class of every backend: `model`, `params` and `generate` are a subclass's to give;
    the optional capabilities have their defaults here (see the module's docstring). The
    defaults of `settings` and `params_left_out` are read-only: a backend assigns its own."""

    model: str = ""  # the model name recorded in the manifest
    params: dict[str, Any]  # generation parameters; part of every request key
    endpoint: dict[str, Any] | None = None  # where requests go; part of every request key
    cacheable: bool = True
    settings: Mapping[str, Any] = _NOTHING
    params_left_out: Mapping[str, str] = _NOTHING
    stats: dict[str, Any] | None = None

    def preflight(self) -> None:
        """One check before a run's first request (raises `PreflightError`); none by default."""

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        raise NotImplementedError(f"{type(self).__name__} does not implement generate()")


class PluginBackend(Backend):
    """A backend written against the older protocol (an object with `model`, `params` and
    `generate`, any of the optional capabilities or none), seen through `Backend`: what it
    declares is used, what it does not declare has the base class's default."""

    def __init__(self, wrapped: Any):
        self.wrapped = wrapped

    def _declared(self, name: str, default: Any) -> Any:
        return getattr(self.wrapped, name, default)  # the one place a capability is looked up

    model = property(lambda self: self.wrapped.model)
    params = property(lambda self: self.wrapped.params)
    endpoint = property(lambda self: self._declared("endpoint", None))
    cacheable = property(lambda self: bool(self._declared("cacheable", True)))
    settings = property(lambda self: self._declared("settings", None) or _NOTHING)
    params_left_out = property(lambda self: self._declared("params_left_out", None) or _NOTHING)
    stats = property(lambda self: self._declared("stats", None))

    def preflight(self) -> None:
        check = self._declared("preflight", None)
        if check is not None:
            check()

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        return self.wrapped.generate(requests)

    def __repr__(self) -> str:
        return f"PluginBackend({self.wrapped!r})"


def as_backend(obj: Any, source: str = "a backend factory") -> Backend:
    """`obj` as a `Backend`: itself when it is one, else wrapped (`PluginBackend`) when it has
    what the older protocol asked for (`model`, `params`, `generate`); anything else is a
    `TypeError` naming `source` and what is missing."""
    if isinstance(obj, Backend):
        return obj
    missing = [name for name in ("model", "params", "generate") if not hasattr(obj, name)]
    if missing or not callable(obj.generate):
        raise TypeError(
            f"{source} returned {type(obj).__name__}, which is not a medvqa.Backend and lacks "
            f"{', '.join(missing) or 'a callable generate'}"
        )
    return PluginBackend(obj)


class BackendFactory(Protocol):
    """Registered through the `register_backends` hook: `prefix` selects it from `--model`.
    Its backends are wrapped by `as_backend` when they are not `Backend`s. A factory may also
    have `options` (a pydantic model of the options its backends take, which `-M` and
    `--model-config` are checked against: `backend_options.py`) and `check(model, **options)`
    (checks made before the backend's library is imported)."""

    prefix: str
    description: str

    def __call__(self, model: str, **options: Any) -> Backend: ...

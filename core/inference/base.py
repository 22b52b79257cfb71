"""The backend protocol: requests in, responses out.

A backend receives an iterable of `Request`s and yields `(request, response)` pairs as they
complete, in any order. It never raises for a single failed request: the failure is a
`Response` with `error` set, so the run store can record it.

Besides `model`, `params` and `generate`, a backend may declare:

- `endpoint`: a JSON-able dict of where its requests go (provider, server URL, deployments),
  hashed into every request key, so that two servers never share cached answers;
- `preflight()`: called once before the first request of a run is sent; it raises
  `PreflightError` (from `preflight.py`) with one line saying what is wrong (unknown model,
  refused credentials, unreachable server). Backends that call no network omit it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Protocol, runtime_checkable

from medvqa.core.items import Item
from medvqa.core.messages import Message, messages_for_key


# Bumped whenever the fields hashed into a key change: keys of an older schema never match.
KEY_SCHEMA = 2


def request_key(model: str, params: dict[str, Any], messages: list[Message],
                endpoint: dict[str, Any] | None = None, response_schema: dict[str, Any] | None = None) -> str:
    """Content address of a request: the key schema, the endpoint (provider, server), the
    model, every generation parameter sent (the response format included), the benchmark's
    answer schema when it declares one, and the messages (images by the hash of their bytes)."""
    fields = {"schema": KEY_SCHEMA, "endpoint": endpoint or {}, "model": model, "params": params}
    if response_schema is not None:  # absent otherwise, so keys of other benchmarks stay as they were
        fields["response_schema"] = response_schema
    payload = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    h = hashlib.sha256(payload.encode())
    h.update(b"\x00")
    h.update(messages_for_key(messages).encode())
    return h.hexdigest()


def backend_request_key(backend: "Backend", messages: list[Message],
                        response_schema: dict[str, Any] | None = None) -> str:
    """`request_key` of `messages` sent by `backend` (with the benchmark's answer schema)."""
    return request_key(backend.model, backend.params, messages, getattr(backend, "endpoint", None), response_schema)


@dataclass
class Request:
    item: Item
    condition: str
    messages: list[Message]
    key: str
    # the answer object's JSON schema the benchmark declares (`Benchmark.response_schema`);
    # backends with structured output send it instead of their default, baselines answer in it
    response_schema: dict[str, Any] | None = None


@dataclass
class Response:
    text: str | None = None
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    cached: bool = False
    refusal: bool = False  # `text` is the provider's own refusal (OpenAI's `message.refusal`)


@runtime_checkable
class Backend(Protocol):
    model: str  # the model name recorded in the manifest
    params: dict[str, Any]  # generation parameters; part of every request key

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]: ...


class BackendFactory(Protocol):
    """Registered through the `register_backends` hook: `prefix` selects it from `--model`."""

    prefix: str
    description: str

    def __call__(self, model: str, **options: Any) -> Backend: ...

"""The backend protocol: requests in, responses out.

A backend receives an iterable of `Request`s and yields `(request, response)` pairs as they
complete, in any order. It never raises for a single failed request: the failure is a
`Response` with `error` set, so the run store can record it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Protocol, runtime_checkable

from ..items import Item
from ..messages import Message, messages_for_key


def request_key(model: str, params: dict[str, Any], messages: list[Message]) -> str:
    """Content address of a request: model, generation parameters and messages (images by
    hash), nothing else."""
    payload = json.dumps({"model": model, "params": params}, sort_keys=True, separators=(",", ":"))
    h = hashlib.sha256(payload.encode())
    h.update(b"\x00")
    h.update(messages_for_key(messages).encode())
    return h.hexdigest()


@dataclass
class Request:
    item: Item
    condition: str
    messages: list[Message]
    key: str


@dataclass
class Response:
    text: str | None = None
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    cached: bool = False


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

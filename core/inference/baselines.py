"""Built-in baselines: `random` (seeded) and `constant:<label>`; registered as a plugin."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl
from .base import Backend

if TYPE_CHECKING:  # imported when answering, so that loading the plugin (`medvqa --help`) stays fast
    from .base import Request, Response


def _answer(keys: list[str], request: Request | None = None) -> Response:
    """`{"answer": keys}`, or the object the request's answer schema asks for: its one required
    field, holding a string (the first key) where the schema says string, else the list."""
    from .base import Response

    schema = (request.response_schema if request is not None else None) or {}
    required = schema.get("required") or []
    if len(required) == 1:
        name = required[0]
        kind = ((schema.get("properties") or {}).get(name) or {}).get("type")
        value = (keys[0] if keys else "") if kind == "string" else keys
        return Response(text=json.dumps({name: value}, ensure_ascii=False))
    return Response(text=json.dumps({"answer": keys}, ensure_ascii=False))


def _slots(request: Request) -> int:
    gold = request.item.gold
    return len(gold.alternatives[0]) if gold else 1


@dataclass
class RandomBackend(Backend):
    """Uniform over the item's valid labels; picks as many labels as the stem asks.
    Deterministic per (seed, item, condition), so a resumed run gives the same answers."""

    seed: int = 0
    model: str = "random"
    params: dict[str, Any] = field(default_factory=dict)
    cacheable = False  # answers cost nothing; a cache would only hide them

    def __post_init__(self) -> None:
        self.params = {"seed": self.seed}

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        for req in requests:
            digest = hashlib.sha256(f"{self.seed}\x00{req.item.id}\x00{req.condition}".encode()).digest()
            rng = random.Random(int.from_bytes(digest[:8], "big"))
            item = req.item
            if item.answer_format == "numeric":
                keys = [str(rng.randrange(10)) for _ in range(_slots(req))]
            else:
                labels = [o.label for o in item.options]
                keys = rng.sample(labels, min(item.n_select or 1, len(labels))) if labels else []
            yield req, _answer(keys, req)


@dataclass
class ConstantBackend(Backend):
    """Always the same label (`constant:A`); numeric items get that many zeros."""

    label: str = "A"
    model: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    cacheable = False  # answers cost nothing; a cache would only hide them

    def __post_init__(self) -> None:
        self.model = f"constant:{self.label}"

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        for req in requests:
            if req.item.answer_format == "numeric":
                keys = ["0"] * _slots(req)
            else:
                keys = [self.label]
            yield req, _answer(keys, req)


class _Factory:
    def __init__(self, prefix: str, description: str, build):
        self.prefix, self.description, self._build = prefix, description, build

    def __call__(self, model: str, **options: Any):
        return self._build(model, **options)

    @property
    def options(self):
        """The baselines take no options (`-M`, `--model-config`): the seed is `--seed`."""
        from .backend_options import BackendOptions

        return BackendOptions


def _random(model: str, seed: int = 0, **_: Any) -> RandomBackend:
    return RandomBackend(seed=seed)


def _constant(model: str, **_: Any) -> ConstantBackend:
    label = model.partition(":")[2]
    if not label:
        raise ValueError("constant needs a label: --model constant:A")
    return ConstantBackend(label=label)


def _replay(model: str, **_: Any):
    from .replay import ReplayBackend

    path = model.partition(":")[2]
    if not path:
        raise ValueError("replay needs a file: --model replay:predictions.jsonl")
    return ReplayBackend.from_file(path)


@hookimpl
def register_backends(register):
    register(_Factory("random", "uniform random labels (seeded with --seed)", _random))
    register(_Factory("constant", "always the same label: constant:<label>", _constant))
    register(_Factory("replay", "responses from a JSONL file: replay:<file.jsonl>", _replay))

"""Replay responses produced elsewhere: lines `{"item_id", "condition", "response"}`."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..items import DataError
from ..jsonl import numbered_jsonl
from .base import REPLAY_PARAM, Backend, Request, Response


@dataclass
class ReplayBackend(Backend):
    responses: dict[tuple[str, str], dict]
    model: str = "replay"
    params: dict[str, Any] = field(default_factory=dict)
    cacheable = False  # answers cost nothing; a cache would only hide them

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayBackend:
        path = Path(path)
        responses: dict[tuple[str, str], dict] = {}
        for lineno, row in numbered_jsonl(path):
            if "item_id" not in row:
                raise DataError("not a replay line (no item_id)", file=path, record=f"line {lineno}")
            if "response" not in row and "error" not in row:  # (a null response is a recorded non-answer)
                raise DataError(
                    "not a replay line: no 'response' field (the raw answer; `medvqa export` writes it)",
                    file=path,
                    record=f"line {lineno}",
                )
            key = (str(row["item_id"]), str(row.get("condition", "C+Q")))
            if key in responses:
                raise DataError(f"duplicate replay line for {key[0]} {key[1]}", file=path, record=f"line {lineno}")
            responses[key] = row
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        return cls(responses=responses, model=f"replay:{path.name}", params={REPLAY_PARAM: digest})

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        for req in requests:
            row = self.responses.get((req.item.id, req.condition))
            if row is None:
                yield req, Response()  # missing
            else:
                yield (
                    req,
                    Response(
                        text=row.get("response"),
                        error=row.get("error"),
                        usage=row.get("usage") or {},
                        latency_s=float(row.get("latency_s") or 0.0),
                        reasoning=row.get("reasoning"),
                        finish_reason=row.get("finish_reason"),
                    ),
                )

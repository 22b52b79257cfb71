"""Replay responses produced elsewhere: lines `{"item_id", "condition", "response"}`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from medvqa.core.items import DataError
from medvqa.core.inference.base import Backend, Request, Response


@dataclass
class ReplayBackend(Backend):
    responses: dict[tuple[str, str], dict]
    model: str = "replay"
    params: dict[str, Any] = field(default_factory=dict)
    cacheable = False  # answers cost nothing; a cache would only hide them

    @classmethod
    def from_file(cls, path: str | Path) -> "ReplayBackend":
        path = Path(path)
        if not path.is_file():
            raise DataError("replay file not found", file=path)
        responses: dict[tuple[str, str], dict] = {}
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    key = (str(row["item_id"]), str(row.get("condition", "C+Q")))
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise DataError(f"not a replay line ({exc})", file=path, record=f"line {lineno}") from None
                if key in responses:
                    raise DataError(f"duplicate replay line for {key[0]} {key[1]}", file=path, record=f"line {lineno}")
                responses[key] = row
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        return cls(responses=responses, model=f"replay:{path.name}", params={"replay_sha256": digest})

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        for req in requests:
            row = self.responses.get((req.item.id, req.condition))
            if row is None:
                yield req, Response()  # missing
            else:
                yield req, Response(text=row.get("response"), error=row.get("error"),
                                    usage=row.get("usage") or {}, latency_s=float(row.get("latency_s") or 0.0))

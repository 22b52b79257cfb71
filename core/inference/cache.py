"""Content-addressed response cache (SQLite), shared by runs.

Keys are `request_key(...)` digests; only successful responses are stored. API keys never
enter a key or a value.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

from .base import Response


def default_cache_path() -> Path:
    root = os.environ.get("MEDVQA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "medvqa")
    return Path(root) / "responses.sqlite3"


class ResponseCache:
    def __init__(self, path: Path | None = None, *, commit_every: int = 256):
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, "
                         "text TEXT NOT NULL, usage TEXT, latency_s REAL)")
        self._db.commit()
        self._lock = threading.Lock()
        self._uncommitted = 0
        self.commit_every = commit_every

    def get_many(self, keys: list[str]) -> dict[str, Response]:
        out: dict[str, Response] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                q = f"SELECT key, text, usage, latency_s FROM responses WHERE key IN ({','.join('?' * len(chunk))})"
                for key, text, usage, latency in self._db.execute(q, chunk):
                    out[key] = Response(text=text, usage=json.loads(usage or "{}"), latency_s=latency or 0.0, cached=True)
        return out

    def get(self, key: str) -> Response | None:
        return self.get_many([key]).get(key)

    def put(self, key: str, model: str, response: Response) -> None:
        if response.error is not None or response.text is None:
            return
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)",
                             (key, model, response.text, json.dumps(response.usage), response.latency_s))
            self._uncommitted += 1
            if self._uncommitted >= self.commit_every:
                self._db.commit()
                self._uncommitted = 0

    def flush(self) -> None:
        with self._lock:
            self._db.commit()
            self._uncommitted = 0

    def close(self) -> None:
        self.flush()
        self._db.close()

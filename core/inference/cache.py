"""Content-addressed response cache (SQLite), shared by runs.

Keys are `request_key(...)` digests; only successful responses are stored. API keys never
enter a key or a value. A database error (a corrupt file, a full disk) is one line naming the
file and what to do.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from ..files import default_cache_path
from ..items import DataError
from .base import Response
from .completion import token_logprobs

# SQLite does not wait (its busy timeout) for a connection switching a new file to WAL while another
# sets it up: "database is locked" at once. Within one process, setting up is serialised.
_SETUP = threading.Lock()


class ResponseCache:
    def __init__(self, path: Path | None = None, *, commit_every: int = 256):
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _SETUP:  # caches opened at once by threads (an eval set's experiments) set the file up one by one
            self._db = _Guarded(self.path, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, "
                "text TEXT NOT NULL, usage TEXT, latency_s REAL)"
            )
            have = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
            for column in ("reasoning", "finish_reason", "logprobs"):  # caches written before these were kept
                if column not in have:
                    self._db.execute(f"ALTER TABLE responses ADD COLUMN {column} TEXT")
            self._db.commit()
        self._lock = threading.Lock()
        self._uncommitted = 0
        self.commit_every = commit_every

    def get_many(self, keys: list[str]) -> dict[str, Response]:
        out: dict[str, Response] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = (
                    f"SELECT key, text, usage, latency_s, reasoning, finish_reason, logprobs FROM responses "
                    f"WHERE key IN ({','.join('?' * len(chunk))})"
                )
                for key, text, usage, latency, reasoning, finish, logprobs in self._db.execute(q, chunk):
                    out[key] = Response(
                        text=text,
                        usage=json.loads(usage or "{}"),
                        latency_s=latency or 0.0,
                        cached=True,
                        reasoning=reasoning,
                        finish_reason=finish,
                        logprobs=_logprobs(logprobs),
                    )
        return out

    def get(self, key: str) -> Response | None:
        return self.get_many([key]).get(key)

    def put(self, key: str, model: str, response: Response) -> None:
        if response.error is not None or response.text is None:
            return
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, text, usage, latency_s, reasoning, "
                "finish_reason, logprobs) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model,
                    response.text,
                    json.dumps(response.usage, allow_nan=False),
                    response.latency_s,
                    response.reasoning,
                    response.finish_reason,
                    None if response.logprobs is None else json.dumps({"content": response.logprobs}),
                ),
            )
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


def _logprobs(stored: str | None) -> list | None:
    """A cached answer's token log-probabilities, read as untrusted (`token_logprobs`): None where
    none were kept or what was kept is unreadable."""
    if not stored:
        return None
    try:
        return token_logprobs(json.loads(stored))
    except (ValueError, RecursionError):
        return None


# What to do about a database error, by SQLite's primary result code.
_ADVICE = {
    "SQLITE_NOTADB": "it is not a SQLite database: move it aside (a new cache is started) or run with --no-cache",
    "SQLITE_CORRUPT": "it is corrupt: move it aside (a new cache is started) or run with --no-cache",
    "SQLITE_FULL": "free disk space, or run with --no-cache",
    "SQLITE_IOERR": "the disk may be full: free disk space, or run with --no-cache",
    "SQLITE_BUSY": "another process holds it: wait for it, or run with --no-cache",
    "SQLITE_READONLY": "make it writable, set MEDVQA_CACHE_DIR to another folder, or run with --no-cache",
}


class _Guarded:
    """The cache's SQLite connection: every database error becomes a `DataError` naming the
    file and what to do. Statements return their rows as a list."""

    def __init__(self, path: Path, **options):
        self.path = path
        self._db = self._call(sqlite3.connect, path, **options)

    def execute(self, *args) -> list:
        return self._call(lambda: self._db.execute(*args).fetchall())

    def commit(self) -> None:
        self._call(self._db.commit)

    def close(self) -> None:
        self._call(self._db.close)

    def _call(self, fn, *args, **options):
        try:
            return fn(*args, **options)
        except sqlite3.Error as exc:
            name = getattr(exc, "sqlite_errorname", "") or ""
            advice = next(
                (text for code, text in _ADVICE.items() if name.startswith(code)),
                "move it aside or run with --no-cache",
            )
            raise DataError(f"response cache: {exc}: {advice}", file=self.path) from None

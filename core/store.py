"""The run directory: `manifest.json` and append-only `records.jsonl`, with resume.

A record is one JSON line per (item, condition). Lines are written whole and flushed to the
OS at once; they are fsync'd in small batches. A line cut short by a killed process is
dropped on the next open, so a re-run of the same command resumes where the last one stopped.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterable

from .items import DataError

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
# Manifest fields that must match for a run directory to be resumed.
IDENTITY = ("benchmark", "split", "data_fingerprint", "model", "params", "conditions", "templates")


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=2, sort_keys=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_manifest(run_dir: Path) -> dict:
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        raise DataError("not a run directory (no manifest.json)", file=run_dir)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"unreadable manifest ({exc})", file=path) from None


def read_records(run_dir: Path) -> list[dict]:
    """The newest complete record of each (item, condition), in file order of first
    appearance. A trailing partial line (a killed writer) is ignored; a broken line anywhere
    else is an error naming the line."""
    return newest_per_pair(read_all_records(run_dir))


def read_all_records(run_dir: Path) -> list[dict]:
    """Every complete record in file order, superseded ones included (what re-scoring keeps)."""
    path = Path(run_dir) / RECORDS
    if not path.is_file():
        return []
    return _scan(path)[0]


def newest_per_pair(records: Iterable[dict]) -> list[dict]:
    """One record per (item_id, condition): the last one written. A record that was
    superseded (an `error` retried on resume, a duplicate) never enters a denominator."""
    newest: dict[tuple, dict] = {}
    for record in records:
        newest[(record.get("item_id"), record.get("condition"))] = record
    return list(newest.values())


def _scan(path: Path) -> tuple[list[dict], int]:
    """(records, byte offset just after the last complete line)."""
    data = path.read_bytes()
    records: list[dict] = []
    good_end = 0
    start = 0
    lineno = 0
    while start < len(data):
        nl = data.find(b"\n", start)
        lineno += 1
        if nl == -1:  # a partial last line
            break
        line = data[start:nl]
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                if data.find(b"\n", nl + 1) == -1 and not data[nl + 1:].strip():
                    break  # the last line was cut mid-way and happens to end in a newline
                raise DataError(f"corrupt record ({exc})", file=path, record=f"line {lineno}") from None
        start = nl + 1
        good_end = start
    return records, good_end


class RunStore:
    def __init__(self, run_dir: Path, *, fsync_every: int = 64, fsync_seconds: float = 1.0):
        self.run_dir = Path(run_dir)
        self.fsync_every = fsync_every
        self.fsync_seconds = fsync_seconds
        self._fh = None
        self._pending = 0
        self._last_sync = time.monotonic()

    @property
    def records_path(self) -> Path:
        return self.run_dir / RECORDS

    def open(self, manifest: dict) -> list[dict]:
        """Create the run directory, or resume it when its manifest matches. Returns the
        newest record of each (item, condition) already written."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        manifest_path = self.run_dir / MANIFEST
        if manifest_path.is_file():
            old = read_manifest(self.run_dir)
            diff = [k for k in IDENTITY if old.get(k) != manifest.get(k)]
            if diff:
                raise DataError(f"holds a different run (differs in: {', '.join(diff)}); "
                                "choose another --run-dir", file=self.run_dir)
            manifest = {**manifest, "created": old.get("created", manifest.get("created")),
                        "resumed": old.get("resumed", 0) + 1}
        write_json_atomic(manifest_path, manifest)
        records: list[dict] = []
        if self.records_path.is_file():
            records, good_end = _scan(self.records_path)
            if good_end != self.records_path.stat().st_size:
                with self.records_path.open("r+b") as fh:
                    fh.truncate(good_end)
        self._fh = self.records_path.open("a", encoding="utf-8")
        return newest_per_pair(records)

    def append(self, record: dict) -> None:
        self._fh.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._fh.flush()  # a whole line reaches the OS at once
        self._pending += 1
        now = time.monotonic()
        if self._pending >= self.fsync_every or now - self._last_sync >= self.fsync_seconds:
            self.sync()

    def sync(self) -> None:
        if self._fh and self._pending:
            os.fsync(self._fh.fileno())
            self._pending = 0
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if self._fh:
            self.sync()
            self._fh.close()
            self._fh = None

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def rewrite_records(run_dir: Path, records: Iterable[dict]) -> None:
    """Replace records.jsonl atomically (used by re-scoring)."""
    path = Path(run_dir) / RECORDS
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)

"""The run directory: `manifest.json` and append-only `records.jsonl`, with resume.

A record is one JSON line per (item, condition). Lines are written whole and flushed to the
OS at once; they are fsync'd in small batches. A line cut short by a killed process is
dropped on the next open, so a re-run of the same command resumes where the last one stopped.

One writer at a time: every command that writes a run directory holds an exclusive lock
(`flock`) on `run.lock` in the directory, which names the holder's PID; a second writer fails at
once (`lock`, where the lock and its rules live). Opening a run writes nothing until a record is
appended: a new run's manifest is written with its first record, a run that ends before one (a
failed preflight) leaves no file behind, and a finished run opens in a read-only directory.
Files in a run directory are never opened through a symbolic link: a run directory holding one
is refused before anything is written, the lock and `records.jsonl` are opened with
`O_NOFOLLOW`, and a replaced file is a temporary file of our own, created exclusively, renamed
over it (`write_atomic`, the one writer of every file medvqa writes, in a run directory or not).
Nothing reaches a file unscrubbed of credentials, and a failed write (disk full, read-only) is
an error naming the file, with the file cut back to its last whole line.
"""

from __future__ import annotations

import errno
import gc
import json
import os
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from ..files import open_no_link, remove_quietly, write_atomic, write_error
from ..inference.secrets import Scrubber
from ..items import DataError
from ..jsonl import loads, read_json
from ..results import check_record, upgrade_manifest
from .lock import LOCK, locked, refuse_links, take_lock

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
# A record of an item whose answers are withheld carries this field (true): it is never scored.
HELD_OUT = "held_out"
# Manifest fields that must match for a run directory to be resumed (`language` only where the
# old manifest has it: a run written before it existed is in its benchmark's first language;
# `variants` only in a run that asks any, so a run without them has none on either side; `shard`
# only in a shard of a run, `shards.Shard`).
IDENTITY = (
    "benchmark",
    "split",
    "data_fingerprint",
    "model",
    "params",
    "conditions",
    "variants",
    "templates",
    "convention",
    "language",
    "shard",
)


def write_json_atomic(path: Path, data: Any) -> None:
    """`data` as indented JSON in the file at `path`, replaced atomically."""
    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n")


def read_manifest(run_dir: Path) -> dict:
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        raise DataError("not a run directory (no manifest.json)", file=run_dir)
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise DataError("unreadable manifest (not a JSON object)", file=path)
    return upgrade_manifest(manifest, file=path)


def read_records(run_dir: Path, *, held_out: bool = False) -> list[dict]:
    """The newest complete record of each (item, condition), in file order of first
    appearance. A trailing partial line (a killed writer) is ignored; a broken line anywhere
    else is an error naming the line. Records of held-out items (never scored) are left out
    unless `held_out`."""
    return newest_records(read_all_records(run_dir), held_out=held_out)


def newest_records(records: Iterable[dict], *, held_out: bool = False) -> list[dict]:
    """`read_records` of a run's every record line (`read_all_records`) already read."""
    return [r for r in newest_per_pair(records) if held_out or not r.get(HELD_OUT)]


def read_all_records(run_dir: Path) -> list[dict]:
    """Every complete record in file order, superseded ones included (what re-scoring keeps)."""
    path = Path(run_dir) / RECORDS
    if not path.is_file():
        return []
    return _scan(path)[0]


def pair_key(record: dict) -> tuple:
    """What a record answers: (item_id, condition), with the repeat index past the first
    (`--repeats`; a record without one is the first repeat's)."""
    repeat = record.get("repeat") or 0
    return (
        (record.get("item_id"), record.get("condition"), repeat)
        if repeat
        else (record.get("item_id"), record.get("condition"))
    )


def newest_per_pair(records: Iterable[dict]) -> list[dict]:
    """One record per (item_id, condition) and repeat: the last one written. A record that was
    superseded (an `error` retried on resume, a duplicate) never enters a denominator."""
    newest: dict[tuple, dict] = {}
    for record in records:
        newest[pair_key(record)] = record
    return list(newest.values())


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off while a large acyclic structure (records, items) is built: its
    full passes over a growing heap would otherwise cost a third of reading a large run. The
    collector's previous state is restored after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@gc_paused()
def _scan(path: Path) -> tuple[list[dict], int]:
    """(records, byte offset just after the last complete line), read with the collector paused."""
    data = path.read_bytes()
    *whole, partial = data.split(b"\n")  # `partial`: what follows the last newline (a cut line, or nothing)
    try:  # every line whole: read in one pass (a third faster); anything else is read line by line below
        records = [loads(line) for line in whole]
        if all(type(r) is dict for r in records):
            return [check_record(r, file=path) for r in records], len(data) - len(partial)
    except (ValueError, RecursionError, DataError):  # a blank, corrupt, cut or damaged line: named below
        pass
    records = []
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
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("not a JSON object")
            except (ValueError, RecursionError) as exc:
                if data.find(b"\n", nl + 1) == -1 and not data[nl + 1 :].strip():
                    break  # the last line was cut mid-way and happens to end in a newline
                raise DataError(f"corrupt record ({exc})", file=path, record=f"line {lineno}") from None
            records.append(check_record(record, file=path, line=lineno))
        start = nl + 1
        good_end = start
    return records, good_end


def _line(record: dict, scrub: Scrubber) -> bytes:
    """One record as a JSON line, scrubbed of credentials. A lone surrogate (which UTF-8 cannot
    hold) is written as its JSON escape (`\\ud800`), so the line reads back exactly. A record
    that is not a valid `Record` is refused before anything is written."""
    check_record(record)
    text = scrub(json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)) + "\n"
    return text.encode("utf-8", "backslashreplace")


class RunStore:
    """The writer of one run directory (see the module's docstring)."""

    def __init__(self, run_dir: Path, *, fsync_every: int = 64, fsync_seconds: float = 1.0):
        self.run_dir = Path(run_dir)
        self.fsync_every = fsync_every
        self.fsync_seconds = fsync_seconds
        self._fd: int | None = None  # records.jsonl, opened for appending by the first record
        self._lock: int | None = None
        self._manifest: dict | None = None  # a resumed run's manifest, written with its first record
        self._end = 0  # bytes of whole lines in records.jsonl
        self._pending = 0
        self._last_sync = time.monotonic()
        self._scrub = Scrubber()
        self._wrote = False  # whether anything was written (the first record, with the manifest)
        self._created: list[Path] = []  # directories this store made, deepest first
        self._created_lock = False

    @property
    def records_path(self) -> Path:
        return self.run_dir / RECORDS

    def open(self, manifest: dict) -> list[dict]:
        """Lock the run directory, then create it or resume it when its manifest matches.
        Returns the newest record of each (item, condition) already written. Nothing is
        written before the first record: a run that closes without one leaves the directory as
        it found it (a directory it created is removed again)."""
        manifest = self._scrub.data(manifest)
        if self.run_dir.exists() and not self.run_dir.is_dir():
            raise DataError("is not a directory; choose another --run-dir", file=self.run_dir)
        refuse_links(self.run_dir)
        self._created = _missing_parents(self.run_dir)
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_error(self.run_dir, exc) from None
        try:
            self._lock, self._created_lock = take_lock(self.run_dir)
            return self._open_locked(manifest)
        except BaseException:
            self.close()
            raise

    def _open_locked(self, manifest: dict) -> list[dict]:
        manifest_path = self.run_dir / MANIFEST
        if manifest_path.is_file():
            old = read_manifest(self.run_dir)
            diff = [k for k in IDENTITY if old.get(k) != manifest.get(k) and (k != "language" or k in old)]
            if diff:
                raise DataError(
                    f"holds a different run (differs in: {', '.join(diff)}); choose another --run-dir",
                    file=self.run_dir,
                )
            self._manifest = {
                **manifest,
                "created": old.get("created", manifest.get("created")),
                "resumed": old.get("resumed", 0) + 1,
            }
        elif self.records_path.exists() or manifest_path.exists():
            raise DataError(
                f"holds {RECORDS if self.records_path.exists() else MANIFEST} but no readable "
                f"{MANIFEST}: not a run medvqa wrote; choose another --run-dir",
                file=self.run_dir,
            )
        else:
            self._manifest = manifest  # a new run: its manifest is written with its first record
        records: list[dict] = []
        if self.records_path.is_file():
            records, self._end = _scan(self.records_path)
        return newest_per_pair(records)

    def check_writable(self) -> None:
        """Before the first request of a run: a `DataError` naming the first file the first
        record would write, when it cannot be written (a read-only directory or file), so no
        answer is asked for and then thrown away."""
        if self._fd is not None:
            return
        targets = [(self.run_dir / MANIFEST, self.run_dir)] if self._manifest is not None else []
        records_exist = self.records_path.exists()
        targets.append((self.records_path, self.records_path if records_exist else self.run_dir))
        for path, needs in targets:
            if not os.access(needs, os.W_OK):
                code = errno.EROFS if os.statvfs(needs).f_flag & os.ST_RDONLY else errno.EACCES
                raise write_error(path, OSError(code, os.strerror(code)))

    def _start_writing(self) -> int:
        """Before the first record: the run's manifest, then records.jsonl cut back to its last
        whole line (a killed writer may have left half of one). Returns records.jsonl's descriptor."""
        if self._manifest is not None:
            write_json_atomic(self.run_dir / MANIFEST, self._manifest)
            self._manifest = None
        try:
            self._fd = fd = open_no_link(self.records_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise DataError("is not a regular file; choose another --run-dir", file=self.records_path)
            if os.fstat(fd).st_size != self._end:
                os.ftruncate(fd, self._end)
        except OSError as exc:
            raise write_error(self.records_path, exc) from None
        self._wrote = True
        return fd

    def append(self, record: dict) -> None:
        self.append_many([record])

    def append_many(self, records: list[dict]) -> None:
        """Append whole lines with one write (a caller that produces records faster than one
        system call each, such as a judge, batches them)."""
        if not records:
            return
        fd = self._fd if self._fd is not None else self._start_writing()
        data = b"".join(_line(record, self._scrub) for record in records)
        try:
            written = 0
            while written < len(data):  # a whole line reaches the OS at once
                written += os.write(fd, data[written:])
        except OSError as exc:
            self._cut_back(fd)
            raise write_error(self.records_path, exc) from None
        self._end += len(data)
        self._pending += len(records)
        now = time.monotonic()
        if self._pending >= self.fsync_every or now - self._last_sync >= self.fsync_seconds:
            self.sync()

    def _cut_back(self, fd: int) -> None:
        """Drop the part of a line a failed write left behind in records.jsonl (open at `fd`)."""
        try:
            os.ftruncate(fd, self._end)
        except OSError:
            pass  # the next open drops it

    def sync(self) -> None:
        if self._fd is not None and self._pending:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise write_error(self.records_path, exc) from None
            self._pending = 0
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """Sync and close records.jsonl, and release the lock. A run that wrote no record
        removes the lock file and the directories it created."""
        try:
            if self._fd is not None:
                self.sync()
        finally:
            if not self._wrote:
                if self._lock is not None and self._created_lock:
                    remove_quietly(self.run_dir / LOCK)  # while still locked: no one else holds this file
                for folder in self._created:
                    try:
                        folder.rmdir()
                    except OSError:
                        break  # someone put something there meanwhile: it stays
            for fd in (self._fd, self._lock):
                if fd is not None:
                    os.close(fd)
            self._fd = self._lock = None
            self._created, self._created_lock = [], False

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def rewrite_records(run_dir: Path, records: Iterable[dict], *, lock: bool = True) -> None:
    """Replace records.jsonl atomically (used by re-scoring), holding the run's lock (taken here
    unless `lock` is False: the caller holds it, see `locked`)."""
    scrub = Scrubber()
    lines = [_line(rec, scrub) for rec in records]  # every record valid before the file is touched
    with locked(run_dir) if lock else nullcontext():
        write_atomic(Path(run_dir) / RECORDS, lambda fh: fh.writelines(lines))


def _missing_parents(path: Path) -> list[Path]:
    """`path` and its ancestors that do not exist yet, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing

"""Files as medvqa writes and keeps them: the one atomic writer every file goes through
(`write_atomic`), reading a cache's file back without following links (`read_kept`), opening a
file never through a link (`open_no_link`), a path kept inside its folders (`confined`), a
failed write as one line naming the file (`write_error`), and medvqa's cache folder
(`cache_dir`). The ground floor: it imports only
`items` (for `DataError`).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from .items import DataError

NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


def default_cache_path() -> Path:
    """The response cache's file: `responses.sqlite3` in `cache_dir()`."""
    return cache_dir() / "responses.sqlite3"


def cache_dir() -> Path:
    """medvqa's cache folder (`$MEDVQA_CACHE_DIR`, else `$XDG_CACHE_HOME/medvqa`, else
    `~/.cache/medvqa`): the response cache and any state an adapter keeps between runs."""
    root = os.environ.get("MEDVQA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "medvqa"
    )
    return Path(root)


def write_error(path: Path, exc: OSError) -> DataError:
    """A failed write as one line naming the file and what to do."""
    if exc.errno in NO_SPACE:
        advice = "free disk space (or raise the file-size limit) and run the same command again to resume"
    elif exc.errno in READ_ONLY:
        advice = "make it writable, or choose another --run-dir"
    else:
        advice = "check the disk and run the same command again to resume"
    return DataError(f"cannot write ({exc.strerror or exc}): {advice}", file=path)


def link_error(path: Path) -> DataError:
    """A symbolic link where a run directory's file should be, as one line."""
    return DataError(
        "is a symbolic link: files in a run directory are never written through a link; "
        "remove it, or choose another --run-dir",
        file=path,
    )


def open_no_link(path: Path, flags: int, mode: int = 0o644) -> int:
    """`os.open` that never follows a symbolic link at `path` (a link is a `DataError`)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_error(path) from None
        raise


def write_atomic(path: str | Path, content: bytes | str | Callable[[BinaryIO], Any], *, sync: bool = True) -> Path:
    """The one way medvqa writes a file (run files, pages, tables, figures, exports, caches).

    `content` (bytes, text written as UTF-8, or a function writing to the open binary file) goes
    into a new temporary file beside `path`, renamed over `path` when whole: a reader sees the
    old file or the new one, never half of one. Nothing is written through a link: the
    temporary file is created exclusively (`O_EXCL`, `O_NOFOLLOW`) under an unpredictable name,
    so no file or link planted beside `path` is touched, and the rename replaces a link at
    `path` itself, never its target. A failed write (a full disk, a read-only folder) leaves the
    old file whole and no temporary file, and is a `DataError` naming `path`. A missing folder
    of `path` is made. Without `sync` (a cache's file, made again if lost) the data is not
    flushed to the disk first. A lone surrogate in text is written as its escape (`\\ud800`),
    as records write it. Returns `path`."""
    path = Path(path)
    if isinstance(content, str):
        content = content.encode("utf-8", "backslashreplace")
    write = content if callable(content) else (lambda fh: fh.write(content))
    tmp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = new_temporary(path)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:  # whatever stopped the write (Ctrl-C too): no temporary file stays
        if tmp is not None:
            remove_quietly(tmp)
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise
    return path


def new_temporary(path: Path) -> tuple[int, Path]:
    """(descriptor, path) of a new empty file beside `path`, `.<name>.<16 random hex>.tmp`,
    created exclusively and never through a link (another process's name is skipped)."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name[:200]}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(path))


def confined(path: Path, roots: tuple[str, ...]) -> bool:
    """Whether `path` is a regular file inside one of `roots` (real paths, as `os.path.realpath`
    gives them) once links are resolved: how a path read back from a cache, or made from data,
    is kept where it belongs."""
    real = os.path.realpath(path)
    return any(real.startswith(root + os.sep) for root in roots) and os.path.isfile(real)


def read_kept(path: Path) -> bytes | None:
    """The bytes of a cache's file at `path`; None when there is none, or it is not a regular
    file of its own (a link, a device, a pipe planted there is never read: `/dev/zero` would never
    end)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            return fh.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None
        except OSError:
            return None


def remove_quietly(path: Path) -> None:
    """Remove a temporary file left by a failed write, if there is one and we can."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only folder holds none

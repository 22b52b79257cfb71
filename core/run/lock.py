"""The lock of a run directory: one writer at a time.

Every command that writes a run directory holds an exclusive lock (`flock`) on `run.lock` in the
directory, which names the holder's PID; a second writer fails at once, naming the holder. The lock
file is opened without following links (a run directory holding a symbolic link is refused before
anything is written: `refuse_links`), and a lock counts only while the file locked is still the
one at its path. The run store (`store.RunStore`) takes it when it opens a run; `locked` holds it
for a command that rewrites a run whole (`score`).
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..files import READ_ONLY, link_error, open_no_link, write_error
from ..items import DataError

LOCK = "run.lock"


def refuse_links(run_dir: Path) -> None:
    """A `DataError` naming the first symbolic link in `run_dir` (the directory itself may be
    one: it is what the user named). Called before anything is written there."""
    try:
        entries = sorted(os.scandir(run_dir), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise write_error(Path(run_dir), exc) from None
    for entry in entries:
        if entry.is_symlink():
            raise link_error(Path(run_dir) / entry.name)


def lock_run_dir(run_dir: Path) -> int | None:
    """Take the exclusive lock of a run directory; the returned descriptor holds it until it is
    closed (or the process ends) and the lock file holds our PID. A second writer fails at once
    with a message naming the holder. None when the directory is read-only to us: nothing can be
    written there, and the first write says so."""
    return take_lock(Path(run_dir))[0]


def take_lock(run_dir: Path) -> tuple[int | None, bool]:
    """(`lock_run_dir`'s descriptor, whether we created the lock file). The lock file is opened
    without following links, and the lock counts only if the file we locked is still the one
    at its path (a run that wrote nothing removes its lock file when it closes)."""
    path = run_dir / LOCK
    for _ in range(10):
        fd, created = _open_lock_file(path)
        if fd is None:
            return None, False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise DataError(f"cannot lock the run directory ({exc.strerror})", file=path) from None
            who = f"process {holder}" if holder.isdigit() else "another process"
            raise DataError(
                f"in use by {who} (lock {LOCK}): wait for it to finish, or choose another --run-dir", file=run_dir
            ) from None
        try:
            current = os.lstat(path)
        except FileNotFoundError:
            current = None
        mine = os.fstat(fd)
        if current is None or (current.st_ino, current.st_dev) != (mine.st_ino, mine.st_dev):
            os.close(fd)  # the file was removed (or replaced) while we waited: lock the one there now
            continue
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # a lock file we may only read still locks; it just cannot name us
        return fd, created
    raise DataError("cannot lock the run directory (its lock file keeps changing)", file=path)


def _open_lock_file(path: Path) -> tuple[int | None, bool]:
    """(descriptor of the lock file, whether we created it); (None, False) when the directory
    is read-only to us and holds no lock file. A lock file removed between our two tries (its
    run closed without a record) is created again, a bounded number of times."""
    for _ in range(10):
        try:
            return open_no_link(path, os.O_RDWR | os.O_CREAT | os.O_EXCL), True
        except FileExistsError:
            refused = False
        except OSError as exc:
            if exc.errno not in READ_ONLY:
                raise write_error(path, exc) from None
            refused = True  # we may not create it: open the one there, if there is one
        try:
            return open_no_link(path, os.O_RDWR), False
        except FileNotFoundError:
            if refused:
                return None, False  # read-only, and no lock file to take
            continue  # removed in between: create it again
        except OSError as exc:
            if exc.errno not in READ_ONLY:
                raise write_error(path, exc) from None
        try:
            return open_no_link(path, os.O_RDONLY), False  # an existing lock file we may not write still locks
        except OSError:
            return None, False
    raise DataError("cannot lock the run directory (its lock file keeps changing)", file=path)


@contextmanager
def locked(run_dir: Path) -> Iterator[None]:
    """Hold the lock of the existing run directory `run_dir` (refused when it holds a symbolic
    link): what a command that rewrites a run (`score`) does for its whole read-and-write."""
    run_dir = Path(run_dir)
    refuse_links(run_dir)
    fd = lock_run_dir(run_dir)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)

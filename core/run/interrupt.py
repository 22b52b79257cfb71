"""Ctrl-C during a run: the first one stops it cleanly (records written so far are kept, the
files closed), a second one during that shutdown ends the process at once."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C; the message says how many records are saved and the command
    that resumes the run."""


@contextmanager
def exit_on_second_interrupt(message: Callable[[], str]) -> Iterator[None]:
    """While active, the first SIGINT raises KeyboardInterrupt as usual; a second one writes
    `message()` to stderr and exits with status 130 without any further cleanup (every record
    line already reached the OS when it was appended). Only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = 0

    def handler(signum, frame) -> None:
        nonlocal received
        received += 1
        if received == 1:
            raise KeyboardInterrupt
        sys.stderr.write(message() + "\n")
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """A Ctrl-C arriving inside the block takes effect when the block ends, through the handler in
    force: what the block writes and what it counts (a record line and the count the resume line
    prints) never part. Only in the main thread, where Python runs signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: arrived.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if arrived:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

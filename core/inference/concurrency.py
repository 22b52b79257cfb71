"""Running async calls, a bounded number at a time, behind the synchronous backend protocol.

The calls run on one event loop in a background thread that lives as long as the process
(HTTP clients cached by provider libraries are bound to the loop that created them, so it is
reused by every run). The loop itself pulls the next request as soon as a slot frees up; the
caller receives `(request, result)` pairs in completion order through a queue, and a slot frees
up when the caller takes its result: at most `concurrency` requests are in flight or waiting
for the caller, so an interrupted run abandons at most that many answers (a caller slower than
the server would otherwise leave any number of answers, already paid for, in the queue).
"""

from __future__ import annotations

import asyncio
import atexit
import queue
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_END = object()


def event_loop() -> asyncio.AbstractEventLoop:
    """The process's background event loop (started on first use)."""
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="medvqa-requests", daemon=True).start()
            atexit.register(_close, _loop)
        return _loop


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """At exit, cancel what still runs on the loop (provider libraries leave background tasks,
    such as litellm's logging worker), so that the interpreter does not print "Task was
    destroyed but it is pending!" after the run's last line."""

    async def cancel_all() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    if loop.is_running():
        try:
            asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(timeout=2)
        except Exception:  # the loop is stuck or gone: nothing more to tidy
            pass
        loop.call_soon_threadsafe(loop.stop)


def bounded(items: Iterable[T], call: Callable[[T], Awaitable[R]], concurrency: int) -> Iterator[tuple[T, R]]:
    """Yield `(item, await call(item))` in completion order, at most `concurrency` at once.
    `items` is consumed on the loop's thread, so it must not block."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    results: queue.SimpleQueue = queue.SimpleQueue()
    loop = event_loop()
    slots = asyncio.Semaphore(concurrency)  # released by the caller as it takes each result

    async def one(item: T) -> None:
        try:
            results.put((item, await call(item), None))
        except Exception as exc:  # a bug in `call`: re-raised in the caller's thread
            results.put((item, None, exc))

    async def feed() -> None:
        running: set[asyncio.Task] = set()
        source = iter(items)
        try:
            while True:
                await slots.acquire()
                try:
                    item = next(source)
                except StopIteration:
                    break
                task = asyncio.create_task(one(item))
                running.add(task)
                task.add_done_callback(running.discard)
            if running:
                await asyncio.wait(running)
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            results.put(_END)

    fed = asyncio.run_coroutine_threadsafe(feed(), loop)
    ended = False
    try:
        while (got := results.get()) is not _END:
            loop.call_soon_threadsafe(slots.release)
            item, result, exc = got
            if exc is not None:
                raise exc
            yield item, result
        ended = True
        fed.result()
    finally:
        if not ended:  # the caller stopped early: cancel what is in flight and wait for it
            fed.cancel()
            while results.get(timeout=60) is not _END:
                pass


class Pacer:
    """At most `rpm` request starts per minute, evenly spaced (retries count too)."""

    def __init__(self, rpm: float, *, sleep=None):
        if rpm <= 0:
            raise ValueError(f"requests per minute must be positive, not {rpm}")
        self.interval = 60.0 / rpm
        self._next = 0.0
        self._sleep = sleep or asyncio.sleep  # (a test passes one that advances a clock of its own)

    async def wait(self) -> None:
        now = asyncio.get_running_loop().time()
        start = max(now, self._next)
        self._next = start + self.interval
        if start > now:
            await self._sleep(start - now)

"""Spreading requests over worker processes when one core is the limit.

Provider libraries spend a few milliseconds of CPU per call, so one process tops out near a
hundred requests per second however many are in flight. `spread` starts `n` processes; each
builds its own backend from a picklable `build` callable and runs up to `concurrency / n`
calls at once on its own event loop. Requests travel as messages (image references, not
bytes); the parent keeps scoring and writing records, so the run directory has one writer.
Workers exit when the parent disappears, even after SIGKILL.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing as mp
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .base import Request, Response

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, SpawnContext

POLL_S = 0.5


def spread(
    requests: Iterable[Request], build: Callable[[], Any], n: int, concurrency: int, stats: dict
) -> Iterator[tuple[Request, Response]]:
    """Yield `(request, response)` as the workers complete them; `stats` is kept summed."""
    ctx = context()
    tasks, results = ctx.Queue(), ctx.Queue()
    per_worker = max(1, math.ceil(concurrency / n))
    procs = [
        ctx.Process(target=_work, args=(build, per_worker, tasks, results, os.getpid()), daemon=True) for _ in range(n)
    ]
    for p in procs:
        p.start()
    sent: dict[int, Request] = {}
    worker_stats: dict[int, dict] = {}
    source = enumerate(requests)
    exhausted = False
    try:
        while True:
            while not exhausted and len(sent) < 2 * concurrency:
                nxt = next(source, None)
                if nxt is None:
                    exhausted = True
                    for _ in procs:
                        tasks.put(None)
                    break
                idx, req = nxt
                sent[idx] = req
                tasks.put((idx, req.messages, req.response_schema))
            if not sent:
                return
            idx, response, pid, totals = _next_result(results, procs)
            worker_stats[pid] = totals
            for name in ("retries", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_usd"):
                stats[name] = sum(s.get(name, 0) for s in worker_stats.values())
            stats["in_flight"] = len(sent) - 1
            yield sent.pop(idx), response
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)
        tasks.cancel_join_thread()
        results.cancel_join_thread()
        # the queues' semaphores are released now, while this process is whole, rather than by
        # finalizers at interpreter exit, where an interrupted run's traceback still holds them
        # (and, on a loaded machine, the resource tracker reported them leaked after the last line)
        for q in (tasks, results):
            q.close()
        del procs, tasks, results


def start_method() -> str:
    """Fork while this process has a single thread (the workers then start at once, with the
    provider library already imported); spawn otherwise, as forking threads is unsafe."""
    return "fork" if "fork" in mp.get_all_start_methods() and threading.active_count() == 1 else "spawn"


def context() -> ForkContext | SpawnContext:
    """The multiprocessing context of `start_method`."""
    return mp.get_context("fork") if start_method() == "fork" else mp.get_context("spawn")


def _next_result(results, procs):
    while True:
        try:
            return results.get(timeout=POLL_S)
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"a worker process exited with status {dead[0].exitcode}") from None


def _work(build: Callable[[], Any], concurrency: int, tasks, results, parent: int) -> None:
    """A worker: read tasks, run `backend.acall` on them, send back responses. Ctrl-C at a
    terminal reaches the whole process group: the parent alone handles it and stops us."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    backend = build()
    loop = asyncio.new_event_loop()
    slots = threading.BoundedSemaphore(concurrency)
    pid = os.getpid()

    def orphaned() -> bool:
        return os.getppid() != parent

    running: set[asyncio.Task] = set()

    def start(idx: int, messages: list, schema: dict | None = None) -> None:
        task = loop.create_task(run(idx, messages, schema))
        running.add(task)
        task.add_done_callback(running.discard)

    async def run(idx: int, messages: list, schema: dict | None) -> None:
        try:
            response = await backend.acall(messages, schema)
        finally:
            slots.release()
        results.put((idx, response, pid, dict(backend.stats)))

    def read() -> None:
        while not orphaned():
            if not slots.acquire(timeout=POLL_S):
                continue
            try:
                task = tasks.get(timeout=POLL_S)
            except queue.Empty:
                slots.release()
                continue
            if task is None:
                slots.release()
                break
            loop.call_soon_threadsafe(start, *task)
        if orphaned():
            os._exit(1)
        for _ in range(concurrency):  # wait for the calls in flight, then stop the loop
            while not slots.acquire(timeout=POLL_S):
                if orphaned():
                    os._exit(1)
        loop.call_soon_threadsafe(loop.stop)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    loop.run_forever()
    results.close()
    results.join_thread()

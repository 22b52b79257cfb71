import asyncio
import time

import pytest

from medvqa.core.inference.concurrency import Pacer, bounded, event_loop


def test_bounded_keeps_at_most_concurrency_in_flight_and_yields_everything():
    active, peak = 0, 0

    async def call(i):
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.001 * (i % 7))
        active -= 1
        return i * i

    out = dict(bounded(range(200), call, 8))
    assert out == {i: i * i for i in range(200)}
    assert peak == 8


def test_results_come_in_completion_order():
    finished = []
    after = {"c": None, "a": "c", "b": "a"}  # c finishes first, then a, then b

    async def call(name):
        while after[name] is not None and after[name] not in finished:
            await asyncio.sleep(0)
        finished.append(name)
        return name

    assert [n for n, _ in bounded(["b", "a", "c"], call, 3)] == ["c", "a", "b"]


def test_requests_are_pulled_only_as_slots_free_up():
    pulled = []

    def source():
        for i in range(100):
            pulled.append(i)
            yield i

    async def call(i):
        await asyncio.sleep(60 if i else 0)  # the others stay in flight until closed
        return i

    results = bounded(source(), call, 4)
    assert next(results) == (0, 0)
    deadline = time.monotonic() + 30
    while len(pulled) < 5 and time.monotonic() < deadline:  # the loop's thread pulls the fifth
        time.sleep(0.01)
    assert len(pulled) == 5  # four in flight, one finished: no more until a slot frees
    results.close()


def test_a_slow_caller_holds_back_new_requests_so_an_interruption_abandons_at_most_concurrency():
    """Answers waiting for the caller count against `concurrency`: with a caller slower than the
    server, calls started never run more than `concurrency` ahead of the results taken, so
    closing early (Ctrl-C) leaves at most that many answers behind, not a backlog."""
    started, ahead = [], []

    async def call(i):
        started.append(i)
        return i

    results = bounded(range(200), call, 4)
    taken = 0
    for _ in results:
        taken += 1
        time.sleep(0.002)  # the caller scores and writes a record
        ahead.append(len(started) - taken)
        if taken == 50:
            break
    results.close()
    assert max(ahead) <= 4
    assert len(started) <= 50 + 4  # what an interruption after 50 records abandons


def test_closing_early_cancels_the_calls_in_flight():
    cancelled = []

    async def call(i):
        try:
            await asyncio.sleep(0 if i == 0 else 10)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise
        return i

    results = bounded(range(5), call, 5)
    assert next(results) == (0, 0)
    started = time.monotonic()
    results.close()
    assert sorted(cancelled) == [1, 2, 3, 4] and time.monotonic() - started < 5  # not the calls' 10 s


def test_the_loop_is_reused_across_runs():
    async def call(i):
        return asyncio.get_running_loop()

    loops = {id(loop) for _, loop in bounded(range(3), call, 2)} | {id(loop) for _, loop in bounded(range(3), call, 2)}
    assert loops == {id(event_loop())}


def test_concurrency_below_one_is_refused():
    with pytest.raises(ValueError):
        list(bounded([1], asyncio.sleep, 0))


def paced(rpm: float, body):
    """Run `body(pacer, clock)` on an event loop whose clock only the pacer's sleeps advance, so
    the spacing is exact however loaded the machine is."""
    clock = [1000.0]

    async def sleep(seconds: float) -> None:
        clock[0] += seconds

    loop = asyncio.new_event_loop()
    loop.time = lambda: clock[0]
    try:
        return loop.run_until_complete(body(Pacer(rpm, sleep=sleep), clock))
    finally:
        loop.close()


def test_pacer_spaces_request_starts():
    async def one_after_another(pacer, clock):
        starts = []
        for _ in range(5):
            await pacer.wait()
            starts.append(clock[0])
        clock[0] += 10  # idle: the next start is not held back, and no burst is saved up
        for _ in range(2):
            await pacer.wait()
            starts.append(clock[0])
        return starts

    starts = paced(1200, one_after_another)  # one start every 50 ms
    assert starts == pytest.approx([1000, 1000.05, 1000.10, 1000.15, 1000.20, 1010.20, 1010.25])

    async def all_at_once(pacer, clock):
        starts = []

        async def request(i):
            await pacer.wait()
            starts.append((i, clock[0]))

        await asyncio.gather(*(request(i) for i in range(4)))
        return starts

    # four requests waiting together start one interval apart, in the order they asked
    starts = paced(60, all_at_once)
    assert [i for i, _ in sorted(starts, key=lambda s: s[1])] == [0, 1, 2, 3]
    assert sorted(t for _, t in starts) == pytest.approx([1000, 1001, 1002, 1003])

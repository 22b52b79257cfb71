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
    async def call(delay):
        await asyncio.sleep(delay)
        return delay

    assert [d for d, _ in bounded([0.06, 0.0, 0.03], call, 3)] == [0.0, 0.03, 0.06]


def test_requests_are_pulled_only_as_slots_free_up():
    pulled = []

    def source():
        for i in range(100):
            pulled.append(i)
            yield i

    async def call(i):
        await asyncio.sleep(0.2 if i else 0)
        return i

    results = bounded(source(), call, 4)
    assert next(results) == (0, 0)
    time.sleep(0.05)
    assert len(pulled) == 5  # four in flight, one finished
    results.close()


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
    assert sorted(cancelled) == [1, 2, 3, 4] and time.monotonic() - started < 1


def test_the_loop_is_reused_across_runs():
    async def call(i):
        return asyncio.get_running_loop()

    loops = {id(loop) for _, loop in bounded(range(3), call, 2)} | {id(loop) for _, loop in bounded(range(3), call, 2)}
    assert loops == {id(event_loop())}


def test_concurrency_below_one_is_refused():
    with pytest.raises(ValueError):
        list(bounded([1], asyncio.sleep, 0))


def test_pacer_spaces_request_starts():
    async def main():
        pacer = Pacer(rpm=1200)  # one every 50 ms
        starts = []
        for _ in range(5):
            await pacer.wait()
            starts.append(time.monotonic())
        return starts

    starts = asyncio.run(main())
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert all(g >= 0.045 for g in gaps)
    assert starts[-1] - starts[0] < 0.5

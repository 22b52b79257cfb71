"""Progress: the runner's state, the status line of the terminal display, and the plain lines
written where stderr is not a terminal."""

import io
import time

from medvqa.core.inference.base import Request
from medvqa.core.run.progress import PlainProgress, status_line
from medvqa.core.run.runner import progress_state
from tests.core.inference.synthetic import demo_item


def test_progress_counts_done_and_total_per_condition_and_reads_backend_counters_live():
    existing = [{"item_id": "q0", "condition": "C+Q"}, {"item_id": "q1", "condition": "C+Q"}]
    todo = [
        Request(item=demo_item(i), condition=c, messages=[], key=str(i))
        for i, c in [(2, "C+Q"), (0, "C"), (1, "C"), (2, "C")]
    ]
    stats = {"in_flight": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    state = progress_state(existing, todo, stats)
    assert (state["done"], state["total"]) == (2, 6)
    assert state["conditions"] == {"C+Q": {"done": 2, "total": 3}, "C": {"done": 0, "total": 3}}
    stats.update(in_flight=12, retries=3, prompt_tokens=12345, completion_tokens=67, cost_usd=0.0123)
    state["errors"], state["cached"] = 1, 4
    assert status_line(state) == ("in flight 12  retries 3  errors 1  cached 4  tokens 12,345+67  $0.0123")


def test_backends_without_counters_still_get_astatus_line():
    state = progress_state([], [], None)
    assert status_line(state) == "in flight 0  retries 0  errors 0  cached 0  tokens 0+0"


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def plain_state(done: int, total: int = 200, errors: int = 0) -> dict:
    return {"done": done, "total": total, "errors": errors, "cached": 0, "conditions": {}, "backend": {}}


def test_plain_progress_prints_at_every_five_percent_with_rate_and_eta():
    out, clock = io.StringIO(), Clock()
    progress = PlainProgress(out, every_s=1000, clock=clock)
    progress(plain_state(20))  # the start: 20 already done by an earlier run
    for done in range(21, 201):
        clock.now += 0.5  # 2 records per second
        progress(plain_state(done, errors=done // 50))
    lines = out.getvalue().splitlines()
    assert len(lines) == 18  # 15 %, 20 %, ..., 100 %
    assert lines[0] == "30/200 (15%)  2.0 req/s  errors 0  ETA 0:01:25"
    assert lines[-1] == "200/200 (100%)  2.0 req/s  errors 4  ETA 0:00:00"


def test_plain_progress_prints_every_ten_seconds_even_without_progress():
    out, clock = io.StringIO(), Clock()
    progress = PlainProgress(out, every_s=10, clock=clock)
    progress(plain_state(0, total=100000))
    clock.now += 9
    progress(plain_state(3, total=100000))
    assert out.getvalue() == ""
    clock.now += 1
    progress(plain_state(5, total=100000))
    assert out.getvalue() == "5/100000 (0%)  0.5 req/s  errors 0  ETA 55:33:10\n"


def test_plain_progress_timer_shows_a_stalled_run_is_alive():
    out = io.StringIO()
    with PlainProgress(out, every_s=0.2) as progress:
        progress(plain_state(7, total=50))
        deadline = time.monotonic() + 30  # no record arrives; the timer still prints (however loaded the machine)
        while len(out.getvalue().splitlines()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and set(lines) == {"7/50 (14%)  0.0 req/s  errors 0  ETA unknown"}

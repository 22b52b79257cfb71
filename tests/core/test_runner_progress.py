from medvqa.core.inference.base import Request
from medvqa.core.runner import progress_state
from medvqa.core.session import _status_line

from tests.core.inference.synthetic import demo_item


def test_progress_counts_done_and_total_per_condition_and_reads_backend_counters_live():
    existing = [{"item_id": "q0", "condition": "C+Q"}, {"item_id": "q1", "condition": "C+Q"}]
    todo = [Request(item=demo_item(i), condition=c, messages=[], key=str(i)) for i, c in
            [(2, "C+Q"), (0, "C"), (1, "C"), (2, "C")]]
    stats = {"in_flight": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    state = progress_state(existing, todo, stats)
    assert (state["done"], state["total"]) == (2, 6)
    assert state["conditions"] == {"C+Q": {"done": 2, "total": 3}, "C": {"done": 0, "total": 3}}
    stats.update(in_flight=12, retries=3, prompt_tokens=12345, completion_tokens=67, cost_usd=0.0123)
    state["errors"], state["cached"] = 1, 4
    assert _status_line(state) == ("in flight 12  retries 3  errors 1  cached 4  tokens 12,345+67  $0.0123")


def test_backends_without_counters_still_get_a_status_line():
    state = progress_state([], [], None)
    assert _status_line(state) == "in flight 0  retries 0  errors 0  cached 0  tokens 0+0"

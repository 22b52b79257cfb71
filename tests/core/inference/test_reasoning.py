"""Reasoning models: the reasoning is kept in the record and never read as the answer, in every
form a server sends it (a `reasoning_content` or `reasoning` field, leading `<think>` or
`<thinking>` blocks in the text), over real HTTP through the SDK path and through litellm's own;
a reply cut off inside its reasoning is a parse failure "reasoning cut off"; reasoning tokens
are counted; `reasoning_effort` reaches the server."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from medvqa.core import plugins
from medvqa.core.benchmark import Benchmark
from medvqa.core.inference.reasoning import message_reasoning, reasoning_tokens, split_reply
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.recording import make_record, rescore_record
from medvqa.core.run.rescore import rescore
from medvqa.core.run.store import read_records
from tests.core.inference.synthetic import demo_item, litellm_backend, requests_for
from tests.openai_server import REASONING_FORMS, OpenAIServer


def answer(*keys: str) -> str:
    return json.dumps({"answer": list(keys)})


# Ten replies worked by hand. The item (`demo_item`) has options B, C, D and the gold answer C.
# Each reasoning names another option than the answer that follows it; the record is scored on
# the answer alone: (reasoning, answer, predicted, correct).
CASES = [
    (answer("B"), answer("C"), ["C"], True),  # another option's JSON in the reasoning
    ("The answer is B.", answer("C"), ["C"], True),
    ("C looks right at first, but D fits the history.", answer("B"), ["B"], False),
    ("Answer: D", "C", ["C"], True),  # a bare key after the reasoning
    (answer("C"), answer("D"), ["D"], False),  # the reasoning names the gold: the answer is still wrong
    ('```json\n{"answer": ["D"]}\n```', answer("C"), ["C"], True),  # a fenced block in the reasoning
    (answer("C"), "D", ["D"], False),
    ("B", answer("C"), ["C"], True),  # a reasoning that is nothing but another key
    (answer("B", "D"), answer("C"), ["C"], True),
    ("Not C. " + answer("C") + " was my first thought; B is wrong too.", answer("D"), ["D"], False),
]
_NUMBER = re.compile(r"#(\d+)")


def case_of(prompt: str) -> tuple:
    return CASES[int(_NUMBER.search(prompt).group(1))]


@pytest.fixture(scope="module", params=REASONING_FORMS)
def reasoning_server(request):
    with OpenAIServer(
        think=lambda p: case_of(p)[0], reply=lambda p: case_of(p)[1], reasoning_form=request.param, keep_bodies=True
    ) as server:
        yield server


@pytest.mark.parametrize("through", ["sdk", "litellm"])
def test_ten_replies_whose_reasoning_names_another_option_are_scored_on_the_answer(reasoning_server, through):
    """Every form, through the SDK path and through litellm's (a header sends it there): the
    record's `response` is the answer, its `reasoning` the reasoning, and the score that of the
    answer as worked by hand in CASES."""
    extra = {"params": {"extra_headers": {"X-Through": "litellm"}}} if through == "litellm" else {}
    backend = litellm_backend(reasoning_server.url, **extra)
    items = [demo_item(i) for i in range(len(CASES))]
    got = {req.item.id: (req, resp) for req, resp in backend.generate(iter(requests_for(backend, items)))}
    patterns = plugins.answer_patterns()
    for i, (reasoning, reply, predicted, correct) in enumerate(CASES):
        req, resp = got[f"q{i}"]
        record = make_record(Benchmark(), req.item, req.condition, req.key, resp, patterns)
        assert (record["predicted"], record["correct"], record["status"]) == (predicted, correct, "answered"), i
        assert (record["response"], record["reasoning"]) == (reply, reasoning), i
        assert record["usage"]["reasoning_tokens"] == 1 + len(reasoning) // 4
        assert rescore_record(Benchmark(), req.item, record, patterns) == record  # re-scoring reads the same
    assert backend.stats["reasoning_tokens"] == sum(1 + len(c[0]) // 4 for c in CASES)


def test_the_text_forms_split_as_worked_by_hand():
    closed = split_reply('<think>\nB, surely.\n</think>\n\n{"answer": ["C"]}')
    assert (closed.answer, closed.reasoning, closed.cut_off) == ('{"answer": ["C"]}', "B, surely.", False)
    two = split_reply("<thinking>B?</thinking> <think>No: D.</think>D")
    assert (two.answer, two.reasoning, two.cut_off) == ("D", "B?\n\nNo: D.", False)
    opened_by_the_prompt = split_reply('Maybe B.\n</think>\n{"answer": ["C"]}')  # DeepSeek-R1, Qwen3 templates
    assert (opened_by_the_prompt.answer, opened_by_the_prompt.reasoning) == ('{"answer": ["C"]}', "Maybe B.")
    unclosed = split_reply('<think>Perhaps {"answer": ["B"]}, or')
    assert (unclosed.answer, unclosed.reasoning, unclosed.cut_off) == ("", 'Perhaps {"answer": ["B"]}, or', True)
    # a reply without reasoning is left as it came, whitespace and all
    assert split_reply(' {"answer": ["C"]}\n') == split_reply(' {"answer": ["C"]}\n', None, "stop")
    assert split_reply(' {"answer": ["C"]}\n').answer == ' {"answer": ["C"]}\n'
    assert split_reply("The tag <think> in the middle is text.").reasoning is None
    # a provider field: the answer stays as sent; reasoning without an answer, cut by max_tokens
    field = split_reply("", "B or C", "length")
    assert (field.answer, field.reasoning, field.cut_off) == ("", "B or C", True)
    assert split_reply("", "B or C", None).cut_off is False  # stopped, not cut off: an ordinary empty answer
    both = split_reply("<think>then C</think>C", "first B")
    assert (both.answer, both.reasoning) == ("C", "first B\n\nthen C")


def test_litellm_thinking_blocks_and_provider_usage_are_read():
    """litellm's `thinking_blocks` (Anthropic's), as dicts or objects, and OpenAI's usage details."""
    blocks = SimpleNamespace(
        content="C",
        reasoning_content=None,
        thinking_blocks=[
            {"type": "thinking", "thinking": "B?", "signature": "x"},
            SimpleNamespace(type="thinking", thinking="no, C"),
        ],
    )
    assert message_reasoning(blocks) == "B?\n\nno, C"
    assert message_reasoning({"content": "C", "reasoning": "B?"}) == "B?"
    assert message_reasoning(SimpleNamespace(content="C")) is None
    assert reasoning_tokens({"completion_tokens_details": {"reasoning_tokens": 57}}) == 57
    assert reasoning_tokens(SimpleNamespace(completion_tokens_details=None)) == 0


LONG = "Let me weigh every option in turn. " * 12  # 420 characters: 106 tokens at 4 characters a token


@pytest.mark.parametrize("form", ["reasoning_content", "think"])
def test_a_reply_cut_off_inside_its_reasoning_is_a_parse_failure_and_counts_its_tokens(tmp_path, form):
    """max_tokens 40 (160 characters): the reasoning never ends, no answer comes. Every record
    is a parse failure "reasoning cut off" holding the reasoning it got; re-scoring keeps it so;
    the summary counts the reasoning tokens; `-M reasoning_effort` reached the server."""
    with OpenAIServer(think=lambda p: LONG, reasoning_form=form, keep_bodies=True) as server:
        options = RunOptions(
            benchmark="jmed48k",
            model="hosted_vllm/test",
            sample=True,
            conditions="C+Q",
            run_dir=str(tmp_path / "run"),
            backend_options={"api_base": [server.url], "max_tokens": 40, "reasoning_effort": "high"},
        )
        result = run(options, progress=False)
        assert {b.get("reasoning_effort") for b in server.bodies} == {"high"}
    records = read_records(tmp_path / "run")
    assert len(records) == 17
    for r in records:
        assert (r["status"], r["reason"], r["rule"], r["correct"], r["predicted"]) == (
            "parse_failure",
            "reasoning cut off",
            "reasoning-cut-off",
            False,
            None,
        )
        assert (r["response"], r["reasoning"], r["finish_reason"]) == ("", LONG[:160], "length")
        assert r["usage"]["reasoning_tokens"] == 41
    summary = result.summary()
    assert summary["usage"]["reasoning_tokens"] == 17 * 41
    assert summary["errors"] == 0
    assert rescore(tmp_path / "run") == (17, 0)
    assert read_records(tmp_path / "run") == records


def test_reasoning_replies_answered_from_the_cache_give_the_same_records(tmp_path):
    """The cache keeps the provider's reasoning and the finish reason: a second run answered from
    it records what the first did (but `cached`, `latency_s`)."""
    with OpenAIServer(think=lambda p: "B, or rather C.", reasoning_form="reasoning_content") as server:

        def once(name):
            run(
                RunOptions(
                    benchmark="jmed48k",
                    model="hosted_vllm/test",
                    sample=True,
                    conditions="C+Q",
                    run_dir=str(tmp_path / name),
                    backend_options={"api_base": [server.url]},
                ),
                progress=False,
            )
            return {
                r["item_id"]: {k: v for k, v in r.items() if k not in ("cached", "latency_s")}
                for r in read_records(tmp_path / name)
            }

        first = once("first")
        sent = sum(server.counts.values())
        again = once("again")
        assert sum(server.counts.values()) == sent  # nothing asked again
    assert again == first
    assert all(r["reasoning"] == "B, or rather C." and r["status"] == "answered" for r in first.values())


def test_reasoning_effort_as_an_option_is_the_same_request_as_the_parameter():
    one = litellm_backend("http://127.0.0.1:9/v1", reasoning_effort="low")
    other = litellm_backend("http://127.0.0.1:9/v1", params={"reasoning_effort": "low"})
    assert one.params == other.params and one.params["reasoning_effort"] == "low"
    with pytest.raises(ValueError, match="reasoning_effort is given twice"):
        litellm_backend("http://127.0.0.1:9/v1", reasoning_effort="low", params={"reasoning_effort": "high"})

"""Several `--api-base` servers taken in turn (no Router), the direct OpenAI-compatible path, and
caches written by earlier releases, over real HTTP against the test server on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from medvqa.core.inference.base import Response
from medvqa.core.inference.cache import ResponseCache
from medvqa.core.inference.litellm_backend import LiteLLMBackend, import_litellm
from medvqa.core.inference.router import COOLDOWN_S, RoundRobin
from tests.core.inference.synthetic import demo_item, requests_for
from tests.core.inference.synthetic import litellm_backend as backend
from tests.core.inference.test_retry import closed_port_url
from tests.openai_server import Faults, OpenAIServer


def run(b: LiteLLMBackend, n: int) -> dict:
    return {req.item.id: resp for req, resp in b.generate(iter(requests_for(b, [demo_item(i) for i in range(n)])))}


def received(server: OpenAIServer) -> int:
    return sum(server.counts.values())


# -- servers in turn ----------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_servers_are_taken_in_turn_and_a_failing_one_rests():
    clock = Clock()
    pool = RoundRobin(["a", "b", "c", "a"], clock=clock)  # a server given twice is one server
    assert [pool.pick() for _ in range(7)] == ["a", "b", "c", "a", "b", "c", "a"]
    assert pool.pick(avoid="b") == "c"  # b is next, but the retry leaves the server that just failed
    pool.failed("a")
    assert [pool.pick() for _ in range(4)] == ["b", "c", "b", "c"]  # a rests
    clock.now += COOLDOWN_S - 0.01
    assert pool.pick() == "b"
    clock.now += 0.02  # a's rest is over
    assert [pool.pick() for _ in range(3)] == ["c", "a", "b"]
    for server in ("a", "b", "c"):
        clock.now += 1
        pool.failed(server)
    assert pool.pick() == "a" and pool.pick(avoid="a") == "b"  # all rest: the first to end its rest, else the next
    pool.answered("c")
    assert pool.pick(avoid="c") == "c"  # the only one ready, even after it failed
    assert pool.sent == {"a": 5, "b": 7, "c": 7}


def test_two_servers_share_the_requests_evenly_without_the_router(serve):
    one, two = serve(), serve()
    b = backend([one.url, two.url], concurrency=8)
    got = run(b, 40)
    assert all(r.error is None for r in got.values())
    assert (received(one), received(two)) == (20, 20)
    assert b.router is None and b.settings["routing"] == "round-robin" and b.settings["router_settings"] is None
    assert b.endpoint == {"deployments": sorted([["hosted_vllm/test", s.url] for s in (one, two)])}


@pytest.mark.parametrize("down", ["refused", "500"])
def test_a_server_that_fails_is_passed_over_and_its_requests_retried_on_the_other(serve, down):
    """Each request that met the failing server is retried at the other one; once it has
    failed, the failing server rests, so it sees at most the requests already on their way."""
    live = serve()
    bad = serve(faults=Faults(server_error=1.0)) if down == "500" else None
    b = backend([bad.url if bad else closed_port_url(), live.url], concurrency=4, max_retries=2)
    got = run(b, 40)
    assert all(r.error is None and json.loads(r.text)["answer"] for r in got.values())
    assert received(live) == 40
    assert 1 <= b.stats["retries"] <= 4
    if bad:
        assert received(bad) == b.stats["retries"]


# -- the direct path ----------------------------------------------------------------------


def test_the_direct_path_sends_the_body_litellm_sends(serve, tmp_path):
    """The same request through the backend (the `openai` SDK) and through `litellm.acompletion`
    reaches the server as the same JSON body, parameters litellm puts in the body included."""
    import asyncio

    from PIL import Image

    server = serve(keep_bodies=True)
    Image.new("RGB", (40, 30), (200, 10, 10)).save(tmp_path / "x.png")
    b = backend(
        server.url, temperature=0.7, max_tokens=50, params={"top_p": 0.9, "top_k": 5}, response_format="json_schema"
    )
    [(req, resp)] = list(b.generate(iter(requests_for(b, [demo_item(0, image=tmp_path / "x.png")]))))
    assert resp.error is None and b.direct is not None
    from medvqa.core.inference.images import to_openai

    litellm = import_litellm()
    asyncio.run(
        litellm.acompletion(
            model="hosted_vllm/test", api_base=server.url, messages=to_openai(req.messages), max_retries=0, **b.params
        )
    )
    direct, through_litellm = server.bodies
    assert direct == through_litellm
    assert (direct["top_k"], direct["max_tokens"], direct["response_format"]["type"]) == (5, 50, "json_schema")


def test_a_model_whose_messages_litellm_rewrites_goes_through_litellm(serve, monkeypatch):
    """litellm sends o-series models their system prompt as a user message; the backend keeps
    that model on litellm, so the server sees the same rewrite."""
    import asyncio

    monkeypatch.setenv("OPENAI_API_KEY", "sk-medvqa-test-0123456789abcdef")
    server = serve(keep_bodies=True)
    messages = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Valid labels: a, b."}]
    for model in ("openai/o3-mini", "openai/gpt-4o"):
        assert asyncio.run(backend(server.url, model=model).acall(messages)).error is None
    assert [[m["role"] for m in body["messages"]] for body in server.bodies] == [["user", "user"], ["system", "user"]]


def test_the_direct_path_costs_what_litellm_prices(serve, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-medvqa-test-0123456789abcdef")
    server = serve()
    b = backend(server.url, model="openai/gpt-4o")
    got = run(b, 3)
    info = import_litellm().get_model_info("openai/gpt-4o")
    expected = sum(
        r.usage["prompt_tokens"] * info["input_cost_per_token"]
        + r.usage["completion_tokens"] * info["output_cost_per_token"]
        for r in got.values()
    )
    assert b.direct is not None and expected > 0
    assert b.stats["cost_usd"] == pytest.approx(expected)


def test_an_answer_that_is_not_json_is_retried_then_recorded(serve):
    server = serve(faults=Faults(non_json=1.0))
    got = run(backend(server.url, max_retries=1), 1)
    assert got["q0"].error.startswith("UnreadableResponse: the answer is not JSON") and received(server) == 2


# -- caches written before ------------------------------------------------------------------

# What `medvqa run jmed48k --sample --limit 4 --conditions C+Q,C+Q+I --model MODEL --api-base ...`
# wrote into the response cache before requests could leave through the `openai` SDK or be
# spread without the Router (key, answer): caches on users' disks hold these keys.
OLD_A, OLD_B = "http://127.0.0.1:48123/v1", "http://127.0.0.1:48124/v1"
CACHED_BEFORE = {
    ("hosted_vllm/test", (OLD_A,)): [
        ("bd1c723a0b306402ae3c59bc85e6a8ac3f5b45829023d6f08a348ed0c4f824b1", '{"answer": ["1", "4"]}'),
        ("2c181b206a603d549ffbcec6673afbf37d09e943497363e61ec16ca1e8b98ad2", '{"answer": ["2"]}'),
        ("dd9ad3d637799d23586e9da1d3f922f16592c38b99c54012d04e1289af934413", '{"answer": ["1"]}'),
        ("5c0e0f5ed42978c5344914159c7c9dbff4bb7b7648d09f36003b2309d84251c3", '{"answer": ["1"]}'),
        ("08c1d82ddb668381d2ab3b3b759da109fc46132d046a4581afdad4d4c1105544", '{"answer": ["5", "9"]}'),
    ],
    ("hosted_vllm/test", (OLD_A, OLD_B)): [
        ("72167aefc1dcf5d7d02ce5f79bd3c347da3ce525b86b49bdccf4da39e182a727", '{"answer": ["2"]}'),
        ("96546285f28cc3d5eb6da520cb94bfefe0b0b866e755876f367b00a9e1fc7ea5", '{"answer": ["1"]}'),
        ("a76951a1301c575ab4e9c613b4b80aecdfcd12987bb70e56d5e676927bc2b936", '{"answer": ["1"]}'),
        ("0dd93dd46ba6d3d619b3eafd3869f2ce12352d710b5387f8c0056c3cdc9f2758", '{"answer": ["5", "9"]}'),
        ("dd1fd7bf526030238e15d33e622f97ef5edf6696f2c292f643aaf6f19cf366bf", '{"answer": ["1", "4"]}'),
    ],
    ("openai/test", (OLD_A,)): [
        ("9a9d49b65e43a8ebea437f5a3b8d6a6790e6d711d231f68bf08f067c711890fa", '{"answer": ["2"]}'),
        ("20b6566ac42968ac504ee9d67d46bfa65947a59e6ea7f41de1f24ab906f288ac", '{"answer": ["1", "4"]}'),
        ("bc3ceda738167eccf45c9fc5f8bf74d8e7a78f5b1f10d272591be18229e23ee9", '{"answer": ["1"]}'),
        ("56a946f96e61754ddee2eddadabcb03113e64d1bf84eeac2183c47ff54c1ce68", '{"answer": ["1"]}'),
        ("f0161aaadb1ac8845ece5f52501fa8476ae4650504965ea2276c4185d1371d80", '{"answer": ["5", "9"]}'),
    ],
}


@pytest.mark.parametrize("model, api_bases", list(CACHED_BEFORE))
def test_a_cache_written_before_answers_every_request(model, api_bases, tmp_path, monkeypatch):
    """Nothing listens at those addresses: a single miss would fail the run's preflight."""
    from medvqa.core.run.options import RunOptions
    from medvqa.core.run.options import run as run_benchmark

    monkeypatch.setenv("OPENAI_API_KEY", "sk-medvqa-test-0123456789abcdef")
    cache = ResponseCache(tmp_path / "cache.sqlite3")
    for key, text in CACHED_BEFORE[model, api_bases]:
        cache.put(key, model, Response(text=text))
    cache.close()
    result = run_benchmark(
        RunOptions(
            benchmark="jmed48k",
            model=model,
            sample=True,
            limit=4,
            conditions="C+Q,C+Q+I",
            run_dir=str(tmp_path / "run"),
            cache_path=str(tmp_path / "cache.sqlite3"),
            backend_options={"api_base": list(api_bases)},
        ),
        progress=False,
    )
    assert (result.requested, result.cache_hits) == (0, 5)
    assert {(r["key"], r["response"]) for r in result.records} == set(CACHED_BEFORE[model, api_bases])

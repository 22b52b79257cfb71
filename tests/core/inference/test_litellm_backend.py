"""The litellm backend against the real OpenAI-compatible test server (HTTP on 127.0.0.1)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import time

import pytest
from PIL import Image

from medvqa.core import plugins
from medvqa.core.inference.litellm_backend import LiteLLMBackend
from medvqa.core.inference.output import ANSWER_SCHEMA
from medvqa.core.items import DataError
from medvqa.core.messages import file_sha256
from tests.core.inference.synthetic import demo_item, requests_for
from tests.core.inference.synthetic import litellm_backend as backend
from tests.openai_server import Faults, answer_for, content_key


def run(b: LiteLLMBackend, items) -> dict:
    return {req.item.id: resp for req, resp in b.generate(iter(requests_for(b, items)))}


def png(path, size=(120, 80)):
    Image.new("RGB", size, (30, 60, 90)).save(path)
    return path


def test_answers_usage_and_generation_parameters(serve):
    server = serve(keep_bodies=True)
    b = backend(server.url, seed=7)
    assert b.params == {"temperature": 0, "seed": 7, "response_format": {"type": "json_object"}}
    got = run(b, [demo_item(i) for i in range(12)])
    assert len(got) == 12 and all(r.error is None for r in got.values())
    for body in server.bodies:
        assert (body["temperature"], body["seed"], body["response_format"]) == (0, 7, {"type": "json_object"})
        key = content_key(body["messages"])
        assert server.counts[key] == 1
    expected = {json.dumps({"answer": answer_for(b["messages"], content_key(b["messages"]))}) for b in server.bodies}
    assert {r.text for r in got.values()} == expected
    assert all(r.usage["prompt_tokens"] > 0 and r.usage["completion_tokens"] > 0 for r in got.values())
    assert b.stats["prompt_tokens"] == sum(r.usage["prompt_tokens"] for r in got.values())
    assert b.stats["in_flight"] == 0 and b.stats["retries"] == 0


def test_images_arrive_as_data_urls_and_the_downscale_is_a_parameter(serve, tmp_path):
    server = serve(keep_bodies=True)
    path = png(tmp_path / "figure.png", size=(400, 200))
    got = run(backend(server.url), [demo_item(0, image=path)])
    assert got["q0"].error is None
    small = backend(server.url, max_image_side=100)
    assert small.params["max_image_side"] == 100
    run(small, [demo_item(0, image=path)])
    sent = []
    for body in server.bodies:
        url = next(p["image_url"]["url"] for p in body["messages"][-1]["content"] if p["type"] == "image_url")
        assert url.startswith("data:image/png;base64,")
        sent.append(base64.b64decode(url.split(",", 1)[1]))
    assert hashlib.sha256(sent[0]).hexdigest() == file_sha256(path)
    with Image.open(io.BytesIO(sent[1])) as im:
        assert im.size == (100, 50)


def test_a_broken_image_is_an_error_for_that_request_only(serve, tmp_path):
    server = serve()
    broken = tmp_path / "broken.png"
    broken.write_bytes(png(tmp_path / "ok.png").read_bytes()[:60])
    got = run(backend(server.url), [demo_item(0, image=broken), demo_item(1)])
    assert "broken.png" in got["q0"].error and got["q0"].text is None
    assert got["q1"].error is None
    assert sum(server.counts.values()) == 1


def test_transient_faults_are_retried_until_answered(serve):
    faults = Faults(
        rate_limit=0.12, server_error=0.12, timeout=0.06, truncated=0.12, non_json=0.12, retry_after_s=0.01, hang_s=4
    )
    server = serve(faults=faults, seed=1)
    b = backend(server.url, timeout=2.0, max_retries=8, concurrency=16)  # the whole of an attempt, warm-up included
    got = run(b, [demo_item(i) for i in range(60)])
    assert all(r.error is None and json.loads(r.text)["answer"] for r in got.values())
    assert set(server.outcomes) == {"answered", "rate_limit", "server_error", "timeout", "truncated", "non_json"}
    assert b.stats["retries"] == sum(server.counts.values()) - 60 > 0


def test_retry_after_is_honoured_and_the_last_failure_is_recorded(serve):
    server = serve(faults=Faults(rate_limit=1.0, retry_after_s=0.3))
    b = backend(server.url, max_retries=2)
    started = time.monotonic()
    got = run(b, [demo_item(0)])
    assert time.monotonic() - started >= 0.6
    assert got["q0"].text is None
    assert "RateLimitError" in got["q0"].error and "after 3 tries" in got["q0"].error
    assert list(server.counts.values()) == [3]


def test_other_client_errors_are_not_retried(serve):
    server = serve(faults=Faults(bad_request=1.0))
    got = run(backend(server.url), [demo_item(0), demo_item(1)])
    assert all("BadRequestError" in r.error for r in got.values())
    assert sorted(server.counts.values()) == [1, 1]


def test_api_keys_are_scrubbed_from_error_texts(serve, monkeypatch):
    secret = "sk-medvqa-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    server = serve(faults=Faults(auth_error=1.0))
    b = backend(server.url, model="openai/test")
    got = run(b, [demo_item(0)])
    error = got["q0"].error
    assert "Incorrect API key provided: ***" in error and secret not in error
    assert secret not in json.dumps(b.params) + json.dumps(b.settings)


def test_rpm_paces_request_starts(serve):
    server = serve()
    started = time.monotonic()
    run(backend(server.url, rpm=600, concurrency=8), [demo_item(i) for i in range(6)])
    assert time.monotonic() - started >= 0.5


def test_price_per_million_tokens_gives_the_cost(serve):
    server = serve()
    b = backend(server.url, price=(2.0, 10.0))
    got = run(b, [demo_item(i) for i in range(3)])
    expected = sum(r.usage["prompt_tokens"] * 2.0 + r.usage["completion_tokens"] * 10.0 for r in got.values()) / 1e6
    assert b.stats["cost_usd"] == pytest.approx(expected)
    assert b.settings["price_source"] == {"hosted_vllm/test": "--price"}


def test_several_api_bases_are_load_balanced_by_the_router(serve):
    one, two = serve(), serve()
    b = backend([one.url, two.url], concurrency=8)
    got = run(b, [demo_item(i) for i in range(40)])
    assert all(r.error is None for r in got.values())
    assert sum(one.counts.values()) + sum(two.counts.values()) == 40
    assert min(sum(one.counts.values()), sum(two.counts.values())) >= 5
    assert [d["api_base"] for d in b.settings["deployments"]] == [one.url, two.url]


def test_a_model_list_file_names_keys_by_environment_variable(serve, tmp_path, monkeypatch):
    one, two = serve(), serve()
    monkeypatch.setenv("POOL_API_KEY", "pool-secret-value-123")
    path = tmp_path / "models.yaml"
    path.write_text(
        "model_list:\n"
        + "".join(
            f"  - model_name: pool\n    litellm_params: {{model: hosted_vllm/test, api_base: '{s.url}', "
            "api_key: os.environ/POOL_API_KEY}\n"
            for s in (one, two)
        )
    )
    b = LiteLLMBackend("pool", model_list=str(path), retry_wait=0.01)
    got = run(b, [demo_item(i) for i in range(30)])
    assert all(r.error is None for r in got.values())
    assert sum(one.counts.values()) > 0 and sum(two.counts.values()) > 0
    assert "pool-secret-value-123" not in json.dumps(b.settings)
    path.write_text(
        "model_list:\n  - model_name: pool\n    litellm_params: {model: hosted_vllm/test, api_key: sk-123}\n"
    )
    with pytest.raises(
        DataError, match="models.yaml: record model_list\\[0\\]: litellm_params.api_key holds a literal"
    ):
        LiteLLMBackend("pool", model_list=str(path))


@pytest.mark.slow
def test_worker_processes_give_the_same_answers(serve):
    server = serve()
    items = [demo_item(i) for i in range(24)]
    single = run(backend(server.url), items)
    b = backend(server.url, workers=2, concurrency=8)
    spread = run(b, items)
    assert {k: r.text for k, r in spread.items()} == {k: r.text for k, r in single.items()}
    assert b.stats["prompt_tokens"] == sum(r.usage["prompt_tokens"] for r in spread.values())
    assert b.stats["in_flight"] == 0


def test_generation_parameters_can_be_set_added_and_removed(serve):
    server = serve(keep_bodies=True)
    b = backend(server.url, temperature=0.7, max_tokens=50, params={"top_p": 0.9, "seed": None}, response_format="none")
    assert b.params == {"temperature": 0.7, "max_tokens": 50, "top_p": 0.9}
    run(b, [demo_item(0)])
    body = server.bodies[0]
    assert (body["temperature"], body["max_tokens"], body["top_p"]) == (0.7, 50, 0.9)
    assert "seed" not in body and "response_format" not in body
    with pytest.raises(ValueError, match="secrets are read from the environment"):
        backend(server.url, params={"api_key": "x"})


def test_structured_output_uses_a_json_schema_where_the_model_supports_it():
    b = LiteLLMBackend("openai/gpt-4o")
    assert b.params["response_format"]["json_schema"]["schema"] == ANSWER_SCHEMA
    assert b.settings["price_source"] == {"openai/gpt-4o": "litellm"}
    assert "seed" not in LiteLLMBackend("anthropic/claude-sonnet-4-5").params  # unsupported there: not sent


def test_unprefixed_models_go_to_litellm_and_options_must_apply():
    plugins.reset()
    assert isinstance(plugins.get_backend("hosted_vllm/test", seed=0), LiteLLMBackend)
    with pytest.raises(ValueError, match="--tensor-parallel-size does not apply to litellm models"):
        plugins.get_backend("hosted_vllm/test", seed=0, tensor_parallel_size=2)

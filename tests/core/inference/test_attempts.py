"""What `--max-retries`, `--timeout` and the response cap promise, counted at the real test
server (HTTP on 127.0.0.1, its `GET /stats` counters): attempts are ours whatever the provider,
a deadline is the whole time of one attempt, and a record keeps at most so much of an answer."""

from __future__ import annotations

import json
import sqlite3
import time
from urllib.request import urlopen

import pytest

from medvqa.core.inference.litellm_backend import LiteLLMBackend
from medvqa.core.inference.preflight import PROBE_TRIES, PreflightError
from tests.core.inference.synthetic import demo_item, requests_for
from tests.openai_server import Faults, OpenAIServer


def requests_received(server: OpenAIServer) -> int:
    with urlopen(server.url.removesuffix("/v1") + "/stats", timeout=10) as response:
        return json.loads(response.read())["requests"]


def answers(b: LiteLLMBackend, n: int) -> list:
    return [resp for _, resp in b.generate(iter(requests_for(b, [demo_item(i) for i in range(n)])))]


@pytest.mark.parametrize("model", ["openai/test", "hosted_vllm/test"])
@pytest.mark.parametrize("max_retries", [0, 2])
def test_max_retries_counts_every_request_whatever_the_provider(model, max_retries, monkeypatch):
    """A server that fails every request with a 500 receives exactly max_retries + 1 requests
    per item: the OpenAI client inside litellm would retry twice more on its own."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    with OpenAIServer(faults=Faults(server_error=1.0)) as server:
        b = LiteLLMBackend(model, api_base=server.url, max_retries=max_retries, retry_wait=0.01, timeout=10)
        got = answers(b, 4)
        assert requests_received(server) == 4 * (max_retries + 1)
    assert all(r.error.startswith("InternalServerError") for r in got)
    tries = f" (after {max_retries + 1} tries)" if max_retries else ""
    assert all(r.error.endswith(tries) for r in got) and b.stats["retries"] == 4 * max_retries


def test_the_preflight_sends_the_tries_it_names(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    with OpenAIServer(faults=Faults(server_error=1.0)) as server:
        b = LiteLLMBackend("openai/test", api_base=server.url, retry_wait=0.01, timeout=10)
        with pytest.raises(PreflightError, match=rf"the server failed on every try .*\(after {PROBE_TRIES} tries\)"):
            b.preflight()
        assert requests_received(server) == PROBE_TRIES == 3


def test_a_model_list_deployment_cannot_bring_back_the_clients_retries(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    with OpenAIServer(faults=Faults(server_error=1.0)) as server:
        models = tmp_path / "models.yaml"
        models.write_text(
            "model_list:\n  - model_name: pool\n    litellm_params: {model: openai/test, "
            f"api_base: '{server.url}', max_retries: 5, max_tokens: 100}}\n"
        )
        b = LiteLLMBackend("pool", model_list=str(models), max_retries=1, retry_wait=0.01, timeout=10)
        answers(b, 3)
        assert requests_received(server) == 3 * 2


def test_the_timeout_is_a_deadline_for_the_whole_answer():
    """The server sends one byte every half second (each read is on time); a 1 s deadline ends
    each attempt after about a second, not when the last byte of the answer arrives."""
    with OpenAIServer(faults=Faults(trickle=1.0, trickle_s=0.5)) as server:
        b = LiteLLMBackend("hosted_vllm/test", api_base=server.url, max_retries=1, retry_wait=0.01, timeout=1.0)
        started = time.monotonic()
        [got] = answers(b, 1)
        elapsed = time.monotonic() - started
        assert requests_received(server) == 2
    assert got.error == "DeadlineExceeded: no complete answer within 1 s (--timeout) (after 2 tries)"
    assert 2.0 <= elapsed < 6.0  # two attempts of one second; the answer alone would take minutes


@pytest.mark.parametrize("name", ["max_completion_tokens", "max_tokens", "reasoning_tokens_budget"])
def test_a_parameter_counting_tokens_is_no_secret(name):
    b = LiteLLMBackend("hosted_vllm/test", api_base="http://127.0.0.1:9/v1", params={name: 2000})
    assert b.params[name] == 2000


@pytest.mark.parametrize("name", ["api_key", "azure_ad_token", "aws_secret_access_key", "apiKey", "password"])
def test_a_credential_is_still_refused_as_a_parameter(name):
    with pytest.raises(ValueError, match=rf"--param {name}: secrets are read from the environment"):
        LiteLLMBackend("hosted_vllm/test", api_base="http://127.0.0.1:9/v1", params={name: "x"})


@pytest.mark.parametrize(
    "name,option", [("max_retries", "--max-retries"), ("num_retries", "--max-retries"), ("timeout", "--timeout")]
)
def test_retries_and_timeouts_are_options_not_parameters(name, option):
    with pytest.raises(ValueError, match=rf"--param {name}: not a generation parameter; use {option}"):
        LiteLLMBackend("hosted_vllm/test", api_base="http://127.0.0.1:9/v1", params={name: 3})


def test_a_long_answer_is_cut_at_the_cap_marked_truncated_and_never_cached(tmp_path, monkeypatch):
    """A 300,000-byte answer (100,000 three-byte characters): the record keeps the first 262,144
    bytes by default (87,381 whole characters: 262,143 bytes), or as many as --max-response-bytes
    says; the short answers of the same run are whole and cached, the cut ones are not."""
    from medvqa.core.run.options import RunOptions, run
    from medvqa.core.run.store import read_records

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    long = "長" * 100_000
    with OpenAIServer(reply=lambda prompt: long if len(prompt) % 2 else None) as server:  # about half the items

        def records(run_dir: str, **options) -> list[dict]:
            run(
                RunOptions(
                    benchmark="jmed48k",
                    model="hosted_vllm/test",
                    sample=True,
                    conditions="C+Q",
                    run_dir=str(tmp_path / run_dir),
                    backend_options={"api_base": [server.url]},
                    **options,
                ),
                progress=False,
            )
            return read_records(tmp_path / run_dir)

        default = records("default")
        small = records("small", max_response_bytes=1000)
    cut = [r for r in default if r.get("truncated")]
    assert cut and all(r["response"] == "長" * 87_381 for r in cut)
    assert all(r["response"] == "長" * 333 for r in small if r.get("truncated"))
    assert {r["item_id"] for r in small if r.get("truncated")} == {r["item_id"] for r in cut}
    whole = [r for r in default if not r.get("truncated")]
    assert whole and all(len(r["response"].encode()) < 1000 for r in whole)
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite3") as db:
        cached = {key for (key,) in db.execute("SELECT key FROM responses")}
    assert {r["key"] for r in whole} <= cached and not {r["key"] for r in cut} & cached


def test_the_run_commands_help_states_the_default_cap():
    from click.testing import CliRunner

    from medvqa.cli.main import cli
    from medvqa.core.run.recording import DEFAULT_MAX_RESPONSE_BYTES

    help_text = " ".join(CliRunner().invoke(cli, ["run", "--help"]).output.split())
    assert f"(default {DEFAULT_MAX_RESPONSE_BYTES}, 256 KiB)" in help_text and DEFAULT_MAX_RESPONSE_BYTES == 262_144

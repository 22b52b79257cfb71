"""litellm is imported when a request is really sent: what a backend's parameters and request
keys need of litellm is remembered per litellm version in the cache folder, so a backend built
again (a re-run answered from the response cache) never imports it, and the preflight still runs
before the first request that is sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from medvqa.core.inference.litellm_backend import LiteLLMBackend, import_litellm
from medvqa.core.inference.model_names import litellm_version, names_path
from medvqa.core.inference.preflight import PreflightError
from medvqa.core.run.store import read_records
from tests.conftest import REPO, shared_data
from tests.core.inference.synthetic import demo_item, requests_for
from tests.openai_server import OpenAIServer, ServerProcess

URL = "http://127.0.0.1:9/v1"  # nothing listens there: building a backend sends nothing


def answers_files() -> list:
    folder = names_path(litellm_version()).with_suffix("")
    return sorted(folder.glob("answers-*.json")) if folder.exists() else []


def described(b: LiteLLMBackend) -> tuple:
    """Everything of a backend that enters request keys, the manifest and the requests."""
    return b.model, b.params, b.endpoint, b.params_left_out, b.settings, b.sent_params


@pytest.mark.parametrize(
    "model,options",
    [
        ("hosted_vllm/test", {}),
        ("hosted_vllm/test", {"response_format": "json_schema", "temperature": 0.3, "max_tokens": 64}),
        ("openai/gpt-5", {"price": (1.25, 10.0), "params": {"reasoning_effort": "low", "seed": None}}),
        ("openai/gpt-4o", {"seed": 11}),
    ],
)
def test_a_backend_built_again_has_the_same_parameters_without_importing_litellm(model, options):
    first = LiteLLMBackend(model, api_base=URL, **options)
    assert first.litellm_loaded and len(answers_files()) == 1
    again = LiteLLMBackend(model, api_base=URL, **options)
    assert not again.litellm_loaded  # nothing of litellm was used to build it
    assert described(again) == described(first)
    if model == "openai/gpt-5":  # litellm's reason to leave temperature 0 out, as it gave it
        assert set(again.params_left_out) == {"temperature", "seed"}
        assert again.params_left_out["seed"] == "removed with --param seed=null"
        assert again.params_left_out["temperature"].startswith("litellm: ")


def test_each_question_has_its_own_answers_and_an_unknown_model_none():
    a = LiteLLMBackend("openai/gpt-5", api_base=URL)
    b = LiteLLMBackend("openai/gpt-5", api_base=URL, temperature=1)
    assert len(answers_files()) == 2
    assert "temperature" in a.params_left_out and b.params["temperature"] == 1
    with pytest.raises(PreflightError, match="unknown model 'opnai/gpt-5'"):
        LiteLLMBackend("opnai/gpt-5", api_base=URL)
    with pytest.raises(PreflightError, match="unknown model 'opnai/gpt-5'"):  # asked of litellm each time
        LiteLLMBackend("opnai/gpt-5", api_base=URL)
    assert len(answers_files()) == 2


def test_nothing_is_remembered_with_a_price_map_read_over_the_network(monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "False")
    LiteLLMBackend("hosted_vllm/test", api_base=URL)
    assert answers_files() == []
    assert LiteLLMBackend("hosted_vllm/test", api_base=URL).litellm_loaded


def test_the_first_request_imports_litellm_and_registers_the_price():
    litellm = import_litellm()
    model = "hosted_vllm/priced-on-import"
    LiteLLMBackend(model, api_base=URL, price=(2.0, 8.0))
    litellm.model_cost.pop(model, None)  # as in a new process
    again = LiteLLMBackend(model, api_base=URL, price=(2.0, 8.0))
    assert not again.litellm_loaded and model not in litellm.model_cost
    assert again.litellm is litellm
    assert litellm.model_cost[model]["input_cost_per_token"] == pytest.approx(2e-6)


def test_a_backend_built_again_answers_like_the_first():
    server = OpenAIServer().start()
    try:
        items = [demo_item(i) for i in range(6)]
        first = LiteLLMBackend("hosted_vllm/test", api_base=server.url, timeout=5)
        again = LiteLLMBackend("hosted_vllm/test", api_base=server.url, timeout=5)
        assert not again.litellm_loaded
        again.preflight()  # the probe imports litellm
        answers = {req.key: resp.text for req, resp in again.generate(iter(requests_for(again, items)))}
        assert answers == {req.key: resp.text for req, resp in first.generate(iter(requests_for(first, items)))}
        assert len(answers) == 6 and all(answers.values())
    finally:
        server.stop()


def imported_modules(stderr: str) -> set[str]:
    """The modules `python -X importtime` reported importing."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.slow
def test_a_fully_cached_rerun_sends_nothing_and_imports_neither_litellm_nor_scipy_stats(tmp_path):
    """The same command into a new run directory, every answer in the cache: 0 requests, the same
    records, and neither litellm, the openai SDK nor scipy.stats imported (`-X importtime`).
    One more item: litellm is imported, and the preflight request is sent with the one request."""
    data = shared_data("igakuqa")
    env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache")}
    with ServerProcess() as server:

        def run(run_dir: str, limit: int) -> tuple[list[dict], set[str], int]:
            before = server.stats()["requests"]
            proc = subprocess.run(
                [
                    sys.executable,
                    "-X",
                    "importtime",
                    "-m",
                    "medvqa.cli",
                    "run",
                    "igakuqa",
                    "--data",
                    str(data),
                    "--model",
                    "hosted_vllm/test",
                    "--api-base",
                    server.url,
                    "--limit",
                    str(limit),
                    "--run-dir",
                    str(tmp_path / run_dir),
                    "--json",
                ],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert proc.returncode == 0, proc.stderr[-3000:]
            assert json.loads(proc.stdout)["n_records"] == limit
            records = sorted(read_records(tmp_path / run_dir), key=lambda r: r["item_id"])
            return records, imported_modules(proc.stderr), server.stats()["requests"] - before

        first, modules, sent = run("first", 40)
        assert sent == 40 + 1 and "litellm" in modules  # and the preflight request
        again, modules, sent = run("again", 40)
        assert sent == 0
        assert not {"litellm", "openai", "scipy.stats"} & modules
        kept = ("item_id", "condition", "key", "response", "usage", "latency_s", "predicted", "status", "correct")
        assert [{k: r[k] for k in kept} for r in again] == [{k: r[k] for k in kept} for r in first]
        assert all(r["cached"] for r in again)
        more, modules, sent = run("more", 41)
        assert sent == 1 + 1 and "litellm" in modules  # the preflight and the one new item
        assert [{k: r[k] for k in kept} for r in more if r["cached"]] == [{k: r[k] for k in kept} for r in first]


def test_an_unreadable_or_incomplete_answers_file_is_asked_again_and_rewritten():
    first = LiteLLMBackend("openai/gpt-5", api_base=URL)
    (path,) = answers_files()
    for broken in ("{not json", json.dumps({"providers": {}}), json.dumps(["a", "list"])):
        path.write_text(broken, encoding="utf-8")
        again = LiteLLMBackend("openai/gpt-5", api_base=URL)
        assert described(again) == described(first)
        assert again.litellm_loaded  # litellm was asked again
        assert not LiteLLMBackend("openai/gpt-5", api_base=URL).litellm_loaded  # from the rewritten file

"""A 200 without content is retried like a transient fault, then recorded as an error and never
cached; a provider's `refusal` field is the response text of a `refusal` record. Over real HTTP."""

from __future__ import annotations

import sqlite3

from medvqa.core.inference.litellm_backend import LiteLLMBackend
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.rescore import rescore
from medvqa.core.run.store import read_records
from tests.core.inference.synthetic import demo_item, requests_for
from tests.openai_server import REFUSAL, Faults, OpenAIServer


def answers(server: OpenAIServer, n: int, **options) -> dict:
    backend = LiteLLMBackend("hosted_vllm/test", api_base=server.url, retry_wait=0.01, timeout=5, **options)
    return {
        req.item.id: resp
        for req, resp in backend.generate(iter(requests_for(backend, [demo_item(i) for i in range(n)])))
    }


def test_content_null_is_retried_until_answered():
    with OpenAIServer(faults=Faults(null_content=0.5), seed=3) as server:
        got = answers(server, 30, max_retries=10)
        assert all(r.error is None and r.text.startswith('{"answer"') for r in got.values())
        assert (
            server.outcomes["null_content"] > 5 and sum(server.counts.values()) == 30 + server.outcomes["null_content"]
        )


def test_content_null_every_time_is_an_error_after_the_retries():
    with OpenAIServer(faults=Faults(null_content=1.0)) as server:
        got = answers(server, 2, max_retries=3)
        assert sorted(server.counts.values()) == [4, 4]
    for r in got.values():
        assert r.text is None and not r.refusal
        assert r.error == "UnreadableResponse: the answer has no content (content: None) (after 4 tries)"


def test_a_refusal_field_is_the_text_of_a_refusal():
    with OpenAIServer(faults=Faults(refusal=1.0)) as server:
        got = answers(server, 3)
        assert sum(server.counts.values()) == 3  # an answer: not retried
    assert all((r.text, r.refusal, r.error) == (REFUSAL, True, None) for r in got.values())


def test_runs_record_refusals_and_empty_answers_and_cache_neither(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    faults = Faults(refusal=0.3, null_content=0.3)
    with OpenAIServer(faults=faults, seed=5) as server:
        options = RunOptions(
            benchmark="jmed48k",
            model="hosted_vllm/test",
            sample=True,
            conditions="C+Q",
            run_dir=str(tmp_path / "run"),
            backend_options={"api_base": [server.url], "max_retries": 1, "retry_wait": 0.01},
        )
        run(options, progress=False)
    records = read_records(tmp_path / "run")
    by_status = {s: [r for r in records if r["status"] == s] for s in ("refusal", "error", "answered")}
    assert len(records) == 17 and all(by_status.values()), {s: len(v) for s, v in by_status.items()}
    assert sum(map(len, by_status.values())) == 17
    for r in by_status["refusal"]:
        assert (r["response"], r["rule"], r["correct"], r["error"]) == (REFUSAL, "provider-refusal", False, None)
    for r in by_status["error"]:
        assert r["response"] is None and "no content" in r["error"]
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite3") as db:
        cached = {key: text for key, text in db.execute("SELECT key, text FROM responses")}
    assert set(cached) == {r["key"] for r in by_status["answered"]}
    assert all(text.strip() for text in cached.values())
    assert rescore(tmp_path / "run") == (17, 0)  # re-scoring keeps the provider's refusals

"""A reply's confidence read over real HTTP from the local OpenAI-compatible server: token
log-probabilities the server returns (asked for with `-M logprobs=true -M top_logprobs=5`) read
back into each record as the chosen label's share among the option labels, kept by the cache and
by re-scoring; a stated confidence in the JSON answer read by the answer reader."""

from __future__ import annotations

import json
import math
import re
import sqlite3

import pytest

from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.rescore import rescore
from medvqa.core.run.store import read_records
from tests.openai_server import OpenAIServer

LOGPROBS = {"logprobs": True, "top_logprobs": 5}  # what `-M logprobs=true -M top_logprobs=5` sends
_PIECES = re.compile(r'\{"|answer|": \["|[^"]+|"\]\}')


def planted_logprobs(text: str) -> list[dict] | None:
    """The reply `{"answer": ["x"]}` as tokens `{"`, `answer`, `": ["`, `x`, `"]}`, each certain
    (logprob 0) but the label's: x at 0.6, another label at 0.3 and a quote at 0.1."""
    reply = json.loads(text)
    if len(reply.get("answer") or []) != 1:
        return None
    label = reply["answer"][0]
    first, second = ("1", "2") if label.isdigit() else ("a", "b")  # another label of the same kind
    other = first if label != first else second
    tokens = []
    for piece in _PIECES.findall(text):
        if piece == label:
            top = [(label, 0.6), (other, 0.3), ('"', 0.1)]
            tokens.append(
                {
                    "token": piece,
                    "logprob": math.log(0.6),
                    "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top],
                }
            )
        else:
            tokens.append({"token": piece, "logprob": 0.0, "top_logprobs": [{"token": piece, "logprob": 0.0}]})
    return tokens


def options(server: OpenAIServer, run_dir, **params) -> RunOptions:
    return RunOptions(
        benchmark="jmed48k",
        model="hosted_vllm/test",
        sample=True,
        conditions="C+Q",
        run_dir=str(run_dir),
        backend_options={"api_base": [server.url], **params},
    )


@pytest.mark.parametrize("through", ["sdk", "litellm"])
def test_logprobs_returned_by_the_server_are_read_back_into_each_record(tmp_path, through):
    """Through the SDK path and through litellm's (a header sends it there)."""
    params = {**LOGPROBS, **({"extra_headers": {"X-Through": "litellm"}} if through == "litellm" else {})}
    with OpenAIServer(logprobs=planted_logprobs, keep_bodies=True) as server:
        run(options(server, tmp_path / "run", params=params), progress=False)
        assert {(b.get("logprobs"), b.get("top_logprobs")) for b in server.bodies} == {(True, 5)}
        sent = sum(server.counts.values())
        run(options(server, tmp_path / "again", params=params), progress=False)
        assert sum(server.counts.values()) == sent  # the second run is answered from the cache
    records = read_records(tmp_path / "run")
    single = [r for r in records if r["status"] == "answered" and len(r["predicted"]) == 1]
    assert len(single) >= 10
    for r in single:
        # the chosen label 0.6 against the other label 0.3 (the quote is no option label):
        # 0.6 / (0.6 + 0.3) = 0.6667
        assert r["confidence_method"] == "logprobs"
        assert r["confidence"] == pytest.approx(0.6 / 0.9)
    # answers naming two labels got no log-probabilities from this server: no confidence field
    assert not any("confidence" in r for r in records if r["status"] == "answered" and len(r["predicted"]) > 1)
    # the cache kept the token log-probabilities: the run answered from it records the same
    again = {r["item_id"]: r for r in read_records(tmp_path / "again")}
    assert [again[r["item_id"]].get("confidence") for r in records] == [r.get("confidence") for r in records]
    # re-scoring reads the same answers: the confidences stay
    rescore(tmp_path / "run")
    assert [r.get("confidence") for r in read_records(tmp_path / "run")] == [r.get("confidence") for r in records]


def test_without_logprobs_asked_no_record_has_a_confidence_field(tmp_path):
    with OpenAIServer(logprobs=planted_logprobs) as server:
        run(options(server, tmp_path / "run"), progress=False)
    assert not any("confidence" in r for r in read_records(tmp_path / "run"))


def test_a_stated_confidence_is_read_and_an_unreadable_one_is_null(tmp_path):
    def reply(prompt: str) -> str:
        stated = "about ninety" if "A" in prompt[:40] else 85
        return json.dumps({"answer": ["a"], "confidence": stated})

    with OpenAIServer(reply=reply) as server:
        run(options(server, tmp_path / "run"), progress=False)
    records = read_records(tmp_path / "run")
    assert {r["confidence_method"] for r in records if r.get("response")} == {"stated"}
    values = {r.get("confidence") for r in records if r.get("response")}
    assert values <= {0.85, None} and 0.85 in values
    for r in records:
        if r.get("response") and "about ninety" in r["response"]:
            assert r["confidence"] is None


def test_hostile_logprobs_are_refused_or_bounded(tmp_path):
    from medvqa.core.inference.base import Response
    from medvqa.core.inference.cache import ResponseCache
    from medvqa.core.inference.completion import MAX_LOGPROB_TOKENS, token_logprobs

    # a log-probability that is no probability's (NaN, positive, text): no tokens at all
    for bad in (float("nan"), 0.5, "-0.1", True):
        assert token_logprobs({"content": [{"token": "a", "logprob": bad}]}) is None
    # an alternative that is no (token, logprob) pair is left out; the rest kept
    read = token_logprobs({"content": [{"token": "a", "logprob": -0.1, "top_logprobs": [{"token": 5}, ["b", -1.0]]}]})
    assert read == [{"token": "a", "logprob": -0.1, "top": [["b", -1.0]]}]
    # a server sending a million tokens: the first MAX_LOGPROB_TOKENS kept
    many = token_logprobs({"content": [{"token": "x", "logprob": 0.0}] * 1_000_000})
    assert len(many) == MAX_LOGPROB_TOKENS
    # the cache keeps them and reads back what it kept as untrusted
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    cache.put("k", "m", Response(text="{}", logprobs=read))
    assert cache.get("k").logprobs == read
    cache.close()
    with sqlite3.connect(path) as db:  # a damaged cache: a token that is no text
        db.execute("UPDATE responses SET logprobs = ? WHERE key = 'k'", ('{"content": [{"token": 1}]}',))
    cache = ResponseCache(path)
    assert cache.get("k").logprobs is None
    cache.close()

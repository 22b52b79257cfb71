"""Runs and eval sets of `vllm/` models, through the real `medvqa run` path (`import vllm` giving the
strict stand-in of `fake_vllm`, whose second engine beside a first fails at start-up as on a GPU):
the repeats of a run and the experiments of one model in a set build one engine, each repeat's
seed in its requests' `SamplingParams`, and the engine is shut down when the last run using it
ends."""

from __future__ import annotations

import pytest

import medvqa
from medvqa.core.inference.vllm_engines import ENGINES
from medvqa.core.run.options import RunOptions, repeat_seed, run
from medvqa.core.run.store import read_records
from tests.core.inference.fake_vllm import install, make_vllm

# jmed48k-sample: 17 items, 5 with an image: 17 + 5 = 22 pairs under C+Q,C+Q+I per repeat
PAIRS = 22


@pytest.fixture
def vllm(monkeypatch):
    fake = make_vllm()
    install(monkeypatch, fake)
    yield fake
    assert ENGINES.running() == [], "an engine outlived its run"


def test_two_repeats_build_one_engine_and_each_repeat_sends_its_own_seed(tmp_path, vllm):
    options = RunOptions(
        benchmark="jmed48k",
        model="vllm/org/m",
        sample=True,
        conditions="C+Q,C+Q+I",
        run_dir=str(tmp_path / "run"),
        repeats=2,
        seed=5,
        cache=False,
        backend_options={"batch_size": 8, "temperature": 0.7},
    )
    result = run(options, progress=False)
    (llm,) = vllm.state.built  # one engine for both repeats: a second would have found the GPU full
    # 22 pairs in batches of 8: 8, 8, 6 per repeat
    assert [c["n"] for c in llm.calls] == [8, 8, 6, 8, 8, 6]
    assert [c["sampling_params"].seed for c in llm.calls] == [5] * 3 + [repeat_seed(5, 1)] * 3
    assert all(c["sampling_params"].temperature == 0.7 for c in llm.calls)
    records = read_records(tmp_path / "run")
    assert len(records) == 2 * PAIRS and {r["repeat"] for r in records} == {0, 1}
    # the stand-in answers {"answer": ["?"]} to prompts without "Options:" (JMed48k's): read, not failed
    assert {(r["status"], r["response"]) for r in records} == {("parse_failure", '{"answer": ["?"]}')}
    assert result.requested == 2 * PAIRS
    # the run's end shut it down: dropped, then vLLM's cleanup, once
    assert vllm.state.cleanups == 1 and vllm.alive() == 0


def test_a_set_shares_one_engine_per_model_and_builds_the_next_only_once_it_is_shut_down(tmp_path, monkeypatch, vllm):
    monkeypatch.chdir(tmp_path)
    doc = medvqa.eval_set(
        {
            "study_dir": "s",
            "models": [
                {"model": "vllm/org/m", "name": "cold"},
                {"model": "vllm/org/m", "name": "warm", "options": {"temperature": 0.7}},
                {"model": "vllm/org/other", "name": "other"},
            ],
            "benchmarks": [{"benchmark": "jmed48k", "sample": True, "conditions": ["C+Q"]}],
        },
        progress=False,
    )
    assert doc["failed"] == [], [e["failure"] for e in doc["experiments"]]
    # cold and warm differ in sampling only: one engine; other's is built once it has gone
    assert [b.model for b in vllm.state.built] == ["org/m", "org/other"]
    assert [[c["sampling_params"].temperature for c in b.calls] for b in vllm.state.built] == [[0, 0.7], [0]]
    assert vllm.state.cleanups == 2 and vllm.alive() == 0

"""The vLLM offline backend against a stand-in as strict as vLLM's offline API (`fake_vllm`: unknown
keywords raise, `finish_reason` present, one `SamplingParams` or a list as long as the prompts, a
second engine beside a first fails at start-up as on a GPU), read against vLLM 0.12.0 and 0.34.0:
`LLM(model=..., tensor_parallel_size=..., seed=..., **engine_args)` (`vllm/entrypoints/llm.py`),
`LLM.chat(messages, sampling_params, use_tqdm, ...) -> list[RequestOutput]`,
`RequestOutput.prompt_token_ids`, `.outputs[0].text / .token_ids / .finish_reason` (`vllm/outputs.py`),
`SamplingParams(temperature=, seed=, max_tokens=, structured_outputs=StructuredOutputsParams(json=))`
(`vllm/sampling_params.py`)."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from PIL import Image

from medvqa.core import plugins
from medvqa.core.errors import PreflightError
from medvqa.core.inference.output import ANSWER_SCHEMA
from medvqa.core.inference.reasoning import split_reply
from medvqa.core.inference.vllm_backend import VLLMBackend
from medvqa.core.inference.vllm_engines import ENGINES, EnginePool
from medvqa.core.messages import file_sha256
from tests.core.inference.fake_vllm import make_vllm
from tests.core.inference.synthetic import demo_item as item
from tests.core.inference.synthetic import requests_for as requests

ANSWER_B = '{"answer": ["B"]}'  # what the stand-in answers demo items (options B, C, D): 17 characters, 4 tokens


@pytest.fixture
def vllm():
    fake = make_vllm()
    yield fake
    assert ENGINES.running() == [], "an engine outlived its run"


def answers(backend, items):
    return {r.item.id: resp for r, resp in backend.generate(iter(requests(backend, items)))}


def test_batches_map_outputs_back_to_their_requests_in_order(vllm):
    backend = VLLMBackend("vllm/org/model-7b", seed=3, batch_size=3, vllm=vllm)
    results = list(backend.generate(iter(requests(backend, [item(i) for i in range(7)]))))
    (llm,) = vllm.state.built
    assert [c["n"] for c in llm.calls] == [3, 3, 1]  # 7 conversations in batches of 3
    assert [r.item.id for r, _ in results] == [f"q{i}" for i in range(7)]
    assert all(resp.text == ANSWER_B and resp.finish_reason is None for _, resp in results)
    # 17 characters of answer are 4 tokens for the stand-in (len // 4): 7 answers, 28 tokens
    assert all(resp.usage["completion_tokens"] == 4 and resp.usage["prompt_tokens"] > 0 for _, resp in results)
    assert backend.stats["completion_tokens"] == 28


def test_engine_and_sampling_parameters_are_the_documented_ones_and_in_params(vllm):
    backend = VLLMBackend(
        "vllm/org/model-7b",
        seed=11,
        tensor_parallel_size=4,
        max_tokens=64,
        engine_options={"max_model_len": 8192},
        vllm=vllm,
    )
    answers(backend, [item(0)])
    (llm,) = vllm.state.built
    # the engine keeps vLLM's default seed; the run's goes in every request's SamplingParams
    assert (llm.model, llm.tensor_parallel_size, llm.seed, llm.max_model_len) == ("org/model-7b", 4, 0, 8192)
    sp = llm.calls[0]["sampling_params"]
    assert (sp.temperature, sp.seed, sp.max_tokens) == (0, 11, 64)
    assert sp.structured_outputs.json == ANSWER_SCHEMA
    assert llm.calls[0]["use_tqdm"] is False
    assert backend.params == {
        "temperature": 0,
        "seed": 11,
        "max_tokens": 64,
        "structured_outputs": {"json": ANSWER_SCHEMA},
        "engine": {"max_model_len": 8192},
    }
    assert backend.settings["tensor_parallel_size"] == 4


def test_structured_output_can_be_turned_off_and_params_added_or_removed(vllm):
    backend = VLLMBackend("vllm/m", response_format="none", params={"top_p": 0.5, "seed": None}, vllm=vllm)
    answers(backend, [item(0)])
    sp = vllm.state.built[0].calls[0]["sampling_params"]
    assert sp.structured_outputs is None and sp.seed is None and sp.top_p == 0.5
    assert "structured_outputs" not in backend.params and "seed" not in backend.params


def test_a_benchmark_schema_sends_one_sampling_params_per_conversation_the_same_length(vllm):
    backend = VLLMBackend("vllm/m", batch_size=4, vllm=vllm)
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    reqs = requests(backend, [item(i) for i in range(3)])
    reqs[1].response_schema = schema
    list(backend.generate(iter(reqs)))
    call = vllm.state.built[0].calls[0]
    assert isinstance(call["sampling_params"], list) and len(call["sampling_params"]) == 3
    assert [p.structured_outputs.json for p in call["sampling_params"]] == [ANSWER_SCHEMA, schema, ANSWER_SCHEMA]


def test_images_are_sent_as_data_urls(tmp_path, vllm):
    path = tmp_path / "x.png"
    Image.new("RGB", (64, 48), (200, 10, 10)).save(path)
    backend = VLLMBackend("vllm/m", vllm=vllm)
    captured = []
    llm_chat = vllm.LLM.chat
    vllm.LLM.chat = lambda self, messages, **kw: captured.append(messages) or llm_chat(self, messages, **kw)
    answers(backend, [item(0, image=path)])
    parts = captured[0][0][-1]["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert len(urls) == 1
    assert hashlib.sha256(base64.b64decode(urls[0].split(",", 1)[1])).hexdigest() == file_sha256(path)


def test_a_failing_batch_is_split_in_halves_until_the_bad_conversation_stands_alone(tmp_path, vllm):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    backend = VLLMBackend("vllm/m", batch_size=8, vllm=vllm)
    items = [item(i, stem="TOO_LONG" if i == 5 else "Which one?") for i in range(8)]
    items.append(item(8, image=broken))
    results = answers(backend, items)
    # 8 conversations, q5 past max_model_len: [0-7] fails; [0-3] answers; [4-7] fails; [4,5] fails;
    # [4] answers, [5] fails alone; [6,7] answers: 7 calls, where one by one took 1 + 8 = 9
    assert [c["n"] for c in vllm.state.built[0].calls] == [8, 4, 4, 2, 1, 1, 2]
    assert set(results) == {f"q{i}" for i in range(9)}
    assert "longer than the maximum model length of 8192" in results["q5"].error and results["q5"].text is None
    assert "broken.png" in results["q8"].error
    assert all(results[f"q{i}"].error is None and results[f"q{i}"].text == ANSWER_B for i in (0, 1, 2, 3, 4, 6, 7))


def test_an_aborted_request_is_an_error_record_never_an_answer(vllm):
    backend = VLLMBackend("vllm/m", vllm=vllm)
    results = answers(backend, [item(0), item(1, stem="ABORT")])
    assert results["q0"].text == ANSWER_B
    # the stand-in gives half an answer with finish_reason "abort": '{"answer' (17 // 2 = 8 characters,
    # 8 // 4 = 2 tokens, counted as spent) is no answer
    assert results["q1"].text is None
    assert results["q1"].error == "vLLM ended the request without an answer (finish_reason 'abort')"
    assert results["q1"].usage["completion_tokens"] == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"params": {"top_n": 5}}, "top_n: not a vLLM SamplingParams keyword; vllm/ models take: allowed_token_ids"),
        ({"params": {"structured_outputs": {}}}, r"structured_outputs: .* \(set by response_format\)"),
        ({"params": {"n": 3}}, "n=3: one answer is read per request; ask again with --repeats"),
        ({"seed": -1}, r"--seed: a vLLM seed is a whole number from 0 to 2\*\*64-1, not -1 \(SamplingParams reads -1"),
        ({"params": {"seed": -7}}, "params.seed: a vLLM seed is a whole number from 0"),
        (
            {"engine_options": {"seed": 1}},
            "engine option seed: the run's --seed goes in every request's SamplingParams",
        ),
        ({"engine_options": {"tensor_parallel_size": 2}}, "engine option tensor_parallel_size: give it as the option"),
        ({"engine_options": {"data_parallel_size": 2}}, "engine option data_parallel_size: give it as the option"),
        (
            {"data_parallel_size": 2},
            r"data_parallel_size=2: vLLM runs one data-parallel rank per process .* "
            r"`vllm serve org/m --data-parallel-size 2` and --model hosted_vllm/NAME",
        ),
        ({"tensor_parallel_size": 0}, "tensor_parallel_size is a whole number of at least 1, not 0"),
    ],
)
def test_what_vllm_would_refuse_mid_run_is_refused_when_the_backend_is_built(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VLLMBackend("vllm/org/m", **kwargs)


def test_the_factory_refuses_them_too_before_vllm_is_imported():
    plugins.reset()
    with pytest.raises(ValueError, match="a vLLM seed is a whole number"):
        plugins.get_backend("vllm/org/m", seed=-1)
    with pytest.raises(ValueError, match="engine option seed"):
        plugins.get_backend("vllm/org/m", seed=0, engine_options={"seed": 3})


def test_a_parameter_the_installed_vllm_lacks_is_refused_at_preflight_before_any_engine(vllm):
    # thinking_token_budget is a SamplingParams field of 0.34.0, not of 0.12.0 (the stand-in)
    backend = VLLMBackend("vllm/m", params={"thinking_token_budget": 512}, vllm=vllm)
    with pytest.raises(PreflightError, match="Unexpected keyword argument 'thinking_token_budget'"):
        backend.preflight()
    with pytest.raises(PreflightError, match=r"top_p must be in \(0, 1\], got 2"):
        VLLMBackend("vllm/m", params={"top_p": 2}, vllm=vllm).preflight()
    assert vllm.state.built == []


def test_two_repeats_share_one_engine_each_with_its_seed_and_it_is_shut_down_when_the_run_ends(vllm):
    first, second = (VLLMBackend("vllm/org/m", seed=s, vllm=vllm) for s in (0, 1234))
    assert first.engine_key == second.engine_key  # the seed is no part of the engine
    with ENGINES.kept():  # a run's scope (`execute`)
        answers(first, [item(0)])
        answers(second, [item(0)])
        assert vllm.alive() == 1 and vllm.state.cleanups == 0
    (llm,) = vllm.state.built
    assert [c["sampling_params"].seed for c in llm.calls] == [0, 1234]
    del llm
    # the pool dropped the engine, then vLLM's cleanup collected it
    assert vllm.state.cleanups == 1 and vllm.alive() == 0


def test_without_sharing_the_second_engine_fails_at_start_up_as_on_a_gpu(vllm):
    held = vllm.LLM("org/m")
    with pytest.raises(ValueError, match="Free memory on device"):
        answers(VLLMBackend("vllm/org/m", vllm=vllm), [item(0)])
    del held


def test_another_engine_is_built_only_once_the_idle_one_is_shut_down(vllm):
    pool = EnginePool()
    small = dict(model="org/a", tensor_parallel_size=1)
    with pool.kept():
        a = pool.acquire("a", lambda: vllm.LLM(**small), vllm.cleanup)
        pool.release("a")
        del a
        assert pool.acquire("a", lambda: vllm.LLM(**small), vllm.cleanup).record is vllm.state.built[0]  # reused
        pool.release("a")
        b = pool.acquire("b", lambda: vllm.LLM("org/b", tensor_parallel_size=2), vllm.cleanup)  # "a" goes first
        assert (pool.built, pool.shut_down, vllm.state.cleanups) == (2, 1, 1)
        assert pool.running() == ["b"] and b.model == "org/b"
        del b
        pool.release("b")
        assert pool.running() == ["b"]  # idle, kept until the scope ends
    assert pool.running() == [] and (pool.shut_down, vllm.alive()) == (2, 0)
    with pytest.raises(RuntimeError, match="no engine of a is held"):
        pool.release("a")


def test_a_reasoning_model_thinks_before_its_json_when_its_parser_is_given(vllm):
    # held to the grammar from its first token, a reasoning model cannot think: the stand-in
    # answers the bare JSON then, as a real one would be forced to
    held = answers(VLLMBackend("vllm/org/think-8b", vllm=vllm), [item(0)])["q0"]
    assert held.text == ANSWER_B
    # with its reasoning parser vLLM applies the grammar after the reasoning: the record keeps
    # the reasoning apart from the answer
    backend = VLLMBackend("vllm/org/think-8b", engine_options={"reasoning_parser": "qwen3"}, vllm=vllm)
    assert backend.reasoning_parser == "qwen3" and backend.params["engine"] == {"reasoning_parser": "qwen3"}
    thought = answers(backend, [item(0)])["q0"]
    assert vllm.state.built[-1].reasoning_parser == "qwen3"
    assert vllm.state.built[-1].calls[0]["sampling_params"].structured_outputs.json == ANSWER_SCHEMA
    reply = split_reply(thought.text)
    assert (reply.answer, reply.reasoning) == (ANSWER_B, "The options start with B.")
    # the same with no response format at all
    free = answers(VLLMBackend("vllm/org/think-8b", response_format="none", vllm=vllm), [item(0)])["q0"]
    assert split_reply(free.text).answer == ANSWER_B and split_reply(free.text).reasoning


def test_vllm_models_are_routed_to_this_backend_and_reject_remote_options():
    plugins.reset()
    with pytest.raises(ValueError, match="--concurrency does not apply to vllm models"):
        plugins.get_backend("vllm/org/model", seed=0, concurrency=8)
    with pytest.raises(ValueError, match="vllm/<path or name>"):
        VLLMBackend("vllm/")
    assert json.loads(VLLMBackend("vllm/org/m", tensor_parallel_size=2).engine_key) == {
        "model": "org/m",
        "tensor_parallel_size": 2,
        "data_parallel_size": 1,
        "engine_options": {},
    }

"""The vLLM offline backend against a stand-in that implements vLLM's documented offline API:
`LLM(model=..., tensor_parallel_size=..., seed=..., **engine_args)`,
`LLM.chat(messages: list[list[dict]], sampling_params=None, use_tqdm=True, ...) -> list[RequestOutput]`,
`RequestOutput.prompt_token_ids`, `RequestOutput.outputs[0].text / .token_ids`,
`SamplingParams(temperature=, seed=, max_tokens=, structured_outputs=StructuredOutputsParams(json=))`."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from PIL import Image

from medvqa.core import plugins
from medvqa.core.inference.output import ANSWER_SCHEMA
from medvqa.core.inference.vllm_backend import VLLMBackend
from medvqa.core.messages import file_sha256
from tests.core.inference.synthetic import demo_item as item
from tests.core.inference.synthetic import requests_for as requests


@dataclass
class StructuredOutputsParams:
    json: dict | None = None


class SamplingParams:
    def __init__(self, *, temperature=1.0, seed=None, max_tokens=16, structured_outputs=None, **extra):
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.structured_outputs, self.extra = structured_outputs, extra


@dataclass
class CompletionOutput:
    text: str
    token_ids: list[int]


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]


class FakeLLM:
    """Answers with the first option label it sees; fails on a conversation saying FAIL."""

    def __init__(self, model, *, tensor_parallel_size=1, seed=None, **engine_args):
        self.model, self.tensor_parallel_size, self.seed, self.engine_args = (
            model,
            tensor_parallel_size,
            seed,
            engine_args,
        )
        self.calls = []

    def chat(
        self,
        messages,
        sampling_params=None,
        use_tqdm=True,
        lora_request=None,
        chat_template=None,
        chat_template_content_format="auto",
        add_generation_prompt=True,
        continue_final_message=False,
        tools=None,
        chat_template_kwargs=None,
        mm_processor_kwargs=None,
    ):
        conversations = messages if messages and isinstance(messages[0], list) else [messages]
        self.calls.append(
            {
                "n": len(conversations),
                "sampling_params": sampling_params,
                "use_tqdm": use_tqdm,
                "conversations": conversations,
            }
        )
        outputs = []
        for conv in conversations:
            text = json.dumps(conv, ensure_ascii=False)
            if "FAIL" in text:
                raise RuntimeError("engine rejected a prompt")
            label = text.split("Options:\\n", 1)[1][0] if "Options:\\n" in text else "?"
            outputs.append(
                RequestOutput(
                    prompt_token_ids=list(range(len(text) // 10)),
                    outputs=[CompletionOutput(text=json.dumps({"answer": [label]}), token_ids=[1, 2, 3])],
                )
            )
        return outputs


VLLM = SimpleNamespace(LLM=FakeLLM, SamplingParams=SamplingParams, StructuredOutputsParams=StructuredOutputsParams)


def test_batches_map_outputs_back_to_their_requests_in_order():
    backend = VLLMBackend("vllm/org/model-7b", seed=3, batch_size=3, vllm=VLLM)
    reqs = requests(backend, [item(i) for i in range(7)])
    results = list(backend.generate(iter(reqs)))
    llm = backend.llm
    assert [c["n"] for c in llm.calls] == [3, 3, 1]
    assert [r.item.id for r, _ in results] == [f"q{i}" for i in range(7)]
    assert all(json.loads(resp.text) == {"answer": ["B"]} for _, resp in results)
    assert all(resp.usage["completion_tokens"] == 3 and resp.usage["prompt_tokens"] > 0 for _, resp in results)
    assert backend.stats["completion_tokens"] == 21


def test_engine_and_sampling_parameters_are_the_documented_ones_and_in_params():
    backend = VLLMBackend(
        "vllm/org/model-7b",
        seed=11,
        tensor_parallel_size=4,
        max_tokens=64,
        engine_options={"max_model_len": 8192},
        vllm=VLLM,
    )
    list(backend.generate(iter(requests(backend, [item(0)]))))
    llm = backend.llm
    assert (llm.model, llm.tensor_parallel_size, llm.seed, llm.engine_args) == (
        "org/model-7b",
        4,
        11,
        {"max_model_len": 8192},
    )
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


def test_structured_output_can_be_turned_off_and_params_added_or_removed():
    backend = VLLMBackend("vllm/m", response_format="none", params={"top_p": 0.5, "seed": None}, vllm=VLLM)
    list(backend.generate(iter(requests(backend, [item(0)]))))
    sp = backend.llm.calls[0]["sampling_params"]
    assert sp.structured_outputs is None and sp.seed is None and sp.extra == {"top_p": 0.5}
    assert "structured_outputs" not in backend.params and "seed" not in backend.params


def test_images_are_sent_as_data_urls(tmp_path):
    path = tmp_path / "x.png"
    Image.new("RGB", (64, 48), (200, 10, 10)).save(path)
    backend = VLLMBackend("vllm/m", vllm=VLLM)
    list(backend.generate(iter(requests(backend, [item(0, image=path)]))))
    parts = backend.llm.calls[0]["conversations"][0][-1]["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert len(urls) == 1
    assert hashlib.sha256(base64.b64decode(urls[0].split(",", 1)[1])).hexdigest() == file_sha256(path)


def test_a_failing_conversation_becomes_one_error_record_and_the_batch_survives(tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    backend = VLLMBackend("vllm/m", batch_size=4, vllm=VLLM)
    items = [item(0), item(1, stem="FAIL here"), item(2), item(3, image=broken), item(4)]
    results = {r.item.id: resp for r, resp in backend.generate(iter(requests(backend, items)))}
    assert set(results) == {"q0", "q1", "q2", "q3", "q4"}
    assert "engine rejected a prompt" in results["q1"].error
    assert "broken.png" in results["q3"].error
    assert all(results[q].error is None and results[q].text for q in ("q0", "q2", "q4"))


def test_vllm_models_are_routed_to_this_backend_and_reject_remote_options():
    plugins.reset()
    with pytest.raises(ValueError, match="--concurrency does not apply to vllm models"):
        plugins.get_backend("vllm/org/model", seed=0, concurrency=8)
    with pytest.raises(ValueError, match="vllm/<path or name>"):
        VLLMBackend("vllm/", vllm=VLLM)

"""A stand-in for vLLM's offline API that keeps the real one's strictness, for machines without a GPU.

Shaped by vLLM 0.12.0 (the oldest version `medvqa[vllm]` allows; 0.34.0 agrees on every call used):

- `SamplingParams` is a `msgspec.Struct` there (`vllm/sampling_params.py`): a keyword that is not one
  of its fields raises `TypeError: Unexpected keyword argument '...'`; `__post_init__` turns seed -1
  into None and `_verify_args` raises `ValueError` for values out of range.
- `LLM(model, *, tensor_parallel_size=1, seed=None, gpu_memory_utilization=0.9, ..., **kwargs)`
  passes `**kwargs` to `EngineArgs`, a dataclass: an unknown one raises `TypeError`.
  `LLM(data_parallel_size>1)` raises `ValueError` in one process (`vllm/entrypoints/llm.py`).
  A second engine started while the first still holds the GPU fails at start-up; here, while the
  first has not been garbage-collected.
- `LLM.chat(messages, sampling_params=None, use_tqdm=True, lora_request=None, chat_template=None,
  chat_template_content_format="auto", add_generation_prompt=True, continue_final_message=False,
  tools=None, chat_template_kwargs=None, mm_processor_kwargs=None)`: `sampling_params` is one
  object for every prompt, or a list of the same length ("The lengths of prompts and params must
  be the same."); a prompt past `max_model_len` raises `ValueError` for the whole call.
- `RequestOutput.prompt_token_ids`, `.outputs[0]` a `CompletionOutput(text, token_ids,
  finish_reason)`; `finish_reason` is "stop", "length" or "abort" (`FINISH_REASON_STRINGS`).
- `vllm.distributed.cleanup_dist_env_and_memory()` frees what a dropped engine held.

The engine answers with the first option label of the conversation as `{"answer": [label]}`. A
conversation saying TOO_LONG is past `max_model_len`; ABORT is aborted (`finish_reason="abort"`,
with half an answer); a model whose name has "think" reasons first (`<think>...</think>`), unless
the JSON grammar holds it from its first token (structured output without a reasoning parser).
"""

from __future__ import annotations

import gc
import json
import sys
import types
import weakref
from dataclasses import dataclass, field

# vLLM 0.12.0's SamplingParams fields and defaults (those the tests touch; the others accepted)
SAMPLING_DEFAULTS = {
    "n": 1, "presence_penalty": 0.0, "frequency_penalty": 0.0, "repetition_penalty": 1.0, "temperature": 1.0,
    "top_p": 1.0, "top_k": 0, "min_p": 0.0, "seed": None, "stop": None, "stop_token_ids": None,
    "ignore_eos": False, "max_tokens": 16, "min_tokens": 0, "logprobs": None, "prompt_logprobs": None,
    "flat_logprobs": False, "detokenize": True, "skip_special_tokens": True,
    "spaces_between_special_tokens": True, "logits_processors": None, "include_stop_str_in_output": False,
    "truncate_prompt_tokens": None, "output_kind": None, "output_text_buffer_length": 0,
    "structured_outputs": None, "logit_bias": None, "allowed_token_ids": None, "extra_args": None,
    "bad_words": None, "skip_reading_prefix_cache": None,
}  # fmt: skip


@dataclass
class StructuredOutputsParams:
    json: str | dict | None = None
    regex: str | None = None
    choice: list[str] | None = None
    grammar: str | None = None
    json_object: bool | None = None


class SamplingParams:
    def __init__(self, **kwargs):
        for name in kwargs:
            if name not in SAMPLING_DEFAULTS:
                raise TypeError(f"Unexpected keyword argument '{name}'")
        for name, default in SAMPLING_DEFAULTS.items():
            setattr(self, name, kwargs.get(name, default))
        if self.seed == -1:
            self.seed = None
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}.")


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: None
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    prompt_logprobs: None
    outputs: list[CompletionOutput]
    finished: bool = True
    metrics: dict = field(default_factory=dict)


def make_vllm(max_model_len: int = 8192) -> types.SimpleNamespace:
    """A fresh fake: `.LLM`, `.SamplingParams`, `.StructuredOutputsParams`, `.cleanup` (the names the
    backend imports), with `.state.built` (what each engine constructed was given and asked, in
    order; not the engines, which stay collectable), `.state.cleanups` (calls of the cleanup) and
    `.alive()` (the engines not yet collected)."""
    state = types.SimpleNamespace(built=[], cleanups=0, engines=weakref.WeakSet())

    class LLM:
        def __init__(
            self,
            model: str,
            *,
            tensor_parallel_size: int = 1,
            seed: int | None = None,
            gpu_memory_utilization: float = 0.9,
            dtype: str = "auto",
            max_model_len: int | None = None,
            enforce_eager: bool = False,
            reasoning_parser: str = "",
            structured_outputs_config: dict | None = None,
            pipeline_parallel_size: int = 1,
            data_parallel_size: int = 1,
        ):
            if data_parallel_size > 1:
                raise ValueError(
                    f"LLM(data_parallel_size={data_parallel_size}) is not supported for single-process usage"
                )
            gc.collect()  # what was dropped has left the GPU
            if len(state.engines):
                raise ValueError(
                    "Free memory on device (7.1/79.2 GiB) on startup is less than desired GPU memory "
                    f"utilization ({gpu_memory_utilization}, 71.3 GiB)."
                )
            self.model, self.tensor_parallel_size, self.seed = model, tensor_parallel_size, seed
            self.max_model_len = max_model_len or default_len
            self.reasoning_parser = reasoning_parser or (structured_outputs_config or {}).get("reasoning_parser", "")
            self.calls: list[dict] = []
            # what the tests read of it, kept apart from the engine so that it can be collected
            self.record = types.SimpleNamespace(
                model=model,
                tensor_parallel_size=tensor_parallel_size,
                seed=seed,
                max_model_len=self.max_model_len,
                reasoning_parser=self.reasoning_parser,
                options={
                    "dtype": dtype,
                    "enforce_eager": enforce_eager,
                    "pipeline_parallel_size": pipeline_parallel_size,
                },
                calls=self.calls,
            )
            state.built.append(self.record)
            state.engines.add(self)

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
            if isinstance(sampling_params, list):
                if len(sampling_params) != len(conversations):
                    raise ValueError("The lengths of prompts and params must be the same.")
                params = sampling_params
            elif sampling_params is None or isinstance(sampling_params, SamplingParams):
                params = [sampling_params or SamplingParams()] * len(conversations)
            else:
                raise TypeError(f"sampling_params: {type(sampling_params).__name__}")
            self.calls.append(
                {"n": len(conversations), "sampling_params": sampling_params, "params": params, "use_tqdm": use_tqdm}
            )
            texts = [json.dumps(conv, ensure_ascii=False) for conv in conversations]
            for text in texts:  # checked before anything runs, as vLLM's input processor does
                if "TOO_LONG" in text:
                    raise ValueError(
                        f"The decoder prompt (length {self.max_model_len + 1}) is longer than the maximum "
                        f"model length of {self.max_model_len}."
                    )
            return [self._answer(i, text, p) for i, (text, p) in enumerate(zip(texts, params, strict=True))]

        def _answer(self, i: int, text: str, params: SamplingParams) -> RequestOutput:
            label = text.split("Options:\\n", 1)[1][0] if "Options:\\n" in text else "?"
            answer = json.dumps({"answer": [label]})
            held = params.structured_outputs is not None and not self.reasoning_parser
            if "think" in self.model and not held:
                answer = f"<think>The options start with {label}.</think>{answer}"
            finish = "stop"
            if "ABORT" in text:
                answer, finish = answer[: len(answer) // 2], "abort"
            return RequestOutput(
                request_id=str(i),
                prompt=None,
                prompt_token_ids=list(range(len(text) // 10)),
                prompt_logprobs=None,
                outputs=[CompletionOutput(0, answer, list(range(len(answer) // 4)), None, None, finish)],
            )

    def cleanup() -> None:
        state.cleanups += 1
        gc.collect()

    default_len = max_model_len
    return types.SimpleNamespace(
        LLM=LLM,
        SamplingParams=SamplingParams,
        StructuredOutputsParams=StructuredOutputsParams,
        cleanup=cleanup,
        state=state,
        alive=lambda: len(state.engines),
    )


def install(monkeypatch, fake: types.SimpleNamespace) -> None:
    """Make `import vllm` (and the submodules the backend imports from) give `fake`."""
    root = types.ModuleType("vllm")
    root.LLM, root.SamplingParams = fake.LLM, fake.SamplingParams
    sampling = types.ModuleType("vllm.sampling_params")
    sampling.StructuredOutputsParams = fake.StructuredOutputsParams
    sampling.SamplingParams = fake.SamplingParams
    distributed = types.ModuleType("vllm.distributed")
    distributed.cleanup_dist_env_and_memory = fake.cleanup
    root.sampling_params, root.distributed = sampling, distributed
    for name, module in (("vllm", root), ("vllm.sampling_params", sampling), ("vllm.distributed", distributed)):
        monkeypatch.setitem(sys.modules, name, module)

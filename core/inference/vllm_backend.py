"""The vLLM offline backend: `vllm/<model path or name>`, in-process on local GPUs.

A thin adapter from our messages to vLLM's documented offline chat call and back:

    llm = vllm.LLM(model=NAME, tensor_parallel_size=N, seed=SEED, **engine_options)
    outputs = llm.chat(conversations, sampling_params=SamplingParams(...), use_tqdm=False)
    outputs[i].outputs[0].text, len(outputs[i].prompt_token_ids), len(outputs[i].outputs[0].token_ids)

Requests go in batches of `batch_size` conversations (vLLM schedules them together). Images
are `image_url` data URLs, as for remote servers, so no `allowed_local_media_path` is
needed. Structured JSON output uses `SamplingParams(structured_outputs=
StructuredOutputsParams(json=schema))` (vLLM ≥ 0.12). If a batch fails, its conversations are
retried one by one so that only the failing ones become `error` records. `vllm` is an
optional extra (`pip install 'medvqa[vllm]'`, CUDA only) and is imported on first use.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

from .base import Backend, Request, Response
from .images import ImageError, to_openai
from .output import ANSWER_SCHEMA, error_text

PREFIX = "vllm/"


def import_vllm() -> SimpleNamespace:
    """The three names this backend uses from vLLM."""
    try:
        import vllm
        from vllm.sampling_params import StructuredOutputsParams
    except ImportError as exc:
        raise ValueError(
            f"the vllm backend needs vLLM ≥ 0.12 on a CUDA machine: pip install 'medvqa[vllm]' ({exc})"
        ) from None
    return SimpleNamespace(
        LLM=vllm.LLM, SamplingParams=vllm.SamplingParams, StructuredOutputsParams=StructuredOutputsParams
    )


class VLLMBackend(Backend):
    cacheable = True

    def __init__(
        self,
        model: str,
        *,
        seed: int = 0,
        temperature: float = 0,
        max_tokens: int | None = None,
        params: dict[str, Any] | None = None,
        response_format: str = "auto",
        tensor_parallel_size: int = 1,
        batch_size: int = 512,
        max_image_side: int | None = None,
        engine_options: dict[str, Any] | None = None,
        vllm: Any = None,
    ):
        if not model.startswith(PREFIX) or len(model) == len(PREFIX):
            raise ValueError(f"a vLLM model is written vllm/<path or name>, not {model!r}")
        if response_format not in ("auto", "json_schema", "none"):
            raise ValueError(f"response format {response_format!r}: vllm/ models take auto, json_schema or none")
        self.model = model
        self.name = model[len(PREFIX) :]
        sampling: dict[str, Any] = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens or 2048}
        sampling.update({k: v for k, v in (params or {}).items()})
        self._sampling = {k: v for k, v in sampling.items() if v is not None}
        self._structured = response_format != "none"
        self.params: dict[str, Any] = {**self._sampling}
        if self._structured:
            self.params["structured_outputs"] = {"json": ANSWER_SCHEMA}
        if engine_options:
            self.params["engine"] = dict(sorted(engine_options.items()))  # dtype, quantization, ... change outputs
        if max_image_side:
            self.params["max_image_side"] = max_image_side
        self.engine_options = dict(engine_options or {})
        self.tensor_parallel_size, self.batch_size = tensor_parallel_size, batch_size
        self.max_image_side = max_image_side
        self.seed = seed
        self.settings = {"backend": "vllm", "tensor_parallel_size": tensor_parallel_size, "batch_size": batch_size}
        self.stats: dict[str, Any] = {
            "in_flight": 0,
            "retries": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost_usd": 0.0,
        }
        self._vllm = vllm
        self.llm: Any = None  # the `vllm.LLM` engine, built for the first requests (`_engine`)

    def _engine(self):
        if self.llm is None:
            if self._vllm is None:
                self._vllm = import_vllm()
            self.llm = self._vllm.LLM(
                model=self.name, tensor_parallel_size=self.tensor_parallel_size, seed=self.seed, **self.engine_options
            )
        return self.llm

    def _sampling_params(self, schema: dict | None = None):
        extra = {}
        if self._structured:
            extra["structured_outputs"] = self._vllm.StructuredOutputsParams(json=schema or ANSWER_SCHEMA)
        return self._vllm.SamplingParams(**self._sampling, **extra)

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        llm = self._engine()
        sampling = self._sampling_params()
        batch: list[tuple[Request, list[dict]]] = []
        for req in requests:
            try:
                batch.append((req, to_openai(req.messages, self.max_image_side)))
            except ImageError as exc:
                yield req, Response(error=str(exc))
            if len(batch) >= self.batch_size:
                yield from self._run(llm, sampling, batch)
                batch = []
        if batch:
            yield from self._run(llm, sampling, batch)

    def _run(self, llm, sampling, batch: list[tuple[Request, list[dict]]]) -> Iterator[tuple[Request, Response]]:
        self.stats["in_flight"] = len(batch)
        started = time.monotonic()
        if self._structured and any(req.response_schema is not None for req, _ in batch):
            sampling = [self._sampling_params(req.response_schema) for req, _ in batch]  # the benchmark's schema
        try:
            outputs = llm.chat([conv for _, conv in batch], sampling_params=sampling, use_tqdm=False)
        except Exception as exc:
            if len(batch) == 1:
                self.stats["in_flight"] = 0
                yield batch[0][0], Response(error=error_text(exc), latency_s=time.monotonic() - started)
                return
            for one in batch:  # isolate the conversation(s) that fail
                yield from self._run(llm, sampling, [one])
            return
        per_item = (time.monotonic() - started) / len(batch)
        self.stats["in_flight"] = 0
        for (req, _), out in zip(batch, outputs, strict=True):
            yield req, self._read(out, per_item)

    def _read(self, out, latency_s: float) -> Response:
        completion = out.outputs[0]
        prompt, generated = len(out.prompt_token_ids or ()), len(completion.token_ids or ())
        usage: dict[str, int | float | None] = {"prompt_tokens": prompt, "completion_tokens": generated}
        self.stats["prompt_tokens"] += prompt
        self.stats["completion_tokens"] += generated
        finish = "length" if getattr(completion, "finish_reason", None) == "length" else None
        return Response(text=completion.text, usage=usage, latency_s=latency_s, finish_reason=finish)

"""The vLLM offline backend: `vllm/<model path or name>`, in-process on local GPUs.

A thin adapter from our messages to vLLM's documented offline chat call and back, read against
vLLM 0.12.0 and 0.34.0 (`vllm/entrypoints/llm.py`, `vllm/sampling_params.py`,
`vllm/outputs.py`), the versions `medvqa[vllm]` allows:

    llm = vllm.LLM(model=NAME, tensor_parallel_size=N, seed=0, **engine_options)
    outputs = llm.chat(conversations, sampling_params=SamplingParams(seed=SEED, ...), use_tqdm=False)
    outputs[i].outputs[0].text / .token_ids / .finish_reason, outputs[i].prompt_token_ids

- **One engine.** The `vllm.LLM` is not the backend's: it comes from `vllm_engines.ENGINES`,
  one per process for each model, parallel sizes and engine options, so the backends of a run's
  repeats and the experiments of an eval set share it (two engines do not fit on the GPUs),
  and it is shut down when the last run using it ends. Each backend's seed (the repeat's) goes
  in every request's `SamplingParams`; the engine keeps vLLM's default seed, 0.
- **Parallel sizes** as vLLM documents them: `tensor_parallel_size` splits the model over the
  GPUs of one engine. A data-parallel rank is a process of its own: `LLM(data_parallel_size>1)`
  raises in a single process ("not supported for single-process usage and may hang"), so more
  than one replica is `vllm serve MODEL --data-parallel-size N` behind `hosted_vllm/MODEL
  --api-base URL`, and `data_parallel_size` above 1 is refused when the backend is built.
- **Structured output.** `SamplingParams(structured_outputs=StructuredOutputsParams(json=
  schema))`. A reasoning model held to the grammar from its first token cannot think; vLLM
  applies it only after the reasoning ends when the engine is given the model's reasoning parser
  (`engine_options.reasoning_parser`, e.g. `qwen3`, `deepseek_r1`: vLLM's structured output
  manager waits for `is_reasoning_end`), which is how a model declares that it reasons. The
  reasoning then stands before the JSON in the text, and the record keeps it apart
  (`reasoning.split_reply`). Without a parser, run a reasoning model with `response_format=none`.
- **Finish reasons.** `stop` is an answer; `length` (and `repetition`, vLLM's repetition
  detector) a reply cut off; `abort`, `error` or any other is an error record, never an answer.
- **Batches.** Requests go in batches of `batch_size` conversations (vLLM schedules them
  together). A batch that fails is split in halves until the failing conversations stand alone
  (a prompt past `max_model_len` costs about 2·log2(batch) calls, not one per conversation);
  only those become `error` records. Images are `image_url` data URLs, as for remote servers.
- **Checked when built**, before any GPU is touched: generation parameters that are not
  `SamplingParams` keywords of vLLM 0.12 or 0.34, a negative seed (`SamplingParams` reads -1 as
  "no seed"), a seed or parallel size given again in the engine options. `preflight()` builds the
  `SamplingParams` with the installed vLLM before the first request, so what that version
  refuses is said once, before the engine loads.

`vllm` is an optional extra (`pip install 'medvqa[vllm]'`, CUDA only), imported on first use.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

from ..errors import PreflightError
from .base import Backend, Request, Response
from .images import ImageError, to_openai
from .output import ANSWER_SCHEMA, error_text
from .vllm_engines import ENGINES

PREFIX = "vllm/"
# The public fields of `SamplingParams` (keywords of its constructor) in vLLM 0.12.0 and 0.34.0
# (`vllm/sampling_params.py`), less `structured_outputs`, which `response_format` sets. A key of
# one version only passes here; the installed version's own constructor checks it at preflight.
SAMPLING_KEYS = frozenset(
    {
        "n", "presence_penalty", "frequency_penalty", "repetition_penalty", "temperature", "top_p", "top_k",
        "min_p", "seed", "stop", "stop_token_ids", "ignore_eos", "max_tokens", "min_tokens", "logprobs",
        "prompt_logprobs", "flat_logprobs", "detokenize", "skip_special_tokens", "spaces_between_special_tokens",
        "logits_processors", "include_stop_str_in_output", "truncate_prompt_tokens", "output_kind",
        "output_text_buffer_length", "logit_bias", "allowed_token_ids", "extra_args", "bad_words",
        "skip_reading_prefix_cache",
        # 0.34.0 only
        "watermarking", "prompt_logprob_token_ids", "prompt_logprob_start", "logprob_token_ids", "stream_interval",
        "skip_clone", "thinking_token_budget", "repetition_detection", "routed_experts_prompt_start",
        "trace_decode_token_ids",
        # 0.12.0 only: logits_processors, truncate_prompt_tokens (above)
    }
)  # fmt: skip
# Engine arguments the backend sets itself: given in the engine options they would be said twice.
OWN_ENGINE_KEYS = {
    "model": "the model is the part of --model after vllm/",
    "seed": "the run's --seed goes in every request's SamplingParams (each repeat its own); the engine keeps 0",
    "tensor_parallel_size": "give it as the option tensor_parallel_size (--tensor-parallel-size)",
    "data_parallel_size": "give it as the option data_parallel_size",
}
ANSWERS = ("stop",)
CUT_OFF = ("length", "repetition")  # vLLM ended the reply early: max_tokens or max_model_len, or repetition
MAX_SEED = 2**64 - 1  # the largest seed torch's generators take (vLLM seeds one per request with it)


def import_vllm() -> SimpleNamespace:
    """The names this backend uses from vLLM."""
    try:
        import vllm
        from vllm.distributed import cleanup_dist_env_and_memory
        from vllm.sampling_params import StructuredOutputsParams
    except ImportError as exc:
        raise ValueError(
            f"the vllm backend needs vLLM ≥ 0.12 on a CUDA machine: pip install 'medvqa[vllm]' ({exc})"
        ) from None
    return SimpleNamespace(
        LLM=vllm.LLM,
        SamplingParams=vllm.SamplingParams,
        StructuredOutputsParams=StructuredOutputsParams,
        cleanup=cleanup_dist_env_and_memory,
    )


def reasoning_parser(engine_options: dict[str, Any]) -> str | None:
    """The reasoning parser the engine options give the model (`reasoning_parser`, or
    `structured_outputs_config.reasoning_parser`), None without one."""
    named = engine_options.get("reasoning_parser")
    config = engine_options.get("structured_outputs_config")
    if not named and isinstance(config, dict):
        named = config.get("reasoning_parser")
    return str(named) if named else None


def check_seed(seed: Any, where: str) -> None:
    """A seed vLLM takes as given: a whole number from 0 to 2**64 - 1 (-1 would mean "no seed")."""
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise ValueError(
            f"{where}: a vLLM seed is a whole number from 0 to 2**64-1, not {seed!r} "
            "(SamplingParams reads -1 as no seed, a different answer each time)"
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
        data_parallel_size: int = 1,
        batch_size: int = 512,
        max_image_side: int | None = None,
        engine_options: dict[str, Any] | None = None,
        vllm: Any = None,
    ):
        if not model.startswith(PREFIX) or len(model) == len(PREFIX):
            raise ValueError(f"a vLLM model is written vllm/<path or name>, not {model!r}")
        if response_format not in ("auto", "json_schema", "none"):
            raise ValueError(f"response format {response_format!r}: vllm/ models take auto, json_schema or none")
        check_seed(seed, "--seed")
        for name, size in (("tensor_parallel_size", tensor_parallel_size), ("data_parallel_size", data_parallel_size)):
            if type(size) is not int or size < 1:
                raise ValueError(f"{name} is a whole number of at least 1, not {size!r}")
        if data_parallel_size > 1:
            raise ValueError(
                f"data_parallel_size={data_parallel_size}: vLLM runs one data-parallel rank per process "
                "(LLM(data_parallel_size>1) is not supported in a single process); for replicas, run "
                f"`vllm serve {model[len(PREFIX) :]} --data-parallel-size {data_parallel_size}` and "
                "--model hosted_vllm/NAME --api-base URL, or one medvqa run per GPU"
            )
        if type(batch_size) is not int or batch_size < 1:
            raise ValueError(f"batch_size is a whole number of at least 1, not {batch_size!r}")
        engine_options = dict(engine_options or {})
        for key in sorted(set(engine_options) & set(OWN_ENGINE_KEYS)):
            raise ValueError(f"engine option {key}: {OWN_ENGINE_KEYS[key]}")
        params = dict(params or {})
        unknown = sorted(set(params) - SAMPLING_KEYS)
        if unknown:
            hint = " (set by response_format)" if "structured_outputs" in unknown else ""
            raise ValueError(
                f"{', '.join(unknown)}: not a vLLM SamplingParams keyword{hint}; "
                f"vllm/ models take: {', '.join(sorted(SAMPLING_KEYS))}"
            )
        if params.get("n", 1) != 1:
            raise ValueError(f"n={params['n']!r}: one answer is read per request; ask again with --repeats")
        if params.get("seed") is not None:
            check_seed(params["seed"], "params.seed")
        self.model = model
        self.name = model[len(PREFIX) :]
        sampling: dict[str, Any] = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens or 2048}
        sampling.update(params)
        self._sampling = {k: v for k, v in sampling.items() if v is not None}
        self._structured = response_format != "none"
        self.params: dict[str, Any] = {**self._sampling}
        if self._structured:
            self.params["structured_outputs"] = {"json": ANSWER_SCHEMA}
        if engine_options:
            self.params["engine"] = dict(sorted(engine_options.items()))  # dtype, quantization, ... change outputs
        if max_image_side:
            self.params["max_image_side"] = max_image_side
        self.engine_options = engine_options
        self.tensor_parallel_size, self.batch_size = tensor_parallel_size, batch_size
        self.max_image_side = max_image_side
        self.seed = seed
        self.reasoning_parser = reasoning_parser(engine_options)
        # which engine of the process answers: the same key, the same `vllm.LLM` (`vllm_engines`)
        self.engine_key = json.dumps(
            {
                "model": self.name,
                "tensor_parallel_size": tensor_parallel_size,
                "data_parallel_size": data_parallel_size,
                "engine_options": engine_options,
            },
            sort_keys=True,
            default=str,
        )
        self.settings = {"backend": "vllm", "tensor_parallel_size": tensor_parallel_size, "batch_size": batch_size}
        self.stats: dict[str, Any] = {
            "in_flight": 0,
            "retries": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost_usd": 0.0,
        }
        self._vllm = vllm
        self._by_schema: dict[str, Any] = {}  # the SamplingParams of each answer schema, made once

    @property
    def vllm(self) -> SimpleNamespace:
        """vLLM's names (`import_vllm`), imported on first use."""
        if self._vllm is None:
            self._vllm = import_vllm()
        return self._vllm

    def preflight(self) -> None:
        """The installed vLLM's own check of the generation parameters (its `SamplingParams`
        refuses a keyword it lacks, a value out of range), before the engine loads."""
        try:
            self._sampling_params()
        except (TypeError, ValueError) as exc:
            raise PreflightError(f"{self.model}: vLLM refuses the generation parameters: {exc}") from None

    def _build(self) -> Any:
        return self.vllm.LLM(
            model=self.name, tensor_parallel_size=self.tensor_parallel_size, seed=0, **self.engine_options
        )

    def _sampling_params(self, schema: dict | None = None) -> Any:
        """The `SamplingParams` of a request answering in `schema` (None: the default answer)."""
        tag = json.dumps(schema, sort_keys=True) if schema is not None else ""
        made = self._by_schema.get(tag)
        if made is None:
            extra = {}
            if self._structured:
                extra["structured_outputs"] = self.vllm.StructuredOutputsParams(json=schema or ANSWER_SCHEMA)
            made = self._by_schema[tag] = self.vllm.SamplingParams(**self._sampling, **extra)
        return made

    def _sampling_for(self, batch: list[tuple[Request, list[dict]]]) -> Any:
        """One `SamplingParams` for the batch, or one per conversation (the same length) when a
        benchmark's answer schema differs from the default in it."""
        if not self._structured or all(req.response_schema is None for req, _ in batch):
            return self._sampling_params()
        return [self._sampling_params(req.response_schema) for req, _ in batch]

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        self._sampling_params()  # a parameter vLLM refuses fails here, before the engine is built
        llm = ENGINES.acquire(self.engine_key, self._build, self.vllm.cleanup)
        try:
            batch: list[tuple[Request, list[dict]]] = []
            for req in requests:
                try:
                    batch.append((req, to_openai(req.messages, self.max_image_side)))
                except ImageError as exc:
                    yield req, Response(error=str(exc))
                if len(batch) >= self.batch_size:
                    yield from self._run(llm, batch)
                    batch = []
            if batch:
                yield from self._run(llm, batch)
        finally:
            llm = None  # the pool holds the last reference: it can shut the engine down
            ENGINES.release(self.engine_key)

    def _run(self, llm: Any, batch: list[tuple[Request, list[dict]]]) -> Iterator[tuple[Request, Response]]:
        self.stats["in_flight"] = len(batch)
        started = time.monotonic()
        try:
            outputs = llm.chat([conv for _, conv in batch], sampling_params=self._sampling_for(batch), use_tqdm=False)
            if len(outputs) != len(batch):
                raise RuntimeError(f"vLLM gave {len(outputs)} outputs for {len(batch)} conversations")
        except Exception as exc:
            self.stats["in_flight"] = 0
            if len(batch) == 1:
                yield batch[0][0], Response(error=error_text(exc), latency_s=time.monotonic() - started)
                return
            middle = (len(batch) + 1) // 2  # halves, until the failing conversations stand alone
            yield from self._run(llm, batch[:middle])
            yield from self._run(llm, batch[middle:])
            return
        per_item = (time.monotonic() - started) / len(batch)
        self.stats["in_flight"] = 0
        for (req, _), out in zip(batch, outputs, strict=True):
            yield req, self._read(out, per_item)

    def _read(self, out: Any, latency_s: float) -> Response:
        completion = out.outputs[0]
        prompt, generated = len(out.prompt_token_ids or ()), len(completion.token_ids or ())
        usage: dict[str, int | float | None] = {"prompt_tokens": prompt, "completion_tokens": generated}
        self.stats["prompt_tokens"] += prompt
        self.stats["completion_tokens"] += generated
        finish = completion.finish_reason
        if finish not in ANSWERS + CUT_OFF:
            return Response(
                error=f"vLLM ended the request without an answer (finish_reason {finish!r})",
                usage=usage,
                latency_s=latency_s,
            )
        return Response(
            text=completion.text,
            usage=usage,
            latency_s=latency_s,
            finish_reason="length" if finish in CUT_OFF else None,
        )

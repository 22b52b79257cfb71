"""The backend's options of `medvqa run`, in four groups (cli/run_options.py has the others): where
its requests go and how (`requests`), what each asks the model for (`generation`), the vLLM
engine (`vllm_engine`), and the same options as data (`backend_as_data`: `-M KEY=VALUE` and a
model config file, whose help names "the options above"). Their values reach the run as one
`BackendFlags`, resolved for the model's backend.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

from .run_options import OptionValues, finite, option_group, server_urls


def _price(ctx: click.Context, param: click.Parameter, text: str | None) -> tuple[float, float] | None:
    """`--price IN,OUT`: two finite numbers from 0 (a cost is never negative, NaN or infinite)."""
    if text is None:
        return None
    try:
        prompt, completion = (float(x) for x in text.split(","))
    except ValueError:
        raise click.BadParameter(f"expected IN,OUT (USD per million tokens), got {text!r}") from None
    if not all(math.isfinite(x) and x >= 0 for x in (prompt, completion)):
        raise click.BadParameter(f"prices are finite numbers from 0 (USD per million tokens), got {text!r}")
    return prompt, completion


def _key_values(pairs: Sequence[str], option: str) -> dict[str, Any]:
    """`KEY=VALUE` pairs; a value is read as JSON when it parses (0.5, true, null, {...})."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint=option)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


# where the requests go, how many at once, how long each may take, how failures are retried, what they cost
requests = option_group(
    click.option(
        "--api-base",
        multiple=True,
        metavar="URL",
        callback=server_urls,
        help="Server URL (OpenAI-compatible, e.g. http://host:8000/v1). Repeat to load-balance over several.",
    ),
    click.option(
        "--model-list",
        type=click.Path(exists=True, dir_okay=False, path_type=str),
        help="YAML model list (litellm Router format) of deployments to load-balance over.",
    ),
    click.option("--concurrency", type=click.IntRange(min=1), help="Requests in flight at once (default 16)."),
    click.option(
        "--rpm",
        type=click.FloatRange(min=0, min_open=True),
        callback=finite,
        help="At most this many requests per minute.",
    ),
    click.option(
        "--workers", type=click.IntRange(min=1), help="Processes sending requests (when one core is the limit)."
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        callback=finite,
        help="Seconds per request in all, however slowly the answer arrives (default 120).",
    ),
    click.option(
        "--max-retries",
        type=click.IntRange(min=0),
        help="Retries after a 429, 5xx, timeout or connection error (default 6).",
    ),
    click.option(
        "--retry-wait",
        type=click.FloatRange(min=0),
        callback=finite,
        help="First backoff bound in seconds; doubles per retry (default 1).",
    ),
    click.option(
        "--max-retry-wait",
        type=click.FloatRange(min=0),
        callback=finite,
        help="The longest wait in seconds before a retry that a server asks for with Retry-After (default 900); "
        "a long wait is said on stderr.",
    ),
    click.option(
        "--price", metavar="IN,OUT", callback=_price, help="USD per million prompt and completion tokens, for the cost."
    ),
)

# what each request asks the model for
generation = option_group(
    click.option("--temperature", type=float, callback=finite, help="Sampling temperature (default 0)."),
    click.option("--max-tokens", type=click.IntRange(min=1), help="Completion token limit."),
    click.option(
        "--param",
        "params",
        multiple=True,
        metavar="KEY=VALUE",
        help="Any other generation parameter (JSON value); KEY=null removes a default.",
    ),
    click.option(
        "--response-format",
        type=click.Choice(["auto", "json_schema", "json_object", "none"]),
        help="Structured JSON output (default auto: where the provider supports it).",
    ),
    click.option(
        "--max-image-side", type=click.IntRange(min=16), help="Downscale images to at most this many pixels per side."
    ),
)

# the engine of vllm/ models, on local GPUs
vllm_engine = option_group(
    click.option("--tensor-parallel-size", type=click.IntRange(min=1), help="GPUs per model (vllm/ models)."),
    click.option(
        "--batch-size", type=click.IntRange(min=1), help="Conversations per vLLM batch (vllm/ models, default 512)."
    ),
    click.option(
        "--engine-option",
        "engine_options",
        multiple=True,
        metavar="KEY=VALUE",
        help="vllm.LLM(...) argument, e.g. max_model_len=8192 (vllm/ models).",
    ),
)

# the same options as data; their help names the options above, so they come last
backend_as_data = option_group(
    click.option(
        "-M",
        "--model-option",
        "model_options",
        multiple=True,
        metavar="KEY=VALUE",
        help="Any backend option as data, repeatable: the options above in Python spelling "
        "(-M temperature=0.2, -M api_base=URL, -M concurrency=64, -M params.top_p=0.9, "
        "-M engine_options.max_model_len=8192), JSON values. A flag and -M for the same key is an "
        "error; credentials are read from the environment, never given here.",
    ),
    click.option(
        "--model-config",
        metavar="FILE",
        type=click.Path(dir_okay=False, path_type=str),
        help="Backend options from a JSON, TOML or YAML file (the keys of -M); -M and the flags override it.",
    ),
)


@dataclass(frozen=True)
class BackendFlags(OptionValues):
    """The backend's options as the four groups above give them: the flags, `-M` pairs and a
    model config file."""

    api_base: tuple[str, ...]
    model_list: str | None
    concurrency: int | None
    rpm: float | None
    timeout: float | None
    max_retries: int | None
    retry_wait: float | None
    max_retry_wait: float | None
    max_image_side: int | None
    price: tuple[float, float] | None
    temperature: float | None
    max_tokens: int | None
    params: tuple[str, ...]
    response_format: str | None
    workers: int | None
    tensor_parallel_size: int | None
    batch_size: int | None
    engine_options: tuple[str, ...]
    model_options: tuple[str, ...]
    model_config: str | None

    def flags(self) -> dict[str, Any]:
        """Only the flags the user gave: each backend rejects those that do not apply to it."""
        given = {
            "api_base": list(self.api_base) or None,
            "model_list": self.model_list,
            "concurrency": self.concurrency,
            "rpm": self.rpm,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "retry_wait": self.retry_wait,
            "max_retry_wait": self.max_retry_wait,
            "max_image_side": self.max_image_side,
            "price": self.price,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "params": _key_values(self.params, "--param") or None,
            "response_format": self.response_format,
            "workers": self.workers,
            "tensor_parallel_size": self.tensor_parallel_size,
            "batch_size": self.batch_size,
            "engine_options": _key_values(self.engine_options, "--engine-option") or None,
        }
        return {k: v for k, v in given.items() if v is not None}

    def resolve(self, model: str) -> dict[str, Any]:
        """The options of `model`'s backend: the model config file, `-M` over it, the flags over
        both (`core.inference.backend_options.resolve`)."""
        from medvqa.core.inference import backend_options as options_as_data

        flags = self.flags()
        config = options_as_data.read_model_config(self.model_config) if self.model_config else {}
        return options_as_data.resolve(
            model, flags, options_as_data.parse_model_options(self.model_options), config, self.model_config
        )

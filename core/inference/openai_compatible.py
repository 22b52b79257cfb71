"""Requests to OpenAI-compatible servers straight through the `openai` SDK.

The litellm backend sends `openai/NAME` and `hosted_vllm/NAME` models at an `--api-base` (vLLM,
SGLang, llama.cpp, a proxy: the chat-completions protocol most servers speak) through
`openai.AsyncOpenAI`, one client per server and event loop, instead of `litellm.acompletion`.
litellm spends about half as much CPU again per request as the SDK it wraps, on machinery
medvqa does not use (a logging object per call, its cost calculator, a thread hop to build
the request), and none of its public settings removes that: measured in docs/scaling.md.
Every other provider, a `--model-list` (litellm's Router) and any model litellm would send
differently stay with litellm.

What is sent is what litellm would send. `direct_call` asks litellm once, when the first
request is about to leave: the parameters it would send (`get_optional_params`, which renames
`max_tokens` for reasoning models, for instance), the body its provider configuration builds
from a conversation of every shape medvqa sends (system text, user text and image, assistant
text), and the URL it would post to. The direct path is taken only where these are the plain
OpenAI body and URL: a model whose messages litellm rewrites (o-series system prompts), a
parameter litellm sends elsewhere than the body (`extra_headers`), a streamed answer or a URL
it would post to as given go through litellm. The API key is the one litellm would use: `OPENAI_API_KEY` for
`openai/` (without it, litellm sends and reports), `HOSTED_VLLM_API_KEY` or litellm's
placeholder for `hosted_vllm/`. The client's own retries are off (`PROVIDER_CLIENT_RETRIES`)
and its timeout is the request timeout; `retry.failure_kind` classifies the SDK's errors.
"""

from __future__ import annotations

import asyncio
import copy
import os
import weakref
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .retry import PROVIDER_CLIENT_RETRIES

if TYPE_CHECKING:
    from litellm.types.llms.openai import AllMessageValues

DIRECT_PROVIDERS = ("openai", "hosted_vllm")
# One message of every shape medvqa sends (`images.to_openai`): litellm must send them unchanged.
SAMPLE_MESSAGES: list[AllMessageValues] = [
    {"role": "system", "content": "You answer medical licensing exam questions."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Question 1. Choose one: a, b."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ],
    },
    {"role": "assistant", "content": '{"answer": ["a"]}'},
    {"role": "user", "content": "Question 2. Choose one: a, b."},
]
HOSTED_VLLM_PLACEHOLDER_KEY = "fake-api-key"  # what litellm presents to a server without a key


@dataclass
class DirectCall:
    """How to send a model's requests through the SDK: the model name the server is sent, the
    body's parameters, the API key and the per-token prices (USD) litellm knows for it."""

    model: str
    params: dict[str, Any]
    api_key: str
    timeout: float
    price_per_token: tuple[float, float] = (0.0, 0.0)
    _clients: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary, repr=False)

    def client(self, api_base: str):
        """The `openai.AsyncOpenAI` of `api_base` on the running event loop (an HTTP client
        belongs to the loop it first ran on)."""
        per_loop = self._clients.setdefault(asyncio.get_running_loop(), {})
        found = per_loop.get(api_base)
        if found is None:
            import openai

            found = per_loop[api_base] = openai.AsyncOpenAI(
                base_url=api_base, api_key=self.api_key, max_retries=PROVIDER_CLIENT_RETRIES, timeout=self.timeout
            )
        return found

    async def complete(self, api_base: str, messages: list[dict], response_format: dict | None = None):
        """One chat completion (the SDK's `ChatCompletion`); `response_format` replaces the
        parameters' own. The body goes out as it is, through the client's `post` (the SDK's way
        to an endpoint as given): `chat.completions.create` would first walk every message,
        base64 images included, to convert types medvqa never sends (a quarter of its CPU)."""
        from openai.types.chat import ChatCompletion

        body = {"model": self.model, "messages": messages, **self.params}
        if response_format is not None:
            body["response_format"] = response_format
        return await self.client(api_base).post("/chat/completions", body=body, cast_to=ChatCompletion)


def direct_call(
    litellm: ModuleType, target: str, params: dict[str, Any], api_bases: list[str], *, timeout: float
) -> DirectCall | None:
    """A `DirectCall` for `target` at `api_bases` with the generation `params`, where litellm
    would send the plain OpenAI request (see the module's docstring); None otherwise."""
    if not api_bases or params.get("stream") or any(n.startswith("extra_") and n != "extra_body" for n in params):
        return None
    try:
        model, provider, _, _ = litellm.get_llm_provider(target)
        if provider not in DIRECT_PROVIDERS:
            return None
        from litellm.utils import ProviderConfigManager

        config = ProviderConfigManager.get_provider_chat_config(model=model, provider=litellm.LlmProviders(provider))
        if config is None:
            return None
        optional = litellm.get_optional_params(model=model, custom_llm_provider=provider, **params)
        body = config.transform_request(
            model=model,
            messages=copy.deepcopy(SAMPLE_MESSAGES),
            optional_params=dict(optional),
            litellm_params={},
            headers={},
        )
        urls = [
            config.get_complete_url(
                api_base=url, api_key=None, model=model, optional_params=dict(optional), litellm_params={}
            )
            for url in api_bases
        ]
    except Exception:  # litellm cannot say what it would send: let it send
        return None
    send = flat_body(optional)
    if flat_body(body) != {"model": model, "messages": SAMPLE_MESSAGES, **send}:
        return None
    if any(url != base.rstrip("/") + "/chat/completions" for url, base in zip(urls, api_bases)):
        return None
    api_key = _api_key(litellm, provider)
    if api_key is None:
        return None
    return DirectCall(
        model=model, params=send, api_key=api_key, timeout=timeout, price_per_token=_price_per_token(litellm, target)
    )


def flat_body(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters as they stand in the JSON body: `extra_body` merged in, `stream: false` (the
    default) left out."""
    out = {k: v for k, v in params.items() if k != "extra_body" and not (k == "stream" and v is False)}
    out.update(params.get("extra_body") or {})
    return out


def _api_key(litellm: ModuleType, provider: str) -> str | None:
    if provider == "openai":
        return litellm.api_key or litellm.openai_key or os.environ.get("OPENAI_API_KEY") or None
    return litellm.api_key or os.environ.get("HOSTED_VLLM_API_KEY") or HOSTED_VLLM_PLACEHOLDER_KEY


def _price_per_token(litellm: ModuleType, target: str) -> tuple[float, float]:
    try:
        info = litellm.get_model_info(target)
    except Exception:
        return (0.0, 0.0)
    return (float(info.get("input_cost_per_token") or 0.0), float(info.get("output_cost_per_token") or 0.0))

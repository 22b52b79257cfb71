"""The litellm backend: any litellm model string (`openai/gpt-5`, `anthropic/...`,
`gemini/...`, `hosted_vllm/<name>` with `--api-base`), on several servers taken in turn
(`--api-base` repeated: `router.RoundRobin`) or behind litellm's Router (`--model-list FILE`).
`openai/...` and `hosted_vllm/...` models at an `--api-base` are sent through the `openai` SDK
where litellm would send the same request (`openai_compatible.py`: less CPU per request,
docs/scaling.md); everything else through litellm.

Calls run asynchronously, `concurrency` at a time, optionally paced to `rpm` requests per
minute, each with a total deadline and our own retry policy (`retry.py`: litellm's
`num_retries` is never used, and the provider client's own retries are off). A request that still fails is returned with its error text, never dropped.
Generation parameters are all in `params`, hence in the manifest and in every request key:
by default temperature 0 and the seed, each only where litellm says the model takes it at
that value (`params_left_out` says which were left out and why), and JSON output where the
provider supports `response_format`. The provider and the server are in `endpoint`, also in
every request key; how the run was executed (concurrency, timeouts, prices) is in `settings`.
`preflight()` checks the model, the credentials and the server with one request per server.
API keys are read by litellm from the environment and scrubbed from every response and error
text, with every credential the run was given (`secrets.py`).
litellm is imported here, when a request is really sent (or the preflight runs), never at CLI
start-up: what the backend's parameters need of litellm is remembered per litellm version
(`model_names.recall_answers`), so a re-run answered from the response cache never imports it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from ..usage import token_count, usage_cost
from .base import Backend, Request, Response
from .concurrency import Pacer, bounded
from .images import ImageError, to_openai
from .model_names import check_before_import, recall_answers, remember_answers, remember_names
from .openai_compatible import HOSTED_VLLM_PLACEHOLDER_KEY, DirectCall, direct_call
from .output import ANSWER_SCHEMA, error_text, writable_text
from .preflight import check_provider, check_reachable, probe
from .reasoning import message_reasoning, reasoning_tokens
from .retry import MAX_RETRY_AFTER_S, PROVIDER_CLIENT_RETRIES, TRANSIENT, RetryPolicy, failure_kind, with_retries
from .router import RoundRobin, credential_values, deployments_for, load_model_list, resolve_env, underlying_model
from .secrets import Scrubber, credential_entries, remember, remember_params, remember_url, without_userinfo
from .secrets import redact_url as _redact_url

DEFAULT_CONCURRENCY = 16
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_TEMPERATURE = 0
RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")
# Request settings litellm would take as parameters, which medvqa owns (attempts are counted in one place).
_NOT_PARAMS = {"max_retries": "--max-retries", "num_retries": "--max-retries", "timeout": "--timeout"}


@functools.cache
def import_litellm():
    """Import litellm with the local price map and without its console chatter, once per
    process, and remember the names it knows for the checks made before importing it
    (`model_names`)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    # an attempt cancelled at its deadline may leave the coroutine litellm built in a worker
    # thread never awaited; Python would say so at exit, after the run's last line
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
    # litellm copies a hostile answer's fields (a NaN token count) before refusing them: the
    # refusal is reported once, as an unreadable answer, not as pydantic's warning besides
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    remember_names(litellm)
    return litellm


def check_model(model: str, *, api_base: Any = None, model_list: str | None = None, **_: Any) -> None:
    """The checks of a model string that need no litellm (`model_names.check_before_import`),
    made before a run loads anything: a misspelt provider or backend, a provider key missing
    from the environment (not with a server of one's own, `api_base`). Raises PreflightError.
    A model list's deployments are checked by litellm. (Building a backend checks the name
    only: a backend can be built to read its parameters without a key.)"""
    if not model_list:
        check_before_import(model, backends=_backend_names(), api_base=bool(api_base))


def _backend_names() -> list[str]:
    from .. import plugins

    return sorted(plugins.backends())


class UnreadableResponse(Exception):
    """A 2xx answer without a usable completion (retried like a server error)."""

    status_code = 200


class LiteLLMBackend(Backend):
    cacheable = True
    check_model = staticmethod(check_model)
    _litellm = None
    _unregistered: tuple[str, ...] = ()  # models whose price litellm is still to be told on import

    @property
    def litellm(self):
        """litellm, imported on first use (`import_litellm`), with the prices of this backend's
        models registered."""
        if self._litellm is None:
            self._litellm = import_litellm()
            pending, self._unregistered = self._unregistered, ()
            for target in pending:
                self._register_price(target)
        return self._litellm

    def __init__(
        self,
        model: str,
        *,
        seed: int = 0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        params: dict[str, Any] | None = None,
        response_format: str = "auto",
        api_base: str | list[str] | tuple[str, ...] | None = None,
        model_list: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        rpm: float | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 6,
        retry_wait: float = 1.0,
        max_retry_wait: float = MAX_RETRY_AFTER_S,
        max_image_side: int | None = None,
        price: tuple[float, float] | None = None,
        workers: int = 1,
        reasoning_effort: str | None = None,
    ):
        self._options = {k: v for k, v in locals().items() if k not in ("self", "model", "__class__")}
        if reasoning_effort is not None:  # a generation parameter like any in `params` (the same request key)
            if (params or {}).get("reasoning_effort", reasoning_effort) != reasoning_effort:
                raise ValueError("reasoning_effort is given twice (as an option and in params), with two values")
            params = {**(params or {}), "reasoning_effort": reasoning_effort}
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response format {response_format!r}: choose from {', '.join(RESPONSE_FORMATS)}")
        if concurrency < 1 or workers < 1:
            raise ValueError("concurrency and workers must be at least 1")
        api_bases = [api_base] if isinstance(api_base, str) else list(api_base or [])
        if not model_list:  # a misspelt name, before the seconds of litellm's import (keys: `check_model`, on runs)
            check_before_import(model, backends=_backend_names(), keys=False)
        self.model = model
        if api_bases and model_list:
            raise ValueError("give the servers either with --api-base or in --model-list, not both")
        self._deployments, router_settings = load_model_list(model_list) if model_list else ([], {})
        for url in api_bases + [d["litellm_params"].get("api_base") for d in self._deployments]:
            remember_url(url)
        for value in credential_values(self._deployments):
            remember(value)
        remember_params(params)
        self._scrub = Scrubber()  # every answer is scrubbed of the credentials known now
        self._use_router = bool(model_list)  # a model list names a routing policy; repeated --api-base none
        self._spread = RoundRobin(api_bases) if len(api_bases) > 1 else None
        if len(api_bases) > 1:
            self._deployments += deployments_for(model, api_bases)
        self._router_settings = {"routing_strategy": "simple-shuffle", **router_settings}
        self._api_base = api_bases[0] if len(api_bases) == 1 and not self._deployments else None
        target = underlying_model(model, self._deployments) if self._deployments else model
        targets = sorted({d["litellm_params"]["model"] for d in self._deployments} or {target})
        self.price = tuple(price) if price else None
        said = self._litellm_says(targets, target, temperature, seed, response_format)
        self.endpoint = self._endpoint(said["providers"][target])
        self._send, self.params_left_out = self._generation_params(said, temperature, seed, max_tokens, params)
        self.params = {**self._send, **({"max_image_side": max_image_side} if max_image_side else {})}

        self.concurrency, self.workers = concurrency, workers
        self.timeout, self.max_image_side = timeout, max_image_side
        self.retry = RetryPolicy(max_retries=max_retries, base_s=retry_wait, max_retry_after_s=max_retry_wait)
        self._quiet_until = 0.0  # no other wait is said before then (`_notice`)
        price_source = said["price_source"]
        self._pacer = Pacer(rpm) if rpm else None
        self._router = None
        self._direct: DirectCall | None = None
        self._direct_decided = False
        self.stats: dict[str, Any] = {
            "in_flight": 0,
            "retries": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "reasoning_tokens": 0,
            "cost_usd": 0.0,
        }
        self.settings = {
            "backend": "litellm",
            "concurrency": concurrency,
            "workers": workers,
            "rpm": rpm,
            "timeout_s": timeout,
            "max_retries": max_retries,
            "retry_wait_s": retry_wait,
            "max_retry_wait_s": max_retry_wait,
            "price_per_million": list(self.price or ()) or None,
            "api_base": _redact_url(self._api_base) if self._api_base else None,
            "deployments": [
                {
                    "model_name": d["model_name"],
                    "model": d["litellm_params"]["model"],
                    "api_base": _redact_url(d["litellm_params"].get("api_base")),
                }
                for d in self._deployments
            ],
            "router_settings": self._router_settings if self._use_router else None,
            "routing": "litellm router" if self._use_router else ("round-robin" if self._spread else None),
            "model_list": str(model_list) if model_list else None,
            "price_source": price_source,
        }

    # -- parameters -------------------------------------------------------------------

    def _litellm_says(
        self, targets: list[str], target: str, temperature: float | None, seed: int, response_format: str
    ) -> dict[str, Any]:
        """What litellm says of the models that the parameters depend on: {"providers": {model:
        provider}, "refused": {default parameter: why litellm would refuse it}, "format": the
        response format to send, "price_source": {model: `_register_price`}}. Asked of litellm
        once per litellm version and question, then remembered (`model_names.recall_answers`): a
        backend built again has them without importing litellm, and tells litellm the prices
        when it imports it. An unknown model is never remembered: it raises PreflightError."""
        question = {
            "targets": targets,
            "target": target,
            "defaults": self._defaults(temperature, seed),
            "response_format": response_format,
            "price": self.price is not None,
        }
        said = recall_answers(question, keys=("providers", "refused", "format", "price_source"))
        if said is not None and target in said["providers"]:
            self._unregistered = tuple(targets)
            return said
        providers = {t: check_provider(self.litellm, t) for t in targets}
        supported = self._supported_params(target)
        refused = {
            name: why
            for name, value in self._defaults(temperature, seed).items()
            if (why := self._refusal(target, supported, name, value))
        }
        said = {
            "providers": providers,
            "refused": refused,
            "format": self._response_format(response_format, target, supported),
            "price_source": {t: self._register_price(t) for t in targets},
        }
        remember_answers(question, said)
        return said

    @staticmethod
    def _defaults(temperature: float | None, seed: int) -> dict[str, Any]:
        return {"seed": seed} if temperature is not None else {"temperature": DEFAULT_TEMPERATURE, "seed": seed}

    def _generation_params(
        self,
        said: dict[str, Any],
        temperature: float | None,
        seed: int,
        max_tokens: int | None,
        params: dict[str, Any] | None,
    ) -> tuple[dict, dict[str, str]]:
        """(what every request sends, {default left out: why}). The default temperature and the
        seed are sent only where litellm lists them among the model's parameters and accepts
        their value for it (gpt-5 and o-series models take no temperature 0: `said["refused"]`);
        a temperature the user gave is sent as given. Extra `params` are sent as given; a None
        value removes a default."""
        send: dict[str, Any] = {} if temperature is None else {"temperature": temperature}
        left_out: dict[str, str] = {}
        for name, value in self._defaults(temperature, seed).items():
            why = said["refused"].get(name)
            if why:
                left_out[name] = why
            else:
                send[name] = value
        if max_tokens is not None:
            send["max_tokens"] = max_tokens
        if said["format"] == "json_object":
            send["response_format"] = {"type": "json_object"}
        elif said["format"] == "json_schema":
            send["response_format"] = json_schema_format(ANSWER_SCHEMA)
        for path, _, by_name in credential_entries(params or {}):
            if by_name:
                raise ValueError(f"--param {path}: secrets are read from the environment, never passed as parameters")
        for name, value in (params or {}).items():
            if name in _NOT_PARAMS:
                raise ValueError(f"--param {name}: not a generation parameter; use {_NOT_PARAMS[name]}")
            if value is None:
                if send.pop(name, None) is not None:
                    left_out[name] = f"removed with --param {name}=null"
            else:
                send[name] = value
                left_out.pop(name, None)
        return send, left_out

    def _refusal(self, target: str, supported: set[str] | None, name: str, value: Any) -> str | None:
        """Why litellm would refuse `name=value` for `target` (None: it takes it)."""
        if supported is not None and name not in supported:
            return f"not among the parameters litellm supports for {target}"
        try:
            model, provider, _, _ = self.litellm.get_llm_provider(target)
            self.litellm.get_optional_params(model=model, custom_llm_provider=provider, **{name: value})
        except self.litellm.UnsupportedParamsError as exc:
            text = str(getattr(exc, "message", exc)).removeprefix("litellm.UnsupportedParamsError: ")
            return "litellm: " + " ".join(text.split("To drop")[0].split())
        except Exception:  # litellm cannot check this model: send the parameter and let it answer
            return None
        return None

    def _endpoint(self, provider: str) -> dict[str, Any]:
        """Where requests go, as far as it can change an answer (part of every request key):
        the provider and the server (--api-base, else the provider's base-URL environment
        variable, else the provider's default), or every deployment of a model list."""
        if self._deployments:
            return {
                "deployments": sorted(
                    [d["litellm_params"]["model"], _server(d["litellm_params"].get("api_base"))]
                    for d in resolve_env(self._deployments)
                )
            }
        variables = (f"{provider.upper()}_API_BASE", f"{provider.upper()}_BASE_URL")
        from_env = next((os.environ[v] for v in variables if os.environ.get(v)), None)
        return {"provider": provider, "api_base": _server(self._api_base or from_env)}

    def _supported_params(self, target: str) -> set[str] | None:
        try:
            _, provider, _, _ = self.litellm.get_llm_provider(target)
            found = self.litellm.get_supported_openai_params(model=target, custom_llm_provider=provider)
        except Exception:  # an unknown provider: send the standard parameters and let it answer
            return None
        return set(found) if found is not None else None

    def _register_price(self, target: str) -> str | None:
        """Where the cost comes from: "--price", "litellm", or None (unknown: tokens only).
        Models litellm has no price for are registered (at --price, else at zero) so that its
        per-call cost lookup finds them at once instead of searching its whole price map."""
        try:
            known = self.litellm.get_model_info(target).get("input_cost_per_token") is not None
        except Exception:
            known = False
        if not known or self.price:
            try:
                _, provider, _, _ = self.litellm.get_llm_provider(target)
            except Exception:
                return "--price" if self.price else None
            p_in, p_out = self.price or (0.0, 0.0)
            self.litellm.register_model(
                {
                    target: {
                        "input_cost_per_token": p_in / 1e6,
                        "output_cost_per_token": p_out / 1e6,
                        "litellm_provider": provider,
                        "mode": "chat",
                    }
                }
            )
        return "--price" if self.price else ("litellm" if known else None)

    def _response_format(self, choice: str, target: str, supported: set[str] | None) -> str | None:
        """The response format sent: "json_schema", "json_object" or None."""
        if choice == "none" or (choice == "auto" and (supported is None or "response_format" not in supported)):
            return None
        if choice == "auto":
            try:
                _, provider, _, _ = self.litellm.get_llm_provider(target)
                schema_ok = self.litellm.supports_response_schema(model=target, custom_llm_provider=provider)
            except Exception:
                schema_ok = False
            choice = "json_schema" if schema_ok else "json_object"
        return choice

    # -- calls ------------------------------------------------------------------------

    def preflight(self) -> None:
        """One small request per server with this run's parameters (see `preflight.py`)."""
        calls = [dict(d["litellm_params"]) for d in resolve_env(self._deployments)] or [
            {"model": self.model, **({"api_base": self._api_base} if self._api_base else {})}
        ]
        targets = [
            (f"{c['model']} at {_redact_url(c['api_base'])}" if c.get("api_base") else c["model"], c) for c in calls
        ]
        check_reachable([(where, c["api_base"]) for where, c in targets if c.get("api_base")], self.timeout)
        probe(self.litellm, targets, self._send, timeout=self.timeout, retry=self.retry, notice=self._notice)

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        if self.workers > 1:
            from .workers import spread

            options = {
                **self._options,
                "workers": 1,
                "rpm": self._options["rpm"] / self.workers if self._options["rpm"] else None,
            }
            build = functools.partial(LiteLLMBackend, self.model, **options)
            yield from spread(requests, build, self.workers, self.concurrency, self.stats)
        else:
            yield from bounded(requests, lambda r: self.acall(r.messages, r.response_schema), self.concurrency)

    async def acall(self, messages: list[dict], response_schema: dict | None = None) -> Response:
        """One request with retries; never raises for a failed request. A benchmark's
        `response_schema` replaces the default answer schema where a JSON schema is sent."""
        try:
            payload = to_openai(messages, self.max_image_side)
        except ImageError as exc:
            return Response(error=str(exc))
        tried: list[str | None] = []  # the server of each attempt
        self.stats["in_flight"] += 1
        try:
            done = await with_retries(
                lambda: self._answer(payload, response_schema, tried),
                self.retry,
                deadline_s=self.timeout,
                before=self._pacer.wait if self._pacer else None,
                on_retry=self._count_retry,
                notice=lambda line, wait: self._notice(f"{self._where(tried[-1])}: {line}", wait),
            )
        finally:
            self.stats["in_flight"] -= 1
        if done.error is not None:
            return Response(error=error_text(done.error, done.tries), latency_s=done.latency_s)
        return replace(done.value, latency_s=done.latency_s)

    def _count_retry(self, exc: Exception) -> None:
        self.stats["retries"] += 1

    def _where(self, server: str | None) -> str:
        return f"{self.model} at {_redact_url(server)}" if server else self.model

    def _notice(self, line: str, wait: float) -> None:
        """A long wait a server asked for (`retry.wait_notice`), on stderr: once for the requests
        that wait together (a wave of 429s at once), not once per request."""
        now = time.monotonic()
        if now >= self._quiet_until:
            self._quiet_until = now + wait
            print(f"medvqa: {line}", file=sys.stderr, flush=True)

    async def _answer(self, payload: list[dict], response_schema: dict | None, tried: list[str | None]) -> Response:
        """One attempt, at the next server in turn (another than the last attempt's, where there is one)."""
        server = self._spread.pick(avoid=tried[-1] if tried else None) if self._spread else self._api_base
        tried.append(server)
        try:
            response = self._read(await self._complete(payload, response_schema, server), 0.0)
        except asyncio.CancelledError:  # the attempt's deadline
            if self._spread:
                self._spread.failed(server)
            raise
        except Exception as exc:
            if self._spread and failure_kind(exc) in TRANSIENT:
                self._spread.failed(server)
            raise
        if self._spread:
            self._spread.answered(server)
        return response

    def _direct_call(self) -> DirectCall | None:
        """How the SDK sends this model's requests, or None: litellm does (decided once)."""
        if not self._direct_decided:
            servers = self._spread.servers if self._spread else [self._api_base] if self._api_base else []
            self._direct = (
                None
                if self._use_router
                else direct_call(self.litellm, self.model, self._send, servers, timeout=self.timeout)
            )
            if self._direct is not None and self._direct.api_key != HOSTED_VLLM_PLACEHOLDER_KEY:
                remember(self._direct.api_key)
            self._direct_decided = True
        return self._direct

    async def _complete(self, messages: list[dict], response_schema: dict | None = None, api_base: str | None = None):
        schema_format = None
        if response_schema is not None and (self._send.get("response_format") or {}).get("type") == "json_schema":
            schema_format = json_schema_format(response_schema)
        direct = self._direct_call()
        if direct is not None:
            try:
                return await direct.complete(api_base, messages, schema_format)
            except json.JSONDecodeError as exc:  # a 2xx whose body is not JSON
                raise UnreadableResponse(f"the answer is not JSON ({exc})") from None
        kwargs = {"messages": messages, "timeout": self.timeout, **self._send, "max_retries": PROVIDER_CLIENT_RETRIES}
        if schema_format is not None:
            kwargs["response_format"] = schema_format
        if self._use_router:
            if self._router is None:
                deployments = [
                    {**d, "litellm_params": {**d["litellm_params"], "max_retries": PROVIDER_CLIENT_RETRIES}}
                    for d in resolve_env(self._deployments)
                ]
                self._router = self.litellm.Router(model_list=deployments, num_retries=0, **self._router_settings)
            return await self._router.acompletion(model=self.model, **kwargs)
        if api_base:
            kwargs["api_base"] = api_base
        return await self.litellm.acompletion(model=self.model, **kwargs)

    def _read(self, result, latency_s: float) -> Response:
        """The completion's text (secrets scrubbed), with the reasoning the provider gave beside
        it (`reasoning.message_reasoning`) and the finish reason when it is `length`. A provider's
        refusal (`message.refusal`) is the text of a `refusal` response; an answer with neither
        content nor reasoning raises `UnreadableResponse`, so it is retried, then recorded as an
        error, never cached. Reasoning without content is an answer (the record says whether
        the reasoning was cut off)."""
        try:
            choice = result.choices[0]
            message = choice.message
            text = message.content
        except (AttributeError, IndexError, TypeError) as exc:
            raise UnreadableResponse(f"no completion in the answer ({exc})") from None
        refusal = getattr(message, "refusal", None)
        reasoning = message_reasoning(message)
        answered = isinstance(text, str) and bool(text.strip())
        if not answered and not (isinstance(refusal, str) and refusal.strip()) and reasoning is None:
            raise UnreadableResponse(f"the answer has no content (content: {text!r})")
        finish = getattr(choice, "finish_reason", None)
        usage = getattr(result, "usage", None)
        # a count the server does not give is 0; one it gives that is no count is None (null)
        tokens = {
            name: 0 if (n := getattr(usage, name, None)) is None else token_count(n)
            for name in ("prompt_tokens", "completion_tokens")
        }
        if (thought := reasoning_tokens(usage)) != 0:
            tokens["reasoning_tokens"] = thought
        for name, n in tokens.items():
            self.stats[name] = self.stats.get(name, 0) + (n or 0)
        if None in (tokens["prompt_tokens"], tokens["completion_tokens"]):
            cost = 0.0  # unknown: the record's usage says why
        elif self.price:
            cost = (tokens["prompt_tokens"] * self.price[0] + tokens["completion_tokens"] * self.price[1]) / 1e6
        elif self._direct is not None:  # litellm's price of the model, per token
            cost = (
                tokens["prompt_tokens"] * self._direct.price_per_token[0]
                + tokens["completion_tokens"] * self._direct.price_per_token[1]
            )
        else:
            cost = usage_cost((getattr(result, "_hidden_params", None) or {}).get("response_cost")) or 0.0
        self.stats["cost_usd"] += cost
        if cost:  # what this answer cost, so that any grouping of records sums it
            tokens["cost_usd"] = round(cost, 10)
        extra = {
            "reasoning": self._scrub(writable_text(reasoning)) if reasoning is not None else None,
            "finish_reason": "length" if finish == "length" else None,
        }
        if answered or reasoning is not None and not (isinstance(refusal, str) and refusal.strip()):
            return Response(
                text=self._scrub(writable_text(text if isinstance(text, str) else "")),
                usage=tokens,
                latency_s=latency_s,
                **extra,
            )
        return Response(
            text=self._scrub(writable_text(refusal)), refusal=True, usage=tokens, latency_s=latency_s, **extra
        )


def json_schema_format(schema: dict) -> dict:
    """The OpenAI `response_format` that asks for an object matching `schema`, strictly."""
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}


def _server(url: str | None) -> str | None:
    """A server URL as part of a request key: without user:password or a trailing slash."""
    return without_userinfo(url).rstrip("/") if url else None

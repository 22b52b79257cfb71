"""The litellm backend: any litellm model string (`openai/gpt-5`, `anthropic/...`,
`gemini/...`, `hosted_vllm/<name>` with `--api-base`), on several servers taken in turn
(`--api-base` repeated: `router.RoundRobin`) or behind litellm's Router (`--model-list FILE`).
`openai/...` and `hosted_vllm/...` models at an `--api-base` are sent through the `openai` SDK
where litellm would send the same request (`openai_compatible.py`: less CPU per request,
docs/scaling.md); everything else through litellm.

Calls run asynchronously, `concurrency` at a time, optionally paced to `rpm` requests per
minute, each with a total deadline and our own retry policy (`retry.py`: litellm's
`num_retries` is never used, and the provider client's own retries are off). A request that
still fails is returned with its error text, never dropped; an answer is read into a `Response`
by `completion.py`.
Generation parameters are all in `params`, hence in the manifest and in every request key:
by default temperature 0 and the seed, each only where litellm says the model takes it at
that value (`params_left_out` says which were left out and why), and JSON output where the
provider supports `response_format` (`litellm_params.py`). The provider and the server are in
`endpoint`, also in every request key; how the run was executed (concurrency, timeouts, prices)
is in `settings`. `preflight()` checks the model, the credentials and the server with one
request per server. API keys are read by litellm from the environment and scrubbed from every
response and error text, with every credential the run was given (`secrets.py`).
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
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from .base import Backend, Request, Response
from .completion import UnreadableResponse, read_completion
from .concurrency import Pacer, bounded
from .images import ImageError, to_openai
from .litellm_params import ask_litellm, default_params, endpoint, json_schema_format, register_price, request_params
from .model_names import check_before_import, recall_answers, remember_answers, remember_names
from .openai_compatible import HOSTED_VLLM_PLACEHOLDER_KEY, DirectCall, direct_call
from .output import error_text
from .preflight import check_reachable, probe
from .retry import MAX_RETRY_AFTER_S, PROVIDER_CLIENT_RETRIES, TRANSIENT, RetryPolicy, failure_kind, with_retries
from .router import RoundRobin, credential_values, deployments_for, load_model_list, resolve_env, underlying_model
from .secrets import Scrubber, redact_url, remember, remember_params, remember_url

if TYPE_CHECKING:
    from litellm import Router

DEFAULT_CONCURRENCY = 16
DEFAULT_TIMEOUT_S = 120.0
RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")


@functools.cache
def import_litellm() -> ModuleType:
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


class LiteLLMBackend(Backend):
    cacheable = True
    check_model = staticmethod(check_model)
    _litellm: ModuleType | None = None
    _unregistered: tuple[str, ...] = ()  # models whose price litellm is still to be told on import

    @property
    def litellm(self) -> ModuleType:
        """litellm, imported on first use (`import_litellm`), with the prices of this backend's
        models registered."""
        if self._litellm is None:
            self._litellm = litellm = import_litellm()
            pending, self._unregistered = self._unregistered, ()
            for target in pending:
                register_price(litellm, target, self.price)
        return self._litellm

    @property
    def litellm_loaded(self) -> bool:
        """Whether this backend has used litellm yet (a backend built from remembered answers
        and answered from the cache never imports it)."""
        return self._litellm is not None

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
        self.deployments, router_settings = load_model_list(model_list) if model_list else ([], {})
        for url in api_bases + [d["litellm_params"].get("api_base") for d in self.deployments]:
            remember_url(url)
        for value in credential_values(self.deployments):
            remember(value)
        remember_params(params)
        self._scrub = Scrubber()  # every answer is scrubbed of the credentials known now
        self._use_router = bool(model_list)  # a model list names a routing policy; repeated --api-base none
        self._spread = RoundRobin(api_bases) if len(api_bases) > 1 else None
        if len(api_bases) > 1:
            self.deployments += deployments_for(model, api_bases)
        self._router_settings = {"routing_strategy": "simple-shuffle", **router_settings}
        self.api_base = api_bases[0] if len(api_bases) == 1 and not self.deployments else None
        target = underlying_model(model, self.deployments) if self.deployments else model
        targets = sorted({d["litellm_params"]["model"] for d in self.deployments} or {target})
        # USD per million prompt and completion tokens (a list read from JSON becomes the pair)
        self.price = cast("tuple[float, float]", tuple(price)) if price else None
        said = self._litellm_says(targets, target, temperature, seed, response_format)
        self.endpoint = endpoint(said["providers"][target], self.deployments, self.api_base)
        # what every request sends: `params` without medvqa's own `max_image_side`
        self.sent_params, self.params_left_out = request_params(said, temperature, seed, max_tokens, params)
        self.params = {**self.sent_params, **({"max_image_side": max_image_side} if max_image_side else {})}

        self.concurrency, self.workers = concurrency, workers
        self.timeout, self.max_image_side = timeout, max_image_side
        self.retry = RetryPolicy(max_retries=max_retries, base_s=retry_wait, max_retry_after_s=max_retry_wait)
        self._quiet_until = 0.0  # no other wait is said before then (`_notice`)
        price_source = said["price_source"]
        self._pacer = Pacer(rpm) if rpm else None
        self.router: Router | None = None  # litellm's, built for the first request of a model list
        # how the SDK sends this model's requests, once decided (`_direct_call`); None: litellm does
        self.direct: DirectCall | None = None
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
            "api_base": redact_url(self.api_base) if self.api_base else None,
            "deployments": [
                {
                    "model_name": d["model_name"],
                    "model": d["litellm_params"]["model"],
                    "api_base": redact_url(d["litellm_params"].get("api_base")),
                }
                for d in self.deployments
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
        """What litellm says of the models that the parameters depend on
        (`litellm_params.ask_litellm`). Asked of litellm once per litellm version and question,
        then remembered (`model_names.recall_answers`): a backend built again has them without
        importing litellm, and tells litellm the prices when it imports it. An unknown model is
        never remembered: it raises PreflightError."""
        defaults = default_params(temperature, seed)
        question = {
            "targets": targets,
            "target": target,
            "defaults": defaults,
            "response_format": response_format,
            "price": self.price is not None,
        }
        said = recall_answers(question, keys=("providers", "refused", "format", "price_source"))
        if said is not None and target in said["providers"]:
            self._unregistered = tuple(targets)
            return said
        said = ask_litellm(self.litellm, targets, target, defaults, response_format, self.price)
        remember_answers(question, said)
        return said

    # -- calls ------------------------------------------------------------------------

    def preflight(self) -> None:
        """One small request per server with this run's parameters (see `preflight.py`)."""
        calls = [dict(d["litellm_params"]) for d in resolve_env(self.deployments)] or [
            {"model": self.model, **({"api_base": self.api_base} if self.api_base else {})}
        ]
        targets = [
            (f"{c['model']} at {redact_url(c['api_base'])}" if c.get("api_base") else c["model"], c) for c in calls
        ]
        check_reachable([(where, c["api_base"]) for where, c in targets if c.get("api_base")], self.timeout)
        probe(self.litellm, targets, self.sent_params, timeout=self.timeout, retry=self.retry, notice=self._notice)

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
        return f"{self.model} at {redact_url(server)}" if server else self.model

    def _notice(self, line: str, wait: float) -> None:
        """A long wait a server asked for (`retry.wait_notice`), on stderr: once for the requests
        that wait together (a wave of 429s at once), not once per request."""
        now = time.monotonic()
        if now >= self._quiet_until:
            self._quiet_until = now + wait
            print(f"medvqa: {line}", file=sys.stderr, flush=True)

    async def _answer(self, payload: list[dict], response_schema: dict | None, tried: list[str | None]) -> Response:
        """One attempt, at the next server in turn (another than the last attempt's, where there is one)."""
        spread = self._spread
        if spread is None:
            tried.append(self.api_base)
            return self.read(await self._complete(payload, response_schema, self.api_base), 0.0)
        server = spread.pick(avoid=tried[-1] if tried else None)
        tried.append(server)
        try:
            response = self.read(await self._complete(payload, response_schema, server), 0.0)
        except asyncio.CancelledError:  # the attempt's deadline
            spread.failed(server)
            raise
        except Exception as exc:
            if failure_kind(exc) in TRANSIENT:
                spread.failed(server)
            raise
        spread.answered(server)
        return response

    def _direct_call(self) -> DirectCall | None:
        """How the SDK sends this model's requests, or None: litellm does (decided once)."""
        if not self._direct_decided:
            servers = self._spread.servers if self._spread else [self.api_base] if self.api_base else []
            self.direct = (
                None
                if self._use_router
                else direct_call(self.litellm, self.model, self.sent_params, servers, timeout=self.timeout)
            )
            if self.direct is not None and self.direct.api_key != HOSTED_VLLM_PLACEHOLDER_KEY:
                remember(self.direct.api_key)
            self._direct_decided = True
        return self.direct

    async def _complete(
        self, messages: list[dict], response_schema: dict | None = None, api_base: str | None = None
    ) -> Any:
        """One request's completion (litellm's `ModelResponse` or the SDK's `ChatCompletion`),
        at `api_base` where there are servers of one's own."""
        schema_format = None
        if response_schema is not None and (self.sent_params.get("response_format") or {}).get("type") == "json_schema":
            schema_format = json_schema_format(response_schema)
        direct = self._direct_call()
        if direct is not None:
            try:  # (a direct call is made only to servers of one's own: `api_base` is one)
                return await direct.complete(cast(str, api_base), messages, schema_format)
            except json.JSONDecodeError as exc:  # a 2xx whose body is not JSON
                raise UnreadableResponse(f"the answer is not JSON ({exc})") from None
        kwargs = {
            "messages": messages,
            "timeout": self.timeout,
            **self.sent_params,
            "max_retries": PROVIDER_CLIENT_RETRIES,
        }
        if schema_format is not None:
            kwargs["response_format"] = schema_format
        if self._use_router:
            if self.router is None:
                deployments = [
                    {**d, "litellm_params": {**d["litellm_params"], "max_retries": PROVIDER_CLIENT_RETRIES}}
                    for d in resolve_env(self.deployments)
                ]
                self.router = self.litellm.Router(model_list=deployments, num_retries=0, **self._router_settings)
            return await self.router.acompletion(model=self.model, **kwargs)
        if api_base:
            kwargs["api_base"] = api_base
        return await self.litellm.acompletion(model=self.model, **kwargs)

    def read(self, result: Any, latency_s: float) -> Response:
        """A completion read into a `Response` (`completion.read_completion`), its tokens and cost
        counted in `stats`; raises `UnreadableResponse` for an answer without a usable one."""
        return read_completion(
            result,
            latency_s,
            stats=self.stats,
            scrub=self._scrub,
            price=self.price,
            price_per_token=self.direct.price_per_token if self.direct is not None else None,
        )

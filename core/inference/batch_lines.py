"""What a run's batches send: each provider's input lines and litellm's batch calls for it.

The batch path (`batch.BatchBackend`) is the same for every provider: upload a file of lines,
create a batch, poll it, read its output and error files. What differs is kept here: which
providers litellm can reach that way (`BATCH_PROVIDERS`), what one line of the input file holds,
and the arguments litellm's `create_file`, `create_batch`, `retrieve_batch` and `file_content`
need for the provider.

- OpenAI (`openai/`), and a vLLM server's own batch API (`hosted_vllm/`: the online batch API
  of `vllm/entrypoints/openai/batch/`, OpenAI's endpoints and lines, which litellm reaches as
  OpenAI's): a line is `{custom_id, method, url, body}`, its body what the live path's direct
  call sends (`openai_compatible.direct_call`): the model name, the messages, the parameters. A
  model whose requests litellm rewrites (o-series system prompts) has no plain body and is
  refused.
- Mistral (`mistral/`): a line is `{custom_id, body}`, its body the one litellm's own Mistral
  configuration builds from the request (`get_optional_params`, then the chat configuration's
  `transform_request`: `seed` sent as `random_seed`, say), without the model, which Mistral takes
  once per job ("The `model` field inside `body` is optional when you specify the model at job
  creation time": https://docs.mistral.ai/inference/batch-processing; litellm's
  `llms/mistral/batches/transformation.py`). litellm finds Mistral's batch configuration by the
  model, so `create_batch` and `retrieve_batch` are given it; the key is litellm's own
  (`MISTRAL_API_KEY`).
- xAI (`xai/`): a line is OpenAI's, its body the one litellm's xAI configuration builds, model
  and all ("The file goes to xAI as is, so model inside body is the xAI model name": litellm's
  docs, providers/xai_batches). xAI keeps no output file: litellm pages the batch's results
  (`/v1/batches/{id}/results`) into OpenAI's lines through `file_content` on the batch's id
  (`llms/xai/batches/handler.py`); the key is litellm's own (`XAI_API_KEY`).

Every other provider is refused, before anything is sent, with a line naming these: why
each is not covered is in docs/runs.md. A run's repeats share one `BatchLines`
(`add_repeat`): each repeat's lines carry its own parameters (its seed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .base import Request

if TYPE_CHECKING:
    from .litellm_backend import LiteLLMBackend

BATCH_PROVIDERS = ("openai", "hosted_vllm", "mistral", "xai")
# providers whose lines litellm's own chat configuration builds (the others': the direct call's)
CONFIGURED = ("mistral", "xai")


class BatchError(ValueError):
    """A model or setting the batch path cannot take (one line, before anything is sent)."""


class BatchLines:
    """The lines and the calls of one run's batches, through `live` (the run's litellm backend)."""

    def __init__(self, live: LiteLLMBackend):
        self.live, self.model = live, live.model
        provider = self.model.split("/", 1)[0] if "/" in self.model else None
        if provider not in BATCH_PROVIDERS:
            raise BatchError(
                f"--batch: {self.model}: medvqa sends batches through litellm for "
                f"{', '.join(p + '/' for p in BATCH_PROVIDERS)} models only (docs/runs.md says why not others)"
            )
        if live.deployments:
            raise BatchError("--batch takes one server (--api-base), not a model list or several servers")
        self.provider: str = provider
        self.repeats: dict[int, LiteLLMBackend] = {0: live}  # the live backend of each repeat asked
        self._bodies: dict[int, tuple[str, dict[str, Any], str | None]] = {}

    def add_repeat(self, repeat: int, live: LiteLLMBackend) -> None:
        """Repeat `repeat`'s lines sent with `live`'s parameters (its own seed)."""
        if (live.model, live.endpoint) != (self.model, self.live.endpoint) or live.deployments:
            raise BatchError(f"--batch: repeat {repeat} asks another model or server than repeat 0")
        self.repeats[repeat] = live

    def body(self, repeat: int = 0) -> tuple[str, dict[str, Any], str | None]:
        """(the model name the server is sent, the parameters of every body, the API key: None
        for litellm's own) of `repeat`'s lines, worked out once per repeat."""
        if repeat not in self._bodies:
            live = self.repeats[repeat]
            if self.provider in CONFIGURED:
                model, provider, _, _ = live.litellm.get_llm_provider(self.model)
                optional = live.litellm.get_optional_params(
                    model=model, custom_llm_provider=provider, **live.sent_params
                )
                self._bodies[repeat] = (model, dict(optional), None)
                return self._bodies[repeat]
            from .openai_compatible import direct_call

            base = live.api_base or "https://api.openai.com/v1"
            found = direct_call(live.litellm, self.model, live.sent_params, [base], timeout=live.timeout)
            if found is None:
                raise BatchError(
                    f"--batch: litellm rewrites {self.model}'s requests (or has no key for it): "
                    "its batch lines cannot be the plain OpenAI body; run it live"
                )
            self._bodies[repeat] = (found.model, found.params, found.api_key)
        return self._bodies[repeat]

    def line(self, req: Request) -> dict:
        """`req` as one line of a batch's input file, `custom_id` its request key."""
        from .images import to_openai
        from .litellm_params import json_schema_format

        model, params, _ = self.body(req.repeat)
        messages = to_openai(req.messages, self.live.max_image_side)
        schema = None
        if req.response_schema is not None and (params.get("response_format") or {}).get("type") == "json_schema":
            schema = json_schema_format(req.response_schema)
        if self.provider == "mistral":  # Mistral takes the model once, on the job
            body = self._configured_body(model, messages, params, schema)
            body.pop("model", None)
            return {"custom_id": req.key, "body": body}
        if self.provider in CONFIGURED:
            body = self._configured_body(model, messages, params, schema)
        else:
            body = {"model": model, "messages": messages, **params}
            if schema is not None:
                body["response_format"] = schema
        return {"custom_id": req.key, "method": "POST", "url": "/v1/chat/completions", "body": body}

    def _configured_body(self, model: str, messages: list[dict], params: dict[str, Any], schema: dict | None) -> dict:
        """The body litellm sends the provider's chat endpoint live (its chat configuration's
        `transform_request`, `extra_body` merged in as it is sent)."""
        from litellm.utils import ProviderConfigManager

        from .openai_compatible import flat_body

        config = ProviderConfigManager.get_provider_chat_config(
            model=model, provider=self.live.litellm.LlmProviders(self.provider)
        )
        if config is None:
            raise BatchError(f"--batch: litellm has no chat configuration for {self.model}")
        optional = {**params, **({"response_format": schema} if schema else {})}
        return flat_body(
            config.transform_request(
                model=model, messages=cast(Any, messages), optional_params=optional, litellm_params={}, headers={}
            )
        )

    def output_files(self, batch: Any) -> list[tuple[str, bool]]:
        """(file id, whether it holds failed lines) of a finished batch's answers. xAI keeps no
        output file: litellm reads its results pages through `file_content` on the batch's own
        id, which it gives as the output file of a completed batch only; a batch xAI cancelled
        (expired) keeps the results of what it ran, read the same way."""
        if self.provider == "xai":
            return [(getattr(batch, "output_file_id", None) or batch.id, False)]
        files = [(getattr(batch, "output_file_id", None), False), (getattr(batch, "error_file_id", None), True)]
        return [(file_id, is_error) for file_id, is_error in files if file_id]

    def call(self, name: str, **kwargs: Any) -> Any:
        """litellm's `name` call (`create_file`, `create_batch`, `retrieve_batch`, `file_content`)
        for this provider, at the run's server where it has one. A call the provider refuses (a
        server without a batch API, a key without batch access) is a `BatchError` naming the
        call, the server and the provider's message, scrubbed of credentials."""
        from .secrets import redact_url, scrub

        _, _, api_key = self.body()
        extra: dict[str, Any] = {"api_base": self.live.api_base} if self.live.api_base else {}
        if self.provider == "mistral" and name in ("create_batch", "retrieve_batch"):
            extra["model"] = self.model  # litellm finds Mistral's batch configuration by the model
        if api_key is not None:
            extra["api_key"] = api_key
        try:
            return getattr(self.live.litellm, name)(custom_llm_provider=self.provider, **extra, **kwargs)
        except Exception as exc:
            where = redact_url(self.live.api_base) or f"{self.provider}'s API"
            raise BatchError(scrub(f"--batch: {name} at {where} failed: {type(exc).__name__}: {exc}")) from None

"""What a litellm backend's requests send and where they go: the generation parameters, the
response format and the endpoint that every request key holds, and the prices litellm is told.

The parameters depend on what litellm says of the model (`ask_litellm`): the provider of each
model string, which default parameters it would refuse for it (gpt-5 and o-series models take
no temperature 0), whether the provider takes `response_format` and a JSON schema in it, and
where the model's price comes from. The backend asks once per litellm version and question and
remembers the answers (`model_names.recall_answers`), so that a backend built again has them
without importing litellm. `request_params` builds what every request sends from those answers
and the run's settings, with every default left out and why; `endpoint` says where requests go.
The functions that ask litellm are given the imported module: none of them imports it.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

from .output import ANSWER_SCHEMA
from .preflight import check_provider
from .router import resolve_env
from .secrets import credential_entries, without_userinfo

DEFAULT_TEMPERATURE = 0
# Request settings litellm would take as parameters, which medvqa owns (attempts are counted in one place).
_NOT_PARAMS = {"max_retries": "--max-retries", "num_retries": "--max-retries", "timeout": "--timeout"}


def default_params(temperature: float | None, seed: int) -> dict[str, Any]:
    """The parameters sent by default, where litellm says the model takes them: temperature 0
    (unless the run gives one) and the seed."""
    return {"seed": seed} if temperature is not None else {"temperature": DEFAULT_TEMPERATURE, "seed": seed}


def ask_litellm(
    litellm: ModuleType,
    targets: list[str],
    target: str,
    defaults: dict[str, Any],
    response_format: str,
    price: tuple[float, float] | None,
) -> dict[str, Any]:
    """What litellm says of the models `targets` (`target` the one whose parameters are sent):
    {"providers": {model: provider}, "refused": {default parameter: why litellm would refuse
    it}, "format": the response format to send, "price_source": {model: `register_price`}}. An
    unknown model raises PreflightError (`preflight.check_provider`). Every model's price is
    registered with litellm on the way (`register_price`)."""
    providers = {t: check_provider(litellm, t) for t in targets}
    supported = supported_params(litellm, target)
    refused = {
        name: why for name, value in defaults.items() if (why := refusal(litellm, target, supported, name, value))
    }
    return {
        "providers": providers,
        "refused": refused,
        "format": response_format_sent(litellm, response_format, target, supported),
        "price_source": {t: register_price(litellm, t, price) for t in targets},
    }


def request_params(
    said: dict[str, Any],
    temperature: float | None,
    seed: int,
    max_tokens: int | None,
    params: dict[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """(what every request sends, {default left out: why}). The default temperature and the
    seed are sent only where litellm lists them among the model's parameters and accepts
    their value for it (gpt-5 and o-series models take no temperature 0: `said["refused"]`);
    a temperature the user gave is sent as given. Extra `params` are sent as given; a None
    value removes a default."""
    send: dict[str, Any] = {} if temperature is None else {"temperature": temperature}
    left_out: dict[str, str] = {}
    for name, value in default_params(temperature, seed).items():
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


def refusal(litellm: ModuleType, target: str, supported: set[str] | None, name: str, value: Any) -> str | None:
    """Why litellm would refuse `name=value` for `target` (None: it takes it)."""
    if supported is not None and name not in supported:
        return f"not among the parameters litellm supports for {target}"
    try:
        model, provider, _, _ = litellm.get_llm_provider(target)
        litellm.get_optional_params(model=model, custom_llm_provider=provider, **{name: value})
    except litellm.UnsupportedParamsError as exc:
        text = str(getattr(exc, "message", exc)).removeprefix("litellm.UnsupportedParamsError: ")
        return "litellm: " + " ".join(text.split("To drop")[0].split())
    except Exception:  # litellm cannot check this model: send the parameter and let it answer
        return None
    return None


def endpoint(provider: str, deployments: list[dict], api_base: str | None) -> dict[str, Any]:
    """Where requests go, as far as it can change an answer (part of every request key):
    the provider and the server (`api_base`, else the provider's base-URL environment
    variable, else the provider's default), or every deployment of a model list."""
    if deployments:
        return {
            "deployments": sorted(
                [d["litellm_params"]["model"], _server(d["litellm_params"].get("api_base"))]
                for d in resolve_env(deployments)
            )
        }
    variables = (f"{provider.upper()}_API_BASE", f"{provider.upper()}_BASE_URL")
    from_env = next((os.environ[v] for v in variables if os.environ.get(v)), None)
    return {"provider": provider, "api_base": _server(api_base or from_env)}


def supported_params(litellm: ModuleType, target: str) -> set[str] | None:
    """The OpenAI parameters litellm says `target` takes (None: it cannot say)."""
    try:
        _, provider, _, _ = litellm.get_llm_provider(target)
        found = litellm.get_supported_openai_params(model=target, custom_llm_provider=provider)
    except Exception:  # an unknown provider: send the standard parameters and let it answer
        return None
    return set(found) if found is not None else None


def register_price(litellm: ModuleType, target: str, price: tuple[float, float] | None) -> str | None:
    """Where the cost comes from: "--price" (`price`, USD per million prompt and completion
    tokens), "litellm", or None (unknown: tokens only). Models litellm has no price for are
    registered (at `price`, else at zero) so that its per-call cost lookup finds them at once
    instead of searching its whole price map."""
    try:
        known = litellm.get_model_info(target).get("input_cost_per_token") is not None
    except Exception:
        known = False
    if not known or price:
        try:
            _, provider, _, _ = litellm.get_llm_provider(target)
        except Exception:
            return "--price" if price else None
        p_in, p_out = price or (0.0, 0.0)
        litellm.register_model(
            {
                target: {
                    "input_cost_per_token": p_in / 1e6,
                    "output_cost_per_token": p_out / 1e6,
                    "litellm_provider": provider,
                    "mode": "chat",
                }
            }
        )
    return "--price" if price else ("litellm" if known else None)


def response_format_sent(litellm: ModuleType, choice: str, target: str, supported: set[str] | None) -> str | None:
    """The response format sent for the run's `choice` (auto, json_schema, json_object or
    none): "json_schema", "json_object" or None."""
    if choice == "none" or (choice == "auto" and (supported is None or "response_format" not in supported)):
        return None
    if choice == "auto":
        try:
            _, provider, _, _ = litellm.get_llm_provider(target)
            schema_ok = litellm.supports_response_schema(model=target, custom_llm_provider=provider)
        except Exception:
            schema_ok = False
        choice = "json_schema" if schema_ok else "json_object"
    return choice


def json_schema_format(schema: dict) -> dict:
    """The OpenAI `response_format` that asks for an object matching `schema`, strictly."""
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}


def _server(url: str | None) -> str | None:
    """A server URL as part of a request key: without user:password or a trailing slash."""
    return without_userinfo(url).rstrip("/") if url else None

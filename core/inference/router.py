"""Several OpenAI-compatible servers behind one model name, through litellm's Router.

Deployments come from repeated `--api-base URL` or a YAML file in litellm's own shape::

    model_list:
      - model_name: qwen
        litellm_params: {model: hosted_vllm/Qwen/Qwen2.5-VL-72B-Instruct, api_base: http://gpu1:8000/v1}
      - model_name: qwen
        litellm_params: {model: hosted_vllm/Qwen/Qwen2.5-VL-72B-Instruct, api_base: http://gpu2:8000/v1}
    router_settings: {routing_strategy: simple-shuffle}

Keys are never written in the file: `api_key: os.environ/NAME` names the variable, which is
read only in the process that makes the calls.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from medvqa.core.inference.secrets import is_secret_name
from medvqa.core.items import DataError

ENV_REF = "os.environ/"


def deployments_for(model: str, api_bases: list[str]) -> list[dict]:
    """One deployment of `model` per server."""
    return [{"model_name": model, "litellm_params": {"model": model, "api_base": url}} for url in api_bases]


def load_model_list(path: str | Path) -> tuple[list[dict], dict[str, Any]]:
    """(model_list, router_settings) from a YAML file; a literal API key is an error."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"cannot read the model list ({exc})", file=path) from None
    deployments = data.get("model_list") if isinstance(data, dict) else data
    if not isinstance(deployments, list) or not deployments:
        raise DataError("expected `model_list:` with at least one deployment", file=path)
    for i, dep in enumerate(deployments):
        params = dep.get("litellm_params") if isinstance(dep, dict) else None
        if not isinstance(params, dict) or not dep.get("model_name") or not params.get("model"):
            raise DataError("each deployment needs model_name and litellm_params.model", file=path,
                            record=f"model_list[{i}]")
        for name, value in params.items():
            if _is_secret_field(name) and not str(value).startswith(ENV_REF):
                raise DataError(f"litellm_params.{name} holds a literal secret; write `{name}: {ENV_REF}VARIABLE` "
                                "and set the variable in the environment", file=path, record=f"model_list[{i}]")
    settings = data.get("router_settings", {}) if isinstance(data, dict) else {}
    if not isinstance(settings, dict):
        raise DataError("router_settings must be a mapping", file=path)
    return deployments, settings


def model_names(deployments: list[dict]) -> set[str]:
    return {d["model_name"] for d in deployments}


def underlying_model(model: str, deployments: list[dict]) -> str:
    """The litellm model string of the first deployment named `model`."""
    for dep in deployments:
        if dep["model_name"] == model:
            return dep["litellm_params"]["model"]
    raise KeyError(f"model {model!r} is not in the model list (it has: {', '.join(sorted(model_names(deployments)))})")


def resolve_env(deployments: list[dict]) -> list[dict]:
    """A copy with `os.environ/NAME` values read from the environment (in memory only)."""
    out = []
    for dep in deployments:
        params = {k: _resolve(v) for k, v in dep["litellm_params"].items()}
        out.append({**dep, "litellm_params": params})
    return out


def credential_values(deployments: list[dict]) -> list[str]:
    """The values of the credentials the deployments name (`api_key: os.environ/NAME`, whatever
    NAME is), read from the environment; variables not set are skipped here."""
    values = []
    for dep in deployments:
        for name, value in dep["litellm_params"].items():
            variable = value[len(ENV_REF):] if isinstance(value, str) and value.startswith(ENV_REF) else None
            if variable is not None and variable in os.environ and _is_secret_field(name):
                values.append(os.environ[variable])
    return values


def _resolve(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(ENV_REF):
        name = value[len(ENV_REF):]
        if name not in os.environ:
            raise KeyError(f"environment variable {name} is not set (named by the model list)")
        return os.environ[name]
    return value


def _is_secret_field(name: str) -> bool:
    return is_secret_name(name)

"""Several servers behind one model name: in turn (`RoundRobin`), or through litellm's Router.

Repeated `--api-base URL` asks for no routing policy: requests go to the servers in turn,
without the Router's per-request cost (a few milliseconds of CPU, which made two servers
slower than one when the client was the limit). A YAML file in litellm's own shape
(`--model-list`) goes through the Router, with the policy it names::

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
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..items import DataError
from ..jsonl import load_yaml
from .secrets import is_secret_name

ENV_REF = "os.environ/"
COOLDOWN_S = 5.0  # as litellm's Router rests a failing deployment


class RoundRobin:
    """Servers taken in turn, one per attempt. A server whose attempt failed in a way that
    points at it (`failed`: refused, timed out, 5xx, 429, unreadable) rests for `cooldown_s`
    seconds while another is available, and a retry goes to another server than the one
    that just failed where there is one; when every server rests, the one whose rest ends
    first is asked. `sent` counts the attempts per server."""

    def __init__(
        self, servers: list[str], *, cooldown_s: float = COOLDOWN_S, clock: Callable[[], float] = time.monotonic
    ):
        if not servers:
            raise ValueError("no server to send requests to")
        self.servers = list(dict.fromkeys(servers))
        self.cooldown_s, self._clock = cooldown_s, clock
        self._next = 0
        self._rest_until: dict[str, float] = {}
        self.sent: Counter[str] = Counter()

    def pick(self, avoid: str | None = None) -> str:
        now = self._clock()
        n = len(self.servers)
        order = [self.servers[(self._next + i) % n] for i in range(n)]
        ready = [s for s in order if self._rest_until.get(s, 0.0) <= now]
        chosen = next((s for s in ready if s != avoid), None) or (ready[0] if ready else None)
        if chosen is None:
            chosen = min(order, key=lambda s: (s == avoid and n > 1, self._rest_until[s]))
        self._next = (self.servers.index(chosen) + 1) % n
        self.sent[chosen] += 1
        return chosen

    def failed(self, server: str) -> None:
        self._rest_until[server] = self._clock() + self.cooldown_s

    def answered(self, server: str) -> None:
        self._rest_until.pop(server, None)


def deployments_for(model: str, api_bases: list[str]) -> list[dict]:
    """One deployment of `model` per server."""
    return [{"model_name": model, "litellm_params": {"model": model, "api_base": url}} for url in api_bases]


def load_model_list(path: str | Path) -> tuple[list[dict], dict[str, Any]]:
    """(model_list, router_settings) from a YAML file; a literal API key is an error."""
    path = Path(path)
    try:
        data = load_yaml(path.read_text(encoding="utf-8"), file=path)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DataError(f"cannot read the model list ({exc})", file=path) from None
    deployments = data.get("model_list") if isinstance(data, dict) else data
    if not isinstance(deployments, list) or not deployments:
        raise DataError("expected `model_list:` with at least one deployment", file=path)
    for i, dep in enumerate(deployments):
        params = dep.get("litellm_params") if isinstance(dep, dict) else None
        if not isinstance(params, dict) or not dep.get("model_name") or not params.get("model"):
            raise DataError(
                "each deployment needs model_name and litellm_params.model", file=path, record=f"model_list[{i}]"
            )
        for name, value in params.items():
            if _is_secret_field(name) and not str(value).startswith(ENV_REF):
                raise DataError(
                    f"litellm_params.{name} holds a literal secret; write `{name}: {ENV_REF}VARIABLE` "
                    "and set the variable in the environment",
                    file=path,
                    record=f"model_list[{i}]",
                )
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
            variable = value[len(ENV_REF) :] if isinstance(value, str) and value.startswith(ENV_REF) else None
            if variable is not None and variable in os.environ and _is_secret_field(name):
                values.append(os.environ[variable])
    return values


def _resolve(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(ENV_REF):
        name = value[len(ENV_REF) :]
        if name not in os.environ:
            raise KeyError(f"environment variable {name} is not set (named by the model list)")
        return os.environ[name]
    return value


def _is_secret_field(name: str) -> bool:
    return is_secret_name(name)

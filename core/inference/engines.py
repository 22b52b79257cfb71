"""Model backends registered as a plugin: `litellm` (any litellm model string, the default for
an unprefixed --model) and `vllm` (`vllm/<model>`, offline on local GPUs). Their libraries are
imported only when a backend is built."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from ..hookspecs import hookimpl


class EngineFactory:
    def __init__(self, prefix: str, description: str, target: str, options: str):
        self.prefix, self.description, self._target, self._options = prefix, description, target, options

    def _load(self, target: str | None = None) -> Callable[..., Any]:
        module, _, name = (target or self._target).rpartition(".")
        return getattr(importlib.import_module(module), name)

    @property
    def options(self):
        """The typed options of this kind of backend (`-M`, `--model-config`; `backend_options.py`)."""
        return self._load(self._options)

    def check(self, model: str, **options: Any) -> None:
        """What the backend checks of `model` before its library is imported (its class's
        `check_model`, where it has one); raises PreflightError."""
        check = getattr(self._load(), "check_model", None)
        if check is not None:
            check(model, **options)

    def __call__(self, model: str, **options: Any):
        cls = self._load()
        accepted = set(inspect.signature(cls).parameters) - {"model"}
        unknown = sorted(set(options) - accepted)
        if unknown:
            names = ", ".join("--" + n.replace("_", "-") for n in unknown)
            raise ValueError(f"{names} does not apply to {self.prefix} models ({model})")
        return cls(model, **options)


@hookimpl
def register_backends(register):
    register(
        EngineFactory(
            "litellm",
            "any litellm model: openai/gpt-5, anthropic/..., gemini/..., hosted_vllm/NAME --api-base URL",
            "medvqa.core.inference.litellm_backend.LiteLLMBackend",
            "medvqa.core.inference.backend_options.LiteLLMOptions",
        )
    )
    register(
        EngineFactory(
            "vllm",
            "vLLM offline on local GPUs: vllm/<model path or name> (extra: medvqa[vllm])",
            "medvqa.core.inference.vllm_backend.VLLMBackend",
            "medvqa.core.inference.backend_options.VLLMOptions",
        )
    )

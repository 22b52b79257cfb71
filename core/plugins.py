"""The plugin manager: built-in adapters and third-party packages load through the same
entry-point group, `medvqa`.

`MEDVQA_LOAD_PLUGINS` (comma-separated plugin names) limits which entry points are loaded;
set it to an empty string to load none. `MEDVQA_TRACE_PLUGINS=1` prints every hook call.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

import pluggy

from . import hookspecs

GROUP = "medvqa"


@dataclass(frozen=True)
class Registered:
    name: str
    obj: Any
    plugin: str


@lru_cache(maxsize=1)
def manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    allow = os.environ.get("MEDVQA_LOAD_PLUGINS")
    allowed = None if allow is None else {n.strip() for n in allow.split(",") if n.strip()}
    for ep in entry_points(group=GROUP):
        if allowed is not None and ep.name not in allowed:
            continue
        if pm.get_plugin(ep.name) is not None:
            continue
        pm.register(ep.load(), name=ep.name)
    return pm


def reset() -> None:
    """Forget loaded plugins (after installing a package, or in tests)."""
    manager.cache_clear()
    _collect.cache_clear()


@lru_cache(maxsize=None)
def _collect(hook_name: str) -> tuple[Registered, ...]:
    pm = manager()
    out: list[Registered] = []
    hook = getattr(pm.hook, hook_name)
    trace = bool(os.environ.get("MEDVQA_TRACE_PLUGINS"))
    # Each implementation is called on its own so that every registered object is attributed
    # to the plugin that registered it.
    for impl in hook.get_hookimpls():
        plugin_name = impl.plugin_name
        if trace:
            print(f"medvqa hook: {hook_name} -> {plugin_name}", file=sys.stderr)

        def register(obj, _plugin=plugin_name):
            name = getattr(obj, "name", None) or getattr(obj, "prefix", None) or getattr(obj, "language", None)
            out.append(Registered(name=str(name), obj=obj, plugin=_plugin))

        impl.function(register=register)
    return tuple(out)


def benchmarks() -> dict[str, Registered]:
    return _unique("register_benchmarks", "benchmark")


def backends() -> dict[str, Registered]:
    return _unique("register_backends", "backend")


def answer_patterns() -> tuple:
    """Every registered `LanguagePatterns`, in registration order."""
    return tuple(r.obj for r in _collect("register_answer_patterns"))


def _unique(hook_name: str, what: str) -> dict[str, Registered]:
    out: dict[str, Registered] = {}
    for r in _collect(hook_name):
        if r.name in out:
            raise RuntimeError(f"{what} {r.name!r} is registered by both {out[r.name].plugin} and {r.plugin}")
        out[r.name] = r
    return out


def get_benchmark(name: str):
    found = benchmarks()
    key = name.lower()
    if key not in found:
        known = ", ".join(sorted(found)) or "none"
        raise KeyError(f"unknown benchmark {name!r}; installed: {known} (see `medvqa list`)")
    return found[key].obj


def get_backend(model: str, **options):
    """Build the backend for a --model string: `random`, `constant:A`, `replay:f.jsonl`, or
    any other string, which goes to the `litellm` backend (`openai/gpt-5`, `hosted_vllm/x`)."""
    found = backends()
    prefix = model.split(":", 1)[0] if ":" in model else model
    if prefix not in found:
        head = model.split("/", 1)[0]
        prefix = head if head in found else "litellm"
    if prefix not in found:
        raise KeyError(f"no backend for model {model!r}; installed: {', '.join(sorted(found))}")
    return found[prefix].obj(model, **options)

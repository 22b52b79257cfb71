"""The plugin manager. Built-in plugins (`DEFAULT_PLUGINS`) and third-party packages (entry
points in the `medvqa` group) are registered the same way, and every hook is called through
pluggy.

`MEDVQA_LOAD_PLUGINS` (comma-separated entry-point names) limits which third-party plugins are
loaded; an empty string loads none. Built-in plugins are always loaded.
`MEDVQA_TRACE_PLUGINS=1` prints every hook call on stderr.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any

import pluggy

from . import hookspecs

GROUP = "medvqa"
# Registered after the entry points: pluggy calls the last registered first, so built-in
# commands and names come before any third-party one.
DEFAULT_PLUGINS = (
    "medvqa.adapters.jmed48k.plugin",
    "medvqa.adapters.polish_pes.plugin",
    "medvqa.adapters.kokushimd10.plugin",
    "medvqa.adapters.mmbu_hard.plugin",
    "medvqa.adapters.worldmedqa_v.plugin",
    "medvqa.adapters.mir.plugin",
    "medvqa.core.inference.baselines",
    "medvqa.core.inference.engines",
)


class PluginError(RuntimeError):
    """A plugin that cannot be loaded or registers something unusable."""


@dataclass(frozen=True)
class Registered:
    obj: Any
    plugin: str  # the name of the plugin that registered it


@dataclass
class _Loaded:
    pm: pluggy.PluginManager
    distributions: dict[str, Any]  # plugin name -> importlib.metadata.Distribution


@lru_cache(maxsize=1)
def _load() -> _Loaded:
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    if os.environ.get("MEDVQA_TRACE_PLUGINS"):
        pm.add_hookcall_monitoring(_trace_before, _trace_after)
    allow = os.environ.get("MEDVQA_LOAD_PLUGINS")
    allowed = None if allow is None else {n.strip() for n in allow.split(",") if n.strip()}
    distributions = {}
    found = [ep for ep in entry_points(group=GROUP) if ep.value not in DEFAULT_PLUGINS]  # (stale metadata)
    for ep in found:
        if (allowed is not None and ep.name not in allowed) or pm.get_plugin(ep.name) is not None:
            continue
        try:
            plugin = ep.load()
        except Exception as exc:
            raise PluginError(
                f"plugin {ep.name} ({ep.dist.name if ep.dist else ep.value}) failed to load: "
                f"{type(exc).__name__}: {exc} (MEDVQA_LOAD_PLUGINS limits which plugins load)"
            ) from exc
        pm.register(plugin, name=ep.name)
        distributions[ep.name] = ep.dist
    if allowed:
        if unknown := sorted(allowed - {ep.name for ep in found}):
            print(
                f"medvqa: MEDVQA_LOAD_PLUGINS names {', '.join(unknown)}, not installed; third-party plugins "
                f"installed: {', '.join(sorted(ep.name for ep in found)) or 'none'} (built-in plugins always load)",
                file=sys.stderr,
            )
    for path in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(path), name=path)
    try:
        pm.check_pending()  # a hook implementation with no such hook (a misspelt name)
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {pm.get_name(exc.plugin)}: {exc}") from None
    return _Loaded(pm, distributions)


def manager() -> pluggy.PluginManager:
    return _load().pm


def reset() -> None:
    """Forget loaded plugins (after installing a package, or in tests)."""
    _load.cache_clear()
    _collected.clear()


def _trace_before(hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
    plugins = ", ".join(impl.plugin_name for impl in hook_impls) or "no plugin"
    print(f"medvqa hook: {hook_name}({', '.join(kwargs)}) -> {plugins}", file=sys.stderr)


def _trace_after(
    outcome: pluggy.Result[Any], hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]
) -> None:
    if outcome.exception is not None:
        print(f"medvqa hook: {hook_name} raised {outcome.exception!r}", file=sys.stderr)


def loaded_plugins() -> dict[str, dict[str, str | None]]:
    """Every registered plugin with the distribution that ships it and its version (a plugin
    registered by hand, as tests do, has none)."""
    loaded = _load()
    medvqa = _medvqa_version()
    out = {}
    for name, plugin in sorted(loaded.pm.list_name_plugin()):
        if plugin is None:
            continue
        dist = loaded.distributions.get(name)
        if dist is not None:
            out[name] = {"distribution": dist.name, "version": dist.version}
        elif name in DEFAULT_PLUGINS:
            out[name] = {"distribution": "medvqa", "version": medvqa}
        else:
            out[name] = {"distribution": None, "version": None}
    return out


def _medvqa_version() -> str | None:
    try:
        return version("medvqa")
    except PackageNotFoundError:
        return None


_collected: dict[str, tuple[tuple, tuple[Registered, ...]]] = {}


def _collect(hook_name: str) -> tuple[Registered, ...]:
    """Everything registered through a `register_*` hook, in pluggy's calling order. Each
    plugin's implementation is called through pluggy on its own, so that every object is
    attributed to the plugin that registered it. Cached until the set of implementations
    changes (a plugin registered or unregistered)."""
    pm = manager()
    impls = tuple(getattr(pm.hook, hook_name).get_hookimpls())
    cached = _collected.get(hook_name)
    if cached is not None and cached[0] == impls:
        return cached[1]
    out: list[Registered] = []
    for impl in reversed(impls):
        others = [p for p in pm.get_plugins() if p is not impl.plugin]
        call = pm.subset_hook_caller(hook_name, remove_plugins=others)
        call(register=lambda obj, _plugin=impl.plugin_name: out.append(Registered(obj, _plugin)))
    _collected[hook_name] = (impls, tuple(out))
    return tuple(out)


def benchmarks() -> dict[str, Registered]:
    from .benchmark import Benchmark

    return _unique("register_benchmarks", "benchmark", Benchmark, lambda b: b.name)


def backends() -> dict[str, Registered]:
    return _unique("register_backends", "backend", None, lambda f: f.prefix)


def answer_patterns() -> tuple:
    """Every registered `LanguagePatterns`, in pluggy's calling order (built-in plugins first)."""
    from .scoring.patterns import LanguagePatterns

    found = _collect("register_answer_patterns")
    for r in found:
        _require(r, LanguagePatterns, "answer patterns")
    return tuple(r.obj for r in found)


def _require(r: Registered, cls: type, what: str) -> None:
    if not isinstance(r.obj, cls):
        raise PluginError(f"plugin {r.plugin} registered {r.obj!r} as {what}; expected an instance of {cls.__name__}")


def _unique(hook_name: str, what: str, cls: type | None, key: Callable[[Any], str]) -> dict[str, Registered]:
    out: dict[str, Registered] = {}
    for r in _collect(hook_name):
        if cls is not None:
            _require(r, cls, f"a {what}")
        name = key(r.obj)
        if name in out:
            raise PluginError(f"{what} {name!r} is registered by both {out[name].plugin} and {r.plugin}")
        out[name] = r
    return out


def get_benchmark(name: str):
    found = benchmarks()
    key = name.lower()
    if key not in found:
        from .errors import UnknownBenchmarkError

        raise UnknownBenchmarkError(name, found)
    return found[key].obj


def _registered_factory(model: str) -> Registered:
    found = backends()
    prefix = model.split(":", 1)[0] if ":" in model else model
    if prefix not in found:
        head = model.split("/", 1)[0]
        prefix = head if head in found else "litellm"
    if prefix not in found:
        raise KeyError(f"no backend for model {model!r}; installed: {', '.join(sorted(found))}")
    return found[prefix]


def _backend_factory(model: str):
    return _registered_factory(model).obj


def backend_factory(model: str):
    """The registered factory that builds the backend of a --model string (`get_backend`)."""
    return _backend_factory(model)


def get_backend(model: str, **options):
    """Build the backend for a --model string: `random`, `constant:A`, `replay:f.jsonl`, or
    any other string, which goes to the `litellm` backend (`openai/gpt-5`, `hosted_vllm/x`).
    Always a `Backend`: the one place backends are built, so what a plugin's factory returns
    in the older protocol (an object with `model`, `params`, `generate`) is wrapped here."""
    from .inference.base import as_backend

    registered = _registered_factory(model)
    source = f"the backend factory {registered.obj.prefix!r} of plugin {registered.plugin}"
    built = registered.obj(model, **options)
    try:
        return as_backend(built, source)
    except TypeError as exc:
        raise PluginError(str(exc)) from None


def check_backend(model: str, **options) -> None:
    """What the backend of a --model string can check before it is built, which may import a
    heavy library (the factory's `check`, where it has one: litellm's checks the provider and
    the key); raises PreflightError."""
    check = getattr(_backend_factory(model), "check", None)
    if check is not None:
        check(model, **options)

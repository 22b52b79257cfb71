"""`medvqa.Backend` is a base class that declares every optional capability with its default;
the built-in backends subclass it, and a plugin's backend written against the older protocol
(a plain object with `model`, `params` and `generate`) is wrapped where backends are built."""

from __future__ import annotations

import json

import pytest

import medvqa
from medvqa.core import plugins
from medvqa.core.inference.base import Backend, PluginBackend, Request, Response, as_backend
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.store import read_manifest, read_records


def test_the_built_in_backends_are_subclasses_of_the_public_base_class():
    from medvqa.core.inference.baselines import ConstantBackend, RandomBackend
    from medvqa.core.inference.litellm_backend import LiteLLMBackend
    from medvqa.core.inference.replay import ReplayBackend
    from medvqa.core.inference.vllm_backend import VLLMBackend

    assert medvqa.Backend is Backend and (medvqa.Request, medvqa.Response) == (Request, Response)
    for cls in (RandomBackend, ConstantBackend, ReplayBackend, LiteLLMBackend, VLLMBackend):
        assert issubclass(cls, Backend), cls
    built = plugins.get_backend("random", seed=3)
    assert type(built).__name__ == "RandomBackend"  # built-in backends are not wrapped
    assert (built.cacheable, built.endpoint, built.stats, dict(built.settings)) == (False, None, None, {})
    litellm = plugins.get_backend("hosted_vllm/test", api_base="http://127.0.0.1:9/v1")
    assert litellm.cacheable and litellm.endpoint == {"provider": "hosted_vllm", "api_base": "http://127.0.0.1:9/v1"}
    assert litellm.stats["retries"] == 0 and litellm.settings["backend"] == "litellm"


def test_a_subclass_gets_every_optional_capability_with_its_default():
    class Minimal(Backend):
        model, params = "minimal", {"t": 1}

    backend = Minimal()
    assert backend.endpoint is None and backend.cacheable is True and backend.stats is None
    assert dict(backend.settings) == {} and dict(backend.params_left_out) == {}
    assert backend.preflight() is None
    with pytest.raises(TypeError):  # the shared defaults cannot be changed by one backend
        backend.settings["x"] = 1
    with pytest.raises(NotImplementedError, match="Minimal does not implement generate"):
        backend.generate([])


class OldStyle:
    """A backend as plugins wrote them before the base class: no optional capability at all.
    It answers every request with the item's gold keys and counts what it is asked."""

    calls: list[str] = []

    def __init__(self, model: str, label: str = "gold"):
        self.model = model
        self.params = {"label": label}

    def generate(self, requests):
        for req in requests:
            OldStyle.calls.append(req.key)
            keys = list(req.item.gold.alternatives[0]) if req.item.gold else []
            yield req, Response(text=json.dumps({"answer": keys}))


class OldStyleUncached(OldStyle):
    """Declares two capabilities of the older protocol itself: no cache, and a preflight."""

    cacheable = False
    preflights = 0

    def preflight(self):
        OldStyleUncached.preflights += 1


class Factory:
    def __init__(self, prefix, cls):
        self.prefix, self.description, self.cls = prefix, f"{prefix} test backend", cls

    def __call__(self, model, **options):
        return self.cls(model, **{k: v for k, v in options.items() if k != "seed"})


class Plugin:
    @medvqa.hookimpl
    def register_backends(self, register):
        register(Factory("oldstyle", OldStyle))
        register(Factory("olduncached", OldStyleUncached))
        register(Factory("notabackend", lambda model, **_: object()))


@pytest.fixture
def plugin():
    pm = plugins.manager()
    pm.register(Plugin(), name="old_protocol_plugin")
    OldStyle.calls = []
    OldStyleUncached.preflights = 0
    try:
        yield
    finally:
        pm.unregister(name="old_protocol_plugin")


def test_a_plugin_backend_of_the_older_protocol_runs_with_the_defaults_filled_in(plugin, tmp_path):
    built = plugins.get_backend("oldstyle:x")
    assert isinstance(built, PluginBackend) and isinstance(built, Backend)
    assert (built.model, built.params, built.endpoint, built.cacheable, built.stats) == (
        "oldstyle:x",
        {"label": "gold"},
        None,
        True,
        None,
    )
    assert dict(built.settings) == {} and built.preflight() is None

    # the jmed48k sample: 17 items under C+Q and 5 image items under C+Q+I, 22 requests
    first = run(
        RunOptions(benchmark="jmed48k", model="oldstyle:x", sample=True, run_dir=str(tmp_path / "a")), progress=False
    )
    assert (first.requested, first.cache_hits, len(OldStyle.calls)) == (22, 0, 22)
    records = read_records(tmp_path / "a")
    assert len(records) == 22 and sum(r["correct"] for r in records) == 22
    manifest = read_manifest(tmp_path / "a")
    assert manifest["backend"] == {} and manifest["params_left_out"] == {}
    # cacheable by default: a second run directory is answered from the cache, the backend never asked
    second = run(
        RunOptions(benchmark="jmed48k", model="oldstyle:x", sample=True, run_dir=str(tmp_path / "b")), progress=False
    )
    assert (second.requested, second.cache_hits, len(OldStyle.calls)) == (0, 22, 22)
    assert [r["key"] for r in read_records(tmp_path / "b")] == [r["key"] for r in records]


def test_what_an_older_plugin_backend_declares_is_used(plugin, tmp_path):
    for run_dir in ("a", "b"):
        result = run(
            RunOptions(benchmark="jmed48k", model="olduncached:y", sample=True, run_dir=str(tmp_path / run_dir)),
            progress=False,
        )
        assert (result.requested, result.cache_hits) == (22, 0)  # cacheable = False: never cached
    assert OldStyleUncached.preflights == 2  # once per run, before its first request
    assert len(OldStyle.calls) == 44


def test_a_factory_that_returns_no_backend_is_a_plugin_error_naming_it(plugin):
    with pytest.raises(
        plugins.PluginError,
        match=r"the backend factory 'notabackend' of plugin old_protocol_plugin "
        r"returned object, which is not a medvqa.Backend and lacks model, "
        r"params, generate",
    ):
        plugins.get_backend("notabackend:z")
    assert as_backend(plugins.get_backend("random")) is not None


def test_as_backend_returns_a_backend_unchanged_and_wraps_anything_with_the_three_members():
    class Minimal(Backend):
        model, params = "m", {}

    minimal = Minimal()
    assert as_backend(minimal) is minimal
    wrapped = as_backend(OldStyle("plain"))
    assert isinstance(wrapped, PluginBackend) and wrapped.model == "plain"
    with pytest.raises(TypeError, match="lacks a callable generate"):
        as_backend(type("NoCall", (), {"model": "m", "params": {}, "generate": None})())


def test_dash_m_reaches_a_plugin_factory_that_declares_no_options_as_given(plugin, tmp_path):
    from click.testing import CliRunner

    from medvqa.cli.main import cli
    from medvqa.core.inference.backend_options import resolve

    assert resolve("oldstyle:x", {}, {"label": "silver"}) == {"label": "silver"}
    out = CliRunner().invoke(
        cli,
        [
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "oldstyle:x",
            "-M",
            "label=silver",
            "--run-dir",
            str(tmp_path / "run"),
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    assert read_manifest(tmp_path / "run")["params"] == {"label": "silver"}
    assert json.loads(out.stdout)["n_records"] == 22 and len(OldStyle.calls) == 22

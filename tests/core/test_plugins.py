import re
import subprocess
import sys

import pytest

from medvqa.core import hookspecs, plugins

from tests.conftest import REPO


def hook_names():
    return [n for n in dir(hookspecs) if n.startswith("register_") and hasattr(getattr(hookspecs, n), "medvqa_spec")]


def test_every_hook_is_documented():
    docs = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    names = hook_names()
    assert len(names) >= 3
    for name in names:
        assert re.search(rf"^### `{name}\(register\)`\n\S", docs, re.M), f"hook {name} is not documented in docs/plugins.md"
        assert getattr(hookspecs, name).__doc__, f"hook {name} has no docstring"


def test_builtin_plugins_register_through_entry_points():
    plugins.reset()
    found = plugins.benchmarks()
    assert found["jmed48k"].plugin == "jmed48k"
    assert {"random", "constant", "replay"} <= set(plugins.backends())
    assert "ja" in {p.language for p in plugins.answer_patterns()}


def test_allow_list_limits_loaded_plugins(monkeypatch):
    monkeypatch.setenv("MEDVQA_LOAD_PLUGINS", "baselines")
    plugins.reset()
    try:
        assert plugins.benchmarks() == {}
        with pytest.raises(KeyError, match="unknown benchmark 'jmed48k'"):
            plugins.get_benchmark("jmed48k")
        assert "random" in plugins.backends()
    finally:
        monkeypatch.delenv("MEDVQA_LOAD_PLUGINS")
        plugins.reset()


def test_trace_prints_hook_calls():
    out = subprocess.run([sys.executable, "-c", "from medvqa.core import plugins; plugins.benchmarks()"],
                         capture_output=True, text=True, env={**__import__("os").environ, "MEDVQA_TRACE_PLUGINS": "1"})
    assert "medvqa hook: register_benchmarks" in out.stderr

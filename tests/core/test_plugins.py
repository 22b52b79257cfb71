import inspect
import os
import re
import subprocess
import sys
from importlib.metadata import version

import click
import pytest
from click.testing import CliRunner

from medvqa.cli.main import Commands, cli
from medvqa.core import hookspecs, plugins
from tests.conftest import REPO


def hook_names():
    return [n for n in dir(hookspecs) if n.startswith("register_") and hasattr(getattr(hookspecs, n), "medvqa_spec")]


def test_every_hook_is_documented():
    docs = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    names = hook_names()
    assert len(names) >= 4 and "register_commands" in names
    for name in names:
        params = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
        assert re.search(rf"^### `{name}\({params}\)`\n\S", docs, re.M), (
            f"hook {name} is not documented in docs/plugins.md"
        )
        assert getattr(hookspecs, name).__doc__, f"hook {name} has no docstring"


def medvqa_cli(*args, env=None, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "medvqa.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        **kwargs,
    )


def test_builtin_plugins_are_the_default_plugins_attributed_by_module():
    plugins.reset()
    assert plugins.benchmarks()["jmed48k"].plugin == "medvqa.adapters.jmed48k.plugin"
    found = plugins.backends()
    assert {name: found[name].plugin for name in ("random", "constant", "replay", "litellm", "vllm")} == {
        "random": "medvqa.core.inference.baselines",
        "constant": "medvqa.core.inference.baselines",
        "replay": "medvqa.core.inference.baselines",
        "litellm": "medvqa.core.inference.engines",
        "vllm": "medvqa.core.inference.engines",
    }
    assert "ja" in {p.language for p in plugins.answer_patterns()}
    loaded = plugins.loaded_plugins()
    assert set(plugins.DEFAULT_PLUGINS) <= set(loaded)
    assert loaded["medvqa.core.inference.baselines"] == {"distribution": "medvqa", "version": version("medvqa")}


@pytest.mark.parametrize("allow", ["", "kmle_demo", "nothing_like_it"])
def test_allow_list_limits_third_party_plugins_only(monkeypatch, allow, capsys):
    monkeypatch.setenv("MEDVQA_LOAD_PLUGINS", allow)
    plugins.reset()
    try:
        assert "jmed48k" in plugins.benchmarks()
        assert {"random", "constant", "replay", "litellm"} <= set(plugins.backends())
        with pytest.raises(
            KeyError,
            match=r"unknown benchmark 'nope'; installed: igakuqa, jmed48k, kokushimd10, mir, mmbu_hard, polish_pes, "
            r"worldmedqa_v, yakugakuqa",
        ):
            plugins.get_benchmark("nope")
        warning = capsys.readouterr().err
        assert (f"MEDVQA_LOAD_PLUGINS names {allow}, not installed" in warning) == bool(allow)
    finally:
        monkeypatch.delenv("MEDVQA_LOAD_PLUGINS")
        plugins.reset()


def test_trace_prints_every_hook_call_through_pluggy_monitoring():
    out = medvqa_cli("list", env={"MEDVQA_TRACE_PLUGINS": "1"})
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    built_in = "medvqa.adapters.jmed48k.plugin, medvqa.adapters.kokushimd10.plugin"
    assert (
        "medvqa hook: register_commands(cli) -> medvqa.adapters.jmed48k.plugin, medvqa.adapters.polish_pes.plugin, "
        "medvqa.adapters.kokushimd10.plugin, medvqa.adapters.worldmedqa_v.plugin, medvqa.adapters.mir.plugin"
    ) in lines
    for plugin in built_in.split(", "):
        assert f"medvqa hook: register_benchmarks(register) -> {plugin}" in lines
    assert "medvqa hook: register_backends(register) -> medvqa.core.inference.baselines" in lines
    assert "medvqa hook: register_backends(register) -> medvqa.core.inference.engines" in lines
    assert "medvqa hook" not in medvqa_cli("list").stderr


def fake_distribution(site, name, entry_points):
    """An installed distribution's metadata: what pip leaves in site-packages."""
    info = site / f"{name}-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.3\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[medvqa]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()), encoding="utf-8"
    )


def test_stale_entry_points_of_builtins_are_not_registered_twice(tmp_path):
    # an install from before the built-ins left the entry points: they name default plugins
    fake_distribution(
        tmp_path,
        "medvqa_old",
        {"jmed48k": "medvqa.adapters.jmed48k.plugin", "baselines": "medvqa.core.inference.baselines"},
    )
    out = medvqa_cli("list", env={"PYTHONPATH": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("jmed48k ") == 1 and "[plugin: medvqa.adapters.jmed48k.plugin]" in out.stdout


def test_a_plugin_that_fails_to_import_is_named_without_a_traceback(tmp_path):
    fake_distribution(tmp_path, "medvqa_broken", {"broken": "medvqa_broken_module_that_is_missing"})
    out = medvqa_cli("list", env={"PYTHONPATH": str(tmp_path)})
    assert out.returncode == 1
    assert "plugin broken (medvqa_broken) failed to load: ModuleNotFoundError" in out.stderr
    assert "Traceback" not in out.stderr
    allowed = medvqa_cli("list", env={"PYTHONPATH": str(tmp_path), "MEDVQA_LOAD_PLUGINS": ""})
    assert allowed.returncode == 0 and "jmed48k" in allowed.stdout


class NotABenchmark:
    name = "fake"


class BadPlugin:
    @hookspecs.hookimpl
    def register_benchmarks(self, register):
        register(NotABenchmark)


class MisspeltPlugin:
    @hookspecs.hookimpl
    def register_benchmark(self, register):
        pass


def test_registered_objects_are_checked_and_attributed():
    pm = plugins.manager()
    pm.register(BadPlugin(), name="bad")
    try:
        with pytest.raises(
            plugins.PluginError, match="plugin bad registered .*NotABenchmark.* expected an instance of Benchmark"
        ):
            plugins.benchmarks()
    finally:
        pm.unregister(name="bad")
    assert "jmed48k" in plugins.benchmarks()  # the collection follows the registered plugins


def test_a_misspelt_hook_is_an_error_naming_the_plugin(tmp_path):
    module = tmp_path / "medvqa_misspelt.py"
    module.write_text("from medvqa import hookimpl\n\n@hookimpl\ndef register_benchmark(register):\n    pass\n")
    fake_distribution(tmp_path, "medvqa_misspelt", {"misspelt": "medvqa_misspelt"})
    out = medvqa_cli("list", env={"PYTHONPATH": str(tmp_path)})
    assert out.returncode == 1 and "plugin misspelt" in out.stderr and "register_benchmark" in out.stderr


def test_extract_is_a_command_of_the_jmed48k_plugin():
    assert cli.commands["extract"].callback.__module__ == "medvqa.adapters.jmed48k.commands"
    result = CliRunner().invoke(cli, ["extract", "--help"])
    assert result.exit_code == 0 and "jmed48k" in result.output
    result = CliRunner().invoke(cli, ["extract", "jmed48k", "--help"])
    assert result.exit_code == 0 and "--profession" in result.output and "--section-names" in result.output


def test_a_plugin_command_never_replaces_a_taken_name(capsys):
    group = Commands("medvqa")
    first, second = click.Command("run", callback=lambda: "first"), click.Command("run", callback=lambda: "second")
    group.add_command(first)
    group.add_command(second)
    assert group.commands["run"] is first
    assert "a plugin's command 'run' is ignored: that name is taken" in capsys.readouterr().err

"""What a new user meets first: the Python API takes lists where the command line takes
comma-separated values, errors have public names, `medvqa list` says which distribution (and
version) ships each plugin, and a value that cannot be used is a usage error (status 2)."""

import json
import re
from importlib.metadata import version

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core import plugins


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_run_takes_lists_where_the_command_line_takes_commas(tmp_path):
    as_list = medvqa.run(
        "jmed48k",
        "random",
        sample=True,
        conditions=["C+Q", "C+Q+I"],
        run_dir=tmp_path / "list",
        cache=False,
        progress=False,
    )
    as_text = medvqa.run(
        "jmed48k", "random", sample=True, conditions="C+Q,C+Q+I", run_dir=tmp_path / "text", cache=False, progress=False
    )
    assert set(as_list.summary["conditions"]) == {"C+Q", "C+Q+I"}
    assert as_list.summary["accuracy"] == as_text.summary["accuracy"]
    # select values as a list (of numbers, even) or as one comma-separated string
    years = sorted({it.meta["year"] for it in medvqa.load("jmed48k", split="sample")})
    first = [it for it in medvqa.load("jmed48k", split="sample") if it.meta["year"] == years[0] and not it.excluded]
    listed = medvqa.run(
        "jmed48k",
        "random",
        sample=True,
        conditions=["C+Q"],
        select={"year": [years[0]]},
        run_dir=tmp_path / "sel-list",
        cache=False,
        progress=False,
    )
    texted = medvqa.run(
        "jmed48k",
        "random",
        sample=True,
        conditions="C+Q",
        select={"year": f"{years[0]},1900"},
        run_dir=tmp_path / "sel-text",
        cache=False,
        progress=False,
    )
    assert listed.summary["conditions"]["C+Q"]["n"] == texted.summary["conditions"]["C+Q"]["n"] == len(first) > 0
    assert len(first) < len([it for it in medvqa.load("jmed48k", split="sample") if not it.excluded])


def test_an_unknown_benchmark_is_a_public_error_naming_the_nearest(tmp_path):
    with pytest.raises(medvqa.UnknownBenchmarkError) as caught:
        medvqa.run("jmed48", "random", sample=True, run_dir=tmp_path / "r")
    error = caught.value
    assert str(error).startswith("unknown benchmark 'jmed48' (did you mean 'jmed48k'?); installed: igakuqa, jmed48k")
    assert error.nearest == "jmed48k" and isinstance(error, medvqa.UsageError) and isinstance(error, KeyError)
    assert '"' not in str(error)  # not KeyError's repr-quoted message
    far = pytest.raises(medvqa.UnknownBenchmarkError, medvqa.load, "zzzz")
    assert far.value.nearest is None and "did you mean" not in str(far.value)
    assert not (tmp_path / "r").exists()


def test_errors_a_caller_catches_are_public_names():
    from medvqa.core.inference.preflight import PreflightError
    from medvqa.core.items import DataError
    from medvqa.core.plugins import PluginError
    from medvqa.core.run.interrupt import RunInterrupted

    assert (medvqa.PreflightError, medvqa.PluginError, medvqa.RunInterrupted, medvqa.DataError) == (
        PreflightError,
        PluginError,
        RunInterrupted,
        DataError,
    )
    assert {"PreflightError", "PluginError", "RunInterrupted", "UsageError", "UnknownBenchmarkError"} <= set(
        medvqa.__all__
    )
    with pytest.raises(medvqa.UsageError, match=r"unknown condition 'C\+X'; choose from C, C\+Q, C\+I, C\+Q\+I"):
        medvqa.run("jmed48k", "random", sample=True, conditions=["C+Q", "C+X"], progress=False)


def test_list_shows_each_plugins_distribution_and_version():
    out = invoke("list")
    assert out.exit_code == 0, out.output
    lines = {line.split()[0]: line for line in out.output.splitlines() if line.startswith("  ")}
    ours = f"(medvqa {version('medvqa')})"
    assert lines["jmed48k"].endswith(f"[plugin: medvqa.adapters.jmed48k.plugin] {ours}")
    assert lines["random"].endswith(f"[plugin: medvqa.core.inference.baselines] {ours}")
    assert lines["yakugakuqa"].endswith(f"[plugin: medvqa.adapters.kokushimd10.plugin] {ours}")


def test_a_plugin_registered_by_hand_is_listed_without_a_distribution():
    class HandMade:
        @medvqa.hookimpl
        def register_backends(self, register):
            class Echo:
                prefix, description = "echo", "echoes"

            register(Echo())

    pm = plugins.manager()
    pm.register(HandMade(), name="hand_made")
    try:
        out = invoke("list")
    finally:
        pm.unregister(name="hand_made")
    line = next(line for line in out.output.splitlines() if line.startswith("  echo "))
    assert line.endswith("[plugin: hand_made] (not from a distribution)")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--conditions", "C+X"], "unknown condition 'C+X'"),
        (["--select", "colour=red"], "--select colour: jmed48k items have no field 'colour'"),
        (["--convention", "mhlw"], "unknown convention 'mhlw' for jmed48k; it offers: none"),
    ],
)
def test_values_that_cannot_be_used_are_usage_errors(tmp_path, args, message):
    result = invoke("run", "jmed48k", "--sample", "--model", "random", *args, "--run-dir", tmp_path / "r")
    assert result.exit_code == 2, result.output
    assert message in result.output and "Usage: " in result.output
    assert not (tmp_path / "r").exists()
    unknown = invoke("run", "jmed48", "--sample", "--model", "random", "--run-dir", tmp_path / "r")
    assert unknown.exit_code == 2 and "did you mean 'jmed48k'" in unknown.output
    # a data error stays status 1
    missing = invoke("run", "jmed48k", "--data", tmp_path / "absent", "--model", "random", "--run-dir", tmp_path / "r")
    assert missing.exit_code == 1, missing.output


def test_run_help_opens_with_examples_and_names_the_benchmarks_of_each_own_option():
    from medvqa.core import plugins

    text = invoke("run", "--help").output
    head = text.split("Options:")[0]
    assert "Examples:\n    medvqa run jmed48k --sample --model random\n    medvqa run igakuqa" in head
    flat = " ".join(text.split())  # help text wraps at the terminal's width
    found = plugins.benchmarks()
    # a selection keyword's option names the field of each benchmark that declares it
    fields = {
        (kw, field): sorted(n for n, r in found.items() if r.obj.selection_keywords.get(kw) == field)
        for kw, field in [("years", "year"), ("professions", "profession"), ("professions", "specialty")]
    }
    assert "jmed48k" in fields["professions", "profession"] and fields["professions", "specialty"] == ["polish_pes"]
    assert (
        f"--professions V1,V2 Comma-separated values, a shorthand for --select (the benchmark's own keyword): "
        f"--select profession=... [benchmarks: {', '.join(fields['professions', 'profession'])}]; "
        f"--select specialty=... [benchmarks: polish_pes]"
    ) in flat
    assert f"--select year=... [benchmarks: {', '.join(fields['years', 'year'])}]" in flat
    with_conventions = sorted(n for n, r in found.items() if r.obj.conventions)
    assert (
        "jmed48k" not in with_conventions
        and f"(its default when omitted). [benchmarks: {', '.join(with_conventions)}]" in flat
    )
    judged = sorted(n for n, r in found.items() if r.obj.judge() is not None)
    assert judged and "the first counts. [benchmarks: " + ", ".join(judged) + "]" in flat
    # options every benchmark takes name none
    assert re.search(r"Only the first N items\. (\[x>=1\] )?--", flat)


def test_load_selects_with_a_list_one_value_or_a_comma_separated_string():
    items = medvqa.load("jmed48k", split="sample")
    years = sorted({it.meta["year"] for it in items})
    as_list = medvqa.load("jmed48k", split="sample", select={"year": [years[0]]})
    assert 0 < len(as_list) < len(items)
    assert [it.id for it in medvqa.load("jmed48k", split="sample", select={"year": years[0]})] == [
        it.id for it in as_list
    ]
    both = medvqa.load("jmed48k", split="sample", select={"year": f"{years[0]}, {years[-1]}"})
    assert [it.id for it in both] == [it.id for it in items if it.meta["year"] in (years[0], years[-1])]


def test_run_takes_the_price_as_the_command_line_writes_it(tmp_path):
    from tests.openai_server import OpenAIServer

    with OpenAIServer() as server:
        run_dir, summary = medvqa.run(
            "jmed48k",
            "hosted_vllm/test",
            sample=True,
            conditions="C+Q",
            limit=3,
            run_dir=tmp_path / "r",
            progress=False,
            backend_options={"price": "3,15", "api_base": server.url},
        )
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["backend"]["price_per_million"] == [3.0, 15.0]
    usage = summary["usage"]
    assert usage["prompt_tokens"] > 0
    assert summary["cost_usd"] == pytest.approx((3 * usage["prompt_tokens"] + 15 * usage["completion_tokens"]) / 1e6)


def test_a_folder_named_medvqa_in_the_working_directory_says_what_shadows_what(tmp_path):
    """Observed: a clone named `medvqa` in the working directory is imported as an empty namespace
    package before the editable install, and a plugin failed with "module 'medvqa' has no attribute
    'hookimpl'", blaming the plugin. Now the command and pytest (the conformance kit's plugin) say
    which folder shadows which package."""
    import subprocess
    import sys

    (tmp_path / "medvqa").mkdir()
    (tmp_path / "test_plugin.py").write_text("import medvqa\n\ndef test_hook():\n    assert medvqa.hookimpl\n")
    core = str(__import__("pathlib").Path(plugins.__file__).parent)
    expected = (
        f"the folder {tmp_path / 'medvqa'} shadows the installed medvqa package (its core is {core}): "
        f"Python imports that folder (which has no __init__.py) as 'medvqa'"
    )
    for command in (["-m", "medvqa.cli", "list"], ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plugin.py"]):
        done = subprocess.run([sys.executable, *command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        assert expected in done.stdout + done.stderr, (command, (done.stdout + done.stderr)[-1500:])
        assert "has no attribute 'hookimpl'" not in done.stdout + done.stderr

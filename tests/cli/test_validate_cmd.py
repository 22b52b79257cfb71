"""`medvqa validate BENCH --data PATH [--json]`: findings, summary and exit status."""

import json

from click.testing import CliRunner

from medvqa.cli.validate_cmd import command
from tests.adapters.jmed48k.broken_release import EXPECTED, write_broken_release


def invoke(*args):
    return CliRunner().invoke(command, list(args))


def test_real_sample_passes_with_warnings(jmed_sample):
    result = invoke("jmed48k", "--data", str(jmed_sample))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[-1] == f"jmed48k: 0 error(s), 184 warning(s) in {jmed_sample}"
    assert all(line.startswith("warning: ") and "[image-missing]" in line for line in lines[:-1])


def test_broken_folder_exits_1_and_json_lists_every_finding(tmp_path):
    path = write_broken_release(tmp_path)
    result = invoke("jmed48k", "--data", str(tmp_path), "--json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert (doc["benchmark"], doc["errors"], doc["warnings"]) == ("jmed48k", 13, 1)
    assert {(f["section"], f["number"], f["rule"], f["level"]) for f in doc["findings"]} == EXPECTED
    assert {f["file"] for f in doc["findings"]} == {str(path)}
    text = invoke("jmed48k", "--data", str(tmp_path))
    assert text.exit_code == 1
    assert f"error: {path}: record A5: [gold-outside-options]" in text.output


def test_unknown_benchmark_and_missing_folder_are_clean_errors(tmp_path):
    unknown = invoke("nosuch", "--data", str(tmp_path))
    assert unknown.exit_code == 2 and "unknown benchmark 'nosuch'" in unknown.output
    empty = invoke("jmed48k", "--data", str(tmp_path / "absent"))
    assert empty.exit_code == 1 and "data folder not found" in empty.output

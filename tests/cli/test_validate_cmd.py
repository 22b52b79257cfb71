"""`medvqa validate BENCH --data PATH [--quiet] [--json]`: the count of every rule checked, the
findings, the total and the exit status."""

import json
import re

from click.testing import CliRunner

from medvqa.adapters.jmed48k.validate import RULES
from medvqa.cli.validate_cmd import command
from tests.adapters.jmed48k.broken_release import EXPECTED, write_broken_release

ROW = re.compile(r"^(\S+) +(\d+) +(\d+)  (.+)$")  # a rule line: rule, errors, warnings, what it finds


def invoke(*args):
    return CliRunner().invoke(command, list(args))


def rule_rows(output: str) -> dict[str, tuple[int, int]]:
    """{rule: (errors, warnings)} of the rule lines, which come first, under their header."""
    lines = output.splitlines()
    assert lines[0].split() == ["rule", "errors", "warnings", "what", "it", "finds"], lines[0]
    rows = {}
    for line in lines[1:]:
        m = ROW.match(line)
        if not m:
            break
        rows[m[1]] = (int(m[2]), int(m[3]))
    return rows


def test_real_sample_counts_every_rule_then_lists_its_warnings(jmed_sample):
    """The 184 Other/Unclear images the release omits are the only findings on the published
    sample: each of the 21 jmed48k rules and the no-answers rule has its line, 0 included."""
    result = invoke("jmed48k", "--data", str(jmed_sample))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    rows = rule_rows(result.output)
    assert list(rows) == [*RULES, "no-answers"] and len(rows) == 22
    assert {rule: n for rule, n in rows.items() if n != (0, 0)} == {"image-missing": (0, 184)}
    findings = lines[1 + len(rows):-1]
    assert len(findings) == 184
    assert all(line.startswith(f"warning: {jmed_sample}/JMed48k/") and "[image-missing]" in line for line in findings)
    assert lines[-1] == f"jmed48k: 0 error(s), 184 warning(s) in {jmed_sample}"
    quiet = invoke("jmed48k", "--data", str(jmed_sample), "--quiet")
    assert quiet.exit_code == 0
    assert quiet.output.splitlines() == [*lines[:1 + len(rows)], lines[-1]]


def test_broken_folder_exits_1_and_json_lists_every_finding(tmp_path):
    path = write_broken_release(tmp_path)
    result = invoke("jmed48k", "--data", str(tmp_path), "--json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert (doc["benchmark"], doc["errors"], doc["warnings"]) == ("jmed48k", 13, 1)
    counts = {r["rule"]: (r["errors"], r["warnings"]) for r in doc["rules"]}
    assert list(counts) == list(RULES)  # no-answers is checked only on data without errors
    assert {rule: n for rule, n in counts.items() if n != (0, 0)} == {
        "record": (1, 0), "required-field": (1, 0), "duplicate-record": (1, 0), "option-keys": (1, 0),
        "gold-format": (1, 0), "gold-outside-options": (2, 0), "no-options": (1, 0), "image-escape": (1, 0),
        "image-missing": (1, 1), "image-unreadable": (1, 0), "text-only-flag": (2, 0)}
    assert {r["rule"]: r["description"] for r in doc["rules"]} == RULES
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


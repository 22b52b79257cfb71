"""`medvqa validate BENCH --data PATH [--quiet] [--json]`: the count of every rule checked, the
findings, the total and the exit status; every path in one style."""

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from medvqa.adapters.jmed48k.validate import RULES
from medvqa.cli.main import cli
from medvqa.cli.validate_cmd import command
from medvqa.core.validation import shown_path
from tests.adapters.jmed48k.broken_release import EXPECTED, write_broken_release

SAMPLE_CELL = Path(__file__).parents[2] / "adapters" / "jmed48k" / "sample" / "JMed48k" / "Physician" / "Physician_2024"
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
    findings = lines[1 + len(rows) : -1]
    assert len(findings) == 184
    assert all(line.startswith(f"warning: {jmed_sample}/JMed48k/") and "[image-missing]" in line for line in findings)
    assert lines[-1] == f"jmed48k: 0 error(s), 184 warning(s) in {jmed_sample}"
    quiet = invoke("jmed48k", "--data", str(jmed_sample), "--quiet")
    assert quiet.exit_code == 0
    assert quiet.output.splitlines() == [*lines[: 1 + len(rows)], lines[-1]]


def test_broken_folder_exits_1_and_json_lists_every_finding(tmp_path):
    path = write_broken_release(tmp_path)
    result = invoke("jmed48k", "--data", str(tmp_path), "--json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert (doc["benchmark"], doc["errors"], doc["warnings"]) == ("jmed48k", 13, 1)
    counts = {r["rule"]: (r["errors"], r["warnings"]) for r in doc["rules"]}
    assert list(counts) == list(RULES)  # no-answers is checked only on data without errors
    assert {rule: n for rule, n in counts.items() if n != (0, 0)} == {
        "record": (1, 0),
        "required-field": (1, 0),
        "duplicate-record": (1, 0),
        "option-keys": (1, 0),
        "gold-format": (1, 0),
        "gold-outside-options": (2, 0),
        "no-options": (1, 0),
        "image-escape": (1, 0),
        "image-missing": (1, 1),
        "image-unreadable": (1, 0),
        "text-only-flag": (2, 0),
    }
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


def broken_copy(root: Path) -> Path:
    """The bundled sample's Physician 2024 cell copied under `root` and damaged four ways: A1's
    gold names no option, A3's image is deleted, B2's image is overwritten with text, and B3's
    second image leaves the folder. B1's image is absent as published (Other/Unclear: a warning)."""
    cell = root / "JMed48k" / "Physician" / "Physician_2024"
    shutil.copytree(SAMPLE_CELL, cell)
    (cell / "2024_images" / "A3_content.png").unlink()
    (cell / "2024_images" / "B2_content.png").write_text("not an image", encoding="utf-8")
    file = cell / "2024_CORRECTED.json"
    data = json.loads(file.read_text(encoding="utf-8"))
    by_id = {f"{q['section']}{q['question_number']}": q for q in data["questions"]}
    by_id["A1"]["correct_answer"] = ["Z"]
    by_id["B3"]["img"]["content_img"][1] = "../../../secret.png"
    file.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return file


def test_a_damaged_copy_counts_each_rule_and_prints_every_path_as_the_data_was_given(tmp_path, monkeypatch):
    """Given `./copy/` from the folder that holds it, every path printed, in the findings' file
    and in their messages alike, is `copy/...`: none absolute, none in another form; so is
    every path in `medvqa run`'s refusal of the same data."""
    broken_copy(tmp_path / "copy")
    monkeypatch.chdir(tmp_path)
    result = invoke("jmed48k", "--data", "./copy/")
    assert result.exit_code == 1
    rows = rule_rows(result.output)
    assert list(rows) == list(RULES)
    assert {rule: n for rule, n in rows.items() if n != (0, 0)} == {
        "gold-outside-options": (1, 0),
        "image-missing": (1, 1),
        "image-unreadable": (1, 0),
        "image-escape": (1, 0),
    }
    lines = result.output.splitlines()
    findings = lines[1 + len(rows) : -1]
    file = "copy/JMed48k/Physician/Physician_2024/2024_CORRECTED.json"
    assert [line.split(": [")[0] for line in findings] == [
        f"error: {file}: record A1",
        f"error: {file}: record A3",
        f"warning: {file}: record B1",
        f"error: {file}: record B2",
        f"error: {file}: record B3",
    ]
    assert (
        "cannot identify image file 'copy/JMed48k/Physician/Physician_2024/2024_images/B2_content.png'" in findings[3]
    )
    assert findings[4].endswith("is absolute or leaves the cell folder copy/JMed48k/Physician/Physician_2024")
    assert lines[-1] == "jmed48k: 4 error(s), 1 warning(s) in copy"
    assert str(tmp_path) not in result.output
    quiet = invoke("jmed48k", "--data", "./copy/", "-q")
    assert quiet.exit_code == 1 and quiet.output.splitlines() == [*lines[: 1 + len(rows)], lines[-1]]
    refused = CliRunner().invoke(cli, ["run", "jmed48k", "--data", "./copy/", "--model", "random"])
    assert refused.exit_code == 1 and str(tmp_path) not in refused.output
    assert "4 error(s) in the data (see `medvqa validate jmed48k --data copy`)" in refused.output
    assert [line.split(": [")[0] for line in refused.output.splitlines()[1:]] == [
        f"  {line.split(': [')[0]}" for line in findings if line.startswith("error")
    ]
    doc = json.loads(invoke("jmed48k", "--data", str(tmp_path / "copy"), "--json").output)
    assert doc["data"] == str(tmp_path / "copy")
    assert {f["file"] for f in doc["findings"]} == {str(tmp_path / file)}
    assert sum(r["errors"] for r in doc["rules"]) == doc["errors"] == 4
    assert sum(r["warnings"] for r in doc["rules"]) == doc["warnings"] == 1


def test_a_file_reached_another_way_is_printed_under_the_data_as_given(tmp_path, monkeypatch):
    """However a benchmark reached a file (absolute, through `..`), it is printed under the
    --data folder as the user wrote it; a file outside that folder stays as it was."""
    (tmp_path / "copy" / "sub").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert shown_path(tmp_path / "copy" / "sub" / "q.json", "./copy/") == "copy/sub/q.json"
    assert shown_path("copy/sub/../sub/q.json", "copy") == "copy/sub/q.json"
    assert shown_path("copy/sub/q.json", tmp_path / "copy") == str(tmp_path / "copy" / "sub" / "q.json")
    assert shown_path("./copy/", "copy") == "copy"
    assert shown_path("/elsewhere/q.json", "copy") == "/elsewhere/q.json"

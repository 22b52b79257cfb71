"""A release without its answer key (every `correct_answer` null, as `medvqa extract` writes it
without `--answers`): `run` has nothing to ask, says so in one line and exits 1, writing no run
directory and printing no path; `validate` flags it as an error."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from medvqa.cli.main import cli
from tests.conftest import REPO

SAMPLE = REPO / "adapters" / "jmed48k" / "sample" / "JMed48k"


def without_answers(tmp_path):
    data = tmp_path / "release"
    shutil.copytree(SAMPLE, data)
    for path in data.rglob("*_CORRECTED.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for questions in doc.values():
            for q in questions if isinstance(questions, list) else ():
                q["correct_answer"] = None
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return data


def test_a_run_with_nothing_to_ask_exits_non_zero_saying_why(tmp_path):
    data = without_answers(tmp_path)
    result = CliRunner().invoke(
        cli,
        ["run", "jmed48k", "--data", str(data), "--model", "random", "--run-dir", str(tmp_path / "run"), "--no-cache"],
    )
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: nothing to evaluate: all 18 items of jmed48k")
    assert "correct_answer is null" in lines[0] and str(tmp_path / "run") not in result.output
    assert not (tmp_path / "run").exists()


def test_validate_flags_a_release_whose_answers_are_all_missing(tmp_path):
    data = without_answers(tmp_path)
    result = CliRunner().invoke(cli, ["validate", "jmed48k", "--data", str(data), "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert [f["rule"] for f in doc["findings"] if f["level"] == "error"] == ["no-answers"]
    # the sample as bundled, with its answers: no such finding
    ok = CliRunner().invoke(cli, ["validate", "jmed48k", "--data", str(SAMPLE), "--json"])
    assert ok.exit_code == 0
    assert [f["rule"] for f in json.loads(ok.stdout)["findings"]] == ["image-missing"]  # B1, not redistributed
    assert {r["rule"]: (r["errors"], r["warnings"]) for r in doc["rules"]}["no-answers"] == (1, 0)
    assert {r["rule"]: (r["errors"], r["warnings"]) for r in json.loads(ok.stdout)["rules"]}["no-answers"] == (0, 0)

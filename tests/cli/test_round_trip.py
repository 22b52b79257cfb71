"""What medvqa writes, medvqa reads back: `medvqa export RUN` writes each pair's raw answer as
`response`, the field `medvqa import` and `--model replay:FILE` read, so the exported answers of a
run give the same records and the same numbers again, through the CLI; a replay file whose lines
lack the answer is one error naming the file, the line and the field."""

from __future__ import annotations

import json

from click.testing import CliRunner

from medvqa.cli.main import cli
from tests.conftest import REPO

SAMPLE = REPO / "adapters" / "jmed48k" / "sample" / "JMed48k"


def invoke(*args, codes=(0,)):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code in codes, result.output
    return result


def cells(summary: dict) -> dict:
    return {
        c: (v["n"], v["correct"], v["answered"], v["parse_failure"], v["missing"])
        for c, v in summary["conditions"].items()
    }


def test_exported_answers_import_and_replay_with_the_same_numbers(tmp_path):
    first = json.loads(
        invoke(
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "random",
            "--conditions",
            "C+Q,C+Q+I",
            "--run-dir",
            tmp_path / "first",
            "--no-cache",
            "--json",
        ).stdout
    )
    out = tmp_path / "pred.jsonl"
    exported = json.loads(invoke("export", tmp_path / "first", "--out", out, "--json").stdout)
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert exported["n_predictions"] == len(lines) == first["n_records"]
    assert all("response" in line for line in lines)

    imported = json.loads(
        invoke(
            "import",
            "jmed48k",
            out,
            "--data",
            SAMPLE,
            "--split",
            "sample",
            "--run-dir",
            tmp_path / "imported",
            "--json",
        ).stdout
    )
    replayed = json.loads(
        invoke(
            "run",
            "jmed48k",
            "--sample",
            "--model",
            f"replay:{out}",
            "--conditions",
            "C+Q,C+Q+I",
            "--run-dir",
            tmp_path / "replayed",
            "--no-cache",
            "--json",
        ).stdout
    )
    assert cells(imported) == cells(replayed) == cells(first)
    assert first["conditions"]["C+Q"]["n"] > 0 and sum(v[4] for v in cells(replayed).values()) == 0


def test_a_replay_line_without_the_answer_is_an_error_naming_file_line_and_field(tmp_path):
    bad = tmp_path / "answers.jsonl"
    bad.write_text(
        '{"item_id": "x", "condition": "C+Q", "response": "A"}\n'
        '{"item_id": "y", "condition": "C+Q", "prediction": "B"}\n',
        encoding="utf-8",
    )
    result = invoke(
        "run", "jmed48k", "--sample", "--model", f"replay:{bad}", "--run-dir", tmp_path / "r", "--no-cache", codes=(1,)
    )
    assert "answers.jsonl" in result.output and "line 2" in result.output and "'response'" in result.output
    assert not (tmp_path / "r").exists()  # nothing written

"""Generated MHLW-like PDFs → `medvqa extract` → `medvqa validate` → `medvqa run --model replay:`."""

import json

from click.testing import CliRunner

from medvqa.cli.main import cli
from tests.adapters.jmed48k.extract import pdf_fixtures as F


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_extract_validate_and_replay_end_to_end(tmp_path):
    booklet = F.question_booklet(tmp_path / "01AM.pdf")
    figures = F.figure_booklet(tmp_path / "01AMimage.pdf")
    answers = F.answer_pdf(tmp_path / "seitou.pdf")
    out = tmp_path / "release"
    result = invoke(
        "extract",
        "jmed48k",
        "--questions",
        booklet,
        "--figures",
        figures,
        "--answers",
        answers,
        "--profession",
        "physician",
        "--year",
        2030,
        "--out",
        out,
        "--json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] and report["counts"]["questions"] == 13

    validated = invoke("validate", "jmed48k", "--data", out, "--json")
    assert validated.exit_code == 0, validated.output
    assert not [f for f in json.loads(validated.output)["findings"] if f["level"] == "error"]

    # Replay the official answers for every scorable question: all must score correct.
    written = json.loads((out / "JMed48k/Physician/Physician_2030/2030_CORRECTED.json").read_text(encoding="utf-8"))
    replay = tmp_path / "gold.jsonl"
    lines = []
    for q in written["questions"]:
        gold = q["correct_answer"]
        if gold is None:
            continue
        first = gold[0] if isinstance(gold[0], list) else gold
        lines.append(
            {
                "item_id": f"Physician_2030_AM_Q{q['question_number']}",
                "condition": "C+Q",
                "response": json.dumps({"answer": first}, ensure_ascii=False),
            }
        )
    replay.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    run = invoke(
        "run",
        "jmed48k",
        "--data",
        out,
        "--split",
        "full",
        "--model",
        f"replay:{replay}",
        "--conditions",
        "C+Q",
        "--run-dir",
        tmp_path / "run",
        "--json",
    )
    assert run.exit_code == 0, run.output
    summary = json.loads(run.output)
    excluded = sum(1 for form, rec in F.ANSWER_FORMS.values() if rec is None)
    assert summary["n_items"] == 13 and summary["n_excluded"] == excluded == 4
    assert summary["n_records"] == 9 and summary["accuracy"] == {"C+Q": 1.0}


def test_extract_exits_1_when_a_key_names_a_missing_question(tmp_path):
    booklet = F.question_booklet(tmp_path / "01AM.pdf")
    answers = F.answer_csv(tmp_path / "key.csv", section="AM", extra={99: ("3", ["3"])})
    result = invoke(
        "extract",
        "jmed48k",
        "--questions",
        booklet,
        "--answers",
        answers,
        "--profession",
        "physician",
        "--year",
        2030,
        "--out",
        tmp_path / "out",
    )
    assert result.exit_code == 1
    assert "99" in result.output and "error" in result.output

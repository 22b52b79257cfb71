"""Scoring real GPT-5.2 outputs for the 120th physician exam (2026 cell of the sample)."""

import json
import re
from collections import Counter

import medvqa
from tests.conftest import shared_data


def gpt52_by_item():
    data = json.loads(shared_data("jmle2026", "results", "openai_gpt-5.2.json").read_text(encoding="utf-8"))
    out = {}
    for row in data["results"]:
        m = re.fullmatch(r"120([A-F])-(\d+)", row["question_id"])
        out[f"Physician_2026_{m[1]}_Q{m[2]}"] = row
    return data["summary"], out


def test_raw_outputs_in_an_unlisted_answer_style_are_parse_failures_not_guesses(jmed_sample):
    items = {it.id: it for it in medvqa.load("jmed48k", path=jmed_sample, years=[2026])}
    _, rows = gpt52_by_item()
    assert set(rows) == set(items)
    scores = [medvqa.score(items[i], row["raw_response"]) for i, row in rows.items()]
    # "【回答】b,e" is no answer phrase of the protocol: every choice response is an explicit parse
    # failure (counted, never guessed), although the file itself reports 97.0 %. The three
    # numeric-slot items are read as ../shared/papers/jmed48k.txt B.5 says, non-digits stripped:
    # A74 "【回答】0.40" -> "040" = gold ["0","4","0"] joined; A75 "【回答】315" -> "315";
    # D75 "【回答】28" -> "28": all three correct, as the file marks them.
    assert Counter(s.status for s in scores) == {"parse_failure": 397, "answered": 3}
    numeric = {i: s for i, s in zip(rows, scores) if s.status == "answered"}
    assert {i: s.predicted for i, s in numeric.items()} == {
        "Physician_2026_A_Q74": ("040",),
        "Physician_2026_A_Q75": ("315",),
        "Physician_2026_D_Q75": ("28",),
    }
    assert all(s.correct and rows[i]["correct"] for i, s in numeric.items())
    assert sum(s.correct for s in scores) == 3


def test_the_files_own_predictions_as_json_agree_with_its_correctness(jmed_sample):
    items = {it.id: it for it in medvqa.load("jmed48k", path=jmed_sample, years=[2026])}
    summary, rows = gpt52_by_item()
    agree = correct = 0
    for item_id, row in rows.items():
        s = medvqa.score(items[item_id], json.dumps({"answer": row["predicted"]}, ensure_ascii=False))
        correct += s.correct
        agree += s.correct == row["correct"]
    assert agree == 400
    assert correct == summary["correct"] == 388

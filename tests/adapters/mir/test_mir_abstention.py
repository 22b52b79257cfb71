"""Abstention under the MIR's own rule for blanks, on the official 200 questions of MIR 2026
(`../shared/data/mir`): a planted model right on 180 and wrong on 20 with stated confidences;
and models planted in the local OpenAI-compatible server (overconfident, calibrated) asked over
real HTTP, their stated confidences read back and calibrated.

The rule is SOURCE.txt's "The exam's rules": each wrong answer subtracts one third of a right
one, a blank scores 0 (`adapters/mir/rules.py`, `net_score`): the answer sheet's +3 / −1 / 0
divided by 3."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

import medvqa
from medvqa.adapters.mir.benchmark import MIR
from medvqa.cli.main import cli
from medvqa.core.abstention import PLAIN, Answers, BlankRule, abstention, halves
from medvqa.core.run.options import RunOptions, run
from tests.conftest import shared_data
from tests.openai_server import OpenAIServer

# the planted model: (right?, confidence, how many), over the official 200 in question order
PLANTED = ((True, 0.9, 150), (True, 0.6, 30), (False, 0.9, 5), (False, 0.6, 5), (False, 0.3, 10))


@pytest.fixture(scope="module")
def official_2026():
    items = medvqa.load("mir", path=shared_data("mir"), years=[2026])
    official = sorted((it for it in items if it.meta["official"]), key=lambda it: it.meta["number"])
    assert len(official) == 200  # SOURCE.txt: 1-200 without the six annulled, the reserves 201-206
    return official


@pytest.fixture(scope="module")
def planted(official_2026):
    records, i = [], 0
    for right, confidence, count in PLANTED:
        for it in official_2026[i : i + count]:
            gold = min(it.gold.keys)
            answer = gold if right else next(o.key for o in it.options if o.key != gold)
            records.append(
                {
                    "item_id": it.id,
                    "condition": "C+Q",
                    "predicted": [answer],
                    "correct": right,
                    "confidence": confidence,
                }
            )
        i += count
    return records


def test_mir_declares_its_net_score_as_its_blank_rule():
    rule = MIR().blank_rule()
    assert (rule.right, rule.wrong, rule.blank) == (1.0, pytest.approx(-1 / 3), 0.0)
    # SOURCE.txt's worked case: MIR 2025 o1 Pro, 183 right, 17 wrong, 0 blank -> 177.33
    assert rule.points(183, 17, 0) == pytest.approx(177.33, abs=0.005)


def test_net_score_at_each_threshold_is_the_hand_computation(planted):
    out = abstention(Answers.from_records(planted), MIR().blank_rule())
    # answering everything: 180 − 20/3 = 173.333
    assert out["answer_all"]["points"] == pytest.approx(180 - 20 / 3)
    rows = {r["threshold"]: r for r in out["by_threshold"]}
    assert sorted(rows) == [0.3, 0.6, 0.9]
    # at 0.3 every item is answered: 173.333 again
    assert (rows[0.3]["right"], rows[0.3]["wrong"], rows[0.3]["blank"]) == (180, 20, 0)
    assert rows[0.3]["points"] == pytest.approx(173.3333, abs=1e-4)
    # at 0.6 the ten wrong answers at 0.3 are left blank: 180 − 10/3 = 176.667
    assert (rows[0.6]["right"], rows[0.6]["wrong"], rows[0.6]["blank"]) == (180, 10, 10)
    assert rows[0.6]["points"] == pytest.approx(176.6667, abs=1e-4)
    # at 0.9 only the 150 + 5 stated at 90 % are answered: 150 − 5/3 = 148.333
    assert (rows[0.9]["right"], rows[0.9]["wrong"], rows[0.9]["blank"]) == (150, 5, 45)
    assert rows[0.9]["points"] == pytest.approx(148.3333, abs=1e-4)
    # the MIR declares no pass mark: no verdict at any threshold
    assert {r["passed"] for r in out["by_threshold"]} == {None}
    # in-sample, the best threshold is 0.6: +10/3 = 3.333 points
    assert out["in_sample"]["threshold"] == 0.6
    assert out["in_sample"]["gain"] == pytest.approx(10 / 3)


def test_cross_fitted_gain_and_its_interval(planted, capsys):
    answers = Answers.from_records(planted)
    out = abstention(answers, MIR().blank_rule())["cross_fitted"]
    # The seeded halves: each holds some of the ten wrong answers at 0.3 and at least 2 right
    # answers at 0.6 (checked here), so on each half 0.6 beats 0.3 (it blanks the half's wrong
    # answers at 0.3, +1/3 each, and blanks nothing right) and beats 0.9 (which would blank the
    # half's right answers at 0.6, −1 each, to save at most 5 × 1/3 = 1.67). Each half's 0.6,
    # applied to the other, blanks that half's wrong answers at 0.3: all ten are blanked, and
    # the cross-fitted sheet is 180 right, 10 wrong, 10 blank: 176.667, a gain of 10/3 = 3.333.
    first, second = halves(200)
    wrong_03 = ~answers.correct & (answers.confidence == 0.3)
    right_06 = answers.correct & (answers.confidence == 0.6)
    for half in (first, second):
        assert (wrong_03 & half).sum() >= 1 and (right_06 & half).sum() >= 2
    assert [h["threshold"] for h in out["halves"]] == [0.6, 0.6]
    assert [h["chosen_on"] + h["reported_on"] for h in out["halves"]] == [200, 200]
    assert (out["right"], out["wrong"], out["blank"]) == (180, 10, 10)
    assert out["points"] == pytest.approx(176.6667, abs=1e-4)
    assert out["gain"] == pytest.approx(10 / 3)
    # The interval: a paired bootstrap of per-item points, +1/3 on 10 items of 200, 0 elsewhere.
    # The count of those 10 in a resample is about Binomial(200, 0.05): sd √(200·0.05·0.95) =
    # 3.08 items, 1.03 points; 3.333 ± 1.96·1.03 is about [1.3, 5.4]: above 0.
    low, high = out["ci"]
    assert 0 < low < 10 / 3 < high
    assert low == pytest.approx(1.3, abs=0.4) and high == pytest.approx(5.4, abs=0.4)
    print(f"MIR 2026 cross-fitted gain {out['gain']:+.2f} points [{low:.2f}, {high:.2f}] ({out['ci_method']})")
    assert "+3.33 points [" in capsys.readouterr().out


def test_a_plain_exam_never_gains_from_blanks(planted):
    # a blank scores as a wrong answer: 0.6 gives 180 right, 0.3 gives 180 right; the lowest
    # of equal points (answering most) is chosen, and no threshold beats answering everything
    out = abstention(Answers.from_records(planted), PLAIN)
    assert out["answer_all"]["points"] == 180
    assert [r["points"] for r in out["by_threshold"]] == [180, 180, 150]
    assert out["in_sample"]["threshold"] == 0.3 and out["in_sample"]["gain"] == 0
    assert out["cross_fitted"]["gain"] == 0


def test_the_pass_verdict_follows_the_threshold(planted):
    # the MIR's net score with a pass mark of 175 points: answering everything (173.333) fails,
    # blanking below 0.6 (176.667) passes, blanking below 0.9 (148.333) fails
    rule = BlankRule(name="net with a mark", right=1.0, wrong=-1 / 3, pass_mark=175)
    out = abstention(Answers.from_records(planted), rule)
    assert out["answer_all"]["passed"] is False
    assert [r["passed"] for r in out["by_threshold"]] == [False, True, False]
    assert out["cross_fitted"]["passed"] is True


def test_prohibited_choices_fail_past_the_limit():
    # four answers, two of them prohibited choices at low confidence; limit 1: answering all
    # makes 2 prohibited choices (fail), blanking below 0.5 makes 0 (pass)
    answers = Answers.of([0.9, 0.8, 0.2, 0.1], [True, True, False, False], prohibited=[False, False, True, True])
    rule = BlankRule(name="with a prohibited limit", prohibited_limit=1)
    out = abstention(answers, rule)
    rows = {r["threshold"]: r for r in out["by_threshold"]}
    assert (rows[0.1]["prohibited"], rows[0.1]["passed"]) == (2, False)
    assert (rows[0.8]["prohibited"], rows[0.8]["passed"]) == (0, True)


def test_items_without_a_confidence_are_always_answered():
    # None cannot be ranked: it is answered at every threshold; blank stays blank
    answers = Answers.of([None, 0.4, 0.9], [False, False, True], blank=[False, False, False])
    sheet = answers.sheet(BlankRule(name="net", wrong=-1 / 3), 0.9)
    assert (sheet["right"], sheet["wrong"], sheet["blank"]) == (1, 1, 1)
    assert np.isnan(answers.confidence[0])


def planted_run(tmp_path, official_2026, planted):
    """A saved run of the planted model: each official question answered (C+Q) with its option
    and its stated confidence; the year's other valid questions are recorded missing."""
    bench = MIR()
    data = shared_data("mir")
    items = bench.load(data, years=[2026])
    by_id = {it.id: it for it in items}
    answers = [
        (
            by_id[r["item_id"]],
            "C+Q",
            json.dumps({"answer": r["predicted"], "confidence": round(100 * r["confidence"])}),
            {"confidence": r["confidence"], "confidence_method": "stated"},
        )
        for r in planted
    ]
    run_dir = tmp_path / "run"
    load = {"data": str(data), "years": [2026]}
    medvqa.write_run(bench, items, answers, run_dir, model="planted", load=load, saved=False)
    return run_dir


def test_the_audit_of_a_saved_run_shows_calibration_and_the_gain(tmp_path, official_2026, planted):
    run_dir = planted_run(tmp_path, official_2026, planted)
    doc = medvqa.audit(str(run_dir), resamples=2000)
    entry = doc["confidence"]["conditions"]["C+Q"]
    overall = entry["overall"]
    # 200 records with a confidence; the three other valid questions are missing (no confidence)
    assert (overall["n"], overall["n_without_confidence"], overall["methods"]) == (200, 3, {"stated": 200})
    # ECE over 10 equal-width bins: bin (0.8, 0.9]: 155 items, 150 right: |0.9677 − 0.9| =
    # 0.0677; bin (0.5, 0.6]: 35 items, 30 right: |0.8571 − 0.6| = 0.2571; bin (0.2, 0.3]: 10
    # items, none right: 0.3. ECE = (155·0.0677 + 35·0.2571 + 10·0.3)/200 = (10.5 + 9 + 3)/200
    # = 22.5/200 = 0.1125
    assert overall["ece"]["value"] == pytest.approx(0.1125)
    # AUROC: right answers (150 at 0.9, 30 at 0.6) over wrong ones (5 at 0.9, 5 at 0.6, 10 at
    # 0.3): 150·(15 + 5/2) + 30·(10 + 5/2) = 2625 + 375 = 3000 of 180·20 = 3600 pairs: 0.8333
    assert overall["auroc"]["value"] == pytest.approx(3000 / 3600)
    a = entry["abstention"]
    # the three missing records are blanks (0 points) whatever the threshold: the same sheet
    assert a["answer_all"]["points"] == pytest.approx(180 - 20 / 3)
    assert a["cross_fitted"]["gain"] == pytest.approx(10 / 3)
    assert a["cross_fitted"]["ci"][0] > 0
    # the existing sections are untouched; no image-removal pairs carry confidences here
    assert doc["confidence"]["image_removal"] is None and "paired" in doc


def test_medvqa_audit_prints_the_cross_fitted_gain_with_its_interval(tmp_path, official_2026, planted):
    run_dir = planted_run(tmp_path, official_2026, planted)
    result = CliRunner().invoke(cli, ["audit", str(run_dir)])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("Abstention, C+Q (MIR net score)"))
    print(line)
    # answering everything 173.33; cross-fitted 176.67, a gain of +3.33 with its interval
    assert "answering everything 173.33 points" in line and "176.67: gain +3.33 [" in line
    assert re.search(r"gain \+3\.33 \[\d\.\d\d, \d\.\d\d\]", line)


def test_the_audit_page_shows_the_confidence_numbers_of_the_json(tmp_path, official_2026, planted):
    run_dir = planted_run(tmp_path, official_2026, planted)
    page_path = tmp_path / "audit.html"
    result = CliRunner().invoke(cli, ["audit", str(run_dir), "--html", str(page_path)])
    assert result.exit_code == 0, result.output
    page = page_path.read_text(encoding="utf-8")
    doc = medvqa.audit(str(run_dir))
    cells = {
        tuple(json.loads(html.unescape(path))): (kind, text)
        for path, kind, text in re.findall(r'data-path="([^"]+)" data-format="([a-z_]+)">([^<]*)<', page)
    }
    shown = {path: value for path, value in cells.items() if path[0] == "confidence"}
    # ECE 0.1125 as a percentage, the gain 3.333 and its interval, every one the JSON's
    overall = ("confidence", "conditions", "C+Q", "overall")
    assert shown[(*overall, "ece", "value")] == ("pct", "11.2")
    gain = ("confidence", "conditions", "C+Q", "abstention", "cross_fitted")
    assert shown[(*gain, "gain")] == ("decimal", "3.333")
    low, high = doc["confidence"]["conditions"]["C+Q"]["abstention"]["cross_fitted"]["ci"]
    assert shown[(*gain, "ci", 0)] == ("decimal", f"{low:.3f}") and shown[(*gain, "ci", 1)] == (
        "decimal",
        f"{high:.3f}",
    )
    assert 'id="fig-reliability"' in page and 'id="fig-risk-coverage"' in page
    # the reliability diagram marks the three bins: (0.9, 0.968), (0.6, 0.857), (0.3, 0)
    assert "confidence 0.900, accuracy 0.968, n 155" in page and "confidence 0.300, accuracy 0.000, n 10" in page


def planted_server_run(tmp_path, official_2026, stated: dict[str, tuple[bool, int]], name: str):
    """MIR 2026's official 200 asked (C+Q) of the local OpenAI-compatible server, which answers
    each question from `stated` ({item id: (right?, stated confidence 0-100)}) over real HTTP."""
    by_stem = {it.question[:80]: it for it in official_2026}

    def reply(prompt: str) -> str | None:
        item = next((it for stem, it in by_stem.items() if stem in prompt), None)
        if item is None:
            return None
        right, confidence = stated[item.id]
        gold = min(item.gold.keys)
        key = gold if right else next(o.key for o in item.options if o.key != gold)
        label = next(o.label for o in item.options if o.key == key)
        return json.dumps({"answer": [label], "confidence": confidence})

    with OpenAIServer(reply=reply) as server:
        run(
            RunOptions(
                benchmark="mir",
                model="hosted_vllm/test",
                data=str(shared_data("mir")),
                select={"official": ["True"], "year": ["2026"]},
                conditions="C+Q",
                run_dir=str(tmp_path / name),
                backend_options={"api_base": [server.url]},
            ),
            progress=False,
        )
    return medvqa.audit(str(tmp_path / name), resamples=200)["confidence"]["conditions"]["C+Q"]["overall"]


def test_planted_models_over_http_overconfident_and_calibrated(tmp_path, official_2026):
    ids = [it.id for it in official_2026]
    # overconfident: 95 % stated on every question, right on 120 of 200 (60 %): one bin,
    # |0.60 − 0.95| = 0.35
    over = planted_server_run(tmp_path, official_2026, {i: (k < 120, 95) for k, i in enumerate(ids)}, "over")
    assert over["n"] == 200 and over["accuracy"] == pytest.approx(0.6)
    assert over["ece"]["value"] == pytest.approx(0.35) and over["methods"] == {"stated": 200}
    # calibrated: 90 % stated on 100 questions (90 right), 50 % on 100 (50 right): each bin's
    # accuracy is its confidence, ECE 0; Brier (90·0.01 + 10·0.81 + 100·0.25)/200 = 34/200 = 0.17
    plan = {i: (k < 90, 90) for k, i in enumerate(ids[:100])} | {i: (k < 50, 50) for k, i in enumerate(ids[100:])}
    calibrated = planted_server_run(tmp_path, official_2026, plan, "calibrated")
    assert calibrated["ece"]["value"] == pytest.approx(0, abs=1e-12)
    assert calibrated["brier"]["value"] == pytest.approx(0.17)

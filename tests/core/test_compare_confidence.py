"""`compare` where records carry a confidence: the calibration table and the abstention under each
exam's rule for blanks, per model × benchmark × condition, the audit's numbers for the same run,
worked out by hand.

Two planted models answer the official 200 questions of MIR 2026 (`../shared/data/mir`) under
`C+Q` with a stated confidence, written as saved runs (the three other valid questions of the
year are recorded missing, with no confidence):
- `overconfident` states 95 % on every question and is right on the first 120 (60 %);
- `graded` is right on 150 stated at 90 % and 30 at 60 %, wrong on 5 at 90 %, 5 at 60 % and 10
  at 30 % (the planted model of tests/adapters/mir/test_mir_abstention.py).

The MIR's rule for blanks is SOURCE.txt's "The exam's rules" (`adapters/mir/rules.py`,
`net_score`): +1 a right answer, −1/3 a wrong one, 0 a blank.
"""

from __future__ import annotations

import html
import json
import re

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.adapters.mir.benchmark import MIR
from medvqa.cli.main import cli
from medvqa.core.compare.comparison import compare_runs
from medvqa.core.compare.page import page
from tests.conftest import shared_data

RESAMPLES = 200
# (right?, confidence, how many) over the official 200 in question order
PLANTED = {
    "overconfident": ((True, 0.95, 120), (False, 0.95, 80)),
    "graded": ((True, 0.9, 150), (True, 0.6, 30), (False, 0.9, 5), (False, 0.6, 5), (False, 0.3, 10)),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare-confidence")
    bench, data = MIR(), shared_data("mir")
    items = bench.load(data, years=[2026])
    official = sorted((it for it in items if it.meta["official"]), key=lambda it: it.meta["number"])
    assert len(official) == 200
    out = {}
    for name, planted in PLANTED.items():
        answers, i = [], 0
        for right, confidence, count in planted:
            for it in official[i : i + count]:
                gold = min(it.gold.keys)
                answer = gold if right else next(o.key for o in it.options if o.key != gold)
                answers.append(
                    (
                        it,
                        "C+Q",
                        json.dumps({"answer": [answer], "confidence": round(100 * confidence)}),
                        {"confidence": confidence, "confidence_method": "stated"},
                    )
                )
            i += count
        medvqa.write_run(
            bench, items, answers, tmp / name, model=name, load={"data": str(data), "years": [2026]}, saved=False
        )
        out[name] = tmp / name
    return out


@pytest.fixture(scope="module")
def doc(runs):
    return compare_runs([runs["overconfident"], runs["graded"]], resamples=RESAMPLES).as_json()


def rows(doc, section):
    return {r["model"]: r for r in doc[section]}


def test_calibration_of_each_model_by_hand(doc):
    over, graded = rows(doc, "calibration")["overconfident"], rows(doc, "calibration")["graded"]
    for row in (over, graded):
        assert (row["benchmark"], row["condition"], row["n"], row["n_records"], row["n_without_confidence"]) == (
            "mir",
            "C+Q",
            200,
            203,
            3,
        )
        assert row["methods"] == {"stated": 200} and row["ece_bins"] == 10
    # overconfident: one bin (0.9, 1.0], accuracy 120/200 = 0.6: ECE |0.6 − 0.95| = 0.35;
    # Brier (120·0.05² + 80·0.95²)/200 = (0.3 + 72.2)/200 = 0.3625; every confidence ties, so
    # AUROC 0.5 (each right-wrong pair counts half); one point of the curve, coverage 1 at risk
    # 0.4: AURC 0.4
    assert (over["accuracy"], over["mean_confidence"]) == (pytest.approx(0.6), pytest.approx(0.95))
    assert over["ece"] == pytest.approx(0.35) and over["brier"] == pytest.approx(0.3625)
    assert over["auroc"] == pytest.approx(0.5) and over["aurc"] == pytest.approx(0.4)
    assert over["ece_ci_low"] <= 0.35 <= over["ece_ci_high"]
    # graded: bins (0.8, 0.9]: 155 items, 150 right: |150/155 − 0.9| = 0.0677; (0.5, 0.6]: 35
    # items, 30 right: |30/35 − 0.6| = 0.2571; (0.2, 0.3]: 10 items, none right: 0.3;
    # ECE (155·0.0677 + 35·0.2571 + 10·0.3)/200 = (10.5 + 9 + 3)/200 = 0.1125.
    # Brier (150·0.1² + 30·0.4² + 5·0.9² + 5·0.6² + 10·0.3²)/200 = (1.5 + 4.8 + 4.05 + 1.8 +
    # 0.9)/200 = 13.05/200 = 0.06525.
    # AUROC: right answers over wrong ones below them, ties half: 150·(15 + 5/2) + 30·(10 + 5/2)
    # = 3000 of 180·20 = 3600 pairs.
    # AURC: answering at ≥ 0.9 covers 155 with 5 wrong, at ≥ 0.6 190 with 10 wrong, at ≥ 0.3 200
    # with 20 wrong: 0.775·5/155 + 0.175·10/190 + 0.05·20/200 = 0.025 + 0.00921 + 0.005 = 0.03921
    assert graded["ece"] == pytest.approx(0.1125) and graded["brier"] == pytest.approx(0.06525)
    assert graded["auroc"] == pytest.approx(3000 / 3600)
    assert graded["aurc"] == pytest.approx(0.775 * 5 / 155 + 0.175 * 10 / 190 + 0.05 * 0.1)
    assert graded["aurc_ci_low"] <= graded["aurc"] <= graded["aurc_ci_high"]
    bins = {round(b["confidence"], 3): (b["n"], round(b["accuracy"], 4)) for b in graded["reliability"]}
    assert bins == {0.9: (155, round(150 / 155, 4)), 0.6: (35, round(30 / 35, 4)), 0.3: (10, 0.0)}
    assert [(p["coverage"], p["risk"]) for p in graded["risk_coverage"]] == [
        (pytest.approx(0.775), pytest.approx(5 / 155)),
        (pytest.approx(0.95), pytest.approx(10 / 190)),
        (1.0, pytest.approx(0.1)),
    ]


def test_abstention_of_each_model_under_the_mirs_net_score(doc):
    over, graded = rows(doc, "abstention")["overconfident"], rows(doc, "abstention")["graded"]
    assert over["rule"] == graded["rule"] == MIR().blank_rule().name
    # overconfident: answering everything 120 − 80/3 = 93.333; one confidence level, so every
    # threshold answers everything: gain 0
    assert over["answer_all_points"] == pytest.approx(120 - 80 / 3) and over["gain"] == 0
    assert over["thresholds"] == [0.95, 0.95] and over["in_sample_gain"] == pytest.approx(0, abs=1e-9)
    # graded: answering everything 180 − 20/3 = 173.333; the ten wrong answers at 30 % left blank
    # gives 180 − 10/3 = 176.667 in-sample, and cross-fitted (each half chooses 0.6, the other half
    # reported at it) the same sheet: a gain of 10/3
    assert graded["answer_all_points"] == pytest.approx(180 - 20 / 3)
    assert graded["thresholds"] == [0.6, 0.6] and graded["points"] == pytest.approx(180 - 10 / 3)
    assert graded["gain"] == pytest.approx(10 / 3) and graded["in_sample_gain"] == pytest.approx(10 / 3)
    assert 0 < graded["gain_ci_low"] <= 10 / 3 <= graded["gain_ci_high"]
    assert graded["ci_method"] and graded["n"] == 203 and graded["n_without_confidence"] == 3


def test_compares_numbers_are_the_audits_for_the_same_run(runs, doc):
    """One computation: each compare row holds the audit's own numbers (intervals too) for the run."""
    for name, run in runs.items():
        section = medvqa.audit(str(run), resamples=RESAMPLES)["confidence"]["conditions"]["C+Q"]
        overall, a = section["overall"], section["abstention"]
        row = rows(doc, "calibration")[name]
        assert (row["n"], row["accuracy"], row["mean_confidence"]) == (
            overall["n"],
            overall["accuracy"],
            overall["mean_confidence"],
        )
        for key in ("ece", "brier", "auroc", "aurc"):
            assert row[key] == overall[key]["value"]
            assert [row[f"{key}_ci_low"], row[f"{key}_ci_high"]] == (overall[key]["ci"] or [None, None])
        assert row["ece_equal_mass"] == overall["ece"]["equal_mass"]["value"]
        assert row["reliability"] == overall["ece"]["reliability"] and row["risk_coverage"] == overall["risk_coverage"]
        ab = rows(doc, "abstention")[name]
        cf = a["cross_fitted"]
        assert (ab["answer_all_points"], ab["points"], ab["gain"], [ab["gain_ci_low"], ab["gain_ci_high"]]) == (
            a["answer_all"]["points"],
            cf["points"],
            cf["gain"],
            cf["ci"] or [None, None],
        )
        assert (ab["passed"], ab["answer_all_passed"]) == (cf["passed"], a["answer_all"]["passed"])


def test_runs_without_a_confidence_have_no_confidence_keys(tmp_path):
    plain = tmp_path / "plain"
    medvqa.run("jmed48k", "random", sample=True, conditions="C+Q", run_dir=str(plain), cache=False, progress=False)
    out = compare_runs([plain], resamples=100).as_json()
    assert "calibration" not in out and "abstention" not in out
    frame = medvqa.compare([plain], resamples=100)
    assert "calibration" not in frame.attrs and "abstention" not in frame.attrs


def test_json_markdown_and_latex_show_the_tables(runs, doc):
    args = ["compare", str(runs["overconfident"]), str(runs["graded"]), "--resamples", str(RESAMPLES)]
    as_json = CliRunner().invoke(cli, [*args, "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["calibration"] == json.loads(json.dumps(doc["calibration"]))
    md = CliRunner().invoke(cli, args)
    assert md.exit_code == 0, md.output
    text = md.output
    assert "## Calibration (records that carry a confidence" in text and "## Abstention under each exam's" in text
    table = text[text.index("## Calibration") :].split("\n## ", 1)[0]
    # model, benchmark, condition, n, accuracy %, mean confidence %, ECE %, then the ECE interval
    assert "| overconfident | mir | C+Q | 200 | 60.0 | 95.0 | 35.0 | [" in table
    assert "| graded | mir | C+Q | 200 | 90.0 | 81.8 | 11.2 | [" in table  # mean confidence 163.5/200
    assert "| 0.362 | 0.500 | 0.400 |" in table and "| 0.065 | 0.833 | 0.039 |" in table
    assert table.count("stated 200") == 2
    table = text[text.index("## Abstention") :].split("\n## ", 1)[0]
    # n, points answering everything, its verdict, cross-fitted points, its verdict, the gain: the
    # MIR's rule has no pass mark, the exam's own line is the year's best candidate (188 of 200
    # right), which neither model reaches either way
    fail = "MIR 2026 (without images) (best candidate (reference)) fail"
    assert f"| MIR net score | 203 | 173.333 | {fail} | 176.667 | {fail} | 3.333 |" in table
    assert f"| MIR net score | 203 | 93.333 | {fail} | 93.333 | {fail} |" in table
    latex = CliRunner().invoke(cli, [*args, "--format", "latex"])
    assert latex.exit_code == 0, latex.output
    assert r"\caption{Calibration (records that carry a confidence" in latex.output
    assert "graded & mir & C+Q & 200 & 90.0 & 81.8 & 11.2 & [" in latex.output
    assert r"\caption{Abstention under each exam's rule for blanks}" in latex.output


def test_the_page_tags_each_number_and_draws_each_models_charts(doc):
    text = page(doc)
    found = re.findall(r'data-path="([^"]*)" data-format="[^"]*">([^<]*)<', text)
    shown = {tuple(json.loads(html.unescape(path))): html.unescape(value) for path, value in found}
    i = next(k for k, r in enumerate(doc["calibration"]) if r["model"] == "graded")
    assert shown[("calibration", i, "ece")] == "11.2" and shown[("calibration", i, "auroc")] == "0.833"
    assert shown[("calibration", i, "ece_ci_low")] == f"{100 * doc['calibration'][i]['ece_ci_low']:.1f}"
    j = next(k for k, r in enumerate(doc["abstention"]) if r["model"] == "graded")
    assert shown[("abstention", j, "gain")] == "3.333"
    assert shown[("abstention", j, "gain_ci_low")] == f"{doc['abstention'][j]['gain_ci_low']:.3f}"
    # one reliability diagram and one risk-coverage chart per model, drawn by the audit page's code
    for k in range(2):
        assert f'id="fig-reliability-{k}"' in text and f'id="fig-risk-coverage-{k}"' in text
    assert "mir C+Q: confidence 0.900, accuracy 0.968, n 155" in text
    assert "mir C+Q: confidence 0.950, accuracy 0.600, n 200" in text
    assert "mir C+Q: confidence ≥ 0.6, coverage 0.950, risk 0.053" in text


def test_the_python_api_keeps_the_tables_in_attrs(runs, doc):
    frame = medvqa.compare([runs["overconfident"], runs["graded"]], resamples=RESAMPLES)
    assert frame.attrs["calibration"] == doc["calibration"] and frame.attrs["abstention"] == doc["abstention"]


def test_the_audit_gives_each_stratum_levels_own_abstention(runs):
    """Per stratum: the MIR's `image` stratum splits the graded model's 200 answered questions into
    the 24 with an image (questions 1-12 and 14-25, all among the first 150: right at 90 %) and
    the 176 without; the three unanswered valid questions are blanks."""
    doc = medvqa.audit(str(runs["graded"]), by=["image"], resamples=RESAMPLES)
    entry = doc["confidence"]["conditions"]["C+Q"]
    levels = entry["abstention_by"]["image"]
    with_image, without = levels["true"], levels["false"]
    # with an image: 24 right at one confidence, 24 points whatever the threshold: gain 0
    assert (with_image["n"], with_image["answer_all"]["points"], with_image["cross_fitted"]["gain"]) == (24, 24, 0)
    # without: 126 right and 5 wrong at 90 %, 30 right and 5 wrong at 60 %, 10 wrong at 30 %, and
    # the 3 blanks: answering everything 156 − 20/3 = 149.333; leaving the ten at 30 % blank
    # 156 − 10/3 = 152.667, which each seeded half of this level chooses (thresholds 0.6, 0.6)
    assert without["n"] == 179 and without["answer_all"]["points"] == pytest.approx(156 - 20 / 3)
    assert [h["threshold"] for h in without["cross_fitted"]["halves"]] == [0.6, 0.6]
    assert without["cross_fitted"]["gain"] == pytest.approx(10 / 3)
    assert without["in_sample"]["gain"] == pytest.approx(10 / 3)
    # a level's points are not the exam's: no verdict, no pass lines
    assert without["cross_fitted"]["passed"] is None and "verdict" not in without["cross_fitted"]
    # the levels' points add up to the condition's answering everything
    total = with_image["answer_all"]["points"] + without["answer_all"]["points"]
    assert total == pytest.approx(entry["abstention"]["answer_all"]["points"])
    result = CliRunner().invoke(cli, ["audit", str(runs["graded"]), "--by", "image", "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert "| C+Q | image | false | 179 | 149.33 | 152.67 | +3.33 [" in result.output


def test_the_audit_page_shows_each_stratum_levels_abstention(runs, tmp_path):
    target = tmp_path / "audit.html"
    result = CliRunner().invoke(
        cli, ["audit", str(runs["graded"]), "--by", "image", "--resamples", "200", "--html", str(target)]
    )
    assert result.exit_code == 0, result.output
    found = re.findall(r'data-path="([^"]*)" data-format="[^"]*">([^<]*)<', target.read_text(encoding="utf-8"))
    shown = {tuple(json.loads(html.unescape(path))): html.unescape(value) for path, value in found}
    level = ("confidence", "conditions", "C+Q", "abstention_by", "image", "false")
    assert shown[(*level, "answer_all", "points")] == "149.333" and shown[(*level, "cross_fitted", "gain")] == "3.333"
    assert shown[(*level[:3], "abstention", "cross_fitted", "gain")] == "3.333"

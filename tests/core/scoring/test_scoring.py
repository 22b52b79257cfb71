"""Format-aware scoring against JMed48k Appendix B.5–B.6, and the conventions adapters declare:
the protocol's sentences with their examples, then real data."""

import json
from math import comb

import pytest

import medvqa
from medvqa.core import plugins
from medvqa.core.benchmark import AnswerConventions, Benchmark
from medvqa.core.inference.base import Response
from medvqa.core.items import Gold, Item, Option
from medvqa.core.run.recording import make_record, rescore_record
from medvqa.core.scoring.score import Score, chance_of_correct, score, scoring_mode
from medvqa.ja import JAPANESE, select_count

JA = (JAPANESE,)


def item(gold, *, k=5, question="Which is appropriate?", n_select=None, answer_format="choice", options=True):
    opts = tuple(Option(key=chr(65 + i), label=chr(97 + i), text=f"option {i}") for i in range(k)) if options else ()
    return Item(
        id="q",
        benchmark="t",
        question=question,
        options=opts,
        gold=Gold.from_json(gold),
        n_select=n_select,
        answer_format=answer_format,
    )


def answer(*keys):
    return json.dumps({"answer": list(keys)})


# Gold formats (B.5)
def test_single_key_equality():
    """B.5: "single key equality"."""
    it = item(["C"])
    assert scoring_mode(it) == "single"
    assert score(it, answer("c")).correct
    assert not score(it, answer("d")).correct
    assert not score(it, answer("c", "d")).correct


def test_multi_key_set_equality_without_partial_credit():
    """B.5: "multi-key set equality, no partial credit"."""
    it = item(["B", "D"])
    assert scoring_mode(it) == "set"
    assert score(it, answer("d", "b")).correct
    assert not score(it, answer("b")).correct
    assert not score(it, answer("b", "d", "e")).correct
    assert score(it, '["d", "b"]').correct  # a bare JSON array is consumed directly


def test_alternatives_any_one_suffices():
    """B.5: "alternatives: correct iff any alternative matches under its own rule"."""
    it = item([["A"], ["C"]])
    assert scoring_mode(it) == "alternatives"
    assert score(it, answer("a")).correct and score(it, answer("c")).correct
    assert not score(it, answer("a", "c")).correct
    assert not score(it, answer("b")).correct


def test_alternatives_of_sets_each_under_its_own_rule():
    it = item([["B", "D"], ["C", "D"]])
    assert score(it, answer("d", "c")).correct
    assert not score(it, answer("b", "c")).correct


def test_ordering_with_a_sequence_cue_compares_positions():
    """B.5: "ordering: position by position, triggered by a multi-element gold plus a sequence cue
    in the stem (順に, 順番, order)"; arrows give the order ("B->E->C" is ["B","E","C"])."""
    it = item(["C", "A", "E"], question="処置を行う順に並べよ。")
    assert scoring_mode(it, JA) == "ordering"
    assert score(it, '{"answer": "c -> a -> e"}', patterns=JA).correct
    assert score(it, '{"answer": ["c->a->e"]}', patterns=JA).correct
    assert score(it, "C→A→E", patterns=JA).correct
    assert not score(it, answer("a", "c", "e"), patterns=JA).correct
    assert scoring_mode(it) == "set"  # the cue is Japanese: without the adapter's patterns it is a set


def test_english_order_cue_but_not_in_order_to():
    assert scoring_mode(item(["B", "A"], question="Put the steps in the correct order.")) == "ordering"
    assert scoring_mode(item(["B", "A"], question="In order to confirm, which two tests?")) == "set"


def test_ordering_cue_ignored_when_the_stem_asks_for_a_count():
    # A real pharmacist item (107B026) says "順に" while asking for two keys ("2つ選べ").
    stem = "5つのエキソンを順に数字で表し、…正しいのはどれか。2つ選べ。"
    assert scoring_mode(item(["A", "C"], question=stem, n_select=select_count(stem)), JA) == "set"


def test_numeric_slots_compare_digits_in_order():
    """B.5: "numeric slot: triggered when every gold component is \\d+(\\.\\d+)? and the stem has a
    numeric-entry cue (解答：①, ①②, 求めよ, calculate), correct iff the digits of prediction and gold,
    joined in order with non-digits stripped, are equal"."""
    it = item(["6", "0", "0"], question="水分出納バランスを求めよ。", options=False)
    assert scoring_mode(it, JA) == "numeric"
    for text in (answer("6", "0", "0"), '{"answer": "600"}', answer("600"), "600"):
        assert score(it, text, patterns=JA).correct, text
    for text in (answer("0", "0", "6"), '{"answer": "60"}', answer("6", "0")):
        assert not score(it, text, patterns=JA).correct, text


def test_numeric_decimal_points_percent_signs_and_units_are_stripped():
    """B.5: "non-digit characters such as decimals, percent signs, or units are stripped"."""
    it = item(["1", "2"], question="Calculate the ratio.", options=False)
    assert scoring_mode(it) == "numeric"
    for text in ("1.2", answer("1", "2"), "12 mg", "12%", '{"answer": "1.2 mg"}', "The answer is 12 mg."):
        assert score(it, text).correct, text
    assert score(it, "12 mg").predicted == ("12",)
    assert not score(it, "2.1").correct
    assert score(it, "I compared 3 values and got 12 mg").status == "parse_failure"  # never "312"


def test_numeric_needs_a_cue_or_a_numeric_answer_format():
    cueless = item(["4", "0"], question="Naの欠乏量は何mEqか。", options=False)
    assert scoring_mode(cueless, JA) == "set"
    declared = item(["4", "0"], question="Naの欠乏量は何mEqか。", options=False, answer_format="numeric")
    assert scoring_mode(declared, JA) == "numeric" and score(declared, "40", patterns=JA).correct


def test_digit_option_keys_are_never_numeric_slots():
    opts = tuple(Option(key=str(i), label=str(i), text=f"t{i}") for i in range(1, 6))
    it = Item(
        id="p",
        benchmark="t",
        question="薬物量を求めよ。2つ選べ。",
        options=opts,
        gold=Gold.from_json(["2", "4"]),
        n_select=2,
    )
    assert scoring_mode(it, JA) == "set"
    assert score(it, answer("4", "2"), patterns=JA).correct


# Statuses (B.6)
def test_error_missing_refusal_parse_failure_are_incorrect():
    """B.6: non-answers stay in the denominator as incorrect with a status: refusal (JSON with an
    empty answer list, or a declining sentence), parse_failure, error, missing."""
    it = item(["A"])
    assert score(it, '{"answer": ["a"]}', error="HTTP 500") == score(it, None, error="timeout")
    assert score(it, None, error="timeout").status == "error"
    assert score(it, None).status == "missing" and not score(it, None).correct
    assert score(it, '{"answer": []}').status == "refusal" and not score(it, '{"answer": []}').correct
    assert score(it, "判断できません", patterns=JA).status == "refusal"
    assert score(it, "hmm").status == "parse_failure" and score(it, "hmm").predicted is None


def test_answered_score_carries_prediction_and_rule():
    s = score(item(["A"]), "正解は a", patterns=JA)
    assert (s.correct, s.status, s.predicted, s.rule) == (True, "answered", ("A",), "rule6")


def test_excluded_and_unsupported_gold_raise():
    with pytest.raises(ValueError, match="no usable gold"):
        score(Item(id="x", benchmark="t", question="?"), "a")
    with pytest.raises(ValueError, match="'text' is not scored by the answer chain"):
        score(Item(id="x", benchmark="t", question="?", gold=Gold(text="pneumonia")), "pneumonia")


# Conventions an adapter declares
def iou_scorer(it, text):
    """A tiny box scorer: four numbers "x, y, w, h", correct when IoU with the gold box >= 0.5."""
    try:
        x, y, w, h = (float(v) for v in text.replace(",", " ").split())
    except ValueError:
        return Score(False, "parse_failure", None, None)
    gx, gy, gw, gh = it.gold.box
    inter = max(0.0, min(x + w, gx + gw) - max(x, gx)) * max(0.0, min(y + h, gy + gh) - max(y, gy))
    iou = inter / (w * h + gw * gh - inter)
    return Score(iou >= 0.5, "answered", (f"{x:g},{y:g},{w:g},{h:g}",), "iou")


BOXES = AnswerConventions(score_open=iou_scorer)
BOX_ITEM = Item(
    id="box", benchmark="boxes", question="Where is the lesion?", gold=Gold(box=(10, 10, 20, 20)), answer_format="bbox"
)


def test_score_open_scores_what_the_chain_does_not():
    assert score(BOX_ITEM, "12, 10, 20, 20", conventions=BOXES) == Score(True, "answered", ("12,10,20,20",), "iou")
    assert not score(BOX_ITEM, "30 30 20 20", conventions=BOXES).correct  # IoU 0
    assert score(BOX_ITEM, "somewhere", conventions=BOXES).status == "parse_failure"
    assert score(BOX_ITEM, None, error="HTTP 500", conventions=BOXES).status == "error"  # statuses stay core's
    assert score(BOX_ITEM, None, conventions=BOXES).status == "missing"
    assert score(item(["A"]), answer("a"), conventions=BOXES).rule == "json"  # choice gold: the chain


class Boxes(Benchmark):
    name = "boxes"

    def answer_conventions(self):
        return BOXES


class Pes(Benchmark):
    name = "pes_like"

    def answer_conventions(self):
        return AnswerConventions(answer_key="response", saved_label_sets=True)


def test_the_runner_and_rescoring_use_the_benchmarks_conventions():
    rec = make_record(Boxes(), BOX_ITEM, "C+Q+I", "k", Response(text="10 10 20 20"))
    assert (rec["predicted"], rec["status"], rec["correct"], rec["rule"]) == (["10,10,20,20"], "answered", True, "iou")
    it = item(["A", "C"])
    rec = make_record(Pes(), it, "C+Q", "k", Response(text='{"response": ["a", "c"]}'))
    assert (rec["predicted"], rec["correct"], rec["rule"]) == (["A", "C"], True, "json")
    live = make_record(Pes(), it, "C+Q", "k", Response(text="a,c"))
    assert live["status"] == "parse_failure"  # a live reply is never read as a saved prediction
    saved = rescore_record(Pes(), it, {**live, "saved": True})
    assert (saved["predicted"], saved["correct"], saved["rule"], saved["saved"]) == (["A", "C"], True, "saved", True)
    assert rescore_record(Benchmark(), it, {**live, "saved": True})["status"] == "parse_failure"  # JMed48k's default


class BoxesPlugin:
    @medvqa.hookimpl
    def register_benchmarks(self, register):
        register(Boxes())


@pytest.fixture
def boxes_plugin():
    pm = plugins.manager()
    pm.register(BoxesPlugin(), name="boxes-test")
    yield
    pm.unregister(name="boxes-test")


def test_medvqa_score_uses_the_conventions_of_the_items_benchmark(boxes_plugin):
    assert medvqa.score(BOX_ITEM, "11 10 20 20").correct
    sample = medvqa.load("jmed48k", split="sample")[0]
    assert medvqa.score(sample, '{"answer": ["2"]}').correct and not medvqa.score(sample, "2,3", saved=True).correct


# Chance
def test_chance_of_correct():
    assert chance_of_correct(item(["C"])) == pytest.approx(1 / 5)
    assert chance_of_correct(item(["B", "D"])) == pytest.approx(1 / comb(5, 2))
    assert chance_of_correct(item(["B", "D", "E"], n_select=3)) == pytest.approx(1 / comb(5, 3))
    assert chance_of_correct(item([["A"], ["C"]])) == pytest.approx(2 / 5)
    assert chance_of_correct(item([["A"], ["A"]])) == pytest.approx(1 / 5)
    assert chance_of_correct(item(["C"], k=4)) == pytest.approx(1 / 4)
    assert chance_of_correct(item(["C", "A", "E"], question="Arrange in order.")) == pytest.approx(1 / 60)
    assert chance_of_correct(item(["6", "0", "0"], question="Calculate it.", options=False)) is None
    assert chance_of_correct(Item(id="x", benchmark="t", question="?")) is None


# Real data
def load_year(root, year):
    path = root / "JMed48k" / "Physician" / f"Physician_{year}" / f"{year}_CORRECTED.json"
    items = {}
    for q in json.loads(path.read_text(encoding="utf-8"))["questions"]:
        qid = f"{q['section']}{q['question_number']}"
        items[qid] = Item(
            id=qid,
            benchmark="jmed48k",
            question=q["question_text"],
            language="ja",
            options=tuple(Option(key=k.upper(), label=k, text=t) for k, t in q["options"].items()),
            gold=Gold.from_json(q["correct_answer"], file=path, record=qid),
            n_select=select_count(q["question_text"]),
        )
    return items


def wrong_answer(it):
    gold = it.gold.alternatives[0]
    if not it.options:
        return [str((int(gold[0]) + 1) % 10), *gold[1:]]
    used = it.gold.keys
    spare = next(k for k in it.keys if k not in used)
    return [spare.lower(), *[k.lower() for k in gold[1:]]]


@pytest.mark.parametrize("year", [2025, 2026])
def test_real_sample_gold_answers_score_correct_and_wrong_ones_incorrect(jmed_sample, year):
    items = load_year(jmed_sample, year)
    assert len(items) == 400
    for qid, it in items.items():
        gold = [k.lower() for k in it.gold.alternatives[-1]]
        right = score(it, json.dumps({"answer": gold}, ensure_ascii=False), patterns=JA)
        assert right.correct and right.status == "answered", (qid, right)
        wrong = score(it, json.dumps({"answer": wrong_answer(it)}), patterns=JA)
        assert not wrong.correct and wrong.status == "answered", (qid, wrong)


def test_real_sample_gold_formats(jmed_sample):
    y2025, y2026 = load_year(jmed_sample, 2025), load_year(jmed_sample, 2026)
    assert scoring_mode(y2025["E28"], JA) == "alternatives"
    assert score(y2025["E28"], answer("c"), patterns=JA).correct
    for qid, digits in (("A75", "600"), ("C74", "36")):
        it = y2025[qid]
        assert not it.options and scoring_mode(it, JA) == "numeric"
        for text in (json.dumps({"answer": list(digits)}), json.dumps({"answer": digits}), answer(digits)):
            assert score(it, text, patterns=JA).correct, (qid, text)
    assert scoring_mode(y2026["A74"], JA) == "numeric"  # "解答：①．②③" answer grid
    assert score(y2026["A74"], '{"answer": "0.40"}', patterns=JA).correct
    modes = [scoring_mode(it, JA) for it in (*y2025.values(), *y2026.values())]
    assert modes.count("ordering") == 0 and modes.count("numeric") == 7 and modes.count("alternatives") == 1

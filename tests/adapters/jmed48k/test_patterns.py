import json

import pytest

from medvqa.core.scoring.patterns import compile_patterns
from medvqa.ja import JAPANESE, select_count


@pytest.mark.parametrize(
    "stem,expected",
    [
        ("正しいのはどれか。2つ選べ。", 2),
        ("正しいのはどれか。３つ選べ。", 3),
        ("正しいのはどれか。二つ選べ。", 2),
        ("正しいのはどれか。1 つ選べ。", 1),
        ("正しいのはどれか。", None),
        ("2つの所見から考えられるのはどれか。", None),
    ],
)
def test_select_count(stem, expected):
    assert select_count(stem) == expected


def test_select_count_on_real_stems(jmed_sample):
    path = jmed_sample / "JMed48k" / "Physician" / "Physician_2026" / "2026_CORRECTED.json"
    questions = json.loads(path.read_text(encoding="utf-8"))["questions"]
    for q in questions:
        gold = q["correct_answer"]
        if q["options"] and not isinstance(gold[0], list) and len(gold) > 1:
            assert select_count(q["question_text"]) == len(gold), q["question_text"][-40:]


@pytest.mark.parametrize(
    "stem,ordering,numeric",
    [
        ("病変の進行を順に並べよ。", True, False),
        ("手順の順番として正しいのはどれか。", True, False),
        ("発育は順調である。適切な対応はどれか。", False, False),
        ("推定１日尿蛋白量を求めよ。", False, True),
        ("解答：①．②③ g/gCr", False, True),
        ("解答: ①②", False, True),
        ("別冊No. 1①〜⑤を別に示す。", False, False),
    ],
)
def test_cues(stem, ordering, numeric):
    rules = compile_patterns((JAPANESE,))
    assert bool(rules.ordering_cue.search(stem)) is ordering
    assert bool(rules.numeric_cue.search(stem)) is numeric


@pytest.mark.parametrize(
    "text", ["回答できません。", "画像がないため判断できません", "お答えできません", "これには答えられません"]
)
def test_refusals(text):
    """Japanese refusal sentences apply whatever the registered patterns: a reply may decline in
    Japanese on any exam, and the language's sentences live with every other language's."""
    assert compile_patterns((JAPANESE,)).refusal.search(text)
    assert compile_patterns(()).refusal.search(text)

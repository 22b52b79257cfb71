"""Reading a reply's confidence: the stated number beside the answer, and the probability mass
of the chosen label among the option labels from the server's token log-probabilities."""

import math

import pytest

from medvqa.core.items import Gold, Item, Option
from medvqa.core.scoring.confidence import (
    LOGPROBS,
    STATED,
    confidence_fields,
    label_share,
    logprob_confidence,
    stated_confidence,
)

ITEM = Item(
    id="q",
    benchmark="t",
    question="Which?",
    options=tuple(Option(key=k, label=k.lower(), text=f"option {k}") for k in "ABCDE"),
    gold=Gold.from_json(["B"]),
)


def tokens_of(*parts, at=None, top=()):
    """The reply's tokens, each with log-probability 0 except the one at index `at`, which gets
    `top` ([(token, p), ...]) as its alternatives (its own logprob the first's)."""
    out = []
    for i, p in enumerate(parts):
        row = {"token": p, "logprob": 0.0, "top": [[p, 0.0]]}
        if i == at:
            row = {"token": p, "logprob": math.log(top[0][1]), "top": [[t, math.log(q)] for t, q in top]}
        out.append(row)
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"answer": ["b"], "confidence": 85}', (True, 0.85)),
        ('{"answer": ["b"], "confidence": 0}', (True, 0.0)),
        ('{"answer": ["b"], "confidence": "70 %"}', (True, 0.70)),
        ('{"answer": ["b"], "confidence": 100.0}', (True, 1.0)),
        # unreadable: null, never a guess
        ('{"answer": ["b"], "confidence": "very sure"}', (True, None)),
        ('{"answer": ["b"], "confidence": 120}', (True, None)),
        ('{"answer": ["b"], "confidence": true}', (True, None)),
        ('{"answer": ["b"], "confidence": NaN}', (True, None)),
        ('{"answer": ["b"], "confidence": null}', (True, None)),
        # not stated at all: no field
        ('{"answer": ["b"]}', (False, None)),
        ("b", (False, None)),
        (None, (False, None)),
    ],
)
def test_stated_confidence(text, expected):
    got = stated_confidence(text)
    assert got[0] == expected[0] and got[1] == (pytest.approx(expected[1]) if expected[1] is not None else None)


def test_the_chosen_labels_share_among_the_option_labels():
    # at the answer token: b 0.6, a 0.2, c 0.1 and a quote 0.1 (no label): 0.6 / (0.6 + 0.2 +
    # 0.1) = 0.6667; the quote's mass is not the options'
    position = {
        "token": "b",
        "logprob": math.log(0.6),
        "top": [["b", math.log(0.6)], ["a", math.log(0.2)], ["c", math.log(0.1)], ['"', math.log(0.1)]],
    }
    assert label_share(position, "b", set("abcde")) == pytest.approx(0.6 / 0.9)
    # a label written with its wrapping (' b', 'B') is the same label: b 0.5 + ' b' 0.2 = 0.7
    # against a 0.3: 0.7
    position = {
        "token": "b",
        "logprob": math.log(0.5),
        "top": [["b", math.log(0.5)], [" B", math.log(0.2)], ["a", math.log(0.3)]],
    }
    assert label_share(position, "b", set("abcde")) == pytest.approx(0.7)


def test_the_answer_position_is_after_the_answer_key():
    # the reasoning names "a" first; the answer names "b" after "answer": only that token counts
    tokens = tokens_of(
        "I",
        " think",
        " a",
        " is",
        " wrong",
        '.{"',
        "answer",
        '":',
        ' ["',
        "b",
        '"]}',
        at=9,
        top=[("b", 0.8), ("a", 0.2)],
    )
    assert logprob_confidence(tokens, ["B"], ITEM) == pytest.approx(0.8)
    # a reply without the key: the first token naming the label
    tokens = tokens_of("b", at=0, top=[("b", 0.3), ("c", 0.6), ("x", 0.1)])
    assert logprob_confidence(tokens, ["B"], ITEM) == pytest.approx(0.3 / 0.9)


def test_several_chosen_labels_multiply_their_shares():
    # ["a", "c"]: a's share 0.5/(0.5 + 0.5) = 0.5 at its token, c's 0.9/(0.9 + 0.1) = 0.9 at
    # its own: 0.45
    tokens = tokens_of('{"', "answer", '":', ' ["', "a", '",', ' "', "c", '"]}', at=4, top=[("a", 0.5), ("b", 0.5)])
    tokens[7] = {"token": "c", "logprob": math.log(0.9), "top": [["c", math.log(0.9)], ["d", math.log(0.1)]]}
    assert logprob_confidence(tokens, ["A", "C"], ITEM) == pytest.approx(0.45)


def test_no_prediction_or_no_label_token_gives_null_not_a_guess():
    tokens = tokens_of('{"', "answer", '":', " []}")
    assert logprob_confidence(tokens, None, ITEM) is None
    assert logprob_confidence(tokens, ["B"], ITEM) is None
    assert confidence_fields(ITEM, '{"answer": []}', None, tokens) == {
        "confidence": None,
        "confidence_method": LOGPROBS,
    }


def test_stated_wins_and_nothing_asked_adds_no_field():
    tokens = tokens_of('{"', "answer", '":', ' ["', "b", '"]}', at=4, top=[("b", 0.8), ("a", 0.2)])
    stated = '{"answer": ["b"], "confidence": 40}'
    assert confidence_fields(ITEM, stated, ["B"], tokens) == {"confidence": 0.4, "confidence_method": STATED}
    assert confidence_fields(ITEM, '{"answer": ["b"]}', ["B"], tokens)["confidence"] == pytest.approx(0.8)
    assert confidence_fields(ITEM, '{"answer": ["b"]}', ["B"], None) == {}

"""The option-order variant's ground: rotations with the gold remapped and the labels in place,
the labels of rotation records, which items keep their order, and the audit's CircularEval
measures on records worked out by hand.

The rotation is CircularEval's (MMBench, Liu et al. 2024, §3.2 "CircularEval"; VLMEvalKit's
circular evaluation): an item with k options is asked k times, its option texts shifted one place
each time, and counts as right only when right every time.
"""

from __future__ import annotations

import pytest

from medvqa.core import order
from medvqa.core.audit.order import kept_in_order, order_measures, order_pairs
from medvqa.core.benchmark import Benchmark
from medvqa.core.conditions import Condition, rotation_label
from medvqa.core.items import Gold, Item, Option
from medvqa.core.messages import Template
from medvqa.core.results import Record, base_condition, rotation_of, variant_of

TEXTS = ("t0", "t1", "t2", "t3", "t4")


def item(gold=(("B",),), texts=TEXTS, item_id="q1", **kw) -> Item:
    options = tuple(Option(key=k, label=k.lower(), text=t) for k, t in zip("ABCDE", texts))
    return Item(id=item_id, benchmark="b", question="Which?", options=options, gold=Gold(alternatives=gold), **kw)


def test_a_rotation_moves_the_texts_keeps_the_labels_and_follows_the_gold():
    rotated = order.rotated(item(), 2)
    # slot j shows text (j + 2) mod 5: a:t2 b:t3 c:t4 d:t0 e:t1
    assert [(o.key, o.label, o.text) for o in rotated.options] == [
        ("A", "a", "t2"),
        ("B", "b", "t3"),
        ("C", "c", "t4"),
        ("D", "d", "t0"),
        ("E", "e", "t1"),
    ]
    # the gold was B (t1): t1 now stands under E
    assert rotated.gold.alternatives == (("E",),)
    assert order.gold_slot(item(), 2) == 5 and order.gold_slot(item(), 0) == 2
    # an answer E under rotation 2 chose t1, the printed item's B
    assert order.original_keys(item(), ["E"], 2) == ["B"]
    # a two-key gold B, D (t1, t3) under rotation 1 (a:t1 b:t2 c:t3 d:t4 e:t0): A, C
    assert order.rotated(item(gold=(("B", "D"),)), 1).gold.alternatives == (("A", "C"),)
    # officially accepted alternatives are remapped each: A | C (t0 | t2) under rotation 1: E | B
    assert order.rotated(item(gold=(("A",), ("C",))), 1).gold.alternatives == (("E",), ("B",))
    assert order.gold_slot(item(gold=(("B", "D"),)), 1) is None  # several slots hold the gold
    assert order.rotated(item(), 5) == item()  # k places: the printed order


def test_a_rotated_item_renders_its_labels_in_place():
    text = Template(name="t", instruction="").render(order.rotated(item(), 1), Condition.CQ)[0]["content"]
    assert text.endswith("Options:\na. t1\nb. t2\nc. t3\nd. t4\ne. t0")


def test_a_rotation_record_names_its_variant_and_rotation():
    label = rotation_label(Condition.CQI, 3)
    assert label == "C+Q+I~order:3"
    assert (variant_of(label), rotation_of(label), base_condition(label)) == ("order", 3, Condition.CQI)
    assert order.as_asked(item(), label) == order.rotated(item(), 3)
    assert order.as_asked(item(), "C+Q+I~swap") == item()
    for bad in ("C+Q+I~order", "C+Q+I~order:0", "C+Q+I~order:x", "C+Q+I~swap:1"):
        with pytest.raises(ValueError, match="rotation"):
            Record(item_id="q1", condition=bad, status="answered")


@pytest.mark.parametrize(
    ("kw", "reason"),
    [
        ({"answer_format": "numeric", "gold": (("1", "2"),)}, "its answer is numeric"),
        ({"image_as_options": True}, "its images are the options"),
        ({"texts": ("1 mg", "2 mg", "5 mg", "10 mg", "20 mg")}, "ordered scale"),
        ({"texts": ("t0", "t1", "t2", "t3", "aからdのすべて")}, "refers to the others"),
    ],
)
def test_an_item_keeps_its_order_with_the_reason(kw, reason):
    class Japanese(Benchmark):
        order_bound_patterns = order.order_patterns("ja")

    gold = kw.pop("gold", (("B",),))
    assert reason in Japanese().reorder_refusal(item(gold=gold, **kw))
    # numbers out of order are no scale, and a plain item is reorderable
    assert Japanese().reorder_refusal(item(texts=("5 mg", "1 mg", "20 mg", "2 mg", "10 mg"))) is None
    # the phrase is the benchmark's to declare: without it, the item is reorderable
    assert Benchmark().reorder_refusal(item(texts=("t0", "t1", "t2", "t3", "aからdのすべて"))) is None


def rec(item_id: str, condition: str, predicted: list[str], gold: str, status: str = "answered") -> dict:
    return {
        "item_id": item_id,
        "condition": condition,
        "status": status,
        "predicted": predicted,
        "correct": status == "answered" and predicted == [gold],
    }


def records_of(model, items: list[Item], base: str = "C+Q") -> dict:
    """Records of `model(item as asked)` → answered keys, under `base` and every rotation."""
    by_key = {}
    for it in items:
        for r in range(len(it.options)):
            shown = order.rotated(it, r)
            label = base if r == 0 else rotation_label(base, r)
            by_key[(it.id, label)] = rec(it.id, label, model(shown), shown.gold.alternatives[0][0])
    return by_key


def test_a_position_biased_model_is_right_in_no_rotation_set_and_only_in_slot_one():
    # three 5-option items, golds B, A, E; the model always answers the first slot (A)
    items = {
        i.id: i for i in (item(item_id="q1"), item(gold=(("A",),), item_id="q2"), item(gold=(("E",),), item_id="q3"))
    }
    by_key = records_of(lambda shown: ["A"], list(items.values()))
    m = order_measures(items, by_key, "C+Q")
    # right in all 5 orders: none (the gold visits slot 1 once in 5)
    assert (m["circular_accuracy"]["k"], m["circular_accuracy"]["n"]) == (0, 3)
    # every item's chosen text moves with the slots: 3 of 3 flip
    assert (m["flip_rate"]["k"], m["flip_rate"]["n"]) == (3, 3)
    # each item's gold sits once in each of the 5 slots: 3 records per slot, right only in slot 1
    assert {s: (v["n"], v["k"]) for s, v in m["accuracy_by_gold_slot"].items()} == {
        "1": (3, 3),
        "2": (3, 0),
        "3": (3, 0),
        "4": (3, 0),
        "5": (3, 0),
    }
    pairs, unpaired = order_pairs(items, by_key, "C+Q")
    # the base order: right on q2 only (gold A in slot 1); CircularEval: right on none
    assert [(p.item.id, p.with_image["correct"], p.removed["correct"]) for p in pairs] == [
        ("q1", False, False),
        ("q2", True, False),
        ("q3", False, False),
    ]
    assert unpaired == {}


def test_a_content_reader_keeps_its_answer_in_every_order_and_a_missing_rotation_unpairs_the_item():
    items = {i.id: i for i in (item(item_id="q1"), item(gold=(("C",),), item_id="q2"))}
    # right on q1 in every order (it finds t1 wherever it is); q2 always answers the text t4 (wrong)
    by_key = records_of(
        lambda shown: [next(o.key for o in shown.options if o.text == ("t1" if shown.id == "q1" else "t4"))],
        list(items.values()),
    )
    m = order_measures(items, by_key, "C+Q")
    assert (m["circular_accuracy"]["k"], m["flip_rate"]["k"], m["flip_rate"]["n"]) == (1, 0, 2)
    del by_key[("q2", "C+Q~order:3")]
    pairs, unpaired = order_pairs(items, by_key, "C+Q")
    assert [p.item.id for p in pairs] == ["q1"] and unpaired == {"no C+Q~order:3 record": ["q2"]}
    assert kept_in_order(Benchmark(), {"q3": item(item_id="q3", answer_format="numeric")}, {"q3"}) == {
        "its answer is numeric, not options": {"n": 1, "items": ["q3"]}
    }

import pytest

from medvqa.core.conditions import ALL, Condition, applicable, parse_conditions, plan
from medvqa.core.items import Gold, ImageRef, Item, Option


def make(item_id, images=(), gold=(("A",),)):
    return Item(
        id=item_id,
        benchmark="t",
        question="q",
        options=(Option(key="A", label="a", text="x"), Option(key="B", label="b", text="y")),
        gold=Gold(alternatives=gold) if gold else None,
        images=images,
    )


def test_parse_conditions_accepts_cli_forms_and_rejects_unknown():
    assert parse_conditions("C+Q, c+q+i") == (Condition.CQ, Condition.CQI)
    assert parse_conditions(None) == ALL
    with pytest.raises(ValueError, match="unknown condition 'Q'"):
        parse_conditions("C+Q,Q")


def test_applicable_depends_on_image_availability(tmp_path):
    png = tmp_path / "a.png"
    png.write_bytes(b"x")
    text_only = make("t")
    present = make("p", images=(ImageRef(ref="a.png", path=png),))
    absent = make("m", images=(ImageRef(ref="b.png", path=None),))
    assert applicable(text_only) == (Condition.C, Condition.CQ)
    assert applicable(present) == ALL
    assert applicable(absent) == (Condition.C, Condition.CQ)


def test_plan_skips_excluded_items_and_inapplicable_conditions(tmp_path):
    png = tmp_path / "a.png"
    png.write_bytes(b"x")
    items = [make("t"), make("p", images=(ImageRef(ref="a.png", path=png),)), make("x", gold=None)]
    pairs = [(i.id, c.value) for i, c in plan(items, (Condition.CQ, Condition.CQI))]
    assert pairs == [("t", "C+Q"), ("p", "C+Q"), ("p", "C+Q+I")]

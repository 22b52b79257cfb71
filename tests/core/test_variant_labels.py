"""A variant of a condition is written `<base>~<variant>` in records, JSON keys and options."""

import pytest

from medvqa.core.conditions import parse_variants, variant_label
from medvqa.core.errors import UsageError
from medvqa.core.results import base_condition, check_record, condition_order, is_derived, variant_of


def test_a_variant_label_names_its_base_condition_and_its_variant():
    assert variant_label("C+Q+I", "swap") == "C+Q+I~swap"
    assert (base_condition("C+Q+I~swap").value, variant_of("C+Q+I~swap")) == ("C+Q+I", "swap")
    assert variant_of("C+Q/forced") is None and variant_of("C+Q") is None
    # a variant, like a forced guess, is the audit's: official tables leave it out
    assert is_derived("C+Q~order") and is_derived("C+Q/forced") and not is_derived("C+Q")
    labels = ["C+Q+I~swap", "C+Q+I", "C+Q~order", "C+Q", "C+Q/forced"]
    assert sorted(labels, key=condition_order) == ["C+Q", "C+Q/forced", "C+Q~order", "C+Q+I", "C+Q+I~swap"]


def test_an_unknown_variant_is_refused_naming_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown variant in condition 'C\+Q\+I~sepia'; variants are swap, "):
        base_condition("C+Q+I~sepia")
    with pytest.raises(UsageError, match=r"unknown variant 'sepia'; choose from swap, blur, jpeg, downscale"):
        parse_variants("swap,sepia")
    assert parse_variants(" Swap,hflip,swap ") == ("swap", "hflip") and parse_variants(None) == ()


def test_a_record_of_a_variant_is_a_valid_record():
    record = check_record({"item_id": "x", "condition": "C+Q+I~hflip", "status": "answered", "correct": True})
    assert record["condition"] == "C+Q+I~hflip"

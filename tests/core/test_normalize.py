import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medvqa.adapters.jmed48k.patterns import JAPANESE
from medvqa.core.items import Gold, Item, Option
from medvqa.core.normalize import ENGLISH, LanguagePatterns, clean, compile_patterns, normalize

TEXTS = ["Emergency surgery", "Percutaneous drainage", "Chemotherapy", "Proton pump inhibitor", "Clipping"]


def choice_item(gold=("A",), texts=TEXTS, labels="abcde", keys="ABCDE", question="Which is appropriate?"):
    options = tuple(Option(key=k, label=lab, text=t) for k, lab, t in zip(keys, labels, texts))
    return Item(id="q", benchmark="t", question=question, options=options, gold=Gold.from_json(list(gold)))


def numeric_item(gold=("6", "0", "0"), question="水分出納バランスを求めよ。"):
    return Item(id="n", benchmark="t", question=question, gold=Gold.from_json(list(gold)), answer_format="numeric")


ITEM = choice_item()
DIGIT_ITEM = choice_item(gold=("3",), labels="12345", keys="12345")


def norm(text, item=ITEM, patterns=(JAPANESE,)):
    n = normalize(item, text, patterns)
    return n.predicted, n.status, n.rule


# Rule 0
def test_rule0_strips_control_characters_and_collapses_whitespace():
    assert clean("\x00 a\x07\tb \n\r c\x7f\x1f ") == "a b c"
    assert clean("c", upper=True) == "C"


def test_rule0_uppercases_printed_labels_of_letter_items():
    assert norm("c") == (("C",), "answered", "rule3")
    assert norm("\x01\x02 c\x03 ") == (("C",), "answered", "rule3")


# Rule 1
def test_rule1_full_option_text_case_and_space_insensitive():
    assert norm("  emergency   SURGERY ") == (("A",), "answered", "rule1")
    jp = choice_item(texts=["緊急手術", "腹腔穿刺ドレナージ", "化学療法", "PPI", "クリッピング"])
    assert norm("腹腔穿刺ドレナージ", jp) == (("B",), "answered", "rule1")


def test_rule1_option_text_of_image_option_items():
    circled = choice_item(texts=["①", "②", "③", "④", "⑤"])
    assert norm("④", circled) == (("D",), "answered", "rule1")


# Rule 2
@pytest.mark.parametrize("text", ["b. Percutaneous drainage", "B．ドレナージ", "b。ドレナージ"])
def test_rule2_label_then_dot_then_text(text):
    assert norm(text) == (("B",), "answered", "rule2")


def test_rule2_rejects_a_label_that_is_not_an_option():
    assert norm("F. something else")[1] == "parse_failure"


def test_rule2_precedes_later_rules():
    assert norm("B. not (C)") == (("B",), "answered", "rule2")


# Rule 3
@pytest.mark.parametrize("text", ["D.", "d", " D!?", "ｄ", "D。"])
def test_rule3_exact_label_after_trailing_punctuation(text):
    assert norm(text) == (("D",), "answered", "rule3")


def test_rule3_rejects_label_outside_options():
    assert norm("F") == (None, "parse_failure", None)


# Rule 4
def test_rule4_boxed():
    assert norm(r"Therefore \boxed{E}") == (("E",), "answered", "rule4")
    assert norm(r"so \boxed{\text{e}} it is") == (("E",), "answered", "rule4")


def test_rule4_backspace_corrupted_boxed_from_json_escape():
    # "\b" in a JSON string is U+0008: the decoded text reads "<BS>oxed{E}".
    decoded = json.loads('"Final: \\boxed{E}"')
    assert decoded == "Final: \x08oxed{E}"
    assert norm(decoded) == (("E",), "answered", "rule4")
    assert norm('{"answer": "\\boxed{e}"}') == (("E",), "answered", "json")


def test_rule4_rejects_invalid_boxed_content():
    assert norm(r"\boxed{F}")[1] == "parse_failure"


# Rule 5
@pytest.mark.parametrize("text", ["I would choose (c)", "選択肢は（Ｃ）", "answer option (C)."])
def test_rule5_trailing_parenthesised_label(text):
    assert norm(text) == (("C",), "answered", "rule5")


def test_rule5_parenthesis_must_be_trailing():
    assert norm("(C) is tempting but wrong, reconsider")[1] == "parse_failure"


# Rule 6
@pytest.mark.parametrize("text", [
    "The correct answer is B because of the rupture.",
    "Final answer: b",
    "answer is **B**",
    "THE ANSWER IS (B), the others are wrong",
])
def test_rule6_english_answer_phrases(text):
    assert norm(text) == (("B",), "answered", "rule6")


@pytest.mark.parametrize("text", ["正解は c です。理由は…", "答えは「ｃ」と考える", "解答：c 以上", "解答 : c である",
                                  "答え：c だと思う", "答え　：　ｃ と判断"])
def test_rule6_japanese_phrases_from_the_adapter(text):
    assert norm(text) == (("C",), "answered", "rule6")


def test_rule6_japanese_phrases_need_the_adapter_patterns():
    assert norm("正解は c です。理由は…", patterns=()) == (None, "parse_failure", None)


def test_rule6_takes_the_last_valid_phrase_and_skips_invalid_ones():
    assert norm("The answer is B at first sight; on reflection the answer is D, I think") \
        == (("D",), "answered", "rule6")
    assert norm("the answer is D, I think; the answer is unclear") == (("D",), "answered", "rule6")


# Rule 7
def test_rule7_trailing_circled_digit_for_digit_keys():
    assert norm("したがって③", DIGIT_ITEM) == (("3",), "answered", "rule7")
    assert norm("したがって③。", DIGIT_ITEM) == (("3",), "answered", "rule7")


def test_rule7_circled_digit_is_not_a_letter_key():
    assert norm("したがって③")[1] == "parse_failure"
    assert norm("したがって⑥", DIGIT_ITEM)[1] == "parse_failure"


# JSON
@pytest.mark.parametrize("text", ['{"answer": ["c"]}', '{"answer": "C"}', '```json\n{"answer": ["c"]}\n```',
                                  'Reasoning first.\n{"reasoning": {"step": 1}, "answer": ["C"]}',
                                  '{"answer": ["C. Chemotherapy"]}', '{"answer": ["chemotherapy"]}'])
def test_json_answer_is_read_first(text):
    assert norm(text) == (("C",), "answered", "json")


def test_json_list_keeps_answer_order():
    assert norm('{"answer": ["d", "b"]}') == (("D", "B"), "answered", "json")


@pytest.mark.parametrize("text", ['{"answer": "c -> a -> e"}', '{"answer": "C→A→E"}', '{"answer": "c → a → "}'])
def test_json_arrow_string_is_split(text):
    expected = ("C", "A") if text.endswith('→ "}') else ("C", "A", "E")
    assert norm(text) == (expected, "answered", "json")


@pytest.mark.parametrize("text", ['{"answer": "B, D"}', '{"answer": "B and D"}', '{"answer": "BとD"}'])
def test_joined_strings_are_not_split(text):
    assert norm(text, choice_item(gold=("B", "D"))) == (None, "parse_failure", None)


def test_json_list_with_an_invalid_element_gives_no_partial_answer():
    assert norm('{"answer": ["B", "Z"]}') == (None, "parse_failure", None)
    assert norm('{"answer": ["B", ["D"]]}') == (None, "parse_failure", None)


def test_json_empty_list_is_a_refusal():
    assert norm('{"answer": []}') == (None, "refusal", "json")


def test_json_takes_the_last_answer_object():
    assert norm('The format is {"answer": ["A"]}. Mine: {"answer": ["E"]}') == (("E",), "answered", "json")


def test_broken_json_falls_back_to_the_text_rules():
    assert norm('{"answer": ["C"') == (None, "parse_failure", None)
    assert norm('{"answer": [C]} so the answer is C') == (("C",), "answered", "rule6")


# Numeric slots
@pytest.mark.parametrize("text,expected", [
    ('{"answer": ["6", "0", "0"]}', ("6", "0", "0")),
    ('{"answer": "600"}', ("600",)),
    ('{"answer": ["600"]}', ("600",)),
    ('{"answer": 600}', ("600",)),
    ('{"answer": "６００"}', ("600",)),
    ("600", ("600",)),
    ("1.2", ("1.2",)),
    ("答えは 600 mL", ("600",)),
    (r"\boxed{600}", ("600",)),
])
def test_numeric_items_accept_numbers(text, expected):
    assert norm(text, numeric_item())[:2] == (expected, "answered")


@pytest.mark.parametrize("text", ["6,0,0", "about six hundred", '{"answer": ["6", "x"]}', "①"])
def test_numeric_items_reject_non_numbers(text):
    assert norm(text, numeric_item())[1] == "parse_failure"


def test_numeric_items_skip_label_rules():
    assert norm("1.2", numeric_item(gold=("1", "2"))) == (("1.2",), "answered", "rule3")


# Fallback, refusals
def test_fallback_matches_gold_of_an_item_without_options():
    no_options = Item(id="x", benchmark="t", question="Which image?", gold=Gold.from_json(["C"]))
    assert norm("c", no_options) == (("C",), "answered", "fallback")
    assert norm("b", no_options) == (None, "parse_failure", None)


def test_fallback_compares_json_elements_as_a_set():
    no_options = Item(id="x", benchmark="t", question="Which two?", gold=Gold.from_json(["B", "D"]))
    assert norm('{"answer": ["d", "b"]}', no_options) == (("D", "B"), "answered", "fallback")
    assert norm('{"answer": ["d"]}', no_options)[1] == "parse_failure"


@pytest.mark.parametrize("text", ["I cannot determine the answer from this image.", "Sorry, I can't answer that.",
                                  "画像がないため判断できません。", "回答できません", "お答えできません"])
def test_declining_sentences_are_refusals(text):
    assert norm(text) == (None, "refusal", None)


def test_a_valid_answer_beats_a_declining_sentence():
    assert norm("I cannot determine it with certainty, but the answer is C") == (("C",), "answered", "rule6")


def test_refusal_inside_json_element():
    assert norm('{"answer": ["cannot answer"]}') == (None, "refusal", None)


def test_english_is_always_applied_and_patterns_are_compiled_once():
    assert compile_patterns((JAPANESE,)) is compile_patterns([JAPANESE])
    assert compile_patterns(()).answer == compile_patterns((ENGLISH,)).answer


def test_answer_pattern_without_ans_group_is_rejected():
    with pytest.raises(ValueError, match="ans"):
        compile_patterns((LanguagePatterns(language="xx", answer=(r"odpowiedź: [A-E]",)),))


# Properties
FRAGMENTS = st.sampled_from([
    '{"answer": [', '{"answer": "', '"]}', '"', ",", "]", "}", "```json\n", "```", "->", "→", "\\boxed{", "oxed{",
    "\x08", "\x00", "\x1f", "\x7f", "\t", "\n", "(", "（", ")", "）", "answer is ", "正解は", "解答：", "①", "③", "⑩",
    "a", "C", "F", "Z", "0", "6", "1.2", ".", "．", "。", "Emergency surgery", "cannot answer", " ",
])
RESPONSES = st.one_of(st.text(), st.lists(st.one_of(FRAGMENTS, st.text(max_size=3)), max_size=12).map("".join))


@settings(max_examples=400, deadline=None)
@given(RESPONSES)
def test_normalize_never_raises_and_only_returns_option_keys(text):
    for item in (ITEM, DIGIT_ITEM):
        result = normalize(item, text, (JAPANESE,))
        assert result.status in ("answered", "refusal", "parse_failure")
        assert (result.predicted is None) == (result.status != "answered")
        if result.predicted is not None:
            assert set(result.predicted) <= set(item.keys)


@settings(max_examples=200, deadline=None)
@given(RESPONSES)
def test_numeric_answers_are_numbers(text):
    result = normalize(numeric_item(), text, (JAPANESE,))
    if result.predicted is not None and result.rule != "fallback":
        assert all(p.replace(".", "", 1).isdigit() and p.isascii() for p in result.predicted)

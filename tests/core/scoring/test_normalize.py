"""The answer reader against JMed48k Appendix B.3–B.6: every sentence of the protocol with its
example, then the details each rule leaves open, the conventions adapters declare, and
robustness against any string."""

import json

import pytest

import medvqa
from medvqa.core.items import Gold, Item, Option
from medvqa.core.scoring.conventions import AnswerConventions
from medvqa.core.scoring.normalize import item_labels, normalize, read_json, rule0_clean
from medvqa.core.scoring.patterns import ENGLISH, LanguagePatterns, compile_patterns
from medvqa.ja import JAPANESE

TEXTS = ["Emergency surgery", "Percutaneous drainage", "Chemotherapy", "Proton pump inhibitor", "Clipping"]


def choice_item(gold=("A",), texts=TEXTS, labels="abcde", keys="ABCDE", question="Which is appropriate?", id="q"):
    options = tuple(Option(key=k, label=lab, text=t) for k, lab, t in zip(keys, labels, texts))
    return Item(id=id, benchmark="t", question=question, options=options, gold=Gold.from_json(list(gold)))


def numeric_item(gold=("6", "0", "0"), question="水分出納バランスを求めよ。"):
    return Item(id="n", benchmark="t", question=question, gold=Gold.from_json(list(gold)), answer_format="numeric")


ITEM = choice_item()
PAIR = choice_item(gold=("B", "D"), id="pair")
DIGIT_ITEM = choice_item(gold=("3",), labels="12345", keys="12345", id="digits")
SLOTS_12 = numeric_item(gold=("1", "2"), question="Calculate the ratio.")
NO_OPTIONS = Item(id="x", benchmark="t", question="Which image?", gold=Gold.from_json(["C"]))
NO_OPTIONS_PAIR = Item(id="y", benchmark="t", question="Which two images?", gold=Gold.from_json(["B", "D"]))


DEFAULT_CONVENTIONS = AnswerConventions()


def norm(text, item=ITEM, patterns=(JAPANESE,), conventions=DEFAULT_CONVENTIONS, saved=False):
    n = normalize(item, text, patterns, conventions, saved=saved)
    return n.predicted, n.status, n.rule


A = lambda *keys: (tuple(keys), "answered")  # noqa: E731
PARSE_FAILURE, REFUSAL = (None, "parse_failure"), (None, "refusal")

# (section, the protocol's sentence, [(item, reply, (predicted, status, rule))])
PROTOCOL = [
    (
        "B.3",
        "Rules apply in this order; the first valid key wins.",
        [(ITEM, "B. not (C)", (*A("B"), "rule2")), (ITEM, "(C) is tempting, but the answer is B", (*A("B"), "rule6"))],
    ),
    (
        "B.3",
        "A candidate not among the item's option labels is rejected, never replaced by a random guess.",
        [
            (ITEM, "F", (*PARSE_FAILURE, None)),
            (ITEM, "F. something else", (*PARSE_FAILURE, None)),
            (ITEM, '{"answer": ["F"]}', (*PARSE_FAILURE, None)),
        ],
    ),
    (
        "B.4",
        "Rule 0: strip control characters U+0000–U+0008, U+000B–U+000C, U+000E–U+001F, U+007F (keep tab, "
        "LF, CR), collapse whitespace; uppercase alphabetic labels for label-format items.",
        [
            (ITEM, "\x01\x02 c\x03 ", (*A("C"), "rule3")),
            (ITEM, "Emergency\t\n\r surgery\x7f", (*A("A"), "rule1")),
            (ITEM, "c", (*A("C"), "rule3")),
        ],
    ),
    (
        "B.4",
        "Rule 1: full option text (case-insensitive, surrounding whitespace ignored) → its key.",
        [(ITEM, "  emergency   SURGERY ", (*A("A"), "rule1"))],
    ),
    (
        "B.4",
        "Rule 2: valid label + . / ． (U+FF0E) / 。 (U+3002) + more text → the label.",
        [
            (ITEM, "b. Percutaneous drainage", (*A("B"), "rule2")),
            (ITEM, "B．ドレナージ", (*A("B"), "rule2")),
            (ITEM, "b。ドレナージ", (*A("B"), "rule2")),
        ],
    ),
    (
        "B.4",
        "Rule 3: after stripping trailing punctuation, exactly a valid label.",
        [
            (ITEM, "D.", (*A("D"), "rule3")),
            (ITEM, " D!?", (*A("D"), "rule3")),
            (ITEM, "ｄ", (*A("D"), "rule3")),
            (ITEM, "D。", (*A("D"), "rule3")),
        ],
    ),
    (
        "B.4",
        r"Rule 4: \boxed{N}, also the corrupted oxed{N} left when Rule 0 strips a backspace.",
        [(ITEM, r"Therefore \boxed{E}", (*A("E"), "rule4")), (ITEM, "Final: \x08oxed{E}", (*A("E"), "rule4"))],
    ),
    (
        "B.4",
        "Rule 5: trailing (N) or full-width （N）.",
        [(ITEM, "I would choose (c)", (*A("C"), "rule5")), (ITEM, "選択肢は（Ｃ）", (*A("C"), "rule5"))],
    ),
    (
        "B.4",
        "Rule 6: answer-keyword phrases: English `answer is N` / `answer: N`, optionally prefixed by the / "
        "correct / final, case-insensitive.",
        [
            (ITEM, "The correct answer is B because of the rupture.", (*A("B"), "rule6")),
            (ITEM, "Final answer: b", (*A("B"), "rule6")),
            (ITEM, "THE ANSWER IS (B), the others are wrong", (*A("B"), "rule6")),
        ],
    ),
    (
        "B.4",
        "Rule 6: language patterns contributed by adapters through a hook (jmed48k: 正解は N, 答えは N, 解答：N, "
        "答え：N, with ASCII or full-width colon and optional spaces).",
        [
            (ITEM, "正解は c です。", (*A("C"), "rule6")),
            (ITEM, "答えは「ｃ」と考える", (*A("C"), "rule6")),
            (ITEM, "解答：c 以上", (*A("C"), "rule6")),
            (ITEM, "答え : c だと思う", (*A("C"), "rule6")),
        ],
    ),
    (
        "B.4",
        "Rule 7: trailing circled digit ①…⑩ when the digit is a valid option key.",
        [
            (DIGIT_ITEM, "したがって③", (*A("3"), "rule7")),
            (DIGIT_ITEM, "したがって⑥", (*PARSE_FAILURE, None)),
            (ITEM, "したがって③", (*PARSE_FAILURE, None)),
        ],
    ),
    (
        "B.4",
        "Fallback: the Rule-0 string compared as-is to the gold (both sides as sorted sets).",
        [
            (NO_OPTIONS, "c", (*A("C"), "fallback")),
            (NO_OPTIONS, "b", (*PARSE_FAILURE, None)),
            (NO_OPTIONS_PAIR, '{"answer": ["d", "b"]}', (*A("D", "B"), "fallback")),
        ],
    ),
    (
        "B.4",
        'Model output in JSON ({"answer": [...]} or {"answer": "3"}, also inside a ```json fence) is read first.',
        [
            (ITEM, '{"answer": ["c"]}', (*A("C"), "json")),
            (DIGIT_ITEM, '{"answer": "3"}', (*A("3"), "json")),
            (ITEM, '```json\n{"answer": ["c"]}\n```', (*A("C"), "json")),
            (ITEM, 'Final answer: B.\n{"answer": ["c"]}', (*A("C"), "json")),
        ],
    ),
    (
        "B.4",
        "A JSON list is consumed element by element.",
        [
            (ITEM, '{"answer": ["d", "b"]}', (*A("D", "B"), "json")),
            (ITEM, '{"answer": ["C. Chemotherapy", "clipping"]}', (*A("C", "E"), "json")),
        ],
    ),
    (
        "B.4",
        "A single string with ASCII -> or full-width → arrows is split into a list.",
        [
            (ITEM, '{"answer": "c -> a -> e"}', (*A("C", "A", "E"), "json")),
            (ITEM, '{"answer": "C→A→E"}', (*A("C", "A", "E"), "json")),
        ],
    ),
    (
        "B.4/B.5",
        "Comma- or conjunction-joined strings are NOT split (the JSON schema is the way to give several answers).",
        [
            (PAIR, '{"answer": "B, D"}', (*PARSE_FAILURE, None)),
            (PAIR, '{"answer": "B and D"}', (*PARSE_FAILURE, None)),
            (PAIR, '{"answer": "BとD"}', (*PARSE_FAILURE, None)),
            (PAIR, "B, D", (*PARSE_FAILURE, None)),
        ],
    ),
    (
        "B.5",
        'Predictions encoded as a JSON array ["2","4"] are consumed directly.',
        [
            (DIGIT_ITEM, '["2","4"]', (*A("2", "4"), "json")),
            (DIGIT_ITEM, '```json\n["2", "4"]\n```', (*A("2", "4"), "json")),
            (DIGIT_ITEM, 'Here it is:\n```json\n["2", "4"]\n```', (*A("2", "4"), "json")),
        ],
    ),
    (
        "B.5",
        'Predictions encoded as a single arrow-separated string ["B->E->C"] (ASCII or full-width arrows) are '
        'split into ["B","E","C"].',
        [
            (ITEM, '{"answer": ["B->E->C"]}', (*A("B", "E", "C"), "json")),
            (ITEM, '{"answer": ["B→E→C"]}', (*A("B", "E", "C"), "json")),
            (ITEM, '["b -> e -> c"]', (*A("B", "E", "C"), "json")),
            (ITEM, "B→E→C", (*A("B", "E", "C"), "arrows")),
            (ITEM, "b -> e -> c.", (*A("B", "E", "C"), "arrows")),
        ],
    ),
    (
        "B.5",
        "Numeric slots: non-digit characters such as decimals, percent signs, or units are stripped.",
        [
            (SLOTS_12, "12 mg", (*A("12"), "rule3")),
            (SLOTS_12, "1.2", (*A("12"), "rule3")),
            (SLOTS_12, "12%", (*A("12"), "rule3")),
            (SLOTS_12, '{"answer": "12 mg"}', (*A("12"), "json")),
            (SLOTS_12, '{"answer": ["1", "2"]}', (*A("1", "2"), "json")),
            (SLOTS_12, "１２", (*A("12"), "rule3")),
        ],
    ),
    (
        "B.5",
        "Only the digits of the answer are taken: prose goes through the answer phrases first.",
        [
            (SLOTS_12, "I compared 3 values; the answer is 12 mg", (*A("12"), "rule6")),
            (SLOTS_12, "I compared 3 values and got 12 mg", (*PARSE_FAILURE, None)),
        ],
    ),
    (
        "B.6",
        "Refusal: e.g. JSON with an empty answer list, or a declining sentence.",
        [
            (ITEM, '{"answer": []}', (*REFUSAL, "json")),
            (ITEM, "[]", (*REFUSAL, "json")),
            (ITEM, "I cannot determine the answer from this image.", (*REFUSAL, None)),
            (ITEM, "画像がないため判断できません。", (*REFUSAL, None)),
        ],
    ),
    (
        "B.6",
        "Parse failure: no rule yields a valid key.",
        [(ITEM, "hmm", (*PARSE_FAILURE, None)), (ITEM, "", (*PARSE_FAILURE, None))],
    ),
]


@pytest.mark.parametrize(
    "section,sentence,item,reply,expected",
    [
        pytest.param(section, sentence, item, reply, expected, id=f"{section}-{n}-{k}")
        for n, (section, sentence, examples) in enumerate(PROTOCOL)
        for k, (item, reply, expected) in enumerate(examples)
    ],
)
def test_protocol_sentence(section, sentence, item, reply, expected):
    assert norm(reply, item) == expected, f"{section}: {sentence}"


# Rule details
def test_rule0_clean():
    assert rule0_clean("\x00 a\x07\tb \n\r c\x7f\x1f ") == "a b c"
    assert rule0_clean("c", upper=True) == "C"


def test_rule1_option_text_of_image_option_items():
    assert norm("④", choice_item(texts=["①", "②", "③", "④", "⑤"])) == (("D",), "answered", "rule1")
    jp = choice_item(texts=["緊急手術", "腹腔穿刺ドレナージ", "化学療法", "PPI", "クリッピング"])
    assert norm("腹腔穿刺ドレナージ", jp) == (("B",), "answered", "rule1")


def test_rule4_takes_the_last_valid_boxed_and_reads_json_escapes():
    assert norm(r"\boxed{F} no, \boxed{\text{e}} it is") == (("E",), "answered", "rule4")
    assert json.loads('"\\boxed{E}"') == "\x08oxed{E}"
    assert norm('{"answer": "\\boxed{e}"}') == (("E",), "answered", "json")
    assert norm(r"\boxed{F}")[1] == "parse_failure"


def test_rule5_parenthesis_must_be_trailing():
    assert norm("answer option (C).") == (("C",), "answered", "rule5")
    assert norm("(C) is tempting but wrong, reconsider")[1] == "parse_failure"


def test_rule6_takes_the_last_valid_phrase_and_needs_the_adapter_patterns():
    assert norm("The answer is B at first sight; on reflection the answer is D, I think") == (
        ("D",),
        "answered",
        "rule6",
    )
    assert norm("the answer is D, I think; the answer is unclear") == (("D",), "answered", "rule6")
    assert norm("正解は c です。理由は…", patterns=()) == (None, "parse_failure", None)


def test_json_details():
    assert norm('The format is {"answer": ["A"]}. Mine: {"answer": ["E"]}') == (("E",), "answered", "json")
    assert norm('Reasoning.\n{"reasoning": {"step": 1}, "answer": ["C"]}') == (("C",), "answered", "json")
    assert norm('Braces first {x}, {"a": 1} and {"answer": ["C"]}') == (("C",), "answered", "json")
    assert norm('{"result": {"answer": ["C"]}}') == (("C",), "answered", "json")  # searched inside
    assert norm('{"answer": "B", "alt": {"answer": "C"}}') == (("B",), "answered", "json")  # the outer object's
    assert norm('{"answer": "c → a → "}') == (("C", "A"), "answered", "json")
    assert norm('{"answer": ["B", "Z"]}') == (None, "parse_failure", None)  # no partial answer
    assert norm('{"answer": ["B", ["D"]]}') == (None, "parse_failure", None)
    assert norm('{"answer": ["cannot answer"]}') == (None, "refusal", None)
    assert norm('{"answer": ["C"') == (None, "parse_failure", None)
    assert norm('{"answer": [C]} so the answer is C') == (("C",), "answered", "rule6")
    assert norm("I checked [1] and [2]: the answer is C") == (("C",), "answered", "rule6")  # not an answer array


def test_a_valid_answer_beats_a_declining_sentence():
    assert norm("I cannot determine it with certainty, but the answer is C") == (("C",), "answered", "rule6")


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"answer": ["6", "0", "0"]}', ("6", "0", "0")),
        ('{"answer": 600}', ("600",)),
        ('{"answer": "６００"}', ("600",)),
        ("答えは 600 mL", ("600",)),
        (r"\boxed{600}", ("600",)),
        ("0.40 g/gCr", ("040",)),
        ("600mL/日", ("600",)),
    ],
)
def test_numeric_items_read_the_digits_of_a_number(text, expected):
    assert norm(text, numeric_item())[:2] == (expected, "answered")


# ../shared/papers/jmed48k.txt, Appendix B.5 "Numeric slot": the prediction is joined into one
# digit string, "non-digit characters such as decimals, percent signs, or units are stripped";
# so whatever a model writes around the number leaves its digits: 約600mL -> "600" (by hand:
# drop 約, m, L), "= 600" -> "600", "〜600" -> "600", "600 (mL)" -> "600", "1,200" -> "1200",
# "≒ 0.40 g/gCr" -> "040" (the decimal point is stripped too, B.5's "9.0" -> "90").
@pytest.mark.parametrize(
    "text,expected",
    [
        ("約600mL", ("600",)),
        ("= 600", ("600",)),
        ("〜600", ("600",)),
        ("~ 600", ("600",)),
        ("600 (mL)", ("600",)),
        ("600［mL］", ("600",)),
        ('{"answer": "約600 mL"}', ("600",)),
        ('{"answer": ["= 6", "0", "0"]}', ("6", "0", "0")),
        ("1,200 mL", ("1200",)),
        ("≒ 0.40 g/gCr", ("040",)),
        ("およそ６００ｍL", ("600",)),
        ("6（", ("6",)),
    ],
)
def test_numeric_items_strip_whatever_surrounds_the_digits(text, expected):
    assert norm(text, numeric_item())[:2] == (expected, "answered")


def test_numeric_slots_join_and_compare_digit_strings_b5():
    # B.5: gold ["6","0","0"] joins to "600"; "約600 mL" strips to "600": correct. "6.0" joins to
    # "60" (no value-preserving decimal normalisation): wrong against "600".
    item = numeric_item()
    assert medvqa.score(item, '{"answer": "約600 mL"}').correct
    assert medvqa.score(item, "およそ 600 mL").correct
    assert not medvqa.score(item, '{"answer": "6.0"}').correct


@pytest.mark.parametrize(
    "text", ["6,0,0", "6 0 0", "about six hundred", '{"answer": ["6", "x"]}', "①", "1.2①", "3 × 200 = 600"]
)
def test_numeric_items_reject_what_is_not_one_number(text):
    assert norm(text, numeric_item())[1] == "parse_failure"


def test_plain_arrow_chain_needs_nothing_but_valid_labels():
    assert norm("B→E→Z")[1] == "parse_failure"
    assert norm("the pathway A -> B leads to C") == (None, "parse_failure", None)
    assert norm("b。→d→c.") == (("B",), "answered", "rule2")  # "b。" is not a bare label


# Labels computed once per item
def test_item_labels_are_computed_once_per_item_and_never_shared_by_another_item_with_its_id():
    first = choice_item(id="same")
    assert item_labels(first) is item_labels(first)
    other = choice_item(id="same", texts=["Chemotherapy", "a", "b", "c", "d"])  # same benchmark and id
    assert norm("Chemotherapy", other) == (("A",), "answered", "rule1")
    assert norm("Chemotherapy", first) == (("C",), "answered", "rule1")
    copy = first.model_copy()
    assert item_labels(copy) is not item_labels(first) and norm("Chemotherapy", copy)[0] == ("C",)


# Conventions an adapter declares
def test_answer_key_is_the_benchmarks():
    pes = AnswerConventions(answer_key="response")
    for reply in ('{"response": "C"}', '{"response":"c"}', '```json\n{"response": "C"}\n```'):
        assert norm(reply, conventions=pes) == (("C",), "answered", "json")
    assert norm('{"response": "F"}', conventions=pes)[1] == "parse_failure"
    assert norm('{"answer": ["B"]} {"response": "C"}', conventions=pes)[0] == ("C",)
    assert norm('{"response": "C"}')[1] == "parse_failure"  # JMed48k reads "answer" only


@pytest.mark.parametrize(
    "saved_text,expected",
    [
        ("a,c", ("A", "C")),
        ("a, c", ("A", "C")),
        ("AC", ("A", "C")),
        ("c、a", ("C", "A")),
        ("b", ("B",)),
        ("ａｃ", ("A", "C")),
    ],
)
def test_saved_predictions_join_labels_as_a_set_where_the_benchmark_says_so(saved_text, expected):
    sets = AnswerConventions(saved_label_sets=True)
    assert norm(saved_text, conventions=sets, saved=True) == (expected, "answered", "saved")


def test_saved_label_sets_apply_to_saved_predictions_only():
    sets = AnswerConventions(saved_label_sets=True)
    assert norm("a,c", conventions=sets)[1] == "parse_failure"  # a live reply is never split
    assert norm("a,c", saved=True)[1] == "parse_failure"  # JMed48k does not declare it
    assert norm("az", conventions=sets, saved=True)[1] == "parse_failure"  # every label must be valid
    assert norm("600", numeric_item(), conventions=sets, saved=True)[:2] == (("600",), "answered")
    assert norm("d: 血管拡張性肉芽腫", conventions=sets, saved=True)[1] == "parse_failure"
    assert norm('{"answer": ["a", "c"]}', conventions=sets, saved=True) == (("A", "C"), "answered", "json")


# Patterns
def test_english_is_always_applied_and_patterns_are_compiled_once():
    assert compile_patterns((JAPANESE,)) is compile_patterns([JAPANESE])
    assert compile_patterns(()).answer == compile_patterns((ENGLISH,)).answer


def test_answer_pattern_without_ans_group_is_rejected():
    with pytest.raises(ValueError, match="ans"):
        compile_patterns((LanguagePatterns(language="xx", answer=(r"odpowiedź: [A-E]",)),))


# Robustness: no exception escapes for any string
@pytest.mark.parametrize(
    "text",
    [
        '{"answer": ' + "[" * 1000,
        '{"answer": ' + "[" * 100_000,
        "[" * 100_000,
        "```json\n" + "[" * 5000 + "\n```",
        '{"a": ' * 50_000 + '"answer"',
        '{"answer": 1' + "0" * 5000 + "}",
        '{"answer": 1e999}',
        '{"answer": NaN}',
        '{"answer": "\ud800"}',
        "\ud800\udfff",
        '{"answer": {"answer": {}}}',
        "{" * 10_000 + '"answer"',
    ],
)
def test_pathological_replies_never_raise(text):
    for item in (ITEM, DIGIT_ITEM, SLOTS_12, NO_OPTIONS):
        assert norm(text, item)[1] in ("answered", "refusal", "parse_failure")


def test_read_json_finds_nothing_in_prose():
    assert read_json("The answer is C.") == (False, None)
    assert read_json('{"answer": ["C"]}') == (True, ["C"])
    assert read_json('{"answer": ' + "[" * 1000) == (False, None)

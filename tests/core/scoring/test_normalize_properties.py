"""Properties of the answer reader over generated replies: it never raises, never returns a key
outside the item's options, and agrees with the rules as the protocol writes them. Thousands of
generated replies (over 20 s): in the full suite, not the fast loop, which the example-based
tests of the reader cover."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from medvqa.core.items import Gold, Item, Option
from medvqa.core.scoring.normalize import apply_rules, item_labels, normalize, rule0_clean
from medvqa.core.scoring.patterns import ENGLISH, compile_patterns
from medvqa.core.scoring.refusals import REFUSALS
from medvqa.ja import JAPANESE

pytestmark = pytest.mark.slow

ITEMS = [
    Item(
        id="abc",
        benchmark="t",
        question="Which one?",
        gold=Gold.from_json(["C"]),
        options=tuple(
            Option(key=k, label=k.lower(), text=t) for k, t in zip("ABCDE", ["alpha", "beta", "(c)", "Straße", "e."])
        ),
    ),
    Item(id="num", benchmark="t", question="Calculate.", gold=Gold.from_json(["1", "2"]), answer_format="numeric"),
    Item(
        id="dig",
        benchmark="t",
        question="どれか。",
        gold=Gold.from_json(["3"]),
        options=tuple(Option(key=k, label=k, text=t) for k, t in zip("12345", ["①", "②", "answer", "④", "⑤"])),
    ),
    Item(id="img", benchmark="t", question="Which image?", gold=Gold.from_json(["C"])),  # read by the fallback
]

FRAGMENTS = st.sampled_from(
    [
        '{"answer": [',
        '{"answer": "',
        '"]}',
        '"',
        ",",
        "[",
        '["',
        "]",
        "}",
        "```json\n",
        "```",
        "->",
        "→",
        "\\boxed{",
        "oxed{",
        "\x08",
        "\x00",
        "\x1f",
        "\x7f",
        "\t",
        "\n",
        "(",
        "（",
        ")",
        "）",
        "answer is ",
        "正解は",
        "解答：",
        "①",
        "③",
        "⑩",
        "a",
        "C",
        "F",
        "Z",
        "0",
        "6",
        "1.2",
        " mg",
        "%",
        ".",
        "．",
        "。",
        "alpha",
        "cannot answer",
        " ",
        "\ud800",
    ]
)
REPLIES = st.one_of(st.text(), st.lists(st.one_of(FRAGMENTS, st.text(max_size=3)), max_size=12).map("".join))


@settings(max_examples=500, deadline=None)
@given(REPLIES)
@example('{"answer": ' + "[" * 1000)
def test_the_reader_never_raises_and_only_returns_valid_keys(text):
    for item in ITEMS:
        result = normalize(item, text, (JAPANESE,))
        assert result.status in ("answered", "refusal", "parse_failure")
        assert (result.predicted is None) == (result.status != "answered")
        if result.predicted is not None and item.options:
            assert set(result.predicted) <= set(item.keys)
        elif result.predicted is not None and result.rule != "fallback":  # numbers: digits only
            assert all(p.isdigit() and p.isascii() for p in result.predicted)


@given(st.text(st.sampled_from(["a", " ", "\t", "\n", "\r", "\u3000", "\x85", "\x1c", "\x01", "\x7f", "\u2028", "本"])))
def test_rule0_is_the_written_rule(text):
    expected = re.sub(r"\s+", " ", re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", "", text)).strip()
    assert rule0_clean(text) == expected and rule0_clean(text, upper=True) == expected.upper()


# The rules as the protocol writes them: each rule's pattern over the whole Rule-0 string, a
# candidate valid when it is (after full-width forms and case) a key, a label or an option text.
TRAILING = " .,;:!?。．、，；：！？…"
RULE2 = re.compile(r"([^\s.．。]{1,3})\s*[.．。]\s*\S")
RULE4 = re.compile(r"oxed\s*\{\s*(?:\\text(?:bf)?\s*\{)?\s*([^{}]*?)\s*\}", re.IGNORECASE)
RULE5 = re.compile(rf"[(（]\s*([^()（）]{{1,10}}?)\s*[)）][{re.escape(TRAILING)}]*$")
RULE7 = re.compile(rf"([①-⑩])[{re.escape(TRAILING)}]*$")
# B.5 numeric slot: the one number a candidate holds (digits, a decimal part, thousands commas),
# whatever surrounds it, as its digits; several numbers or a circled digit name none.
NUMBER = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?|[①-⑳]")


def reference_resolve(item, candidate):
    c = "".join(chr(ord(ch) - 0xFEE0) if "！" <= ch <= "～" else ch for ch in candidate.strip())
    if not item.options:
        numbers = NUMBER.findall(c)
        if len(numbers) != 1 or numbers[0] in "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳":
            return None
        return "".join(ch for ch in numbers[0] if ch.isascii() and ch.isdigit())
    for o in item.options:
        if c.casefold() in (o.key.casefold(), o.label.casefold()):
            return o.key
    for o in item.options:
        if c.casefold() == rule0_clean(o.text).casefold() != "":
            return o.key
    return None


def reference_rules(s, item, patterns):
    if not s:
        return None
    texts = {rule0_clean(o.text).casefold(): o.key for o in item.options}
    if s.casefold() in texts and s.casefold():
        return texts[s.casefold()], "rule1"
    if item.options and (m := RULE2.match(s)) and (key := reference_resolve(item, m[1])):
        return key, "rule2"
    if key := reference_resolve(item, s.rstrip(TRAILING)):
        return key, "rule3"
    for boxed in reversed(RULE4.findall(s)):
        if key := reference_resolve(item, boxed):
            return key, "rule4"
    if (m := RULE5.search(s)) and (key := reference_resolve(item, m[1])):
        return key, "rule5"
    phrases = [re.compile(rx, re.IGNORECASE) for p in (ENGLISH, *patterns) for rx in p.answer]
    for m in sorted((m for rx in phrases for m in rx.finditer(s)), key=lambda m: m.start("ans"), reverse=True):
        if key := reference_resolve(item, m["ans"]):
            return key, "rule6"
    if (m := RULE7.search(s)) and (digit := str(ord(m[1]) - ord("①") + 1)) in item.keys:
        return digit, "rule7"
    return None


BITS = st.sampled_from(
    [
        "the ",
        "final ",
        "correct ",
        "ANSWER",
        "answer",
        "Answer",
        "anſwer",
        " is ",
        "is:",
        ":",
        "(",
        ")",
        "）",
        "（",
        "A",
        "c",
        "e",
        "Ｅ",
        "3",
        "①",
        "③",
        "⑩",
        "正解は",
        "答え",
        "答えは",
        "：",
        "解答",
        " ",
        ".",
        "。",
        "…",
        "boxed{",
        "BOXED{",
        "\\boxed{\\text{",
        "}",
        "alpha",
        "(c)",
        "e.",
        "STRASSE",
        "straße",
        "1.2",
        " mg",
        "12",
        "%",
        "ı",
        "K",
        "\n",
        "\t",
        "\x01",
        "Ａ",
        "ｂ",
        "３",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(BITS, max_size=10).map("".join), st.sampled_from(ITEMS), st.booleans())
@example("Final: \\BOXED{c}.", ITEMS[0], False)
@example("答えは（Ｃ）。", ITEMS[0], True)
@example("選ぶのは（３）", ITEMS[2], True)
@example("the answer is 1.2 mg", ITEMS[1], False)
@example("\\boxed{a} or (c)", ITEMS[0], False)
def test_rule_chain_agrees_with_the_written_rules(text, item, japanese):
    patterns = (JAPANESE,) if japanese else ()
    for upper in (False, True):
        s = rule0_clean(text, upper=upper)
        assert apply_rules(s, item_labels(item), compile_patterns(patterns)) == reference_rules(s, item, patterns)


def reference_read(item, text, patterns):
    """The whole reading as B.3–B.5 write it, with the decoder of the `json` module."""
    sentences = [rx for lang in REFUSALS.values() for rx in lang] + [
        rx for p in (ENGLISH, *patterns) for rx in p.refusal
    ]
    refusal = re.compile("|".join(f"(?:{rx})" for rx in sentences), re.IGNORECASE)
    upper = bool(item.keys or item.gold.keys) and all(k.isascii() and k.isalpha() for k in item.keys or item.gold.keys)

    def fallback(candidates):
        if candidates and any(set(candidates) == set(alt) for alt in item.gold.alternatives):
            return tuple(candidates), "answered", "fallback"
        declines = refusal.search(unicodedata.normalize("NFKC", rule0_clean(text)))
        return None, "refusal" if declines else "parse_failure", None

    try:
        if not text.startswith(("{", "[")):
            raise ValueError("not JSON")
        value = json.loads(text, strict=False)
        value = value["answer"] if text.startswith("{") else value
    except (ValueError, KeyError, RecursionError):
        s = rule0_clean(text, upper)
        hit = reference_rules(s, item, patterns)
        return ((hit[0],), "answered", hit[1]) if hit else fallback([s])
    elements = []
    for v in value if isinstance(value, list) else [value]:
        parts = [p.strip() for p in re.split("->|→", v) if p.strip()] if isinstance(v, str) else []
        elements += parts or [v]
    if not elements:
        return None, "refusal", "json"
    if not all(isinstance(e, (str, int, float)) and not isinstance(e, bool) for e in elements):
        return fallback([])
    cleaned = [rule0_clean(str(e), upper) for e in elements]
    hits = [reference_rules(c, item, patterns) for c in cleaned]
    return (tuple(h[0] for h in hits), "answered", "json") if all(hits) else fallback(cleaned)


ELEMENTS = st.sampled_from(
    [
        '"a"',
        '"C"',
        '"ｃ"',
        '"z"',
        '"answer is b"',
        '"3"',
        "3",
        "3.0",
        "true",
        "null",
        '"(c)"',
        '"alpha"',
        '"Straße"',
        '"③"',
        '"a -> c"',
        '"c→a→"',
        '["a"]',
        '"答えは Ａ"',
        '"1.2"',
        '"12 mg"',
        '""',
        '"cannot answer"',
    ]
)


@settings(max_examples=800, deadline=None)
@given(st.lists(ELEMENTS, max_size=3), st.sampled_from(["", " ", "\n"]), st.sampled_from(ITEMS), st.booleans())
def test_json_reading_agrees_with_the_written_rules(elements, ws, item, japanese):
    patterns = (JAPANESE,) if japanese else ()
    for text in (
        '{"answer": [' + f",{ws}".join(elements) + "]}",
        '{"answer": ' + (elements[0] if elements else '""') + "}",
        "[" + ", ".join(elements) + "]",
        "".join(elements),
    ):
        read = normalize(item, text, patterns)
        assert (read.predicted, read.status, read.rule) == reference_read(item, text, patterns), text

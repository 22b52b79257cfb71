"""The fast paths of answer reading agree with the general ones they stand in for."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from medvqa.adapters.jmed48k.patterns import JAPANESE
from medvqa.core import normalize as nz
from medvqa.core.items import Gold, Item, Option
from medvqa.core.normalize import compile_patterns


_CHARS = st.sampled_from(['a', 'B', 'Ａ', '1', ' ', '\t', '\n', '\u3000', '\x0b', '\x01', '"', '\\', ',', '{', '}', 'é'])
_WS = st.sampled_from(["", " ", "\n ", "\t", "\u3000", "\x0b"])


@st.composite
def _answer_texts(draw):
    elements = draw(st.lists(st.text(_CHARS, max_size=4), max_size=3))
    ws = [draw(_WS) for _ in range(8)]
    body = f",{ws[0]}".join(f'"{e}"' for e in elements)
    obj = f'{{{ws[1]}"answer"{ws[2]}:{ws[3]}[{ws[4]}{body}{ws[5]}]{ws[6]}}}'
    prefix = draw(st.sampled_from(["", "```json\n", "答えは ", '"answer" ', "{x} "]))
    suffix = draw(st.sampled_from(["", "\n```", " 以上", ' "answer"', "}"]))
    return prefix + ws[7] + obj + suffix


@settings(max_examples=400, deadline=None)
@given(_answer_texts())
def test_json_answer_matches_decoding(text):
    assert nz._json_answer(text) == nz._decoded_answer(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(_CHARS, max_size=4), max_size=3), st.sampled_from(["", "x", "}", "\n"]))
def test_structured_output_form_reads_as_json_does(elements, tail):
    text = '{"answer": [' + ", ".join(f'"{e}"' for e in elements) + "]}" + tail
    assert nz._json_answer(text) == nz._decoded_answer(text)


@given(st.text(st.sampled_from(["a", " ", "\t", "\n", "\u3000", "\x85", "\x1c", "\x01", "\x7f", "\u2028", "本"])))
def test_clean_matches_regex_whitespace_collapse(text):
    expected = re.sub(r"\s+", " ", nz._CONTROL.sub("", text)).strip()
    assert nz.clean(text) == expected
    assert nz.clean(text, upper=True) == expected.upper()


def test_printable_text_has_no_whitespace_but_the_space():
    assert [c for c in map(chr, range(0x110000)) if c.isprintable() and c.isspace()] == [" "]


# The rule chain as the protocol states it: every rule's regex run over the whole text, the
# English answer phrase with its leading words. `_apply_rules` must agree with it everywhere.
_OLD_ENGLISH_ANSWER = re.compile(rf"\b(?:(?:the|correct|final)\s+)*answer\s*(?:is\s*:?|:)\s*{nz.ANSWER_TOKEN}",
                                 re.IGNORECASE)
_CIRCLED_TAIL = re.compile(rf"(?P<ans>[①-⑩])[{re.escape(nz._TRAILING)}]*$")


class _ReferenceKeys:
    """`_Keys.resolve` as the protocol states it: strip, full-width to ASCII, casefold, look up."""

    def __init__(self, keys):
        self.keys, self.numeric, self.by_text = keys.keys, keys.numeric, keys.by_text
        self._keys = keys

    def resolve(self, candidate):
        c = candidate.strip().translate(nz._FULLWIDTH)
        if self.numeric:
            return c if nz._NUMBER.fullmatch(c) else None
        c = c.casefold()
        return self._keys.by_key.get(c) or self.by_text.get(c)


def _reference_rules(s, keys, patterns):
    keys = _ReferenceKeys(keys)
    if not s:
        return None
    if (key := keys.by_text.get(s.casefold())) is not None:
        return key, "rule1"
    if not keys.numeric and (m := nz._LABEL_DOT.match(s)) and (key := keys.resolve(m["ans"])):
        return key, "rule2"
    if key := keys.resolve(s.rstrip(nz._TRAILING)):
        return key, "rule3"
    for boxed in reversed(nz._BOXED.findall(s)):
        if key := keys.resolve(boxed):
            return key, "rule4"
    if (m := nz._PAREN_TAIL.search(s)) and (key := keys.resolve(m["ans"])):
        return key, "rule5"
    answer = [_OLD_ENGLISH_ANSWER] + [re.compile(rx, re.IGNORECASE) for p in patterns for rx in p.answer]
    phrases = sorted((m for rx in answer for m in rx.finditer(s)), key=lambda m: m.start("ans"))
    for m in reversed(phrases):
        if key := keys.resolve(m["ans"]):
            return key, "rule6"
    if not keys.numeric and (m := _CIRCLED_TAIL.search(s)):
        digit = str(ord(m["ans"]) - ord("①") + 1)
        if digit in keys.keys:
            return digit, "rule7"
    return None


def _reference_refusal(text, patterns):
    refusal = [rx for p in (nz.ENGLISH, *patterns) for rx in p.refusal]
    return re.search("|".join(f"(?:{rx})" for rx in refusal), text, re.IGNORECASE) is not None


_PHRASE_BITS = st.sampled_from([
    "the ", "final ", "correct ", "ANSWER", "answer", "Answer", "anſwer", "ANSWEK", "answer", " is ", "is:", ":",
    "(", ")", "）", "(", "A", "c", "e", "Ｅ", "3", "①", "③", "⑩", "正解は", "答え", "答えは", "：", "解答", " ",
    ".", "。", "…", "boxed{", "BOXED{", "\\boxed{\\text{", "}", "cannot", "can not", "unable to", " determine",
    "回答できません", "判断できません", "ı", "İ", "K", "é", "\n", "\t", "\x01", "Ａ", "ｂ", "（", "）", "３",
    "STRASSE", "straße", "ALPHA", "Ｂeta"])
_ITEMS = [
    Item(id="abc", benchmark="t", question="Which one?", gold=Gold.from_json(["C"]),
         options=tuple(Option(key=k, label=k.lower(), text=t) for k, t in zip("ABCDE", ["alpha", "beta", "(c)", "Straße", "e."]))),
    Item(id="num", benchmark="t", question="Calculate.", gold=Gold.from_json(["3"]), answer_format="numeric"),
    Item(id="dig", benchmark="t", question="どれか。", gold=Gold.from_json(["3"]),
         options=tuple(Option(key=k, label=k, text=t) for k, t in zip("12345", ["①", "②", "answer", "④", "⑤"]))),
    Item(id="img", benchmark="t", question="Which image?", gold=Gold.from_json(["C"])),  # read by the fallback
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PHRASE_BITS, max_size=10).map("".join), st.sampled_from(_ITEMS), st.booleans())
@example("Final: \\BOXED{c}.", _ITEMS[0], False)
@example("Final: \\Boxed{\\text{b}} ok", _ITEMS[0], False)
@example("答えは（Ｃ）。", _ITEMS[0], True)
@example("選ぶのは（３）", _ITEMS[2], True)
@example("I can't answer\x01 this", _ITEMS[1], False)
def test_rule_chain_agrees_with_the_plain_reference(text, item, japanese):
    patterns = (JAPANESE,) if japanese else ()
    rules = compile_patterns(patterns)
    keys = nz.keys_of(item)
    for upper in (False, True):
        s = nz.clean(text, upper=upper)
        assert nz._apply_rules(s, keys, rules) == _reference_rules(s, keys, patterns)
        assert rules.refusal_gated.search(s) == _reference_refusal(s, patterns)


def _reference_read(item, text, patterns):
    """The whole reading as the protocol states it: JSON by the decoder, then the plain chain."""
    rules = compile_patterns(patterns)
    keys = nz.keys_of(item)

    def element_key(element):
        if not nz._is_scalar(element):
            return None
        raw = str(element)
        c = raw.casefold()
        key = (c if nz._NUMBER.fullmatch(raw) else None) if keys.numeric else (keys.by_text.get(c) or keys.by_key.get(c))
        if key is None:
            hit = _reference_rules(nz.clean(raw, upper=keys.letters), keys, patterns)
            key = hit[0] if hit else None
        return key

    def unresolved(candidates, whole):
        if candidates and frozenset(candidates) in keys.gold_sets:
            return tuple(candidates), "answered", "fallback"
        return (None, "refusal", None) if _reference_refusal(whole, patterns) else (None, "parse_failure", None)

    found, value = nz._decoded_answer(text)
    if found:
        if isinstance(value, list) and not value:
            return None, "refusal", "json"
        if isinstance(value, str):
            elements = [p for p in (s.strip() for s in re.split("->|→", value)) if p] or [value]
        else:
            elements = value if isinstance(value, list) else [value]
        predicted = []
        for element in elements:
            key = element_key(element)
            if key is None:
                as_is = ([nz.clean(str(e), upper=keys.letters) for e in elements]
                         if all(nz._is_scalar(e) for e in elements) else [])
                return unresolved(as_is, nz.clean(text))
            predicted.append(key)
        return tuple(predicted), "answered", "json"
    cleaned = nz.clean(text, upper=keys.letters)
    hit = _reference_rules(cleaned, keys, patterns)
    return ((hit[0],), "answered", hit[1]) if hit else unresolved([cleaned], cleaned)


_JSON_ELEMENTS = st.sampled_from(['"a"', '"C"', '"ｃ"', '"z"', '"answer is b"', '"3"', "3", "3.0", "true", "null",
                                  '"(c)"', '"alpha"', '"Straße"', '"③"', '"a -> c"', '["a"]', '"答えは Ａ"'])


@settings(max_examples=800, deadline=None)
@given(st.lists(_JSON_ELEMENTS, max_size=3), st.sampled_from(["", " ", "\n"]), st.sampled_from(_ITEMS), st.booleans(),
       st.sampled_from(["", "The answer is ", "I cannot answer. "]))
def test_reading_agrees_with_the_plain_reference(elements, ws, item, japanese, prefix):
    patterns = (JAPANESE,) if japanese else ()
    for text in (prefix + '{"answer": [' + f",{ws}".join(elements) + "]}",
                 '{"answer": ' + (elements[0] if elements else '""') + "}", prefix + "".join(elements)):
        assert nz.read_answer(item, text, compile_patterns(patterns)) == _reference_read(item, text, patterns)


_GATE_CHARS = st.sampled_from(list("answerANSWERisIS :：abcd正解は答え回答K") + ["ſ", "ı", "İ", "é", "É", "\u212a", "ß", "ss",
                                                                                "ǅ", "本", "ÉS", "ź"])
_GATED = [  # literal gates of patterns adapters might contribute, some built to trip case folding
    r"\banswer\s*(?:is\s*:?|:)\s*(?P<ans>[a-e])",
    r"(?:the\s)?answer\s*(?P<ans>[a-e])",
    r"(?:final|correct)\s+(?P<ans>[a-e])",
    r"(?P<ans>[a-e])\s+is\s+correct",
    r"kiss\s*(?P<ans>[a-e])",
    r"odpowiedź:\s*(?P<ans>[a-e])",
    r"ÉS\s*(?P<ans>[a-e])",
    r"(?-i:Answer)\s*(?P<ans>[a-e])",
    r"(?:ab)+c(?P<ans>[a-e])",
    r"正解は\s*(?P<ans>[a-e])",
    r"(?a)is\s*(?P<ans>[a-e])",
    r"\bcannot\s+(?:determine|answer)\b",
    r"(?P<ans>[a-e])$",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(_GATE_CHARS, max_size=14).map("".join))
def test_literal_gates_never_hide_a_match(text):
    from medvqa.core.literals import GatedPatterns, gate_for, plain_lower

    compiled = [re.compile(pattern, re.IGNORECASE) for pattern in _GATED]
    for rx in compiled:
        gate = gate_for(rx)
        every = [(m.span(), m.groupdict()) for m in rx.finditer(text)]
        if gate is None:
            continue
        at = gate.start(text, plain_lower(text))
        if at < 0:
            assert every == [], (rx.pattern, text)
        else:
            assert [(m.span(), m.groupdict()) for m in rx.finditer(text, at)] == every, (rx.pattern, text)
        assert (gate.start(text) < 0) == (at < 0)  # without lower(): the literals' regex decides alike
    gated = GatedPatterns(compiled)
    assert [m.span() for m in gated.finditer(text)] == [m.span() for rx in compiled for m in rx.finditer(text)]
    assert gated.search(text) == any(rx.search(text) for rx in compiled)


def test_gates_are_read_from_the_patterns_literals():
    from medvqa.core.literals import gate_for

    def gate(pattern, flags=re.IGNORECASE):
        return gate_for(re.compile(pattern, flags))

    english = gate(nz.ENGLISH.answer[0])
    assert english.literals == ("answer",) and english.lead == 0 and english.first.folded == ("answer",)
    assert gate(r"(?:final|correct)\s+x").literals == ("final", "correct")
    assert gate(r"(?:the\s)?answer").lead == 4 and gate(r"(?:the\s)*answer").lead is None
    assert gate(r"正解は\s*x").first.uncased and gate("正解は").lead == 0
    # lower() stands in only for ASCII literals; "café" never occurs in an ASCII text
    assert gate("ſtop").first.folded is None and gate("ſtop").in_ascii
    assert gate("café").first.folded is None and not gate("café").in_ascii
    assert gate(r"\d+") is None and gate(r"(?:a|)b").literals == ("b",)
    assert gate(r"(?-i:Answer)x").literals == ("x",)  # literals under scoped flags are left alone
    refusal = gate(nz.ENGLISH.refusal[0])  # both word groups are required
    assert refusal.literals == ("answer", "determine") and refusal.also[0].literals == ("can", "unable to")
    assert refusal.start("the answer is b") == -1 and refusal.start("I can't answer") == 0


def test_literals_without_case_are_exactly_what_the_engine_compiles_as_plain():
    import _sre

    from medvqa.core.literals import _uncased

    assert all(not _sre.unicode_iscased(cp) for cp in range(0x110000)
               if not 0xD800 <= cp < 0xE000 and _uncased((chr(cp),), re.IGNORECASE))


_EVERY = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)


def test_plain_texts_are_those_lower_folds_as_the_engine_does():
    from medvqa.core.literals import NOT_PLAIN

    ascii_letters = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    beyond = set(re.findall("[a-z]", _EVERY, re.IGNORECASE)) - ascii_letters
    assert {c for c in beyond if len(c.lower()) != 1 or c.lower() not in ascii_letters} == set(NOT_PLAIN)
    assert {c for c in _EVERY if len(c.lower()) != 1} <= set(NOT_PLAIN)  # lower() keeps positions


def test_only_ascii_letters_match_the_boxed_marker_case_insensitively():
    assert sorted(set(re.findall("[oxed]", _EVERY, re.IGNORECASE))) == sorted("oxedOXED")

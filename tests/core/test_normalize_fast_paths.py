"""The fast paths of answer reading agree with the general ones they stand in for."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from medvqa.adapters.jmed48k.patterns import JAPANESE
from medvqa.core import normalize as nz
from medvqa.core.normalize import LanguagePatterns, compile_patterns


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


@given(st.text(st.sampled_from(["a", " ", "\t", "\n", "\u3000", "\x85", "\x1c", "\x01", "\x7f", "\u2028", "本"])))
def test_clean_matches_regex_whitespace_collapse(text):
    expected = re.sub(r"\s+", " ", nz._CONTROL.sub("", text)).strip()
    assert nz.clean(text) == expected
    assert nz.clean(text, upper=True) == expected.upper()


_PHRASE_BITS = st.sampled_from(["the ", "ANSWER", " is ", ":", "(", "A", "c", "正解は", "答え", "：", "解答", "①", " ", "."])


@given(st.lists(_PHRASE_BITS, max_size=8).map("".join))
def test_answer_probe_finds_exactly_what_the_answer_patterns_find(text):
    rules = compile_patterns((JAPANESE,))
    assert rules.answer_probe is not None
    assert bool(rules.answer_probe.search(text)) == any(rx.search(text) for rx in rules.answer)


def test_answer_probe_is_left_out_when_joining_could_change_matches():
    numbered_reference = LanguagePatterns("xx", answer=(r"(q)\1\s*(?P<ans>[a-e])",))
    other_group_twice = LanguagePatterns("yy", answer=(r"(?P<k>z)(?P<ans>[a-e])", r"(?P<k>w)(?P<ans>[a-e])"))
    assert compile_patterns((numbered_reference,)).answer_probe is None
    assert compile_patterns((other_group_twice,)).answer_probe is None

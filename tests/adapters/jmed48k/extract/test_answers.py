"""Answer keys: every written form, the real IgakuQA119 CSV, and keys that do not fit."""

from __future__ import annotations

import csv

import pytest

from medvqa.adapters.jmed48k.extract.answers import AnswerError, parse_answer, parse_question_id, read_answer_key
from medvqa.core.items import DataError, Gold
from tests.conftest import shared_data

DIGITS = ["1", "2", "3", "4", "5"]
LETTERS = ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize(
    "raw, options, slots, n_select, expected",
    [
        ("3", DIGITS, 0, 1, ["3"]),
        ("ｂ", LETTERS, 0, 1, ["B"]),
        ("2, 4", DIGITS, 0, 2, ["2", "4"]),
        ("2,4", DIGITS, 0, 2, ["2", "4"]),
        ("ce", LETTERS, 0, 2, ["C", "E"]),
        ("C, E", LETTERS, 0, 2, ["C", "E"]),
        ("24", DIGITS, 0, 2, ["2", "4"]),
        ("1又は4", DIGITS, 0, 1, [["1"], ["4"]]),
        ("1 or 4", DIGITS, 0, 1, [["1"], ["4"]]),
        ("a又はc", LETTERS, 0, 1, [["A"], ["C"]]),
        ("2及び4又は3及び4", DIGITS, 0, 2, [["2", "4"], ["3", "4"]]),
        ("600", [], 3, 1, ["6", "0", "0"]),
        ("０４０", [], 3, 1, ["0", "4", "0"]),
    ],
)
def test_answer_forms(raw, options, slots, n_select, expected):
    value, reason = parse_answer(raw, options=options, slots=slots, n_select=n_select)
    assert value == expected and reason is None
    assert Gold.from_json(value) is not None


@pytest.mark.parametrize(
    "raw, reason",
    [
        ("採点除外", "採点除外"),
        ("解なし", "解なし"),
        ("全員正解", "全員正解"),
        ("", "blank in the answer key"),
        (" ― ", "blank in the answer key"),
    ],
)
def test_withdrawn_keys_are_null_with_their_reason(raw, reason):
    assert parse_answer(raw, options=DIGITS) == (None, reason)


@pytest.mark.parametrize("raw, options, slots", [("6", DIGITS, 0), ("f", LETTERS, 0), ("60", [], 3), ("1a", DIGITS, 0)])
def test_keys_that_do_not_fit_the_question_are_refused(raw, options, slots):
    with pytest.raises(AnswerError):
        parse_answer(raw, options=options, slots=slots)


def test_question_ids():
    assert parse_question_id("119A75") == ("A", 75)
    assert parse_question_id("A12") == ("A", 12)
    assert parse_question_id("午後 3") == ("PM", 3)
    assert parse_question_id("77AM5") == ("AM", 5)
    assert parse_question_id("12") == (None, 12)
    assert parse_question_id("問題番号") is None


def test_real_igakuqa119_key_reads_every_row():
    path = shared_data("igakuqa119", "results", "correct_answers.csv")
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))[1:]
    entries = read_answer_key(path)
    assert len(entries) == len(rows) == 400
    by_id = {(e.section, e.number): e for e in entries}
    assert {s for s, _ in by_id} == {"A", "B", "C", "D", "E", "F"}
    assert parse_answer(by_id[("A", 75)].raw, options=[], slots=3)[0] == ["6", "0", "0"]
    assert parse_answer(by_id[("C", 74)].raw, options=[], slots=2)[0] == ["3", "6"]
    assert parse_answer(by_id[("A", 12)].raw, options=LETTERS, n_select=2)[0] == ["C", "E"]
    assert parse_answer(by_id[("A", 1)].raw, options=LETTERS)[0] == ["A"]


def test_unreadable_key_files(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_answer_key(tmp_path / "none.csv")
    bad = tmp_path / "key.txt"
    bad.write_text("1,a\n", encoding="utf-8")
    with pytest.raises(DataError, match=".csv or .pdf"):
        read_answer_key(bad)
    broken = tmp_path / "key.csv"
    broken.write_text("問題番号,解答\nfirst,a\n", encoding="utf-8")
    with pytest.raises(DataError, match="row 2"):
        read_answer_key(broken)

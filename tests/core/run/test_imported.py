"""`medvqa.write_run`: a run written from answers made elsewhere keeps every pair in its
denominators (a pair without an answer is `missing`), and a bad answer triple is a DataError
naming its item."""

from __future__ import annotations

import pytest

import medvqa
from medvqa import DataError
from medvqa.core import plugins
from medvqa.core.run.store import read_records
from tests.adapters.kokushimd10.fixtures import kokushi_release


@pytest.fixture
def loaded(tmp_path):
    bench = plugins.get_benchmark("kokushimd10")
    items = bench.load(kokushi_release(tmp_path / "release"))
    return bench, items


def test_items_without_an_answer_are_recorded_missing_and_counted(tmp_path, loaded):
    bench, items = loaded
    first = items[0]
    summary = medvqa.write_run(bench, items, [(first, "C+Q", first.gold.alternatives[0][0])], tmp_path / "run",
                               model="m", saved=False)
    records = {(r["item_id"], r["condition"]): r for r in read_records(tmp_path / "run")}
    runnable = [it for it in items if not it.excluded]
    # one answer in C+Q: every other item is a missing C+Q record; no condition the answers do not use
    assert set(records) == {(it.id, "C+Q") for it in runnable} and len(runnable) == len(items) == 5
    assert records[(first.id, "C+Q")]["status"] == "answered" and records[(first.id, "C+Q")]["correct"]
    assert all(r["status"] == "missing" and r["correct"] is False for k, r in records.items() if k[0] != first.id)
    assert summary["n_records"] == 5 and summary["accuracy"]["C+Q"] == 1 / 5


def test_an_unknown_condition_is_a_data_error_naming_the_item(tmp_path, loaded):
    bench, items = loaded
    with pytest.raises(DataError, match=rf"record {items[0].id}: unknown condition 'CQ' \(one of C, C\+Q, C\+I, C\+Q\+I\)"):
        medvqa.write_run(bench, items, [(items[0], "CQ", "A")], tmp_path / "run", model="m")


def test_a_second_answer_for_a_pair_names_both_answers_and_writes_nothing(tmp_path, loaded):
    bench, items = loaded
    first, second = items[:2]
    answers = [(first, "C+Q", "A"), (second, "C+Q", "B"), (first, "C+Q", "C")]
    with pytest.raises(DataError, match=rf"^record answer 1 and answer 3: a second answer for item "
                                        rf"'{first.id}' under C\+Q$"):
        medvqa.write_run(bench, items, answers, tmp_path / "run", model="m")
    assert not (tmp_path / "run").exists()

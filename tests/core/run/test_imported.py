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
    summary = medvqa.write_run(
        bench, items, [(first, "C+Q", first.gold.alternatives[0][0])], tmp_path / "run", model="m", saved=False
    )
    records = {(r["item_id"], r["condition"]): r for r in read_records(tmp_path / "run")}
    runnable = [it for it in items if not it.excluded]
    # one answer in C+Q: every other item is a missing C+Q record; no condition the answers do not use
    assert set(records) == {(it.id, "C+Q") for it in runnable} and len(runnable) == len(items) == 5
    assert records[(first.id, "C+Q")]["status"] == "answered" and records[(first.id, "C+Q")]["correct"]
    assert all(r["status"] == "missing" and r["correct"] is False for k, r in records.items() if k[0] != first.id)
    assert summary["n_records"] == 5 and summary["accuracy"]["C+Q"] == 1 / 5


def test_an_unknown_condition_is_a_data_error_naming_the_item(tmp_path, loaded):
    bench, items = loaded
    with pytest.raises(
        DataError, match=rf"record {items[0].id}: unknown condition 'CQ' \(one of C, C\+Q, C\+I, C\+Q\+I\)"
    ):
        medvqa.write_run(bench, items, [(items[0], "CQ", "A")], tmp_path / "run", model="m")


def test_a_second_answer_for_a_pair_names_both_answers_and_writes_nothing(tmp_path, loaded):
    bench, items = loaded
    first, second = items[:2]
    answers = [(first, "C+Q", "A"), (second, "C+Q", "B"), (first, "C+Q", "C")]
    with pytest.raises(
        DataError,
        match=rf"^record answer 1 and answer 3: a second answer for item "
        rf"'{first.id}' under C\+Q$",
    ):
        medvqa.write_run(bench, items, answers, tmp_path / "run", model="m")
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------- the arguments, checked when the run is written


@pytest.fixture
def sample():
    """The bundled JMed48k sample (18 items, 1 excluded) and its benchmark, as a saved run gives it."""
    return plugins.get_benchmark("jmed48k"), medvqa.load("jmed48k", split="sample")


def test_the_docs_example_writes_a_run_report_reads(tmp_path, monkeypatch, sample):
    import contextlib
    import io
    import re
    from types import SimpleNamespace

    from tests.conftest import REPO

    docs = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    section = docs[docs.index("### `medvqa.write_run`") : docs.index("### `medvqa.cache_dir`")]
    [example] = re.findall(r"```python\n(.*?)```", section, re.S)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(example, {"medvqa": medvqa, "saved": SimpleNamespace(benchmark=sample[0])})
    # 15 items with options answered with their first option, the first of them left unanswered; the
    # 2 without options recorded missing too: 17 records, 3 missing; right where the first option is
    # a whole right answer: Physician_2024_A_Q1 (A), A_Q6 (A or C), B_Q5 (A)
    assert out.getvalue() == "17 3 3\n3\n"
    assert len(medvqa.read_run(tmp_path / "runs" / "elsewhere").items) == 18  # its load reloads the items


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            {"source": {"published": 0.88}},
            'write_run: source\'s `published` must be {condition: {"accuracy": fraction 0-1, '
            '"correct": count}}, such as {"C+Q": {"accuracy": 0.881, "correct": 148}}; '
            "got float 0.88",
        ),
        ({"source": {"published": {"C+Q": {"accuracy": 88.1}}}}, "source's `published`['C+Q'] must be"),
        ({"source": {"published": {"CQ": {"accuracy": 0.88}}}}, "source's `published`: 'CQ' is not a condition"),
        (
            {"load": {"path": "DATA"}},
            "'path': not a keyword of jmed48k's load (jmed48k.load(data, split, select=...) is how "
            "readers reload the items; the data folder is `data`)",
        ),
        ({"load": {"data": "no/such/folder"}}, "data: 'no/such/folder' is not an existing path"),
        ({"load": {"sample": True, "limit": 0}}, "limit: None or a whole number from 1; got int 0"),
        ({"load": "DATA"}, "write_run: load must be None or a dict of data, split, sample, select, limit"),
        ({"source": "answers.csv", "reconcile": lambda records: {}}, "write_run: source must be None or a dict"),
        ({"reconcile": lambda records: 3}, "write_run: reconcile returned int, not a dict"),
        ({"reconcile": lambda records: {"published": {"C+Q": 0.5}}}, "reconcile's `published`['C+Q'] must be"),
        ({"images_attested": "yes"}, "write_run: images_attested must be True or False; got str 'yes'"),
        ({"reading": "loose"}, "write_run: reading must be None or one of strict, assisted; got str 'loose'"),
        ({"split": "eval2"}, "write_run: split must be None or one of jmed48k's splits"),
        ({"model": ""}, "write_run: model must be a non-empty string; got str ''"),
        ({"asked": "C+Q"}, "write_run: asked must be None or a function"),
    ],
)
def test_an_argument_of_another_shape_is_a_usage_error_naming_it_and_nothing_is_written(
    tmp_path, sample, arguments, message
):
    bench, items = sample
    answers = [(it, "C+Q", "1") for it in items if it.options and not it.excluded]
    given = {"model": "m", "load": {"sample": True}, **arguments}
    with pytest.raises(medvqa.UsageError) as caught:
        medvqa.write_run(bench, items, answers, tmp_path / "run", **given)
    assert message in str(caught.value)
    assert not (tmp_path / "run").exists()


def test_an_answer_of_another_shape_names_its_place(tmp_path, sample):
    bench, items = sample
    with pytest.raises(
        medvqa.UsageError,
        match=r"answers must be \(item, condition, response text or None\[, dict "
        r"of fields or None\]\) tuples; answer 2 is tuple \('Nurse_2023_AM_Q2'",
    ):
        medvqa.write_run(
            bench,
            items,
            [(items[0], "C+Q", "1"), (items[1].id, "C+Q", "1")],
            tmp_path / "run",
            model="m",
            load={"sample": True},
        )
    assert not (tmp_path / "run").exists()

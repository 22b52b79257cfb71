"""YakugakuQA: digit labels, 4-8 options, MHLW's 解なし and any-two answers, on the real blocks
and on a small exam written here."""

import json

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from tests.adapters.kokushimd10.fixtures import yakugaku_exam
from tests.conftest import shared_data


@pytest.fixture(scope="module")
def items():
    return medvqa.load("yakugakuqa", shared_data("yakugakuqa"))


def test_every_real_block_loads(items):
    assert len(items) == 1125  # 2012 block A (90) and 2022-2024 (345 each)
    by_id = {it.id: it for it in items}
    counts = {}
    for it in items:
        counts[len(it.options)] = counts.get(len(it.options), 0) + 1
    # 96 items print their options as pictures the repository lacks: they declare labels 1-5, one
    # (109B045, whose answer is 6, a combination item) 1-6
    assert counts == {5: 1022 + 95, 6: 4 + 1, 4: 3}
    pictures = [it for it in items if it.image_as_options]
    assert len(pictures) == 96 and {o.text for it in pictures for o in it.options} == {""}
    assert [o.key for o in by_id["109B045"].options] == ["1", "2", "3", "4", "5", "6"]
    assert sorted(it.id for it in items if it.excluded) == ["107F043", "109B021", "109F045"]  # 解なし
    assert by_id["109F020"].gold.alternatives == (("1", "3"), ("1", "5"), ("3", "5"))  # any two of 1, 3, 5
    assert by_id["107A001"].options[3].key == "4" and by_id["107A001"].meta["hisshu"]
    assert by_id["107B001"].meta["number"] == 91 and by_id["107B001"].meta["category"] == "Physics"
    assert by_id["097A007"].image_as_options and by_id["097A007"].meta["without_image"]


def test_the_random_baseline_answers_every_item_also_where_the_options_are_pictures(items, tmp_path):
    """Items whose options are missing pictures still declare their labels: random picks one of
    them (never an empty answer), and a label outside them is not an answer."""
    run_dir, summary = medvqa.run(
        "yakugakuqa",
        "random",
        data=shared_data("yakugakuqa"),
        select={"year": 2024},
        conditions="C+Q",
        run_dir=tmp_path / "run",
        progress=False,
    )
    live = [it for it in items if it.meta["year"] == 2024 and not it.excluded]
    pictures = {it.id: it for it in live if it.image_as_options}
    assert len(pictures) == 30
    cell = summary["conditions"]["C+Q"]
    assert cell["n"] == cell["answered"] == len(live) and cell["parse_failure"] == cell["refusal"] == 0
    records = {r["item_id"]: r for r in medvqa.records(run_dir).to_dict("records")}
    for item_id, item in pictures.items():
        predicted = records[item_id]["predicted"]
        assert len(predicted) == (item.n_select or 1) and set(predicted) <= {o.key for o in item.options}
    picture = next(iter(pictures.values()))
    assert medvqa.score(picture, json.dumps({"answer": ["7"]})).status == "parse_failure"
    assert medvqa.score(picture, json.dumps({"answer": list(picture.gold.alternatives[0])})).correct


@pytest.mark.parametrize("k", [4, 6])
def test_real_items_with_k_options_score(items, k):
    item = next(it for it in items if len(it.options) == k and it.gold.format == "single")
    (gold,) = item.gold.alternatives[0]
    assert medvqa.score(item, json.dumps({"answer": [gold]})).correct
    other = next(o.key for o in item.options if o.key != gold)
    assert not medvqa.score(item, json.dumps({"answer": [other]})).correct
    assert medvqa.score(item, json.dumps({"answer": [str(k + 1)]})).status == "parse_failure"


@pytest.mark.parametrize("k", [4, 5, 6, 8])
def test_digit_labels_with_k_options(tmp_path, k):
    (item,) = medvqa.load("yakugakuqa", yakugaku_exam(tmp_path, [k]))
    assert [o.key for o in item.options] == [str(i) for i in range(1, k + 1)]
    assert medvqa.score(item, json.dumps({"answer": [str(k)]})).correct
    assert medvqa.score(item, f"正解は {k} です").correct
    assert not medvqa.score(item, json.dumps({"answer": ["1"]})).correct
    assert medvqa.score(item, json.dumps({"answer": [str(k + 1)]})).status == "parse_failure"  # not an option
    assert medvqa.score(item, f"1,{k}", saved=True).predicted == ("1", str(k))


def test_validate_and_pass_lines(tmp_path, items):
    result = CliRunner().invoke(cli, ["validate", "yakugakuqa", "--data", str(shared_data("yakugakuqa")), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["errors"] == 0 and sum(f["rule"] == "answer" for f in doc["findings"]) == 3
    assert {r["rule"]: (r["errors"], r["warnings"]) for r in doc["rules"]} == {  # every rule checked, 0 included
        "readable": (0, 0),
        "answer": (0, 3),
        "withdrawn": (0, 0),
        "images": (0, 370),
        "kinki": (0, 0),
        "no-answers": (0, 0),
    }
    # an all-gold replay of 2022 (107th): its one 解なし item is out, so the data's maximum is 688
    lines = [
        json.dumps(
            {"item_id": it.id, "condition": "C+Q", "response": json.dumps({"answer": list(it.gold.alternatives[0])})}
        )
        for it in items
        if it.meta["year"] == 2022 and not it.excluded
    ]
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = CliRunner().invoke(
        cli,
        [
            "run",
            "yakugakuqa",
            "--data",
            str(shared_data("yakugakuqa")),
            "--years",
            "2022",
            "--model",
            f"replay:{tmp_path / 'r.jsonl'}",
            "--conditions",
            "C+Q",
            "--no-cache",
            "--run-dir",
            str(tmp_path / "run"),
            "--json",
        ],
    )
    assert run.exit_code == 0, run.output
    rows = json.loads(CliRunner().invoke(cli, ["report", str(tmp_path / "run"), "--pass", "--json"]).output)["rows"]
    total = next(r for r in rows if r["criterion"] == "total")
    assert (total["exam"], total["points"], total["maximum"], total["status"]) == (
        "Pharmacist 2022",
        2 * 344,
        688,
        "not evaluable",
    )
    (cell,) = [r for r in rows if r["criterion"] == "overall"]
    assert cell["status"] == "not evaluable" and cell["note"].endswith("禁忌肢 answers: not marked in the data")

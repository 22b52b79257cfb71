"""`medvqa import BENCH FILE` for a benchmark without its own import command (JMed48k here):
JSON Lines and CSV answers become a run scored like any run, with every other pair `missing`;
a line naming an unknown item is one error naming the file and the line, and nothing is written."""

from __future__ import annotations

import json

from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.plugins import get_benchmark
from medvqa.core.run.store import read_records


def _items(jmed_sample):
    items = [it for it in get_benchmark("jmed48k").load(jmed_sample, "sample") if not it.excluded]
    return items


def test_jsonl_and_csv_answers_become_a_run_of_every_pair(jmed_sample, tmp_path):
    items = _items(jmed_sample)
    first, second, third = items[:3]
    wrong = next(o.label for o in third.options if o.key != third.gold.alternatives[0][0])
    lines = [{"item_id": first.id, "condition": "C+Q", "response": first.gold.alternatives[0][0].lower()},
             {"item_id": second.id, "condition": "C+Q", "response": "I cannot tell from the stem alone."},
             {"item_id": third.id, "condition": "C+Q", "response": wrong}]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", "jmed48k", str(answers), "--data", str(jmed_sample), "--split", "sample",
                                      "--run-dir", str(tmp_path / "run"), "--model", "elsewhere", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    cq = summary["conditions"]["C+Q"]
    n = sum(1 for it in items)  # every runnable item under C+Q: 3 answered here, the others missing
    assert (cq["n"], cq["correct"], cq["missing"]) == (n, 1, n - 3)
    # Clopper-Pearson with one success: the lower bound solves 1 - (1 - p)^n = 0.025
    assert abs(cq["ci"][0] - (1 - 0.975 ** (1 / n))) < 1e-9
    records = {r["item_id"]: r for r in read_records(tmp_path / "run")}
    assert records[first.id]["correct"] and not records[third.id]["correct"]
    assert records[second.id]["status"] in ("parse_failure", "refusal")

    table = tmp_path / "answers.csv"
    table.write_text("id,answer\n" + f"{first.id},{first.gold.alternatives[0][0].lower()}\n", encoding="utf-8")
    text = CliRunner().invoke(cli, ["import", "jmed48k", str(table), "--data", str(jmed_sample), "--split", "sample",
                                    "--run-dir", str(tmp_path / "run2"), "--id-column", "id",
                                    "--response-column", "answer"])
    assert text.exit_code == 0, text.output
    assert "C+Q" in text.stdout and "95% CI" in text.stdout


def test_an_unknown_item_names_the_file_and_line_and_writes_nothing(jmed_sample, tmp_path):
    answers = tmp_path / "answers.jsonl"
    known = _items(jmed_sample)[0].id
    answers.write_text(json.dumps({"item_id": known, "response": "a"}) + '\n{"item_id": "nope", "response": "a"}\n',
                       encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", "jmed48k", str(answers), "--data", str(jmed_sample), "--split", "sample",
                                      "--run-dir", str(tmp_path / "run")])
    assert result.exit_code != 0
    assert "answers.jsonl" in result.output and "line 2" in result.output and "'nope'" in result.output
    assert not (tmp_path / "run").exists()

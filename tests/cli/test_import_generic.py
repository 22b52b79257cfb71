"""`medvqa import BENCH FILE` for a benchmark without its own import command (JMed48k, Polish
PES): JSON Lines, CSV and XLSX answers become a run scored like any run, with every other pair
`missing`, its summary giving n and the exact interval; a bad file (a missing column, an unknown
item, a second answer, a condition the item does not take, no spreadsheet at all) is one error
naming the file and the line or row, and nothing is written."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.plugins import get_benchmark
from medvqa.core.run.store import read_records
from tests.conftest import REPO


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


PES = REPO / "tests" / "adapters" / "polish_pes" / "data"


def write_xlsx(path, rows):
    """An XLSX file written with openpyxl, as a spreadsheet program saves one: row 1 the header."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def test_xlsx_answers_of_polish_pes_become_a_run_with_its_counts_and_intervals(tmp_path):
    """Polish PES has no import of its own: the generic one reads an XLSX sheet with named id and
    response columns, a `condition` column where a row names one and `--condition` elsewhere."""
    from scipy.stats import beta

    table = write_xlsx(tmp_path / "answers.xlsx", [
        ["question_id", "model_answer", "condition"],
        ["pes-v-kar-01", "C", ""],  # right (gold C)
        ["pes-v-kar-02", "B", ""],  # right
        ["pes-v-int-01", "A", ""],  # wrong (gold D)
        ["pes-v-int-02", "A", ""],  # right
        ["pes-q-kar-01", "A", "C+Q"],  # right, under its own condition
    ])
    args = ["import", "polish_pes", str(table), "--data", str(PES), "--run-dir", str(tmp_path / "run"),
            "--id-column", "question_id", "--response-column", "model_answer", "--condition", "C+Q+I"]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    image, text = summary["conditions"]["C+Q+I"], summary["conditions"]["C+Q"]
    # 7 VQA items take C+Q+I (one of the 8 is annulled), 12 items take C+Q (two annulled)
    assert (image["n"], image["correct"], image["answered"], image["missing"]) == (7, 3, 4, 3)
    assert (text["n"], text["correct"], text["answered"], text["missing"]) == (12, 1, 1, 11)
    # exact (Clopper-Pearson) 95 % intervals: the beta quantiles of k successes in n
    assert image["ci"] == pytest.approx([beta.ppf(0.025, 3, 5), beta.ppf(0.975, 4, 4)], abs=1e-9)
    assert text["ci"] == pytest.approx([beta.ppf(0.025, 1, 12), beta.ppf(0.975, 2, 11)], abs=1e-9)
    records = {(r["item_id"], r["condition"]): r for r in read_records(tmp_path / "run")}
    assert records[("pes-v-int-01", "C+Q+I")]["predicted"] == ["A"] and not records[("pes-v-int-01", "C+Q+I")]["correct"]

    # the text summary prints n and the interval as a run's does
    shown = CliRunner().invoke(cli, [*args[:6], str(tmp_path / "run-text"), *args[7:]])
    assert shown.exit_code == 0, shown.output
    line = next(x for x in shown.stdout.splitlines() if x.strip().startswith("C+Q+I"))
    low, high = beta.ppf(0.025, 3, 5), beta.ppf(0.975, 4, 4)
    assert line.split()[1] == "7" and "42.9%" in line and f"{100 * low:.1f}–{100 * high:.1f}%" in line


@pytest.mark.parametrize("rows, where, says", [
    ([["item_id", "answer"], ["pes-v-kar-01", "C"]], "row 1 (the header)", "no 'response' column (--response-column)"),
    ([["item_id", "response"], ["pes-v-kar-01", "C"], ["nope", "A"]], "row 3", "item 'nope' is not in the data"),
    ([["item_id", "response"], ["pes-v-kar-01", "C"], ["pes-v-kar-01", "B"]], "row 3",
     "a second answer for item 'pes-v-kar-01' under C+Q"),
    ([["item_id", "response", "condition"], ["pes-q-kar-01", "A", "C+Q+I"]], "row 2",
     "condition C+Q+I does not apply to item 'pes-q-kar-01'"),
    ([["item_id", "response", "condition"], ["pes-v-kar-01", "C", "image"]], "row 2", "unknown condition 'image'"),
    ([["item_id", "response"], ["pes-v-kar-01", "C"], ["pes-v-kar-03", "A"]], "row 3",
     "item 'pes-v-kar-03' is excluded"),
])
def test_a_bad_xlsx_names_the_file_and_the_row_and_writes_nothing(tmp_path, rows, where, says):
    table = write_xlsx(tmp_path / "bad answers.xlsx", rows)
    result = CliRunner().invoke(cli, ["import", "polish_pes", str(table), "--data", str(PES),
                                      "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 1, result.output
    assert result.output.count("\n") == 1  # one line, no traceback
    assert "bad answers.xlsx" in result.output and f"record {where}" in result.output and says in result.output
    assert not (tmp_path / "run").exists()


def test_a_file_that_is_no_spreadsheet_is_one_error(tmp_path):
    table = tmp_path / "answers.xlsx"
    table.write_text("item_id,response\npes-v-kar-01,C\n", encoding="utf-8")  # a CSV under an .xlsx name
    result = CliRunner().invoke(cli, ["import", "polish_pes", str(table), "--data", str(PES),
                                      "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "answers.xlsx" in result.output and "unreadable table" in result.output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("name, text", [("answers.csv", "foo,bar\n"), ("answers.jsonl", "")])
def test_a_file_without_answers_is_one_error_and_no_run(tmp_path, name, text):
    """A table with a header only (whatever its columns) or an empty JSON Lines file imports
    nothing: an error naming the file, not a summary of 0 records pointing at a run that was
    never written."""
    answers = tmp_path / name
    answers.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", "polish_pes", str(answers), "--data", str(PES),
                                      "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert name in result.output and "no answers in the file" in result.output
    assert not (tmp_path / "run").exists()

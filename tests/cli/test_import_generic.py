"""`medvqa import BENCH FILE` for a benchmark without its own import command (JMed48k, Polish
PES): JSON Lines, CSV and XLSX answers become a run scored like any run, with every other pair
`missing`, its summary giving n and the Wilson interval; a bad file (a missing column, an unknown
item, a second answer, a condition the item does not take, no spreadsheet at all) is one error
naming the file and the line or row, and nothing is written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa import AnswerConventions, Benchmark, Gold, Item, Option, hookimpl
from medvqa.cli.main import cli
from medvqa.core import plugins
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
    lines = [
        {"item_id": first.id, "condition": "C+Q", "response": first.gold.alternatives[0][0].lower()},
        {"item_id": second.id, "condition": "C+Q", "response": "I cannot tell from the stem alone."},
        {"item_id": third.id, "condition": "C+Q", "response": wrong},
    ]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "import",
            "jmed48k",
            str(answers),
            "--data",
            str(jmed_sample),
            "--split",
            "sample",
            "--run-dir",
            str(tmp_path / "run"),
            "--model",
            "elsewhere",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    cq = summary["conditions"]["C+Q"]
    n = sum(1 for it in items)  # every runnable item under C+Q: 3 answered here, the others missing
    assert (cq["n"], cq["correct"], cq["missing"]) == (n, 1, n - 3)
    # one success in n ≤ 50: the lower limit is Brown, Cai & DasGupta's one-sided Poisson one, λ/n with
    # 1 − e^−λ = 0.05, λ = −ln 0.95; the upper is Wilson's,
    # (1/n + z²/2n + z√((1/n)(1 − 1/n)/n + z²/4n²)) / (1 + z²/n)
    z, p = 1.959963984540054, 1 / n
    high = (p + z * z / (2 * n) + z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
    assert cq["ci"] == pytest.approx([-math.log(0.95) / n, high], abs=1e-12)
    records = {r["item_id"]: r for r in read_records(tmp_path / "run")}
    assert records[first.id]["correct"] and not records[third.id]["correct"]
    assert records[second.id]["status"] in ("parse_failure", "refusal")

    table = tmp_path / "answers.csv"
    table.write_text("id,answer\n" + f"{first.id},{first.gold.alternatives[0][0].lower()}\n", encoding="utf-8")
    text = CliRunner().invoke(
        cli,
        [
            "import",
            "jmed48k",
            str(table),
            "--data",
            str(jmed_sample),
            "--split",
            "sample",
            "--run-dir",
            str(tmp_path / "run2"),
            "--id-column",
            "id",
            "--response-column",
            "answer",
        ],
    )
    assert text.exit_code == 0, text.output
    assert "C+Q" in text.stdout and "95% CI" in text.stdout


def test_an_unknown_item_names_the_file_and_line_and_writes_nothing(jmed_sample, tmp_path):
    answers = tmp_path / "answers.jsonl"
    known = _items(jmed_sample)[0].id
    answers.write_text(
        json.dumps({"item_id": known, "response": "a"}) + '\n{"item_id": "nope", "response": "a"}\n', encoding="utf-8"
    )
    result = CliRunner().invoke(
        cli,
        [
            "import",
            "jmed48k",
            str(answers),
            "--data",
            str(jmed_sample),
            "--split",
            "sample",
            "--run-dir",
            str(tmp_path / "run"),
        ],
    )
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
    table = write_xlsx(
        tmp_path / "answers.xlsx",
        [
            ["question_id", "model_answer", "condition"],
            ["pes-v-kar-01", "C", ""],  # right (gold C)
            ["pes-v-kar-02", "B", ""],  # right
            ["pes-v-int-01", "A", ""],  # wrong (gold D)
            ["pes-v-int-02", "A", ""],  # right
            ["pes-q-kar-01", "A", "C+Q"],  # right, under its own condition
        ],
    )
    args = [
        "import",
        "polish_pes",
        str(table),
        "--data",
        str(PES),
        "--run-dir",
        str(tmp_path / "run"),
        "--id-column",
        "question_id",
        "--response-column",
        "model_answer",
        "--condition",
        "C+Q+I",
    ]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    image, text = summary["conditions"]["C+Q+I"], summary["conditions"]["C+Q"]
    # 7 VQA items take C+Q+I (one of the 8 is annulled), 12 items take C+Q (two annulled)
    assert (image["n"], image["correct"], image["answered"], image["missing"]) == (7, 3, 4, 3)
    assert (text["n"], text["correct"], text["answered"], text["missing"]) == (12, 1, 1, 11)
    # Wilson 95 % intervals, as scipy's binomtest gives them, of 3 in 7 and 1 in 12; one success is within
    # 2 of 0, so 1 in 12's lower limit is Brown, Cai & DasGupta's −ln(0.95)/12 = 0.004274 (Wilson's 0.014865)
    assert image["ci"] == pytest.approx([0.158220, 0.749542], abs=1e-6)
    assert text["ci"] == pytest.approx([-math.log(0.95) / 12, 0.353880], abs=1e-6)
    assert text["ci"][0] == pytest.approx(0.004274, abs=1e-6)
    records = {(r["item_id"], r["condition"]): r for r in read_records(tmp_path / "run")}
    assert (
        records[("pes-v-int-01", "C+Q+I")]["predicted"] == ["A"] and not records[("pes-v-int-01", "C+Q+I")]["correct"]
    )

    # the text summary prints n and the interval as a run's does
    shown = CliRunner().invoke(cli, [*args[:6], str(tmp_path / "run-text"), *args[7:]])
    assert shown.exit_code == 0, shown.output
    line = next(x for x in shown.stdout.splitlines() if x.strip().startswith("C+Q+I"))
    assert line.split()[1] == "7" and "42.9%" in line and "15.8–75.0%" in line


@pytest.mark.parametrize(
    "rows, where, says",
    [
        (
            [["item_id", "answer"], ["pes-v-kar-01", "C"]],
            "row 1 (the header)",
            "no 'response' column (--response-column)",
        ),
        ([["item_id", "response"], ["pes-v-kar-01", "C"], ["nope", "A"]], "row 3", "item 'nope' is not in the data"),
        (
            [["item_id", "response"], ["pes-v-kar-01", "C"], ["pes-v-kar-01", "B"]],
            "row 2 and row 3",
            "a second answer for item 'pes-v-kar-01' under C+Q "
            "(--id-from row numbers the answers by their position instead)",
        ),
        (
            [["item_id", "response", "condition"], ["pes-q-kar-01", "A", "C+Q+I"]],
            "row 2",
            "condition C+Q+I does not apply to item 'pes-q-kar-01'",
        ),
        ([["item_id", "response", "condition"], ["pes-v-kar-01", "C", "image"]], "row 2", "unknown condition 'image'"),
        (
            [["item_id", "response"], ["pes-v-kar-01", "C"], ["pes-v-kar-03", "A"]],
            "row 3",
            "item 'pes-v-kar-03' is excluded",
        ),
    ],
)
def test_a_bad_xlsx_names_the_file_and_the_row_and_writes_nothing(tmp_path, rows, where, says):
    table = write_xlsx(tmp_path / "bad answers.xlsx", rows)
    result = CliRunner().invoke(
        cli, ["import", "polish_pes", str(table), "--data", str(PES), "--run-dir", str(tmp_path / "run")]
    )
    assert result.exit_code == 1, result.output
    assert result.output.count("\n") == 1  # one line, no traceback
    assert "bad answers.xlsx" in result.output and f"record {where}" in result.output and says in result.output
    assert not (tmp_path / "run").exists()


def test_a_file_that_is_no_spreadsheet_is_one_error(tmp_path):
    table = tmp_path / "answers.xlsx"
    table.write_text("item_id,response\npes-v-kar-01,C\n", encoding="utf-8")  # a CSV under an .xlsx name
    result = CliRunner().invoke(
        cli, ["import", "polish_pes", str(table), "--data", str(PES), "--run-dir", str(tmp_path / "run")]
    )
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
    result = CliRunner().invoke(
        cli, ["import", "polish_pes", str(answers), "--data", str(PES), "--run-dir", str(tmp_path / "run")]
    )
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert name in result.output and "no answers in the file" in result.output
    assert not (tmp_path / "run").exists()


def write_workbook(path, sheets):
    """An XLSX workbook of several sheets (name -> rows, row 1 each sheet's header), as published
    spreadsheets come: the answers beside other experiments."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def numbered_pes(tmp_path):
    """The Polish PES fixture with its text items numbered as an exam numbers its questions
    (1-6, in file order; item 4 annulled), as a source numbered like MIR would be."""
    import shutil

    data = tmp_path / "numbered"
    shutil.copytree(PES, data)
    qa = data / "qa.jsonl"
    lines = [json.loads(line) for line in qa.read_text(encoding="utf-8").splitlines() if line.strip()]
    for n, row in enumerate(lines, 1):
        row["id"] = str(n)
    qa.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines), encoding="utf-8")
    return data


def test_a_workbook_with_two_sheets_and_a_repeated_number_imports_by_position(tmp_path):
    """The answers' sheet numbers its rows 1, 2, 2 (the third is question 3, as MIR 2024's second
    70 is its 71), beside a sheet of another experiment: the repeat is refused naming both rows,
    `--id-from row` numbers the rows by position, the first sheet read is said on stderr, and
    `--sheet` chooses the other one; a sheet the workbook lacks lists the sheets."""
    data = numbered_pes(tmp_path)
    book = write_workbook(
        tmp_path / "published.xlsx",
        {
            "Preguntas": [["Numero", "Respuesta"], [1, "A"], [2, "B"], [2, "C"]],  # the gold of 1-3: A, B, C
            "Otro experimento": [["Numero", "Respuesta"], [1, "E"], [2, "E"], [3, "E"]],
        },
    )
    args = [
        "import",
        "polish_pes",
        str(book),
        "--data",
        str(data),
        "--id-column",
        "Numero",
        "--response-column",
        "Respuesta",
    ]

    refused = CliRunner().invoke(cli, [*args, "--run-dir", str(tmp_path / "refused")])
    assert refused.exit_code == 1, refused.output
    assert refused.stderr.splitlines()[-1] == (
        f"Error: {book}: record row 3 and row 4: a second answer for item '2' under C+Q "
        "(--id-from row numbers the answers by their position instead)"
    )
    assert not (tmp_path / "refused").exists()

    result = CliRunner().invoke(cli, [*args, "--id-from", "row", "--run-dir", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"{book}: read the sheet 'Preguntas', the first of 2; the others are "
        "'Otro experimento' (--sheet NAME chooses)\n"
    )
    cq = json.loads(result.stdout)["conditions"]["C+Q"]
    # 12 items take C+Q (two annulled): the three rows answer items 1, 2 and 3, all right
    assert (cq["n"], cq["correct"], cq["answered"], cq["missing"]) == (12, 3, 3, 9)
    records = {r["item_id"]: r for r in read_records(tmp_path / "run") if r["condition"] == "C+Q"}
    assert [(records[i]["predicted"], records[i]["correct"]) for i in "123"] == [
        (["A"], True),
        (["B"], True),
        (["C"], True),
    ]

    chosen = CliRunner().invoke(
        cli, [*args, "--sheet", "Otro experimento", "--run-dir", str(tmp_path / "other"), "--json"]
    )
    assert chosen.exit_code == 0, chosen.output
    assert chosen.stderr == ""  # chosen by name: nothing to say
    assert json.loads(chosen.stdout)["conditions"]["C+Q"]["correct"] == 0  # E is the gold of none of 1-3

    absent = CliRunner().invoke(cli, [*args, "--sheet", "Pregunta", "--run-dir", str(tmp_path / "absent")])
    assert absent.exit_code == 1 and absent.output.count("\n") == 1, absent.output
    assert f"{book}: no sheet 'Pregunta' (--sheet); the sheets are 'Preguntas', 'Otro experimento'" in absent.output
    assert not (tmp_path / "absent").exists()


def test_positions_resolve_as_ids_do(tmp_path):
    """`--id-from row` gives the position to the same lookup an id column's value goes through:
    the fixture's ids are pes-..., so position 1 names no item, and the row is named."""
    table = write_xlsx(tmp_path / "answers.xlsx", [["response"], ["C"]])
    result = CliRunner().invoke(
        cli,
        [
            "import",
            "polish_pes",
            str(table),
            "--data",
            str(PES),
            "--id-from",
            "row",
            "--run-dir",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert (
        f"{table}: record row 2: item '1' is not in the data (--id-from row: an answer's position is matched "
        "to the items' ids)"
    ) in result.output
    assert not (tmp_path / "run").exists()


def test_sheet_on_a_csv_or_jsonl_is_a_usage_error(tmp_path):
    csv = tmp_path / "answers.csv"
    csv.write_text("item_id,response\npes-v-kar-01,C\n", encoding="utf-8")
    lines = tmp_path / "answers.jsonl"
    lines.write_text(json.dumps({"item_id": "pes-v-kar-01", "response": "C"}) + "\n", encoding="utf-8")
    for answers, kind in ((csv, "a .csv table"), (lines, "JSON Lines")):
        result = CliRunner().invoke(
            cli,
            [
                "import",
                "polish_pes",
                str(answers),
                "--data",
                str(PES),
                "--sheet",
                "Answers",
                "--run-dir",
                str(tmp_path / "run"),
            ],
        )
        assert result.exit_code == 2, result.output
        assert (
            "Usage: " in result.output
            and f"--sheet 'Answers': {answers} is {kind}, which has no sheets" in result.output
        )
        assert not (tmp_path / "run").exists()


def test_a_repeated_jsonl_answer_names_both_lines(tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps({"item_id": "pes-v-kar-01", "response": "C"})
        + "\n\n"
        + json.dumps({"item_id": "pes-v-kar-01", "response": "C", "condition": "C+Q+I"})
        + "\n"
        + json.dumps({"item_id": "pes-v-kar-01", "response": "B"})
        + "\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli, ["import", "polish_pes", str(answers), "--data", str(PES), "--run-dir", str(tmp_path / "run")]
    )
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    # the same item under another condition is no repeat; line 4 repeats line 1 (line 2 is blank)
    assert f"{answers}: record line 1 and line 4: a second answer for item 'pes-v-kar-01' under C+Q" in result.output
    assert not (tmp_path / "run").exists()


def test_as_printed_answers_take_their_printed_condition_and_leave_no_other_pair_missing(tmp_path):
    """One answer per question, as an exam prints it (the MIR and the 120th Japanese exam are
    published so): an image item's answer is C+Q+I, a text item's C+Q, and an image item is not
    expected to have a C+Q answer too. `--select` keeps the run to the items the answers are for."""
    answers = tmp_path / "answers.jsonl"
    rows = [("pes-v-kar-01", "C"), ("pes-v-kar-02", "A"), ("pes-q-kar-01", "A")]
    answers.write_text("".join(json.dumps({"item_id": i, "response": r}) + "\n" for i, r in rows), encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "import",
            "polish_pes",
            str(answers),
            "--data",
            str(PES),
            "--as-printed",
            "--select",
            "specialty=Kardiologia",
            "--run-dir",
            str(tmp_path / "run"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    records = {(r["item_id"], r["condition"]): (r["status"], r["correct"]) for r in read_records(tmp_path / "run")}
    # Kardiologia: v-kar-01, v-kar-02 (v-kar-03 annulled), q-kar-01, q-kar-02 (unanswered: missing, in C+Q only)
    assert records == {
        ("pes-v-kar-01", "C+Q+I"): ("answered", True),
        ("pes-v-kar-02", "C+Q+I"): ("answered", False),
        ("pes-q-kar-01", "C+Q"): ("answered", True),
        ("pes-q-kar-02", "C+Q"): ("missing", False),
    }
    summary = json.loads(result.stdout)
    assert summary["n_items"] == 5 and summary["n_excluded"] == 1


class TenOptions(Benchmark):
    """A third-party exam whose items have ten options, some several right, and whose published
    predictions join labels with commas ("1,6"): its conventions read saved answers so."""

    name, title, language = "ten_options", "ten options, multi-answer", "ko"

    def load(self, path=None, split=None, *, select=None):
        rows = json.loads((Path(path) / "items.json").read_text(encoding="utf-8"))
        return self.select_items(
            [
                Item(
                    id=r["id"],
                    benchmark=self.name,
                    question=r["question"],
                    language="ko",
                    options=tuple(Option(key=str(k), label=str(k), text=f"보기 {k}") for k in range(1, 11)),
                    gold=Gold.from_json(r["answer"]),
                )
                for r in rows
            ],
            select,
        )

    def answer_conventions(self):
        return AnswerConventions(saved_label_sets=True)


@pytest.fixture
def ten_options(tmp_path):
    class Plugin:
        @hookimpl
        def register_benchmarks(self, register):
            register(TenOptions())

    data = tmp_path / "data"
    data.mkdir()
    golds = {"kq-1": ["1", "6"], "kq-2": ["2"], "kq-3": ["3", "5"], "kq-4": ["7"]}
    (data / "items.json").write_text(
        json.dumps([{"id": i, "question": f"문제 {i}", "answer": a} for i, a in golds.items()]), encoding="utf-8"
    )
    pm = plugins.manager()
    pm.register(Plugin(), name="ten_options")
    try:
        yield data
    finally:
        pm.unregister(name="ten_options")


def test_a_plugins_saved_answers_are_read_by_its_own_convention_with_saved(ten_options, tmp_path):
    answers = tmp_path / "published.csv"
    # right (1 and 6), right, wrong (3 and 4 for 3 and 5), wrong (7 and 8 for 7 alone)
    answers.write_text('id,GPT_answer\nkq-1,"1,6"\nkq-2,2\nkq-3,"3,4"\nkq-4,"7,8"\n', encoding="utf-8")
    common = [
        "import",
        "ten_options",
        str(answers),
        "--data",
        str(ten_options),
        "--id-column",
        "id",
        "--response-column",
        "GPT_answer",
    ]
    saved = CliRunner().invoke(cli, [*common, "--saved", "--run-dir", str(tmp_path / "saved"), "--json"])
    assert saved.exit_code == 0, saved.output
    cq = json.loads(saved.stdout)["conditions"]["C+Q"]
    assert (cq["n"], cq["correct"], cq["answered"], cq["parse_failure"]) == (4, 2, 4, 0)
    records = {r["item_id"]: r for r in read_records(tmp_path / "saved")}
    assert records["kq-1"]["predicted"] == ["1", "6"] and records["kq-1"]["saved"] is True
    # as the Python API reads one such answer
    item = TenOptions().load(ten_options)[0]
    assert medvqa.score(item, "1,6", saved=True).correct and records["kq-1"]["correct"]
    # without --saved the answers are raw replies, "1,6" none the benchmark's rules read; the command says what to do
    raw = CliRunner().invoke(cli, [*common, "--run-dir", str(tmp_path / "raw")])
    assert raw.exit_code == 0, raw.output
    raw_records = {r["item_id"]: r for r in read_records(tmp_path / "raw")}
    failures = sum(r["status"] == "parse_failure" for r in raw_records.values())
    assert (
        failures == 3
        and f"{failures} parse failures: if {answers} holds predictions in ten_options's own format" in raw.output
        and "--saved reads them" in raw.output
    )


def test_a_wide_json_array_imports_one_model_per_column(jmed_sample, tmp_path):
    """Published answers of several models in one JSON array, one column per model (as a
    Chinese exam's nine models came): `--response-column MODEL` imports that model's column as
    a run; an element that is not an object, or a model the array does not hold, is one error
    naming the file and the element."""
    items = _items(jmed_sample)
    right = {it.id: json.dumps({"answer": list(it.gold.alternatives[0])}) for it in items}
    rows = [
        {"qid": it.id, "model_a": right[it.id], "model_b": right[it.id] if n < 2 else "I cannot tell."}
        for n, it in enumerate(items)
    ]
    wide = tmp_path / "published.json"
    wide.write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")  # one array over many lines

    def import_(column, run, file=wide):
        return CliRunner().invoke(
            cli,
            [
                "import",
                "jmed48k",
                str(file),
                "--data",
                str(jmed_sample),
                "--split",
                "sample",
                "--run-dir",
                str(tmp_path / run),
                "--id-column",
                "qid",
                "--response-column",
                column,
                "--model-name",
                column,
                "--json",
            ],
        )

    n = len(items)
    for column, correct in (("model_a", n), ("model_b", 2)):
        result = import_(column, column)
        assert result.exit_code == 0, result.output
        cq = json.loads(result.stdout)["conditions"]["C+Q"]
        assert (cq["n"], cq["correct"], cq["missing"]) == (n, correct, 0)
    absent = import_("model_c", "c")
    assert (
        absent.exit_code == 1
        and "published.json: record element 1: no 'model_c' column (--response-column)" in absent.output
    )
    assert "the columns are 'qid', 'model_a', 'model_b'" in absent.output and not (tmp_path / "c").exists()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([rows[0], rows[1], "model_a"]), encoding="utf-8")
    refused = import_("model_a", "bad", bad)
    assert refused.exit_code == 1 and "bad.json: record element 3: expected a JSON object, got str" in refused.output
    assert not (tmp_path / "bad").exists()


def test_answers_to_part_of_the_data_hint_at_select(jmed_sample, tmp_path):
    """Answers to 3 of the 17 answerable sample items: the other 14 are recorded missing (every
    item counts) and the summary says so and names --select; with --select choosing the 5 nurse
    items, the 2 left are missing and no hint is given."""
    items = _items(jmed_sample)
    nurse = [it for it in items if it.meta.get("profession") == "Nurse"]
    assert (len(items), len(nurse)) == (17, 5)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(json.dumps({"item_id": it.id, "response": json.dumps({"answer": ["1"]})}) + "\n" for it in nurse[:3]),
        encoding="utf-8",
    )

    def import_(run, *more):
        result = CliRunner().invoke(
            cli,
            [
                "import",
                "jmed48k",
                str(answers),
                "--data",
                str(jmed_sample),
                "--split",
                "sample",
                "--run-dir",
                str(tmp_path / run),
                *more,
            ],
        )
        assert result.exit_code == 0, result.output
        return result

    whole = json.loads(import_("whole", "--json").stdout)
    assert whole["conditions"]["C+Q"]["missing"] == 14
    assert whole["warnings"] == [
        "the file answers 3 of the 17 items of the data: the other 14 are recorded missing and count in every "
        "denominator; answers to part of the data take --select FIELD=V1,V2 (as medvqa run selects items), and "
        "the items outside are then not in the run"
    ]
    assert "the file answers 3 of the 17 items" in import_("printed").stdout
    part = json.loads(import_("part", "--select", "profession=Nurse", "--json").stdout)
    assert part["conditions"]["C+Q"]["missing"] == 2 and not part.get("warnings")

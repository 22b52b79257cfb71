"""Published spreadsheets as they are, on the real MIR 2024 workbook (three sheets, two rows
numbered 70 and none 71): the sheet read is said or chosen, a sheet it lacks is an error listing
its sheets, the repeated 70 is refused naming both rows, and numbering by position gives each of
the 210 rows its own number."""

from __future__ import annotations

import pytest

import medvqa
from medvqa.core.run.answer_file import row_id
from tests.conftest import shared_data

SHEETS = ("Preguntas 2024", "Promt 1 EN", "Promt 1 ES")


@pytest.fixture(scope="module")
def workbook():
    return shared_data("mir", "2024", "MIR24GPT_final.xlsx")


def test_the_first_sheet_is_read_and_the_others_are_named(workbook):
    said = []
    rows = medvqa.read_table(workbook, ["Numero", " GPT-4"], notice=said.append)
    assert len(rows) == 210 and rows[0]["Numero"] == "1"
    assert said == [
        f"{workbook}: read the sheet 'Preguntas 2024', the first of 3; the others are 'Promt 1 EN', "
        "'Promt 1 ES' (--sheet NAME chooses)"
    ]
    # chosen by name: nothing to say, and another sheet's rows (the prompt experiment's 186)
    said.clear()
    assert len(medvqa.read_table(workbook, ["Numero"], sheet="Preguntas 2024", notice=said.append)) == 210
    other = medvqa.read_table(workbook, ["Número", "answer"], sheet="Promt 1 EN", notice=said.append)
    assert len(other) == 186 and said == []


def test_a_sheet_the_workbook_lacks_lists_its_sheets(workbook):
    with pytest.raises(medvqa.DataError) as caught:
        medvqa.read_table(workbook, sheet="Preguntas")
    assert str(caught.value) == (
        f"{workbook}: no sheet 'Preguntas' (--sheet); the sheets are " + ", ".join(repr(s) for s in SHEETS)
    )


def test_sheet_on_a_csv_is_a_usage_error(tmp_path):
    table = tmp_path / "answers.csv"
    table.write_text("Numero,answer\n1,2\n", encoding="utf-8")
    with pytest.raises(medvqa.UsageError, match=r"--sheet 'Preguntas 2024': .*answers\.csv is a \.csv table"):
        medvqa.read_table(table, sheet="Preguntas 2024")


def test_the_repeated_70_is_refused_naming_both_rows_and_positions_number_all_210(workbook):
    rows = medvqa.read_table(workbook, sheet="Preguntas 2024")
    seen: dict = {}
    with pytest.raises(medvqa.DataError) as caught:
        for number, row in enumerate(rows, 2):  # row 1 is the header
            medvqa.refuse_repeat(
                seen, row_id(row, number - 1, "Numero"), f"row {number}", file=workbook, what="a repeated id"
            )
    assert caught.value.record == "row 71 and row 72" and caught.value.file == str(workbook)
    assert [r["Numero"] for r in rows[69:71]] == ["70", "70"] and "71" not in {r["Numero"] for r in rows}

    by_position = [row_id(row, n, "Numero", id_from="row") for n, row in enumerate(rows, 1)]
    assert len(set(by_position)) == 210
    seen.clear()
    for number, key in enumerate(by_position, 2):
        medvqa.refuse_repeat(seen, key, f"row {number}", file=workbook, what="a repeated id")
    # the position is the exam's own number on every row but the second 70, which is question 71
    differ = [
        (n, row["Numero"], by_position[n - 1]) for n, row in enumerate(rows, 1) if row["Numero"] != by_position[n - 1]
    ]
    assert differ == [(71, "70", "71")]


def test_workbooks_read_by_several_threads_at_once_in_a_fresh_interpreter(workbook):
    # the first workbook read imports the Excel engine: threads reading at that moment (the runs
    # of an eval set) each get the 210 rows, never a half-imported module; 8 threads in each of
    # 3 fresh interpreters (the import happens once per process)
    import subprocess
    import sys

    script = (
        "import threading, medvqa\n"
        "out = []\n"
        "def read():\n"
        "    try:\n"
        f"        out.append(len(medvqa.read_table({str(workbook)!r}, ['Numero'], notice=lambda _: None)))\n"
        "    except Exception as exc:\n"
        "        out.append(repr(exc))\n"
        "threads = [threading.Thread(target=read) for _ in range(8)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print(out)\n"
    )
    runs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    assert [run.communicate(timeout=60)[0].strip() for run in runs] == [str([210] * 8)] * 3

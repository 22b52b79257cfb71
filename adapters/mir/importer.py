"""The repository's answer workbooks → run directories (`medvqa import mir`).

- `2026/MIR26.xlsx`: one run per `answer_<model>` column (nine models), each under
  `RUN_DIR/<model>`, the model named after its column (`gpt52`, `OE`, ...); the folder's name is
  made safe by `medvqa.run_dirs` (a header `answer_../../x` writes `RUN_DIR/x`), and two columns
  whose folders come out the same are refused naming both.
- `2024/MIR24GPT_final.xlsx` and `2024/MIR24GPT_vision_answered_v2.xlsx`: one run of the column
  `--response-column` (" GPT-4", " GPT-4 Vision"; the headers' leading spaces as published).

Rows are questions in order: an answer's item is its position, `mir-<year>-<position>` (2024
prints 70 twice), and each row's stem must be the data's (`loader.split_options` of the same
cell, white space aside), so a workbook of another year or order is refused naming the row. A cell left empty is a
question not asked (GPT-4 Vision answered 1-25 only): no record. An answer to an annulled
question is not scored (its item is excluded); the manifest lists them (`imported.annulled_answers`).

The condition: `C+Q+I` (the default) asks image questions with their image and the others as
they are (C+Q): the exam as printed; `C+Q` every question without its image (GPT-4 in 2024).
SOURCE.txt does not say how the 2026 models saw the images; the workbook names each image
question's image (`image_refs`), so the default takes them as shown.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import medvqa
from medvqa import DataError

from . import loader
from .benchmark import MIR

ANSWER_PREFIX = "answer_"
CONDITIONS = ("C+Q+I", "C+Q")
_YEAR = re.compile(r"MIR(\d{2})", re.IGNORECASE)


def year_of(file: Path, year: int | None) -> int:
    if year is not None:
        return year
    m = _YEAR.search(file.name)
    if not m or 2000 + int(m[1]) not in loader.YEARS:
        raise DataError(
            f"the file name does not say the year (MIR24..., MIR26...): give --year "
            f"({', '.join(map(str, loader.YEARS))})",
            file=file,
        )
    return 2000 + int(m[1])


def _spaceless(text: str) -> str:
    return "".join(text.split())


def _rows(file: Path, year: int, sheet: str | None) -> list[dict]:
    number_col, stem_col = loader.COLUMNS[year][:2]
    rows = medvqa.read_table(file, (number_col, stem_col), sheet=sheet)
    return [r for r in rows if r[number_col].strip() or r[stem_col].strip()]


def asked(item: medvqa.Item, condition: str) -> str:
    """The condition `item` was asked under in an import under `condition`: C+Q+I is the exam as
    printed, so a question without an image is C+Q there."""
    return condition if condition == "C+Q" else medvqa.as_printed(item).value


def answers_of(
    file: Path, rows: list[dict], items: dict[str, medvqa.Item], year: int, column: str, condition: str
) -> tuple[list[tuple], list[str]]:
    """(item, condition, response) of each answered row, and the annulled questions answered."""
    stem_col = loader.COLUMNS[year][1]
    out, annulled = [], []
    for position, row in enumerate(rows, 1):
        where = f"row {position + 1}"  # row 1 is the header
        item_id = f"{loader.BENCHMARK}-{year}-{position}"
        if item_id not in items:
            raise DataError(
                f"question {position} is not in the data's MIR {year} (the data has {len(items)})",
                file=file,
                record=where,
            )
        item = items[item_id]
        stem, _, _ = loader.split_options(loader.clean(row[stem_col]), file=file, record=where)
        if _spaceless(stem) != _spaceless(item.question):  # the vision workbook spaces one "?" otherwise
            raise DataError(
                f"the stem differs from the data's question {item_id} (a workbook of another year, "
                "or its rows in another order?)",
                file=file,
                record=where,
            )
        text = row[column].strip()
        if not text:
            continue  # not asked
        if item.excluded:
            annulled.append(item_id)
            continue
        out.append((item, asked(item, condition), text))
    if not out:
        raise DataError(f"no answers in the column {column!r}", file=file)
    return out, annulled


def import_workbook(
    file: Path,
    data: Path,
    run_dir: Path,
    *,
    response_column: str | None = None,
    condition: str | None = None,
    model: str | None = None,
    model_name: str | None = None,
    sheet: str | None = None,
    year: int | None = None,
    reading: str | None = None,
    max_response_bytes: int | None = None,
) -> list[dict]:
    """Write one run per answer column of `file` (every `answer_<model>` column, each under
    `run_dir/<model>`, its name made safe by `medvqa.run_dirs`), or of `response_column` alone
    into `run_dir`; return their summaries. Nothing is written when any column or row is refused.
    An answer longer than `max_response_bytes` (None: `medvqa.write_run`'s 256 KiB) is cut, its
    record marked `truncated`."""
    condition = condition or CONDITIONS[0]
    if condition not in CONDITIONS:
        raise DataError(f"condition {condition!r}: a MIR import is C+Q+I (as printed) or C+Q (without images)")
    year = year_of(file, year)
    bench = MIR()
    items = bench.load(data, years=[year])
    by_id = {it.id: it for it in items}
    rows = _rows(file, year, sheet)
    header = list(rows[0]) if rows else []
    if response_column is not None:
        if response_column not in header:
            raise DataError(
                f"no {response_column!r} column (--response-column); the columns are {medvqa.brief_list(header)}",
                file=file,
                record="row 1 (the header)",
            )
        default = response_column.strip()
        columns = {
            model or (default[len(ANSWER_PREFIX) :] if default.startswith(ANSWER_PREFIX) else default): (
                response_column,
                run_dir,
            )
        }
    else:
        if model or model_name:
            raise DataError(
                "--model and --model-name name one model: give --response-column too (the workbook "
                "holds a column per model)",
                file=file,
            )
        named = [c for c in header if c.startswith(ANSWER_PREFIX)]
        # each under its own folder of run_dir, whatever the header says (`answer_../../x`)
        dirs = medvqa.run_dirs(run_dir, {f"column {c!r}": c[len(ANSWER_PREFIX) :] for c in named}, file=file)
        columns = {c[len(ANSWER_PREFIX) :]: (c, dirs[f"column {c!r}"]) for c in named}
        if not columns:
            raise DataError(
                f"no {ANSWER_PREFIX}<model> column: give --response-column (the columns are "
                f"{medvqa.brief_list(header)})",
                file=file,
                record="row 1 (the header)",
            )
    planned = {name: answers_of(file, rows, by_id, year, column, condition) for name, (column, _) in columns.items()}
    for _, target in columns.values():
        if (target / "manifest.json").exists():
            raise DataError("already holds a run; choose another --run-dir", file=target)
    load = {"data": str(data.resolve()), "split": None, "sample": False, "limit": None, "select": {"year": [str(year)]}}
    summaries = []
    for name, (column, target) in columns.items():
        answers, annulled = planned[name]
        summary = medvqa.write_run(
            bench,
            items,
            answers,
            target,
            model=name,
            load=load,
            saved=False,
            command_line=["medvqa", *sys.argv[1:]],
            images_attested=False,
            reading=reading,
            model_name=model_name,
            asked=lambda it: (asked(it, condition),),
            source={
                "files": [str(file.resolve())],
                "column": column,
                "year": year,
                "condition": condition,
                "annulled_answers": annulled,
            },
            **({"max_response_bytes": max_response_bytes} if max_response_bytes else {}),
        )
        summaries.append(
            {
                **summary,
                "benchmark": bench.name,
                "model": name,
                "model_name": model_name or name,
                "year": year,
                "column": column,
                "condition": condition,
                "annulled_answers": annulled,
            }
        )
    return summaries

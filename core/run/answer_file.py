"""Files of answers made elsewhere read as (item, condition, response) triples for
`imported.write_run` (`medvqa import`): JSON Lines, a JSON array, CSV / TSV or an XLSX workbook,
each answer checked against the items (`admit`) before anything is written."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path

from ..conditions import ALL, Condition, applicable, as_printed
from ..errors import UsageError
from ..items import DataError, Item, brief
from ..jsonl import TABLE_SUFFIXES, brief_list, numbered_jsonl, read_table, refuse_repeat


def admit(
    item: Item,
    label: str,
    seen: dict[Hashable, tuple[str | None, str]],
    admitted: Iterable[Condition],
    where: str,
    *,
    file: str | Path | None = None,
    hint: str = "",
) -> Condition:
    """The condition `label` of the answer for `item` given at `where` (of `file`), noted in
    `seen` (`refuse_repeat`'s): an unknown condition, an excluded item, a condition not among
    those `admitted` is a DataError saying so (its caller names the file and the record); a
    second answer for the pair is one naming both places, `hint` after the reason."""
    try:
        cond = Condition(label)
    except ValueError:
        raise DataError(f"unknown condition {brief(label)} (one of {', '.join(c.value for c in Condition)})") from None
    if item.excluded:
        raise DataError(f"item {item.id!r} is excluded ({item.exclusion_reason}) and takes no answer")
    if cond not in admitted:
        raise DataError(f"condition {label} does not apply to item {item.id!r}")
    refuse_repeat(
        seen, (item.id, cond.value), where, file=file, what=f"a second answer for item {item.id!r} under {label}{hint}"
    )
    return cond


ID_FROM = ("column", "row")


def row_id(row: dict, position: int, id_column: str, id_from: str = "column") -> str:
    """The item id a row of answers names: its `id_column` value as text, or with `id_from="row"`
    its position (1 for the first data row of a table, the first line of JSON Lines) written as
    such a value is, so that it resolves to an item exactly as an id column's value does. For
    sources whose own numbers repeat (MIR 2024 numbers two rows 70 and none 71)."""
    if id_from not in ID_FROM:
        raise UsageError(f"unknown --id-from {id_from!r} (one of {', '.join(ID_FROM)})")
    return str(position) if id_from == "row" else str(row[id_column]).strip()


def read_answer_file(
    file: str | Path,
    items: list[Item],
    *,
    id_column: str = "item_id",
    response_column: str = "response",
    condition: str | None = None,
    sheet: str | None = None,
    id_from: str = "column",
    notice: Callable[[str], None] | None = None,
    printed: bool = False,
) -> list[tuple[Item, str, str | None]]:
    """(item, condition, response) triples for `write_run` from a file of answers made elsewhere:
    JSON Lines of `{item_id, condition, response}` (the names `id_column` and `response_column`;
    `condition` for lines without one), a `.json` file holding one array of such objects (the
    wide form too, one column per model: `response_column` names the model's), or CSV / XLSX
    with an id and a response column (every row
    under `condition`, C+Q when not given, unless the table has a `condition` column). A workbook
    is read at `sheet` (`read_table`: its first sheet, with a `notice` when it has others). With
    `id_from="row"` each answer's item is its position (`row_id`), not its id column's value.
    With `printed` an answer that names no condition is the item's as its exam prints it
    (`conditions.as_printed`: C+Q+I for an image item, whose images the source showed, C+Q for
    the others).

    An unknown item or condition, an excluded item, a condition the item does not take, a second
    answer for an (item, condition) (naming both rows), a line or table without the id or the
    response column, an unreadable line or file, or a file without answers is a DataError naming
    the file and the line (a table's row: the header is row 1; an array's element, the first is
    1), raised before anything is written."""
    file = Path(file)
    by_id = {it.id: it for it in items}
    rows: list[tuple[str, dict]] = []
    suffix = file.suffix.lower()
    needed = ((id_column, "--id-column"),) if id_from == "column" else ()

    def has_columns(first: dict, where: str) -> None:
        for column, option in (*needed, (response_column, "--response-column")):
            if column not in first:
                raise DataError(
                    f"no {column!r} column ({option}); the columns are {brief_list(list(first))}",
                    file=file,
                    record=where,
                )

    if suffix in (".jsonl", ".json", ".ndjson"):
        if sheet is not None:
            kind = "JSON" if suffix == ".json" else "JSON Lines"
            raise UsageError(
                f"--sheet {sheet!r}: {file} is {kind}, which has no sheets "
                "(--sheet chooses a sheet of an .xlsx workbook)"
            )
        if suffix == ".json" and _holds_array(file):
            rows = _array_rows(file)
            if rows:
                has_columns(rows[0][1], rows[0][0])
        else:
            rows = [(f"line {n}", row) for n, row in numbered_jsonl(file)]
    elif suffix in TABLE_SUFFIXES:
        table = read_table(file, sheet=sheet, notice=notice)
        if table:
            has_columns(table[0], "row 1 (the header)")
        rows = [(f"row {n + 2}", row) for n, row in enumerate(table)]  # row 1 is the header
    else:
        raise DataError("answers are read from .jsonl, .csv, .tsv or .xlsx files", file=file)
    if not rows:
        raise DataError("no answers in the file (nothing to import)", file=file)
    by_position = id_from == "row"
    hint = "" if by_position else " (--id-from row numbers the answers by their position instead)"
    out: list[tuple[Item, str, str | None]] = []
    seen: dict[Hashable, tuple[str | None, str]] = {}
    for position, (where, row) in enumerate(rows, 1):
        if not by_position and id_column not in row:
            raise DataError(f"no {id_column!r} field (--id-column)", file=file, record=where)
        if response_column not in row:
            raise DataError(f"no {response_column!r} field (--response-column)", file=file, record=where)
        item_id, response = row_id(row, position, id_column, id_from), row[response_column]
        if item_id not in by_id:
            how = " (--id-from row: an answer's position is matched to the items' ids)" if by_position else ""
            raise DataError(f"item {brief(item_id)} is not in the data{how}", file=file, record=where)
        item = by_id[item_id]
        label = str(row.get("condition") or (as_printed(item).value if printed else condition or "C+Q"))
        admitted = ALL if printed and item.has_images else applicable(item)
        try:
            admit(item, label, seen, admitted, where, file=file, hint=hint)
        except DataError as exc:
            raise DataError(exc.reason, file=file, record=exc.record or where) from None
        if response is not None and not isinstance(response, str):
            response = json.dumps(response, ensure_ascii=False)
        out.append((item, label, response))
    return out


def _holds_array(file: Path) -> bool:
    """Whether a .json file holds one JSON array (its first character, after any byte-order mark
    and blank space, is "["), rather than JSON Lines under a .json name."""
    try:
        with file.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "ignore").lstrip("\ufeff \t\r\n")
    except OSError:
        return False  # read_json / numbered_jsonl say why
    return head.startswith("[")


def _array_rows(file: Path) -> list[tuple[str, dict]]:
    """The objects of a JSON array of answers, each with where it is ("element 3")."""
    from ..jsonl import read_json

    rows = []
    for n, row in enumerate(read_json(file), 1):
        if not isinstance(row, dict):
            raise DataError(f"expected a JSON object, got {type(row).__name__}", file=file, record=f"element {n}")
        rows.append((f"element {n}", row))
    return rows

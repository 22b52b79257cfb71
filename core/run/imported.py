"""A run directory written from answers made elsewhere (predictions saved by another tool), so
that `score`, `report`, `audit` and `compare` read it like any run: the same manifest, the same
record fields, the answers scored under the benchmark's conventions."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from medvqa.core import plugins
from medvqa.core.benchmark import Benchmark
from medvqa.core.conditions import ALL, Condition, applicable, as_printed
from medvqa.core.errors import UsageError
from medvqa.core.inference.base import Response
from medvqa.core.items import DataError, Item
from medvqa.core.jsonl import TABLE_SUFFIXES, numbered_jsonl, read_table, refuse_repeat
from medvqa.core.run.runner import RunSpec, build_manifest, make_record, rescore_record
from medvqa.core.run.store import RunStore


@dataclass
class _Imported:
    """What the manifest records about the "backend" of an imported run: the model's name only."""

    model: str
    params: dict = field(default_factory=dict)


def write_run(benchmark: Benchmark, items: list[Item], answers: Iterable[tuple[Item, str, str | None]],
              run_dir: str | Path, *, model: str, load: dict[str, Any] | None = None, split: str | None = None,
              saved: bool = True, command_line: list[str] | None = None,
              source: dict[str, Any] | None = None, images_attested: bool = False, reading: str | None = None,
              model_name: str | None = None, asked: Callable[[Item], Iterable[str]] | None = None,
              reconcile: Callable[[list[dict]], dict[str, Any]] | None = None) -> dict:
    """Write the run directory `run_dir` from (item, condition, response text) triples (or
    quadruples whose fourth element, a dict, adds fields to that record: what the source said
    beside the answer) and return its summary (`n_items`, `n_records`, `n_excluded`, `accuracy`, ...).

    `items` are every item the run covers (as `benchmark.load(**load)` returns them, so the run
    can be reloaded and re-scored); `benchmark` carries the convention the answers are scored
    under (`Benchmark.with_convention`), recorded in the manifest. A response of None is recorded
    as `missing`, and so is every pair the answers leave out: each non-excluded item of `items`
    in each condition the answers use and the item admits, so every such pair enters the
    denominators. With `saved` (the default) every record is marked `"saved": true`: the text is a
    prediction in the benchmark's own format, read under `AnswerConventions.saved_label_sets`.
    An item that is excluded, not among `items`, given twice for a condition, or given a condition
    it does not admit or that is not one of C, C+Q, C+I, C+Q+I raises DataError naming the item;
    a directory that already holds a run is refused. With `images_attested` the source showed the
    items' images (predictions published with them): image conditions are accepted for image
    items whose files are not here. The summary's headline numbers use `reading` (None: the
    benchmark's protocol's), the other reading beside them. `model_name` is the name the model goes
    by in tables and pairing (the manifest's `model_name`; `model` when None). `asked(item)` names
    the conditions the source asked `item` under, where it asked each item under one (an exam
    sat as printed: image questions with the image, the others without): only those of its
    pairs left out are recorded as missing (None: every condition the answers use). `reconcile`,
    given the scored records before anything is written, returns what the manifest's `imported`
    adds beside `source` (an importer's comparison of medvqa's reading with the published verdicts)."""
    from medvqa.core.metrics import headline_numbers
    from medvqa.core.run.summary import health

    run_dir = Path(run_dir)
    if (run_dir / "manifest.json").exists():
        raise DataError("already holds a run; choose another --run-dir", file=run_dir)
    by_id = {it.id: it for it in items}
    spec = RunSpec(benchmark=benchmark, items=items, backend=_Imported(model), conditions=(),
                   run_dir=run_dir, split=split or benchmark.default_split, data=(load or {}).get("data"),
                   command_line=command_line or list(sys.argv),
                   extra_manifest={"load": load or {}, "convention": benchmark.active_convention,
                                   "imported": source or {},
                                   **({"model_name": model_name} if model_name else {})})
    patterns = plugins.answer_patterns()
    records, seen, conditions = [], {}, []

    def record_of(item: Item, cond: Condition, text: str | None, extra: dict | None = None) -> dict:
        key = hashlib.sha256(json.dumps(["imported", model, item.id, cond.value, text]).encode()).hexdigest()
        record = {**make_record(benchmark, item, cond.value, key, Response(text=text), patterns), **(extra or {})}
        return rescore_record(benchmark, item, {**record, "saved": True}, patterns) if saved else record

    def admitted(item: Item) -> tuple[Condition, ...]:
        return tuple(Condition) if images_attested and item.has_images else applicable(item)

    for n, (item, condition, text, *more) in enumerate(answers, 1):
        if item.id not in by_id:
            raise DataError("the answer names an item that is not in the data", record=item.id)
        try:
            cond = admit(item, condition, seen, admitted(item), f"answer {n}")
        except DataError as exc:
            raise DataError(exc.reason, record=exc.record or item.id) from None
        if cond.value not in conditions:
            conditions.append(cond.value)
        records.append(record_of(item, cond, text, more[0] if more else None))
    spec.conditions = tuple(Condition(c) for c in conditions)
    for item in items:  # a pair without an answer is missing, never left out of the denominator
        for cond in spec.conditions:
            expected = admitted(item) if asked is None else {Condition(c) for c in asked(item)}
            if not item.excluded and cond in admitted(item) and cond in expected and (item.id, cond.value) not in seen:
                records.append(record_of(item, cond, None))
    if reconcile is not None:
        spec.extra_manifest["imported"] = {**spec.extra_manifest["imported"], **reconcile(records)}
    manifest = build_manifest(spec)
    if asked is not None:  # an excluded item would have been asked under its source's conditions only
        for entry in manifest["excluded"]:
            entry["conditions"] = [Condition(c).value for c in asked(by_id[entry["item_id"]])]
    with RunStore(run_dir) as store:
        store.open(manifest)
        for record in records:
            store.append(record)
    return {"run_dir": str(run_dir), "n_items": len(items), "n_records": len(records),
            "n_excluded": sum(it.excluded for it in items),
            **headline_numbers(records, benchmark, reading), **health(records, 1.0)}


def admit(item: Item, label: str, seen: dict, admitted: Iterable[Condition], where: str, *,
          file: str | Path | None = None, hint: str = "") -> Condition:
    """The condition `label` of the answer for `item` given at `where` (of `file`), noted in
    `seen` (`refuse_repeat`'s): an unknown condition, an excluded item, a condition not among
    those `admitted` is a DataError saying so (its caller names the file and the record); a
    second answer for the pair is one naming both places, `hint` after the reason."""
    try:
        cond = Condition(label)
    except ValueError:
        raise DataError(f"unknown condition {label!r} (one of {', '.join(c.value for c in Condition)})") from None
    if item.excluded:
        raise DataError(f"item {item.id!r} is excluded ({item.exclusion_reason}) and takes no answer")
    if cond not in admitted:
        raise DataError(f"condition {label} does not apply to item {item.id!r}")
    refuse_repeat(seen, (item.id, cond.value), where, file=file,
                  what=f"a second answer for item {item.id!r} under {label}{hint}")
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


def read_answer_file(file: str | Path, items: list[Item], *, id_column: str = "item_id",
                     response_column: str = "response", condition: str | None = None, sheet: str | None = None,
                     id_from: str = "column", notice: Callable[[str], None] | None = None,
                     printed: bool = False) -> list[tuple[Item, str, str | None]]:
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
                raise DataError(f"no {column!r} column ({option}); the columns are {', '.join(map(str, first))}",
                                file=file, record=where)

    if suffix in (".jsonl", ".json", ".ndjson"):
        if sheet is not None:
            kind = "JSON" if suffix == ".json" else "JSON Lines"
            raise UsageError(f"--sheet {sheet!r}: {file} is {kind}, which has no sheets "
                             "(--sheet chooses a sheet of an .xlsx workbook)")
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
    out, seen = [], {}
    for position, (where, row) in enumerate(rows, 1):
        if not by_position and id_column not in row:
            raise DataError(f"no {id_column!r} field (--id-column)", file=file, record=where)
        if response_column not in row:
            raise DataError(f"no {response_column!r} field (--response-column)", file=file, record=where)
        item_id, response = row_id(row, position, id_column, id_from), row[response_column]
        if item_id not in by_id:
            how = " (--id-from row: an answer's position is matched to the items' ids)" if by_position else ""
            raise DataError(f"item {item_id!r} is not in the data{how}", file=file, record=where)
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
    from medvqa.core.jsonl import read_json

    rows = []
    for n, row in enumerate(read_json(file), 1):
        if not isinstance(row, dict):
            raise DataError(f"expected a JSON object, got {type(row).__name__}", file=file, record=f"element {n}")
        rows.append((f"element {n}", row))
    return rows

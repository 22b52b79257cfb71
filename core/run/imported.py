"""A run directory written from answers made elsewhere (predictions saved by another tool), so
that `score`, `report`, `audit` and `compare` read it like any run: the same manifest, the same
record fields, the answers scored under the benchmark's conventions."""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from .. import plugins
from ..benchmark import Benchmark
from ..conditions import ALL, Condition, applicable, as_printed
from ..errors import UsageError
from ..inference.base import Backend, Response
from ..items import DataError, Item, brief
from ..jsonl import TABLE_SUFFIXES, brief_list, numbered_jsonl, read_table, refuse_repeat
from .runner import DEFAULT_MAX_RESPONSE_BYTES, RunSpec, build_manifest, make_record, rescore_record
from .store import RunStore


@dataclass
class _Imported(Backend):
    """What the manifest records about the "backend" of an imported run: the model's name only
    (it answers nothing: the answers were made elsewhere)."""

    model: str
    params: dict = field(default_factory=dict)


def write_run(
    benchmark: Benchmark,
    items: list[Item],
    answers: Iterable[tuple[Item, str, str | None]],
    run_dir: str | Path,
    *,
    model: str,
    load: dict[str, Any] | None = None,
    split: str | None = None,
    saved: bool = True,
    command_line: list[str] | None = None,
    source: dict[str, Any] | None = None,
    images_attested: bool = False,
    reading: str | None = None,
    model_name: str | None = None,
    asked: Callable[[Item], Iterable[str]] | None = None,
    reconcile: Callable[[list[dict]], dict[str, Any]] | None = None,
    max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES,
) -> dict:
    """Write the run directory `run_dir` from (item, condition, response text) triples (or
    quadruples whose fourth element, a dict, adds fields to that record: what the source said
    beside the answer) and return its summary (`n_items`, `n_records`, `n_excluded`, `accuracy`, ...).

    `items` are every item the run covers, as `load` reloads them (readers call
    `benchmark.load(data, split, select=select, **other keys)`, then keep the first `limit`; so
    the run can be reloaded and re-scored); `benchmark` carries the convention the answers are scored
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
    adds beside `source` (an importer's comparison of medvqa's reading with the published verdicts);
    a `published` in either is {condition: {"accuracy": fraction, "correct": count}}. A response
    is kept to `max_response_bytes` bytes of UTF-8, as a run keeps a reply (`--max-response-bytes`):
    a longer one is cut on a character boundary and its record says `truncated` (None keeps it
    whole). Every argument is checked first (`check_arguments`): docs/api.md gives each one's type."""
    from ..metrics import headline_numbers
    from .summary import health

    check_arguments(
        benchmark,
        items,
        run_dir,
        model=model,
        load=load,
        split=split,
        saved=saved,
        command_line=command_line,
        source=source,
        images_attested=images_attested,
        reading=reading,
        model_name=model_name,
        asked=asked,
        reconcile=reconcile,
        max_response_bytes=max_response_bytes,
    )
    run_dir = Path(run_dir)
    if (run_dir / "manifest.json").exists():
        raise DataError("already holds a run; choose another --run-dir", file=run_dir)
    by_id = {it.id: it for it in items}
    spec = RunSpec(
        benchmark=benchmark,
        items=items,
        backend=_Imported(model),
        conditions=(),
        run_dir=run_dir,
        split=split or benchmark.default_split,
        data=(load or {}).get("data"),
        command_line=command_line or list(sys.argv),
        extra_manifest={
            "load": load or {},
            "convention": benchmark.active_convention,
            "imported": source or {},
            **({"model_name": model_name} if model_name else {}),
        },
    )
    patterns = plugins.answer_patterns()
    records: list[dict] = []
    seen: dict[Hashable, tuple[str | None, str]] = {}
    conditions: list[str] = []

    def record_of(item: Item, cond: Condition, text: str | None, extra: dict | None = None) -> dict:
        key = hashlib.sha256(json.dumps(["imported", model, item.id, cond.value, text]).encode()).hexdigest()
        record = {
            **make_record(benchmark, item, cond.value, key, Response(text=text), patterns, max_response_bytes),
            **(extra or {}),
        }
        return rescore_record(benchmark, item, {**record, "saved": True}, patterns) if saved else record

    def admitted(item: Item) -> tuple[Condition, ...]:
        return tuple(Condition) if images_attested and item.has_images else applicable(item)

    for n, answer in enumerate(answers, 1):
        item, condition, text, *more = _answer(answer, n)
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
        added = reconcile(records)
        if not isinstance(added, Mapping):
            raise UsageError(
                f"write_run: reconcile returned {type(added).__name__}, not a dict of what the "
                "manifest's `imported` adds beside `source`"
            )
        _check_published(added, "reconcile's `published`")
        spec.extra_manifest["imported"] = {**spec.extra_manifest["imported"], **added}
    manifest = build_manifest(spec)
    if asked is not None:  # an excluded item would have been asked under its source's conditions only
        for entry in manifest["excluded"]:
            entry["conditions"] = [Condition(c).value for c in asked(by_id[entry["item_id"]])]
    with RunStore(run_dir) as store:
        store.open(manifest)
        for record in records:
            store.append(record)
    return {
        "run_dir": str(run_dir),
        "n_items": len(items),
        "n_records": len(records),
        "n_excluded": sum(it.excluded for it in items),
        **headline_numbers(records, benchmark, reading),
        **health(records, 1.0),
    }


PUBLISHED_EXAMPLE = '{"C+Q": {"accuracy": 0.881, "correct": 148}}'


def check_arguments(
    benchmark: Any,
    items: Any,
    run_dir: Any,
    *,
    model: Any,
    load: Any,
    split: Any,
    saved: Any,
    command_line: Any,
    source: Any,
    images_attested: Any,
    reading: Any,
    model_name: Any,
    asked: Any,
    reconcile: Any,
    max_response_bytes: Any = None,
) -> None:
    """`write_run`'s arguments checked before anything is read or written: a value of the wrong
    shape is a UsageError naming the argument and the shape wanted, never a run that a later
    command cannot read."""
    from ..metrics import READINGS

    def refuse(argument: str, wanted: str, value: Any) -> UsageError:
        return UsageError(f"write_run: {argument} must be {wanted}; got {_brief(value)}")

    if not isinstance(benchmark, Benchmark):
        raise refuse("benchmark", "a medvqa.Benchmark (a plugin's, or a saved run's `benchmark`)", benchmark)
    if not isinstance(items, (list, tuple)) or not all(isinstance(it, Item) for it in items):
        raise refuse("items", "a list of medvqa.Item (as the benchmark's load returns them)", items)
    if not isinstance(run_dir, (str, PathLike)):
        raise refuse("run_dir", "a path (str or pathlib.Path)", run_dir)
    for name, value in (("model", model), ("model_name", model_name)):
        if not (isinstance(value, str) and value.strip()) and not (name == "model_name" and value is None):
            raise refuse(name, "a non-empty string" + (" or None" if name == "model_name" else ""), value)
    for name, value in (("saved", saved), ("images_attested", images_attested)):
        if not isinstance(value, bool):
            raise refuse(name, "True or False", value)
    if split is not None and split not in benchmark.splits:
        raise refuse("split", f"None or one of {benchmark.name}'s splits ({', '.join(benchmark.splits)})", split)
    if reading is not None and reading not in READINGS:
        raise refuse("reading", f"None or one of {', '.join(READINGS)}", reading)
    if command_line is not None and not (
        isinstance(command_line, (list, tuple)) and all(isinstance(a, str) for a in command_line)
    ):
        raise refuse("command_line", "None or a list of strings", command_line)
    if max_response_bytes is not None and not (type(max_response_bytes) is int and max_response_bytes >= 1):
        raise refuse("max_response_bytes", "None or a whole number of bytes from 1", max_response_bytes)
    for name, value in (("asked", asked), ("reconcile", reconcile)):
        if value is not None and not callable(value):
            raise refuse(name, "None or a function", value)
    if source is not None:
        if not isinstance(source, Mapping):
            raise refuse("source", 'None or a dict of what the answers came from (e.g. {"files": [...]})', source)
        _check_published(source, "source's `published`")
        try:
            json.dumps(source, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise refuse("source", f"JSON-serialisable ({exc})", source) from None
    if load is not None:
        _check_load(benchmark, load)


def _check_load(benchmark: Benchmark, load: Any) -> None:
    """`load` must reload the run's items as every reader does: `benchmark.load(data, split,
    select=select, **other)`, then the first `limit` items (`run.items.load_items`)."""
    from .items import LOAD_KEYS

    wanted = (
        f"None or a dict of {', '.join(LOAD_KEYS)} (and keywords of {benchmark.name}'s load), e.g. "
        '{"data": "DIR", "select": {"year": ["2024"]}}'
    )
    if not isinstance(load, Mapping):
        raise UsageError(f"write_run: load must be {wanted}; got {_brief(load)}")
    data, split, select, limit = load.get("data"), load.get("split"), load.get("select"), load.get("limit")
    problems = []
    if data is not None and not (isinstance(data, (str, PathLike)) and Path(data).exists()):
        problems.append(f"data: {data!r} is not an existing path")
    if split is not None and split not in benchmark.splits:
        problems.append(f"split: {split!r} is not one of {benchmark.name}'s splits ({', '.join(benchmark.splits)})")
    if not isinstance(load.get("sample", False), bool):
        problems.append("sample: True or False")
    if select is not None and not (
        isinstance(select, Mapping)
        and all(
            isinstance(k, str)
            and isinstance(v, (list, tuple))
            and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in v)
            for k, v in select.items()
        )
    ):
        problems.append(
            f'select: a dict of field to a list of values, such as {{"year": ["2024"]}}; got {_brief(select)}'
        )
    if not _number(limit, 1, None, whole=True):
        problems.append(f"limit: None or a whole number from 1; got {_brief(limit)}")
    other = {k: v for k, v in load.items() if k not in LOAD_KEYS and v is not None}
    try:
        inspect.signature(benchmark.load).bind(data, split, select=select, **other)
    except TypeError as exc:
        call = f"{benchmark.name}.load(data, split, select=...) is how readers reload the items"
        problems.append(
            f"{', '.join(map(repr, other))}: not a keyword of {benchmark.name}'s load ({call}; the data "
            "folder is `data`)"
            if other
            else f"{call}, and it cannot be called so ({exc})"
        )
    if problems:
        raise UsageError(f"write_run: load must be {wanted}: {'; '.join(problems)}")


def _check_published(mapping: Mapping, where: str) -> None:
    """A `published` entry (`source["published"]` or reconcile's) is {condition: {"accuracy": a
    fraction, "correct": a count, ...}}: what `report` and `compare` show beside medvqa's."""
    published = mapping.get("published")
    if published is None:
        return
    wanted = f'{{condition: {{"accuracy": fraction 0-1, "correct": count}}}}, such as {PUBLISHED_EXAMPLE}'
    if not isinstance(published, Mapping):
        raise UsageError(f"write_run: {where} must be {wanted}; got {_brief(published)}")
    for condition, said in published.items():
        if condition not in {c.value for c in Condition}:
            raise UsageError(
                f"write_run: {where}: {condition!r} is not a condition (C, C+Q, C+I, C+Q+I); it must be {wanted}"
            )
        if not (
            isinstance(said, Mapping)
            and _number(said.get("accuracy"), 0, 1)
            and _number(said.get("correct"), 0, None, whole=True)
        ):
            raise UsageError(f"write_run: {where}[{condition!r}] must be {wanted}; got {_brief(said)}")


def _number(value: Any, low: float, high: float | None, *, whole: bool = False) -> bool:
    """Whether `value` is None or a number (a whole one with `whole`) from `low` to `high`."""
    if value is None:
        return True
    kinds = (int,) if whole else (int, float)
    return isinstance(value, kinds) and not isinstance(value, bool) and low <= value and (high is None or value <= high)


def _answer(answer: Any, n: int) -> tuple:
    """Answer `n` as (item, condition, text[, fields]), or a UsageError saying what it must be."""
    if (
        isinstance(answer, (list, tuple))
        and len(answer) in (3, 4)
        and isinstance(answer[0], Item)
        and isinstance(answer[1], (str, Condition))
        and (answer[2] is None or isinstance(answer[2], str))
        and (len(answer) == 3 or answer[3] is None or isinstance(answer[3], Mapping))
    ):
        return tuple(answer)
    raise UsageError(
        "write_run: answers must be (item, condition, response text or None[, dict of fields or None]) "
        f"tuples; answer {n} is {_brief(answer)}"
    )


def _brief(value: Any) -> str:
    """The type and a short repr of a value an argument held, for messages."""
    return f"{type(value).__name__} {brief(value)}"


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

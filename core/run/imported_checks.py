"""`write_run`'s arguments checked before anything is read or written (`imported.write_run`): a
value of the wrong shape is a UsageError naming the argument and the shape wanted, never a run
that a later command cannot read."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from ..benchmark import Benchmark
from ..conditions import Condition
from ..errors import UsageError
from ..items import Item, brief

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
        check_published(source, "source's `published`")
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


def check_published(mapping: Mapping, where: str) -> None:
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


def checked_answer(answer: Any, n: int) -> tuple:
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

"""A run directory written from answers made elsewhere (predictions saved by another tool), so
that `score`, `report`, `audit` and `compare` read it like any run: the same manifest, the same
record fields, the answers scored under the benchmark's conventions."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import plugins
from ..benchmark import Benchmark
from ..conditions import Condition, applicable
from ..errors import UsageError
from ..inference.base import Backend, Response
from ..items import DataError, Item
from .answer_file import admit
from .imported_checks import check_arguments, check_published, checked_answer
from .recording import DEFAULT_MAX_RESPONSE_BYTES, make_record, rescore_record
from .runner import RunSpec, build_manifest
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
        item, condition, text, *more = checked_answer(answer, n)
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
        check_published(added, "reconcile's `published`")
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

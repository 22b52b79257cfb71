"""Saved predictions → a run directory (`medvqa.write_run`). The run covers every item of the
blocks the files answer; an item of those blocks without a prediction is recorded as `missing`,
a prediction for an item the data does not hold is an error naming the file and the record, and
two predictions for one item (in one file or two) are an error naming both places, never a later
one silently replacing the first."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import medvqa
from medvqa import DataError, numbered_jsonl, read_json, refuse_repeat

from .professions import SHORT_NAMES
from .release import BLOCK_FILE


def _run(
    benchmark_name: str,
    data: Path,
    run_dir: Path,
    predictions: dict[str, str],
    blocks: list[str],
    *,
    model: str,
    condition: str,
    convention: str | None,
    files: list[Path],
    model_name: str | None = None,
) -> dict:
    bench = {b.name: b for b in _benchmarks()}[benchmark_name].with_convention(convention)
    select = {"block": sorted(set(blocks))}
    load = {
        "data": str(data.resolve()),
        "split": None,
        "sample": False,
        "years": None,
        "professions": None,
        "limit": None,
        "select": select,
    }
    items = bench.load(data, select=select)
    by_id = {it.id: it for it in items}
    for item_id, (file, _) in predictions.items():
        if item_id not in by_id:
            raise DataError("the prediction names an item that is not in the data", file=file, record=item_id)
    answers = [
        (it, condition, predictions[it.id][1] if it.id in predictions else None) for it in items if not it.excluded
    ]
    summary = medvqa.write_run(
        bench,
        items,
        answers,
        run_dir,
        model=model,
        load=load,
        model_name=model_name,
        command_line=["medvqa", *sys.argv[1:]],
        source={"files": [str(f.resolve()) for f in files]},
    )
    missing = sum(1 for _, _, text in answers if text is None)
    return {
        **summary,
        "benchmark": bench.name,
        "model": model,
        "convention": bench.active_convention,
        "n_missing": missing,
    }


def _benchmarks():
    from .benchmark import IgakuQA, KokushiMD10

    return [IgakuQA(), KokushiMD10()]


def import_igakuqa(
    files: list[Path],
    data: Path,
    run_dir: Path,
    *,
    model: str | None = None,
    condition: str = "C+Q",
    convention: str | None = None,
    model_name: str | None = None,
) -> dict:
    """IgakuQA prediction files: JSON Lines with `problem_id` and `prediction` (the block files'
    names, `116-A_gpt4.jsonl`, name the block and the model)."""
    predictions: dict[str, tuple[Path, str]] = {}
    names, blocks, seen = set(), [], {}
    for f in _each_once(files):
        m = re.fullmatch(r"(?P<round>\d{3})-(?P<block>[A-Z])(?:_(?P<model>.+))?\.jsonl", f.name)
        if not m:
            raise DataError(
                "an IgakuQA prediction file is named <round>-<block>_<model>.jsonl (e.g. 116-A_gpt4.jsonl)", file=f
            )
        names.add(m["model"] or f.stem)
        blocks.append(f"{m['round']}{m['block']}")
        for line, row in numbered_jsonl(f):
            pid, pred = row.get("problem_id"), row.get("prediction")
            if not isinstance(pid, str) or not isinstance(pred, str):
                raise DataError(
                    "each line needs a problem_id and a prediction (strings)", file=f, record=f"line {line}"
                )
            if not pid.startswith(blocks[-1]):
                raise DataError(f"{pid} is not an item of block {blocks[-1]}", file=f, record=pid)
            refuse_repeat(seen, pid, f"line {line}", file=f, what=f"two predictions for {pid}")
            predictions[pid] = (f, pred)
    return _run(
        "igakuqa",
        data,
        run_dir,
        predictions,
        blocks,
        model=model or _one_model(names, files),
        condition=condition,
        convention=convention,
        files=files,
        model_name=model_name,
    )


def import_kokushimd10(
    files: list[Path],
    data: Path,
    run_dir: Path,
    *,
    model: str | None = None,
    condition: str = "C+Q",
    convention: str | None = None,
    model_name: str | None = None,
) -> dict:
    """KokushiMD-10 prediction files `<profession>_<year>_<section>_pred.json`: a list of
    `{"pred": ...}` aligned with the block file of the same name in the data (as the authors'
    script reads them); an entry with an `index` must match its question's."""
    from .release import block_files

    blocks_in_data = {(prof, year, section): f for prof, year, section, f in block_files(data)}
    predictions: dict[str, tuple[Path, str]] = {}
    names, blocks, seen = set(), [], {}
    for f in _each_once(files):
        m = BLOCK_FILE.fullmatch(f.name.replace("_pred.json", ".json")) if f.name.endswith("_pred.json") else None
        if not m or m["prof"] not in SHORT_NAMES:
            raise DataError(
                "a KokushiMD-10 prediction file is named <profession>_<year>_<section>_pred.json "
                "(e.g. 医師_2020_a_pred.json)",
                file=f,
            )
        key = (SHORT_NAMES[m["prof"]], int(m["year"]), m["section"].lower())
        if key not in blocks_in_data:
            raise DataError(f"the data has no block {m['prof']}_{m['year']}_{m['section']}.json", file=f)
        questions, preds = read_json(blocks_in_data[key]), read_json(f)
        if not isinstance(preds, list):
            raise DataError("a prediction file must hold a JSON list", file=f)
        if len(preds) != len(questions):
            raise DataError(f"{len(preds)} predictions for {len(questions)} questions", file=f)
        parts = f.resolve().parts
        names.add(f"{parts[-5]}/{parts[-4]}" if len(parts) >= 5 and parts[-6:-5] == ("results",) else f.parent.name)
        blocks.append(f"{key[0]}-{key[1]}-{key[2].upper()}")
        for position, (q, p) in enumerate(zip(questions, preds), start=1):
            pred = p.get("pred") if isinstance(p, dict) else None
            if isinstance(pred, list):
                pred = ",".join(map(str, pred))
            if not isinstance(pred, str):
                raise DataError(
                    "each entry needs a pred (a string or a list of labels)", file=f, record=f"position {position}"
                )
            index = str(q.get("index", "")).strip() if isinstance(q, dict) else ""
            if isinstance(p, dict) and "index" in p and str(p["index"]).strip() != index:
                raise DataError(
                    f"entry {position} has index {p['index']} but the question there is {index}",
                    file=f,
                    record=f"position {position}",
                )
            item_id = f"{key[0]}-{key[1]}-{key[2].upper()}{index}"
            refuse_repeat(seen, item_id, f"position {position}", file=f, what=f"two predictions for {item_id}")
            predictions[item_id] = (f, pred)
    return _run(
        "kokushimd10",
        data,
        run_dir,
        predictions,
        blocks,
        model=model or _one_model(names, files),
        condition=condition,
        convention=convention,
        files=files,
        model_name=model_name,
    )


def _each_once(files: list[Path]) -> list[Path]:
    """`files`, refused when one is given twice (its predictions would repeat every item)."""
    seen = set()
    for f in files:
        if f.resolve() in seen:
            raise DataError("the file is given twice", file=f)
        seen.add(f.resolve())
    return files


def _one_model(names: set[str], files: list[Path]) -> str:
    if len(names) != 1:
        raise DataError(
            f"the files name {len(names)} models ({', '.join(sorted(names))}); import one model at a "
            "time or give --model",
            file=files[0],
        )
    return next(iter(names))

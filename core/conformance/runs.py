"""The conformance kit's runs: a random run and a replay of the gold answers (`gold_response`)
over every admitted (item, condition) pair, the gold replay held to 100 %, and the audit of
both."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ..benchmark import Benchmark
from ..conditions import ALL, plan
from ..items import DataError, Item
from .report import AddProblem, KitReport, Problem


def gold_response(item: Item, answer_key: str) -> str | None:
    """The reply that states the gold answer in the JSON the answer reader reads first (the
    first accepted alternative; the box `[x, y, w, h]`, or the list of boxes when there are
    several), or the reference text of an open answer."""
    gold = item.gold
    if gold is None:  # a held-out item: asked, never scored, with no answer to state
        raise ValueError("the item has no gold answer")
    if gold.format == "text":
        return gold.text
    if gold.format == "bbox":
        boxes = [list(b) for b in gold.all_boxes]
        return json.dumps({answer_key: boxes[0] if len(boxes) == 1 else boxes})
    return json.dumps({answer_key: list(gold.alternatives[0])}, ensure_ascii=False)


def check_runs(
    bench: Benchmark,
    items: list[Item],
    data: Path | None,
    split: str | None,
    work: Path,
    add: AddProblem,
    report: KitReport,
) -> None:
    from ..api import audit
    from ..files import write_atomic
    from ..run.options import RunOptions, run
    from ..run.store import read_records

    report.checks.append("runs")
    pairs = plan(items, ALL)
    sample = split == "sample" and data is None
    # what the two runs share: every condition, no cache, the data as loaded (valid or not)
    common = RunOptions(
        benchmark=bench.name,
        model="random",
        data=str(data) if data is not None else None,
        split=None if sample else split,
        sample=sample,
        conditions=",".join(c.value for c in ALL),
        cache=False,
        allow_invalid=True,
    )
    answer_key = bench.answer_conventions().answer_key
    work.mkdir(parents=True, exist_ok=True)
    replay = work / "gold.jsonl"
    lines: list[str] = []
    unwritten: set[str] = set()
    for item, condition in pairs:
        try:
            lines.append(
                json.dumps(
                    {"item_id": item.id, "condition": condition.value, "response": gold_response(item, answer_key)},
                    ensure_ascii=False,
                )
                + "\n"
            )
        except Exception as exc:  # a gold answer the kit cannot state is the item's problem, not a crash
            if item.id not in unwritten:
                add(
                    Problem(
                        "runs", f"the gold answer cannot be written as a reply ({type(exc).__name__}: {exc})", item.id
                    )
                )
            unwritten.add(item.id)
    runs = [("random", "random")]
    try:
        write_atomic(replay, "".join(lines))
        runs.append(("gold", f"replay:{replay}"))
    except DataError as exc:
        add(Problem("runs", f"the gold replay cannot be written: {exc}"))
    # free text is scored by a judge model, which the kit has not: replayed, not held to 100 %
    judged = {item.id for item, _ in pairs if item.gold is not None and item.gold.format == "text"}
    if judged:
        report.notes.append(
            f"{len(judged)} free-text item(s) are replayed but left out of the gold replay's "
            "100 % check: their correctness is a judge's verdict (medvqa judge)"
        )
    run_dirs: dict[str, Path] = {}
    for name, model in runs:
        run_dir = work / name
        try:
            run(replace(common, model=model, run_dir=str(run_dir)), progress=False)
        except Exception as exc:
            add(Problem("runs", f"the {name} run failed: {type(exc).__name__}: {exc}"))
            continue
        records = read_records(run_dir)
        report.n_records[name] = len(records)
        run_dirs[name] = run_dir
        skip = unwritten if name == "gold" else set()  # already reported above
        got = {(r["item_id"], r["condition"]) for r in records}
        for item, condition in pairs:
            if (item.id, condition.value) not in got and item.id not in skip:
                add(Problem("runs", f"the {name} run has no {condition} record", item.id))
        for r in records:
            if r["item_id"] in skip:
                continue
            if r["status"] in ("error", "missing"):
                add(
                    Problem(
                        "runs",
                        f"the {name} run's {r['condition']} record is {r['status']}: {r.get('error')}",
                        r["item_id"],
                    )
                )
            elif name == "gold" and not r["correct"] and r["item_id"] not in judged:
                add(
                    Problem(
                        "runs",
                        f"the gold answer replayed in {r['condition']} scores as wrong "
                        f"(status {r['status']}, read {r['predicted']}, rule {r['rule']}): "
                        f"{r['response']!r}",
                        r["item_id"],
                    )
                )
    report.checks.append("audit")
    for name, run_dir in run_dirs.items():
        try:
            doc = audit(run_dir, resamples=20, examples=1)
            assert "paired" in doc and "ablation" in doc
        except Exception as exc:
            add(Problem("audit", f"the audit of the {name} run failed: {type(exc).__name__}: {exc}"))

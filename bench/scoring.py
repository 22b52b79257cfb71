"""Re-scoring speed on one core: `rescore_record` (what `medvqa score` does per record) and the
bare `score` call, over 500,000 saved responses to the real JMed48k sample's items.

    python bench/scoring.py [--n 500000] [--passes 3]

Goal: `rescore_record` at least 20,000 responses/s, so that re-scoring all of JMed48k-Eval
(12,484 items × 4 conditions) takes under 3 s; model calls take seconds each, so the reader is
kept plain rather than faster.

Responses are a realistic mix: JSON answers (valid, multi-key, wrong label, bare arrays, arrow
chains), answers in prose (Japanese and English), refusals and unparseable text. Each pass times
all N responses; the fastest pass is the one least disturbed by other work on the machine (as
`timeit` reports its best repeat), and the median is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "jmed48k-sample"

RESPONSES = [
    '{"answer": ["a"]}',
    '{"answer": ["c"]}',
    '{"answer": ["b", "e"]}',
    '{"answer": ["z"]}',
    '```json\n{"answer": ["d"]}\n```',
    "答えは c です。",
    "正解：b",
    "The answer is (e).",
    "画像が提供されていないため回答できません。",
    "I cannot determine the answer without the image.",
    "Let me think step by step. The findings suggest pneumonia, so the answer is A.",
    "…",
    '["b", "e"]',
    '{"answer": ["c->a->e"]}',
    "B→E→C",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500_000)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    if not DATA.is_dir():
        raise SystemExit(f"real data not found at {DATA}")

    from medvqa.core import plugins
    from medvqa.core.conditions import Condition
    from medvqa.core.run.recording import rescore_record
    from medvqa.core.scoring.score import score

    bench = plugins.get_benchmark("jmed48k")
    items = [it for it in bench.load(DATA, None) if not it.excluded]
    patterns = plugins.answer_patterns()
    records = [
        {
            "item_id": items[i % len(items)].id,
            "condition": Condition.CQ.value,
            "key": f"{i:064x}",
            "response": RESPONSES[i % len(RESPONSES)],
            "error": None,
            "usage": {},
            "latency_s": 0.1,
            "cached": False,
        }
        for i in range(args.n)
    ]
    by_id = {it.id: it for it in items}

    def timed(run) -> list[float]:
        rates = []
        for _ in range(args.passes):
            started = time.perf_counter()
            run()
            rates.append(args.n / (time.perf_counter() - started))
        return rates

    def bare() -> None:
        for rec in records:
            score(by_id[rec["item_id"]], rec["response"], patterns=patterns)

    def full() -> None:
        for rec in records:
            rescore_record(bench, by_id[rec["item_id"]], rec, patterns)

    print(f"{args.n:,} responses to {len(items)} items, one core, {args.passes} passes (best / median)")
    for name, rates in (("score()         ", timed(bare)), ("rescore_record()", timed(full))):
        goal = "  (goal: at least 20,000)" if name.startswith("rescore") else ""
        print(f"  {name} {max(rates):10,.0f} / {statistics.median(rates):,.0f} responses/s{goal}")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()

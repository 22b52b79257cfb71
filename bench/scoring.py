"""Re-scoring speed on one core: `rescore_record` (what `medvqa score` does per record) and the
bare `score` call, over 500,000 saved responses to the real JMed48k sample's items.

    python bench/scoring.py [--n 500000]

Responses are a realistic mix: JSON answers (valid, multi-key, wrong label), answers in prose
(Japanese and English), refusals and unparseable text.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "jmed48k-sample"

RESPONSES = [
    '{"answer": ["a"]}', '{"answer": ["c"]}', '{"answer": ["b", "e"]}', '{"answer": ["z"]}',
    '```json\n{"answer": ["d"]}\n```', "答えは c です。", "正解：b", "The answer is (e).",
    "画像が提供されていないため回答できません。", "I cannot determine the answer without the image.",
    "Let me think step by step. The findings suggest pneumonia, so the answer is A.", "…",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500_000)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    if not DATA.is_dir():
        raise SystemExit(f"real data not found at {DATA}")

    from medvqa.core import plugins
    from medvqa.core.conditions import Condition
    from medvqa.core.runner import rescore_record
    from medvqa.core.scoring import score

    bench = plugins.get_benchmark("jmed48k")
    items = [it for it in bench.load(DATA, None) if not it.excluded]
    patterns = plugins.answer_patterns()
    records = [{"item_id": items[i % len(items)].id, "condition": Condition.CQ.value, "key": f"{i:064x}",
                "response": RESPONSES[i % len(RESPONSES)], "error": None, "usage": {}, "latency_s": 0.1,
                "cached": False} for i in range(args.n)]
    by_id = {it.id: it for it in items}

    started = time.perf_counter()
    for rec in records:
        score(by_id[rec["item_id"]], rec["response"], patterns=patterns)
    bare = args.n / (time.perf_counter() - started)

    started = time.perf_counter()
    for rec in records:
        rescore_record(bench, by_id[rec["item_id"]], rec, patterns)
    full = args.n / (time.perf_counter() - started)

    print(f"{args.n:,} responses to {len(items)} items, one core")
    print(f"  score()          {bare:10,.0f} responses/s")
    print(f"  rescore_record() {full:10,.0f} responses/s  (goal: at least 50,000)")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()

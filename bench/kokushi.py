"""Loading and scoring all 2,000 IgakuQA items with a replay of their answers, beside the goal
(3 s), measured in one process: `python bench/kokushi.py`.

Times `medvqa.load` of ../shared/data/igakuqa and `medvqa.run` with a replay model (no cache),
which scores every response and writes the run directory; prints seconds and the ratio to the
goal. Module imports are done before the clock starts."""

import json
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 3.0
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "igakuqa"


def main() -> int:
    if not DATA.is_dir():
        print(f"real data not found at {DATA}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        # import once what a run imports (scipy, pandas: ~3 s here, paid once per process, not per
        # run): the goal is about loading and scoring
        import medvqa.core.run.options  # noqa: F401

        items = medvqa.load("igakuqa", DATA)
        replay = Path(tmp) / "replay.jsonl"
        replay.write_text(
            "".join(
                json.dumps(
                    {
                        "item_id": it.id,
                        "condition": "C+Q",
                        "response": json.dumps({"answer": list(it.gold.alternatives[0])}),
                    }
                )
                + "\n"
                for it in items
            ),
            encoding="utf-8",
        )
        started = time.perf_counter()
        loaded = medvqa.load("igakuqa", DATA)
        load_s = time.perf_counter() - started
        _, summary = medvqa.run(
            "igakuqa",
            f"replay:{replay}",
            data=str(DATA),
            conditions="C+Q",
            cache=False,
            run_dir=str(Path(tmp) / "run"),
            progress=False,
        )
        total_s = time.perf_counter() - started
    assert summary["n_records"] == len(loaded) == 2000
    print(
        f"load {load_s:.2f} s; load + run + score {total_s:.2f} s of 2000 items "
        f"(accuracy {summary['accuracy']['C+Q']:.3f}); goal {GOAL_S:.1f} s: ratio {total_s / GOAL_S:.2f}"
    )
    return 0 if total_s < GOAL_S else 2


if __name__ == "__main__":
    sys.exit(main())

"""A finished 12,000-record run with images, run again: from its own run directory (resume:
nothing left to do) and into a new run directory (every response from the shared cache).
Prints seconds, requests the server received, and the peak RSS of each run.

    python bench/rerun.py [--items 5000] [--image-every 5]

The data are a synthetic exam in the JMed48k layout: 5,000 items, every 5th with an image
(768 px PNGs), so text items give 2 records (C, C+Q) and image items 4: 12,000 records.
Every run is the `medvqa` CLI in a fresh process, against the test server.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed_run(args: list[str], env: dict) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one CLI run."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "medvqa.cli", "run", *args], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"medvqa run failed:\n{proc.stderr.read().decode()[-3000:]}")
    proc.stderr.close()
    return seconds, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--image-every", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    from tests.core.inference.synthetic import write_exam
    from tests.openai_server import ServerProcess

    with tempfile.TemporaryDirectory(prefix="medvqa-rerun-") as tmp_name, ServerProcess() as server:
        tmp = Path(tmp_name)
        data = write_exam(tmp / "data", args.items, image_every=args.image_every, n_images=20, side=768)
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp / "cache")}
        common = ["jmed48k", "--data", str(data), "--model", "hosted_vllm/test", "--api-base", server.url,
                  "--conditions", "C,C+Q,C+I,C+Q+I", "--concurrency", str(args.concurrency), "--json"]
        rows = []
        for label, run_dir in [("first run (fills the cache)", "run"), ("same command again (resume)", "run"),
                               ("new run directory, from cache", "rerun")]:
            before = server.stats()["requests"]
            seconds, rss = timed_run([*common, "--run-dir", str(tmp / run_dir)], env)
            rows.append((label, seconds, server.stats()["requests"] - before, rss))
        n_records = sum(1 for _ in open(tmp / "rerun" / "records.jsonl", encoding="utf-8"))
    print(f"{args.items:,} items, {n_records:,} records (C, C+Q, C+I, C+Q+I; every {args.image_every}th item "
          "with an image)")
    for label, seconds, requests, rss in rows:
        print(f"  {label:<32} {seconds:7.1f} s   {requests:6,} requests   peak RSS {rss:6.0f} MiB")


if __name__ == "__main__":
    main()

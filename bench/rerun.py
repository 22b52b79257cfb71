"""Re-runs answered from the cache, side by side with the `random` baseline on the same items.

    python bench/rerun.py [--items 2000] [--repeat 3]
    python bench/rerun.py --synthetic [--synthetic-items 5000] [--image-every 5]

Default: N IgakuQA items (../shared/data/igakuqa, its default conditions) run with `--model random`, and with
`hosted_vllm/test` against the test server into a new run directory once the cache holds every
answer (a first run fills it). Each is the `medvqa` CLI in a fresh process, into a new run
directory, alternately, `--repeat` times; the best wall time and its CPU time (user + system) are
printed with the ratio of the two, the requests the re-runs sent (0) and whether their records
equal the first run's. Then the import time of what a cached re-run no longer imports (litellm
with its local price map, scipy.stats after numpy), best of 3 fresh interpreters.

`--synthetic`: a finished 12,000-record run with images (a synthetic exam in the JMed48k layout,
every 5th item with a 768 px PNG, C, C+Q, C+I, C+Q+I), run again from its own run directory
(resume: nothing left to do) and into a new run directory (every response from the shared
cache): seconds, requests the server received and peak RSS of each run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "igakuqa"
COMPARED = ("item_id", "condition", "key", "response", "predicted", "status", "correct")


def timed_run(args: list[str], env: dict) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MiB) of one CLI run."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "medvqa.cli", "run", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"medvqa run failed:\n{proc.stderr.read().decode()[-3000:]}")
    proc.stderr.close()
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def records_of(run_dir: Path) -> list[dict]:
    with open(run_dir / "records.jsonl", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    return sorted(({k: r.get(k) for k in COMPARED} for r in records), key=lambda r: (r["item_id"], r["condition"]))


def import_seconds(statement: str, before: str = "pass") -> float:
    """Best of 3 fresh interpreters: the seconds `statement` takes after `before`."""
    code = (
        f"import os, time; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True'); {before}\n"
        f"t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    )
    return min(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(3)
    )


def baseline_comparison(args) -> None:
    sys.path.insert(0, str(REPO))
    from tests.openai_server import ServerProcess

    if not DATA.exists():
        raise SystemExit(f"IgakuQA not found at {DATA}")
    with tempfile.TemporaryDirectory(prefix="medvqa-rerun-") as tmp_name, ServerProcess() as server:
        tmp = Path(tmp_name)
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp / "cache")}
        common = ["igakuqa", "--data", str(DATA), "--limit", str(args.items), "--json"]
        model = ["--model", "hosted_vllm/test", "--api-base", server.url]
        fill = timed_run([*common, *model, "--run-dir", str(tmp / "fill")], env)
        filled = server.stats()["requests"]
        first = records_of(tmp / "fill")
        best = {"random": None, "cached": None}
        same = True
        for i in range(args.repeat):
            for label, extra in (("random", ["--model", "random"]), ("cached", model)):
                run_dir = tmp / f"{label}-{i}"
                took = timed_run([*common, *extra, "--run-dir", str(run_dir)], env)
                if label == "cached":
                    same = same and records_of(run_dir) == first
                if best[label] is None or took[0] < best[label][0]:
                    best[label] = took
        sent = server.stats()["requests"] - filled
    conditions = ", ".join(sorted({r["condition"] for r in first}))
    print(
        f"IgakuQA, first {args.items:,} items ({len(first):,} records, {conditions}); best of {args.repeat}, "
        "each a fresh process"
    )
    print(f"  {'':<46} {'wall':>7} {'CPU':>7} {'peak RSS':>10}")
    rows = [("random baseline", best["random"]), ("hosted_vllm/test, every answer from the cache", best["cached"])]
    for label, (wall, cpu, rss) in rows:
        print(f"  {label:<46} {wall:6.2f}s {cpu:6.2f}s {rss:7.0f} MiB")
    print(
        f"  {'ratio (cached re-run / random)':<46} {best['cached'][0] / best['random'][0]:6.2f}× "
        f"{best['cached'][1] / best['random'][1]:6.2f}×"
    )
    print(f"  first run, filling the cache: {fill[0]:.1f} s, {filled:,} requests (with the preflight)")
    print(f"  cached re-runs: {sent} requests sent; records equal to the first run's: {'yes' if same else 'NO'}")
    litellm_s = import_seconds("import litellm")
    scipy_s = import_seconds("import scipy.stats", before="import numpy, scipy.special")
    print("Imports a cached re-run no longer makes (best of 3 fresh interpreters):")
    print(f"  litellm (with the openai SDK)                  {litellm_s:6.2f}s")
    print(f"  scipy.stats, after numpy and scipy.special     {scipy_s:6.2f}s")


def synthetic(args) -> None:
    sys.path.insert(0, str(REPO))
    from tests.core.inference.synthetic import write_exam
    from tests.openai_server import ServerProcess

    with tempfile.TemporaryDirectory(prefix="medvqa-rerun-") as tmp_name, ServerProcess() as server:
        tmp = Path(tmp_name)
        data = write_exam(tmp / "data", args.synthetic_items, image_every=args.image_every, n_images=20, side=768)
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp / "cache")}
        common = [
            "jmed48k",
            "--data",
            str(data),
            "--model",
            "hosted_vllm/test",
            "--api-base",
            server.url,
            "--conditions",
            "C,C+Q,C+I,C+Q+I",
            "--concurrency",
            str(args.concurrency),
            "--json",
        ]
        rows = []
        for label, run_dir in [
            ("first run (fills the cache)", "run"),
            ("same command again (resume)", "run"),
            ("new run directory, from cache", "rerun"),
        ]:
            before = server.stats()["requests"]
            seconds, _, rss = timed_run([*common, "--run-dir", str(tmp / run_dir)], env)
            rows.append((label, seconds, server.stats()["requests"] - before, rss))
        n_records = sum(1 for _ in open(tmp / "rerun" / "records.jsonl", encoding="utf-8"))
    print(
        f"{args.synthetic_items:,} items, {n_records:,} records (C, C+Q, C+I, C+Q+I; every {args.image_every}th "
        "item with an image)"
    )
    for label, seconds, requests, rss in rows:
        print(f"  {label:<32} {seconds:7.1f} s   {requests:6,} requests   peak RSS {rss:6.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2000, help="IgakuQA items")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--synthetic", action="store_true", help="the 12,000-record synthetic run instead")
    parser.add_argument("--synthetic-items", type=int, default=5000)
    parser.add_argument("--image-every", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    synthetic(args) if args.synthetic else baseline_comparison(args)


if __name__ == "__main__":
    main()

"""Judging 2,000 open answers against the OpenAI-compatible test server (acting as a judge),
medvqa's `judge_run` side by side with a bare `litellm.acompletion` loop under an
`asyncio.Semaphore` sending the same judge prompts to the same server; then the time of a
cached re-judge of the judged run (in process, and as the `medvqa judge` command).

    python bench/judge.py                       # 2,000 answers, concurrency 16, 100 ms latency
    python bench/judge.py --latency 0.5 --n 800

Each contender runs `--rounds` times (alternating, best time kept), each time in a fresh
process on a fresh copy of the answered run; wall time is
measured around the judging only, after imports (medvqa's includes reading the run and writing
the judged records). The server answers every judge prompt with a canned verdict (keyed by the
prompt's content hash), so both contenders get exactly the same replies.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MODEL = "test"
PARAMS = {"temperature": 0, "seed": 0}


def prepare(tmp: Path, n: int) -> tuple[Path, Path, Path]:
    """An answered run of `n` open items, the judge prompts, and the canned verdicts."""
    import medvqa
    from tests.adapters.mmbu_hard.cases import CASES, judge_reply, write_fixture
    from tests.openai_server import content_key

    repeat = -(-n // len(CASES))
    info = write_fixture(tmp / "data", repeat=repeat, private=0)
    run_dir = tmp / "answered"
    medvqa.run(
        "mmbu_hard",
        f"replay:{info['replay']}",
        data=str(tmp / "data"),
        conditions="C+Q",
        run_dir=str(run_dir),
        progress=False,
    )
    saved = medvqa.read_run(run_dir)
    spec = saved.benchmark.judge()
    prompts, replies = [], {}
    for rec in saved.records:
        messages = spec.messages(saved.items[rec["item_id"]], rec)
        if messages is None or len(prompts) >= n:
            continue
        prompts.append(messages)
        replies[content_key(messages)] = judge_reply(messages[0]["content"])
    # keep exactly n judgeable records
    keep = {r["item_id"] for r in saved.records if spec.messages(saved.items[r["item_id"]], r) is not None}
    keep = set(sorted(keep, key=lambda i: int(i.rsplit("-", 1)[1]))[:n])
    lines = [
        line for line in (run_dir / "records.jsonl").read_text().splitlines() if json.loads(line)["item_id"] in keep
    ]
    (run_dir / "records.jsonl").write_text("\n".join(lines) + "\n")
    (tmp / "prompts.json").write_text(json.dumps(prompts[:n]))
    (tmp / "replies.json").write_text(json.dumps(replies))
    return run_dir, tmp / "prompts.json", tmp / "replies.json"


def child_medvqa(args) -> dict:
    from medvqa.core.inference.litellm_backend import import_litellm
    from medvqa.core.run.judge import judge_run

    import_litellm()
    wall = time.perf_counter()
    summary = judge_run(
        args.run_dir,
        [f"hosted_vllm/{MODEL}"],
        backend_options={"api_base": args.url, "concurrency": args.concurrency},
        cache=False,
    )
    wall = time.perf_counter() - wall
    s = summary["judges"][f"hosted_vllm/{MODEL}"]
    return {"n": s["judged"], "wall_s": wall, "errors": s["judge_errors"]}


def child_bare(args) -> dict:
    import asyncio

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from medvqa.adapters.mmbu_hard.judge import read_verdict

    conversations = json.loads(Path(args.prompts).read_text())

    async def main() -> list:
        limit = asyncio.Semaphore(args.concurrency)

        async def one(messages):
            async with limit:
                try:
                    r = await litellm.acompletion(
                        model=f"hosted_vllm/{MODEL}", api_base=args.url, messages=messages, timeout=120, **PARAMS
                    )
                    return read_verdict(r.choices[0].message.content)
                except Exception as exc:
                    return exc

        return await asyncio.gather(*(one(m) for m in conversations))

    wall = time.perf_counter()
    verdicts = asyncio.run(main())
    wall = time.perf_counter() - wall
    return {"n": len(verdicts), "wall_s": wall, "errors": sum(not isinstance(v, int) for v in verdicts)}


def contender(name: str, args, run_dir: Path, prompts: Path) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        name,
        "--url",
        args.url,
        "--run-dir",
        str(run_dir),
        "--prompts",
        str(prompts),
        "--concurrency",
        str(args.concurrency),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each contender, alternating")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    for name in ("--url", "--run-dir", "--prompts"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps({"medvqa": child_medvqa, "bare": child_bare}[args.child](args)))
        return

    from tests.openai_server import ServerProcess

    with tempfile.TemporaryDirectory(prefix="medvqa-judge-bench-") as tmp_name:
        tmp = Path(tmp_name)
        os.environ["MEDVQA_CACHE_DIR"] = str(tmp / "cache")
        answered, prompts, replies = prepare(tmp, args.n)
        bound = args.concurrency / args.latency
        print(
            f"judging {args.n} open answers, concurrency {args.concurrency}, latency {1000 * args.latency:.0f} ms; "
            f"c/L bound {bound:.0f} req/s"
        )
        with ServerProcess("--latency", str(args.latency), "--replies", str(replies)) as server:
            args.url = server.url
            results: dict[str, dict] = {}
            for round_ in range(args.rounds):  # alternating, so both meet the same load of the machine
                for name in ("medvqa", "bare") if round_ % 2 == 0 else ("bare", "medvqa"):
                    run_dir = tmp / f"run-{name}-{round_}"
                    shutil.copytree(answered, run_dir)
                    r = contender(name, args, run_dir, prompts)
                    rate = r["n"] / r["wall_s"]
                    print(
                        f"  round {round_ + 1} {name:<8} {r['n']} verdicts in {r['wall_s']:.2f} s = {rate:7.1f} req/s "
                        f"({rate / bound:.2f} of bound), errors {r['errors']}"
                    )
                    if name not in results or r["wall_s"] < results[name]["wall_s"]:
                        results[name] = r
            ratio = (results["medvqa"]["n"] / results["medvqa"]["wall_s"]) / (
                results["bare"]["n"] / results["bare"]["wall_s"]
            )
            print(f"  medvqa / bare litellm throughput (best of {args.rounds} rounds each): {ratio:.2f} (goal >= 0.9)")
            # the cached re-judge: the judged run again (every record already judged), in process and
            # as the command; then a fresh copy of the answered run judged from the response cache
            from medvqa.core.run.judge import judge_run

            cached_run = tmp / "run-cached"
            shutil.copytree(answered, cached_run)
            options = {"api_base": server.url, "concurrency": args.concurrency}
            judge_run(cached_run, [f"hosted_vllm/{MODEL}"], backend_options=options)
            asked = server.stats()["requests"]
            t = time.perf_counter()
            judge_run(cached_run, [f"hosted_vllm/{MODEL}"], backend_options=options)
            in_process = time.perf_counter() - t
            t = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "medvqa.cli",
                    "judge",
                    str(cached_run),
                    "--judge",
                    f"hosted_vllm/{MODEL}",
                    "--api-base",
                    server.url,
                    "--json",
                ],
                check=True,
                capture_output=True,
                cwd=REPO,
                env={**os.environ},
            )
            command = time.perf_counter() - t
            fresh = tmp / "run-fresh"
            shutil.copytree(answered, fresh)
            t = time.perf_counter()
            got = judge_run(fresh, [f"hosted_vllm/{MODEL}"], backend_options=options)
            from_cache = time.perf_counter() - t
            extra = server.stats()["requests"] - asked
        print(
            f"  cached re-judge of the judged run: {in_process:.2f} s in process, {command:.2f} s as "
            f"`medvqa judge` (goal < 3 s)"
        )
        hits = got["judges"][f"hosted_vllm/{MODEL}"]["cache_hits"]
        print(
            f"  a fresh copy of the answered run judged from the response cache: {from_cache:.2f} s "
            f"({hits} cache hits); requests sent by the three re-judges: {extra}"
        )


if __name__ == "__main__":
    main()

"""Throughput of a medvqa run against the OpenAI-compatible test server, side by side with a
bare `litellm.acompletion` loop under an `asyncio.Semaphore` (the ceiling for our dependency)
and inspect_ai, on the same image requests and the same server.

    python bench/throughput.py                      # settings a and b
    python bench/throughput.py --settings b --workers 2
    python bench/throughput.py --inspect-python /tmp/inspect-venv/bin/python

Settings: (a) concurrency 16, 500 ms latency, 800 requests; (b) concurrency 32, 200 ms latency,
2,000 requests. "bare litellm+price" is the same loop after registering the model's (zero)
price with litellm, as medvqa does for models litellm has no price for: it saves litellm a
search of its price map on every call, so it shows medvqa's own overhead. Every request carries one PNG (~30 kB). Each contender runs in a fresh
process; wall time and CPU time (the process and its children) are measured around the run
only, after imports. The c/L bound is concurrency / latency requests per second. inspect_ai
runs in its own virtualenv (`python -m venv /tmp/inspect-venv && /tmp/inspect-venv/bin/pip
install inspect_ai openai`) and is skipped with a message when that is missing.
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
sys.path.insert(0, str(REPO))

SETTINGS = {"a": (16, 0.5, 800), "b": (32, 0.2, 2000)}
MODEL = "test"
PARAMS = {"temperature": 0, "seed": 0, "response_format": {"type": "json_object"}}
DEFAULT_INSPECT = "/tmp/inspect-venv/bin/python"


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def write_requests(data: Path, path: Path) -> int:
    """The messages medvqa sends for C+Q+I, images as file references, for the other contenders."""
    from medvqa.core import plugins
    from medvqa.core.conditions import Condition

    bench = plugins.get_benchmark("jmed48k")
    items = bench.load(data, None)
    path.write_text(json.dumps([bench.render(item, Condition.CQI) for item in items], ensure_ascii=False))
    return len(items)


# -- contenders (each in its own process) -------------------------------------------------


def run_medvqa(args) -> dict:
    from medvqa.core.inference.litellm_backend import import_litellm
    from medvqa.core.run.options import RunOptions, run

    import_litellm()
    options = RunOptions(benchmark="jmed48k", model=f"hosted_vllm/{MODEL}", data=args.data, conditions="C+Q+I",
                         run_dir=args.run_dir, cache=False,
                         backend_options={"api_base": [args.url], "concurrency": args.concurrency,
                                          "workers": args.workers, "response_format": "json_object"})
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = run(options, progress=False)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    return {"n": len(result.records), "wall_s": wall, "cpu_s": cpu,
            "errors": sum(r["status"] == "error" for r in result.records)}


def run_bare(args) -> dict:
    import asyncio

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from medvqa.core.inference.images import to_openai

    if args.register_price:  # what medvqa does for models litellm has no price for
        litellm.register_model({f"hosted_vllm/{MODEL}": {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
                                                         "litellm_provider": "hosted_vllm", "mode": "chat"}})

    conversations = [to_openai(m) for m in json.loads(Path(args.requests).read_text())]

    async def main() -> list:
        limit = asyncio.Semaphore(args.concurrency)

        async def one(messages):
            async with limit:
                try:
                    r = await litellm.acompletion(model=f"hosted_vllm/{MODEL}", api_base=args.url, messages=messages,
                                                  timeout=120, **PARAMS)
                    return r.choices[0].message.content
                except Exception as exc:
                    return exc

        return await asyncio.gather(*(one(m) for m in conversations))

    wall, cpu = time.perf_counter(), cpu_seconds()
    answers = asyncio.run(main())
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    return {"n": len(answers), "wall_s": wall, "cpu_s": cpu, "errors": sum(isinstance(a, Exception) for a in answers)}


INSPECT_CHILD = r'''
import json, os, sys, time
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText
from inspect_ai.solver import generate

requests, url, concurrency, log_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
os.environ.setdefault("OPENAI_API_KEY", "unused")


def message(m):
    if isinstance(m["content"], str):
        content = m["content"]
    else:
        content = [ContentImage(image=p["path"]) if p["type"] == "image" else ContentText(text=p["text"])
                   for p in m["content"]]
    return (ChatMessageSystem if m["role"] == "system" else ChatMessageUser)(content=content)


samples = [Sample(id=i, input=[message(m) for m in ms], target="A") for i, ms in enumerate(json.load(open(requests)))]
task = Task(dataset=samples, solver=generate())
t = os.times(); cpu = t.user + t.system
wall = time.perf_counter()
logs = eval(task, model="openai/test", model_base_url=url, model_args={"responses_api": False},
            max_connections=concurrency, display="none",
            log_dir=log_dir, temperature=0, seed=0, timeout=120)
wall = time.perf_counter() - wall
t = os.times()
errors = sum(1 for s in (logs[0].samples or []) if s.error)
print(json.dumps({"n": len(samples), "wall_s": wall, "cpu_s": t.user + t.system - cpu, "errors": errors}))
'''


def run_contender(name: str, args, url: str, data: Path, requests: Path, concurrency: int, tmp: Path) -> dict | None:
    if name == "inspect_ai":
        python = args.inspect_python
        if not (Path(python).exists() and subprocess.run([python, "-c", "import inspect_ai"],
                                                         capture_output=True).returncode == 0):
            print(f"  inspect_ai: skipped ({python} with inspect_ai not found; see this script's docstring)")
            return None
        cmd = [python, "-c", INSPECT_CHILD, str(requests), url, str(concurrency), str(tmp / "inspect-logs")]
    else:
        workers = args.workers if name.endswith("workers") else 1
        cmd = [sys.executable, __file__, "--child", name.split()[0], "--url", url, "--data", str(data),
               "--requests", str(requests), "--concurrency", str(concurrency), "--workers", str(workers),
               "--run-dir", str(tmp / f"run-{name.replace(' ', '-')}-{time.monotonic_ns()}")]
        if name.endswith("+price"):
            cmd.append("--register-price")
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        print(f"  {name}: failed\n{out.stderr[-3000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", default="a,b")
    parser.add_argument("--workers", type=int, default=0, help="also time medvqa with --workers N")
    parser.add_argument("--inspect-python", default=DEFAULT_INSPECT)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    for name in ("--url", "--data", "--requests", "--run-dir"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--register-price", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps({"medvqa": run_medvqa, "bare": run_bare}[args.child](args)))
        return

    from tests.core.inference.synthetic import write_exam
    from tests.openai_server import ServerProcess

    names = ["medvqa", "bare litellm", "bare litellm+price", "inspect_ai"]
    names += [f"medvqa {args.workers} workers"] if args.workers else []
    for setting in args.settings.split(","):
        concurrency, latency, n = SETTINGS[setting]
        bound = concurrency / latency
        print(f"({setting}) concurrency {concurrency}, latency {latency * 1000:.0f} ms, {n} image requests; "
              f"c/L bound {bound:.0f} req/s")
        with tempfile.TemporaryDirectory(prefix="medvqa-bench-") as tmp_name:
            tmp = Path(tmp_name)
            data = write_exam(tmp / "data", n, image_every=1)
            requests = tmp / "requests.json"
            assert write_requests(data, requests) == n
            with ServerProcess("--latency", str(latency)) as server:
                results = {name: run_contender(name, args, server.url, data, requests, concurrency, tmp)
                           for name in names}
        for name, r in results.items():
            if r is None:
                continue
            rate = r["n"] / r["wall_s"]
            print(f"  {name:<18} {rate:7.1f} req/s = {rate / bound:.2f} of bound   "
                  f"CPU {1000 * r['cpu_s'] / r['n']:5.1f} ms/request   errors {r['errors']}")
        rates = {k: v["n"] / v["wall_s"] for k, v in results.items() if v}
        cpu = {k: v["cpu_s"] / v["n"] for k, v in results.items() if v}
        if "medvqa" in rates and "bare litellm" in rates:
            print(f"  medvqa / bare litellm: throughput {rates['medvqa'] / rates['bare litellm']:.2f}, "
                  f"CPU per request {cpu['medvqa'] / cpu['bare litellm']:.2f}")
        if "medvqa" in rates and "inspect_ai" in rates:
            print(f"  medvqa / inspect_ai:   throughput {rates['medvqa'] / rates['inspect_ai']:.2f}, "
                  f"CPU per request {cpu['medvqa'] / cpu['inspect_ai']:.2f}")


if __name__ == "__main__":
    main()

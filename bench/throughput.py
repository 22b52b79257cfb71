"""Throughput of a medvqa run against the OpenAI-compatible test server, side by side with a bare
`openai.AsyncOpenAI` loop and a bare `litellm.acompletion` loop (each under an
`asyncio.Semaphore`: the floors for the two clients), on the same image requests and servers.

    python bench/throughput.py                      # settings a and b, 3 rounds, medians
    python bench/throughput.py --settings b --repeat 1
    python bench/throughput.py --inspect-python /tmp/inspect-venv/bin/python   # also inspect_ai

Settings: (a) concurrency 16, 500 ms latency, 600 requests (c/L bound 32 req/s: the server is
the limit); (b) concurrency 32, 200 ms latency, 1,600 requests (bound 160 req/s: the client
is, on a busy machine); not run unless asked, (c) concurrency 128, 100 ms latency, 3,000
requests (bound 1,280 req/s: the most one client process sends). Contenders: "medvqa" (one
process), "medvqa 2 workers" (`--workers 2`), "medvqa 2 servers" (two `--api-base`, each
server with the same latency), "bare openai", "bare litellm" (after registering the model's
zero price, as medvqa does for models litellm has no price for). Every request carries one
PNG (~30 kB). Each contender runs in a fresh process; wall and CPU time (the process and its
children) are measured around the run only, after imports (medvqa's plugins loaded);
medvqa's run includes loading and checking the items, its preflight, scoring and writing
every record. The machine may be shared, so each round runs every contender once (in turns,
the order reversed every other round) and the ratios are taken within the round; the summary
gives each ratio's median over the rounds. inspect_ai runs in its own virtualenv (`python -m
venv /tmp/inspect-venv && /tmp/inspect-venv/bin/pip install inspect_ai openai`) when given.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SETTINGS = {"a": (16, 0.5, 600), "b": (32, 0.2, 1600), "c": (128, 0.1, 3000)}
MODEL = "test"
PARAMS = {"temperature": 0, "seed": 0, "response_format": {"type": "json_object"}}
CONTENDERS = ("medvqa", "medvqa 2 workers", "medvqa 2 servers", "bare openai", "bare litellm")
# (numerator, denominator, label) of the ratios printed
RATIOS = (
    ("medvqa", "bare openai", "medvqa / bare openai"),
    ("medvqa", "bare litellm", "medvqa / bare litellm"),
    ("medvqa 2 workers", None, "medvqa 2 workers / c/L bound"),
    ("medvqa 2 servers", "medvqa", "2 servers / 1 server"),
    ("bare litellm", "bare openai", "bare litellm / bare openai"),
)


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
    from medvqa.core import plugins
    from medvqa.core.inference.litellm_backend import import_litellm
    from medvqa.core.run.options import RunOptions, run

    import_litellm()
    import openai  # noqa: F401  (imported before the clock starts, as the bare loops' clients are)

    plugins.get_benchmark("jmed48k")  # the plugins' imports: the command's start-up, not its requests

    options = RunOptions(
        benchmark="jmed48k",
        model=f"hosted_vllm/{MODEL}",
        data=args.data,
        conditions="C+Q+I",
        run_dir=args.run_dir,
        cache=False,
        backend_options={
            "api_base": args.url.split(","),
            "concurrency": args.concurrency,
            "workers": args.workers,
            "response_format": "json_object",
        },
    )
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = run(options, progress=False)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    return {
        "n": len(result.records),
        "wall_s": wall,
        "cpu_s": cpu,
        "errors": sum(r["status"] == "error" for r in result.records),
    }


def run_bare(args) -> dict:
    import asyncio

    from medvqa.core.inference.images import to_openai

    conversations = [to_openai(m) for m in json.loads(Path(args.requests).read_text())]
    if args.child == "litellm":
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        # what medvqa does for models litellm has no price for (saves a search of its price map per call)
        litellm.register_model(
            {
                f"hosted_vllm/{MODEL}": {
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "litellm_provider": "hosted_vllm",
                    "mode": "chat",
                }
            }
        )

        async def call(messages):
            return await litellm.acompletion(
                model=f"hosted_vllm/{MODEL}", api_base=args.url, messages=messages, timeout=120, max_retries=0, **PARAMS
            )
    else:
        import openai

        client = None

        async def call(messages):
            nonlocal client
            client = client or openai.AsyncOpenAI(base_url=args.url, api_key="none", max_retries=0, timeout=120)
            return await client.chat.completions.create(model=MODEL, messages=messages, **PARAMS)

    async def main() -> list:
        limit = asyncio.Semaphore(args.concurrency)

        async def one(messages):
            async with limit:
                try:
                    return (await call(messages)).choices[0].message.content
                except Exception as exc:
                    return exc

        return await asyncio.gather(*(one(m) for m in conversations))

    wall, cpu = time.perf_counter(), cpu_seconds()
    answers = asyncio.run(main())
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    return {"n": len(answers), "wall_s": wall, "cpu_s": cpu, "errors": sum(isinstance(a, Exception) for a in answers)}


INSPECT_CHILD = r"""
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
"""


def run_contender(
    name: str, args, urls: list[str], data: Path, requests: Path, concurrency: int, tmp: Path
) -> dict | None:
    if name == "inspect_ai":
        cmd = [
            args.inspect_python,
            "-c",
            INSPECT_CHILD,
            str(requests),
            urls[0],
            str(concurrency),
            str(tmp / "inspect-logs"),
        ]
    else:
        child = {"bare openai": "openai", "bare litellm": "litellm"}.get(name, "medvqa")
        cmd = [
            sys.executable,
            __file__,
            "--child",
            child,
            "--url",
            ",".join(urls[:2] if "servers" in name else urls[:1]),
            "--data",
            str(data),
            "--requests",
            str(requests),
            "--concurrency",
            str(concurrency),
            "--workers",
            "2" if "workers" in name else "1",
            "--run-dir",
            str(tmp / f"run-{name.replace(' ', '-')}-{time.monotonic_ns()}"),
        ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        print(f"  {name}: failed\n{out.stderr[-3000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def one_round(names: list[str], args, urls, data, requests, concurrency, bound, tmp) -> dict[str, float]:
    """Run every contender once; print their lines; return the ratios of this round."""
    results = {name: run_contender(name, args, urls, data, requests, concurrency, tmp) for name in names}
    rates = {k: v["n"] / v["wall_s"] for k, v in results.items() if v}
    for name in [n for n in (*CONTENDERS, "inspect_ai") if n in rates]:
        r = results[name]
        print(
            f"    {name:<18} {rates[name]:6.1f} req/s = {rates[name] / bound:.2f} of bound   "
            f"CPU {1000 * r['cpu_s'] / r['n']:5.2f} ms/request   errors {r['errors']}"
        )
    ratios = {}
    for top, bottom, label in RATIOS:
        if top in rates and (bottom is None or bottom in rates):
            ratios[label] = rates[top] / (bound if bottom is None else rates[bottom])
    ratios.update({f"CPU/request {k} (ms)": 1000 * v["cpu_s"] / v["n"] for k, v in results.items() if v})
    print("    " + "   ".join(f"{k} {v:.2f}" for k, v in ratios.items() if not k.startswith("CPU")))
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", default="a,b")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per setting (the summary gives medians)")
    parser.add_argument("--inspect-python", help="a Python with inspect_ai installed: time it too")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    for name in ("--url", "--data", "--requests", "--run-dir"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_medvqa(args) if args.child == "medvqa" else run_bare(args)))
        return

    from tests.core.inference.synthetic import write_exam
    from tests.openai_server import ServerProcess

    names = list(CONTENDERS) + (["inspect_ai"] if args.inspect_python else [])
    summary = {}
    for setting in args.settings.split(","):
        concurrency, latency, n = SETTINGS[setting]
        bound = concurrency / latency
        print(
            f"({setting}) concurrency {concurrency}, latency {latency * 1000:.0f} ms, {n} image requests; "
            f"c/L bound {bound:.0f} req/s"
        )
        rounds = []
        with tempfile.TemporaryDirectory(prefix="medvqa-bench-") as tmp_name, ExitStack() as servers:
            tmp = Path(tmp_name)
            data = write_exam(tmp / "data", n, image_every=1)
            requests = tmp / "requests.json"
            assert write_requests(data, requests) == n
            urls = [servers.enter_context(ServerProcess("--latency", str(latency))).url for _ in range(2)]
            for i in range(args.repeat):
                print(f"  round {i + 1}")
                order = names if i % 2 == 0 else names[::-1]
                rounds.append(one_round(order, args, urls, data, requests, concurrency, bound, tmp))
        labels = [label for label in rounds[0] if all(label in r for r in rounds)]
        summary[setting] = {label: statistics.median(r[label] for r in rounds) for label in labels}
        print(
            f"  median of {len(rounds)} rounds: "
            + "   ".join(f"{k} {v:.2f}" for k, v in summary[setting].items() if not k.startswith("CPU"))
        )
        print(
            "  CPU per request (ms, median): "
            + "   ".join(
                f"{k.removeprefix('CPU/request ').removesuffix(' (ms)')} {v:.2f}"
                for k, v in summary[setting].items()
                if k.startswith("CPU")
            )
        )


if __name__ == "__main__":
    main()

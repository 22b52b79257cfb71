"""`audit`, `compare` and `score` of large runs against a plain-numpy floor, side by side in one run.

    python bench/analysis.py [--copies 30] [--copies 5,30,120] [--repeat 3] [--variants hflip,order]

The data are the JMed48k sample (two real physician exams, 800 items, 17 with their images)
replicated into synthetic exam years: `--copies 30` gives 60 years, and runs under C+Q and C+Q+I
give 817 records per copy (every item under C+Q, the 17 with images under C+Q+I too), so 30
copies are 24,510 records a run. Two runs are made (`random` and `constant:A`), then each
command runs in a fresh process, as a user runs it: `audit A --json`, `compare A B --json`,
`score A`. The first analysis of a data folder loads and checks its items and keeps them in the
cache folder (core/run/item_cache.py); it is measured on its own, with an empty cache folder
each time, and the other commands after it, as every analysis but the first runs. A run keeps
the items it has loaded and checked too, so the path every user takes is measured as well: an
empty cache folder, `run` of `random` into a new directory, then the first `audit`, `compare`
(of the new run and B) or `score` after it; the seconds are the analysis's alone, and the run's
own are printed beside them. The floor is
a plain-numpy script, also a fresh process, that reads both runs' records, pairs them by (item,
condition), and computes exact McNemar and a 1,000-resample bootstrap of the paired
difference. `--variants` asks every run the variants too (`run --variants`), so the records hold
the factors the audit and compare pair besides Δimg. Seconds are the best and the median of
`--repeat` runs; memory is the peak RSS.
medvqa's modules are read from their compiled bytecode, as an installed medvqa's are (pip compiles
them as it installs): where PYTHONDONTWRITEBYTECODE is set (some containers set it), every command
would compile its 150 modules from source again, 0.15 s the floor, reading numpy's compiled
modules, does not pay; the commands here run without it, so the first one writes them.
The machine is shared: read the ratio, measured in the same run, and the load average printed
beside it. The CPU seconds (user and system, the best of the runs) are printed too: other work on
the machine stretches a command's wall time far more than its CPU time, so under load their
ratio is the steadier one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO.parent / "shared" / "data" / "jmed48k-sample" / "JMed48k" / "Physician"
FIRST_YEAR = 1900

FLOOR = r"""
import json, sys, math
import numpy as np

def read(path):
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            out[(r["item_id"], r["condition"])] = r
    return out

a, b = (read(p) for p in sys.argv[1:3])
keys = [k for k in a if k in b]
x = np.fromiter((bool(a[k].get("correct")) for k in keys), dtype=float, count=len(keys))
y = np.fromiter((bool(b[k].get("correct")) for k in keys), dtype=float, count=len(keys))
n10, n01 = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
m, k = n10 + n01, min(n10, n01)
# exact two-sided McNemar: 2 P(X <= k), X ~ Bin(m, 1/2), the terms in log space (O(k), no big integers)
i = np.arange(1, k + 1)
log_terms = np.concatenate([[0.0], np.cumsum(np.log(m - i + 1) - np.log(i))]) - m * math.log(2)
p = min(1.0, 2 * float(np.exp(log_terms).sum())) if m else 1.0
d = x - y
rng = np.random.default_rng(0)
means = np.array([d[rng.integers(0, d.size, d.size)].mean() for _ in range(1000)])
print(json.dumps({"n": len(keys), "mcnemar_p": p, "ci": [float(np.quantile(means, 0.025)),
                                                         float(np.quantile(means, 0.975))]}))
"""


def make_data(root: Path, copies: int) -> Path:
    """The sample's two exams copied into 2 × `copies` synthetic years under `root`."""
    out = root / "JMed48k" / "Physician"
    sources = sorted(p for p in SAMPLE.iterdir() if p.is_dir())
    year = FIRST_YEAR
    for _ in range(copies):
        for src in sources:
            src_year = src.name.rsplit("_", 1)[1]
            dest = out / f"Physician_{year}"
            dest.mkdir(parents=True)
            for name in ("CORRECTED.json", "taxonomy.json"):
                os.link(src / f"{src_year}_{name}", dest / f"{year}_{name}")
            # the questions name their images as {source year}_images/...: the same folder name
            shutil.copytree(src / f"{src_year}_images", dest / f"{src_year}_images", copy_function=os.link)
            year += 1
    return root


def timed(args: list[str], env: dict) -> tuple[float, float, float]:
    """(seconds, peak RSS in MiB, CPU seconds: user and system) of one command in a fresh process."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if code != 0:
        raise SystemExit(f"{' '.join(args)} failed ({code}):\n{err[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def medvqa(*args: str) -> list[str]:
    return [sys.executable, "-m", "medvqa.cli", *args]


def measure(copies: int, repeat: int, tmp: Path, env: dict, variants: str | None = None) -> tuple[int, list]:
    data = make_data(tmp / f"data-{copies}", copies)
    asked = ["--variants", variants] if variants else []
    runs = []
    for name, model in (("a", "random"), ("b", "constant:A")):
        run_dir = tmp / f"run-{copies}-{name}"
        timed(
            medvqa(
                "run",
                "jmed48k",
                "--data",
                str(data),
                "--split",
                "full",
                "--model",
                model,
                "--conditions",
                "C+Q,C+Q+I",
                *asked,
                "--run-dir",
                str(run_dir),
                "--json",
            ),
            env,
        )
        runs.append(run_dir)
    n_records = sum(1 for _ in open(runs[0] / "records.jsonl", encoding="utf-8"))
    floor_script = tmp / "floor.py"
    floor_script.write_text(FLOOR, encoding="utf-8")
    a, b = (str(r) for r in runs)
    first = "audit RUN --json, first analysis (items loaded, checked, kept)"
    new_run = "{new}"  # the run a user path makes just before its analysis (a new directory each time)
    commands = {
        "floor (read, pair, McNemar, bootstrap)": [
            sys.executable,
            str(floor_script),
            f"{a}/records.jsonl",
            f"{b}/records.jsonl",
        ],
        first: medvqa("audit", a, "--json"),
        "run, then audit RUN --json": medvqa("audit", new_run, "--json"),
        "run, then compare RUN RUN_B --json": medvqa("compare", new_run, b, "--json"),
        "run, then score RUN": medvqa("score", new_run),
        "audit RUN --json": medvqa("audit", a, "--json"),
        "compare RUN_A RUN_B --json": medvqa("compare", a, b, "--json"),
        "score RUN": medvqa("score", a),
    }
    run_args = ["run", "jmed48k", "--data", str(data), "--split", "full", "--model", "random"]
    run_args += ["--conditions", "C+Q,C+Q+I", *asked, "--json"]
    # the data's items kept in the cache folder, as after any analysis, and each command's modules compiled
    for warm in (("audit", a, "--json"), ("compare", a, b, "--json"), ("score", a)):
        timed(medvqa(*warm), env)
    samples: dict[str, list[tuple[float, float, float]]] = {k: [] for k in commands}
    made: list[tuple[float, float, float]] = []  # the runs of the user paths
    for round_ in range(repeat):  # interleaved: each round sees the same load
        for i, (label, args) in enumerate(commands.items()):
            run_env = env
            if label == first or new_run in args:  # an empty cache folder (the runs need no response cache)
                run_env = {**env, "MEDVQA_CACHE_DIR": str(tmp / f"cold-{copies}-{round_}-{i}")}
            if new_run in args:  # the user's path: a run into a new directory, then its first analysis
                run_dir = str(tmp / f"user-{copies}-{round_}-{i}")
                made.append(timed(medvqa(*run_args, "--run-dir", run_dir), run_env))
                args = [run_dir if w == new_run else w for w in args]
            samples[label].append(timed(args, run_env))
    rows = []
    for label, got in [*samples.items(), ("run (of a user path; not an analysis)", made)]:
        seconds = [s for s, _, _ in got]
        cpu = min(c for _, _, c in got)
        rows.append((label, min(seconds), statistics.median(seconds), cpu, max(m for _, m, _ in got)))
    return n_records, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--copies",
        default="30",
        help="copies of the two-exam sample, comma-separated for a growth table (30: 24,510 records)",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", help="ask the runs these variants too (as run --variants: hflip,order)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="medvqa-analysis-") as tmp_name:
        tmp = Path(tmp_name)
        env["MEDVQA_CACHE_DIR"] = str(tmp / "cache")
        for copies in (int(c) for c in args.copies.split(",")):
            n_records, rows = measure(copies, args.repeat, tmp, env, args.variants)
            floor_best, floor_cpu = rows[0][1], rows[0][3]
            load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
            print(
                f"\n{n_records:,} records a run ({2 * copies} exam years"
                + (f", variants {args.variants}" if args.variants else "")
                + f"; best and median of {args.repeat}; "
                f"load average {load} at the end)"
            )
            print("| command | best s | median s | best CPU s | peak MiB | best vs the floor | CPU vs the floor's |")
            print("|---|---|---|---|---|---|---|")
            for label, best, median, cpu, rss in rows:
                print(
                    f"| `{label}` | {best:.2f} | {median:.2f} | {cpu:.2f} | {rss:.0f} | {best / floor_best:.1f} × "
                    f"| {cpu / floor_cpu:.1f} × |"
                )
            sys.stdout.flush()


if __name__ == "__main__":
    main()

"""The whole published WorldMedQA-V study: import its 168 result tables, then compare its 88 with-image runs.

    python bench/import.py [--repeat 3]

Each command runs as a user runs it, in one fresh process:

- `medvqa import worldmedqa_v visuals/ --run-dir OUT --json` of every result table the authors
  published (168 tables, ../shared/data/worldmedqa-v-outputs/visuals); goal: under 60 s;
- the same command again (every run directory already holds its run: all skipped);
- beside it, the floor of reading alone: the same tables read with pandas in one process, so the
  ratio says how much of the import is reading the workbooks;
- `medvqa compare OUT/*/*_image --json` and `medvqa compare OUT/*/*_image --html PAGE` (the page
  with the figure by country and language, and each run's audit page beside it) of the 88
  with-image runs; goal: under 15 s.

Seconds are the best and the median of `--repeat` runs; memory is the peak RSS of each command.
The machine is shared: read the numbers with the load average printed beside them.
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
VISUALS = REPO.parent / "shared" / "data" / "worldmedqa-v-outputs" / "visuals"
READ_ONLY = (
    "import glob, sys, pandas as pd; [pd.read_excel(f, dtype=str, keep_default_na=False) "
    "for f in glob.glob(sys.argv[1] + '/*/*/*_result.xlsx')]"
)
GOALS = {"import": 60.0, "compare": 15.0}


def timed(args: list[str], env: dict) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one command in a fresh process."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(args)} failed ({code}):\n{err[-3000:]}")
    return seconds, usage.ru_maxrss / 1024


def medvqa(*args: str) -> list[str]:
    return [sys.executable, "-m", "medvqa.cli", *args]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    repeat = parser.parse_args().repeat
    if not VISUALS.is_dir():
        print(f"the published tables are not at {VISUALS}", file=sys.stderr)
        return 1
    n_tables = len(list(VISUALS.glob("*/*/*_result.xlsx")))
    samples: dict[str, list[tuple[float, float]]] = {}
    n_runs = 0
    with tempfile.TemporaryDirectory(prefix="medvqa-import-") as tmp_name:
        tmp = Path(tmp_name)
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp / "cache")}
        for round_ in range(repeat):
            out = tmp / f"runs-{round_}"
            imp = medvqa("import", "worldmedqa_v", str(VISUALS), "--run-dir", str(out), "--json")
            steps = {
                f"import of {n_tables} tables": imp,
                "again, all skipped": imp,
                "only reading them (pandas)": [sys.executable, "-c", READ_ONLY, str(VISUALS)],
            }
            for label, args in steps.items():
                samples.setdefault(label, []).append(timed(args, env))
            image_runs = sorted(str(p) for p in out.glob("*/*_image") if p.is_dir())
            n_runs = len(image_runs)
            page = tmp / f"page-{round_}" / "compare.html"
            steps = {
                f"compare of {n_runs} runs --json": medvqa("compare", *image_runs, "--json"),
                f"compare of {n_runs} runs --html": medvqa("compare", *image_runs, "--html", str(page)),
            }
            for label, args in steps.items():
                samples.setdefault(label, []).append(timed(args, env))
            shutil.rmtree(out, ignore_errors=True)
    load = os.getloadavg()
    print(
        f"WorldMedQA-V, {n_tables} published tables, {n_runs} with-image runs "
        f"(best and median of {repeat}; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})"
    )
    print("| command | best s | median s | peak MiB | goal | best / goal |")
    print("|---|---|---|---|---|---|")
    for label, got in samples.items():
        seconds = [s for s, _ in got]
        goal = next((g for key, g in GOALS.items() if label.startswith(key) and "skipped" not in label), None)
        goal_text = f"< {goal:.0f} s | {min(seconds) / goal:.2f}" if goal else "— | —"
        print(
            f"| `{label}` | {min(seconds):.2f} | {statistics.median(seconds):.2f} | "
            f"{max(m for _, m in got):.0f} | {goal_text} |"
        )
    first, floor = samples[f"import of {n_tables} tables"], samples["only reading them (pandas)"]
    print(f"import / reading alone: {min(s for s, _ in first) / min(s for s, _ in floor):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What a page costs beside its JSON: `audit --html` vs `audit --json`, `compare --html` vs `compare --json`.

    python bench/pages.py [--copies 2] [--repeat 3]

The data are the JMed48k sample (two real physician exams, 800 items, 17 with their images), run
under C+Q and C+Q+I: 817 records a run. Two runs (`random`, `constant:A`) of the sample give the
one-run audit and the two-run comparison; five runs (`random`, `constant:A` to `constant:D`) of
the sample replicated into `--copies` × 2 synthetic exam years (bench/analysis.py builds them; 2
copies: 1,634 records a run, 8,170 in all) give the five-run comparison. Each command runs in a
fresh process, as a user runs it, the page and its JSON interleaved so that both see the same
load; the goal is a page at most 1.5 × its JSON. Seconds are the best and the median of
`--repeat` runs; memory is the peak RSS. The cache folder is one for the whole bench, as a
user's is: the first round makes and keeps the runs' items and the pages' thumbnails, the next
rounds read them back (the best of 3 is a warm one; the median shows the first round's weight).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("bench_analysis", HERE / "analysis.py")
analysis = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(analysis)

GOAL = 1.5


def make_runs(data: Path, models: list[str], tmp: Path, env: dict) -> list[str]:
    runs = []
    for model in models:
        run_dir = tmp / f"run-{data.name}-{model.replace(':', '-')}"
        analysis.timed(
            analysis.medvqa(
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
                "--run-dir",
                str(run_dir),
                "--json",
            ),
            env,
        )
        runs.append(str(run_dir))
    return runs


def best_median_peak(got: list[tuple[float, float]]) -> tuple[float, float, float]:
    seconds = [s for s, _ in got]
    return min(seconds), statistics.median(seconds), max(m for _, m in got)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=2, help="copies of the two-exam sample for the five runs")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not analysis.SAMPLE.is_dir():
        print(f"the JMed48k sample is not at {analysis.SAMPLE}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="medvqa-pages-") as tmp_name:
        tmp = Path(tmp_name)
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp / "cache")}
        two = make_runs(analysis.SAMPLE.parents[1], ["random", "constant:A"], tmp, env)
        five_data = analysis.make_data(tmp / "data", args.copies)
        five = make_runs(five_data, ["random", "constant:A", "constant:B", "constant:C", "constant:D"], tmp, env)
        n = [sum(1 for _ in open(Path(r) / "records.jsonl", encoding="utf-8")) for r in (two[0], five[0])]
        cases = {
            f"audit RUN ({n[0]:,} records)": ("audit", two[:1]),
            f"compare A B ({2 * n[0]:,} records)": ("compare", two),
            f"compare of 5 runs ({5 * n[1]:,} records)": ("compare", five),
        }
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(args.repeat):
            for i, (label, (command, runs)) in enumerate(cases.items()):
                page = tmp / f"page-{round_}-{i}" / "page.html"
                for form, extra in (("--json", ["--json"]), ("--html", ["--html", str(page)])):
                    samples.setdefault((label, form), []).append(
                        analysis.timed(analysis.medvqa(command, *runs, *extra), env)
                    )
    load = os.getloadavg()
    print(
        f"pages vs their JSON (best and median of {args.repeat}; "
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})"
    )
    print("| what | --json best s (median), MiB | --html best s (median), MiB | html / json | goal |")
    print("|---|---|---|---|---|")
    for label in cases:
        j, h = best_median_peak(samples[(label, "--json")]), best_median_peak(samples[(label, "--html")])
        print(
            f"| {label} | {j[0]:.2f} ({j[1]:.2f}), {j[2]:.0f} | {h[0]:.2f} ({h[1]:.2f}), {h[2]:.0f} | "
            f"{h[0] / j[0]:.2f} × | ≤ {GOAL} × |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`medvqa import worldmedqa_v visuals/` of every result table the WorldMedQA-V authors published
(168 tables, ../shared/data/worldmedqa-v-outputs), as a user runs it: one fresh process, then the
same command again (every run already imported: skipped). Beside it, the floor of the work: the
same tables only read (pandas), in one process, so the ratio says how much of the import is
reading the workbooks.

    python bench/worldmedqa_import.py [--repeat 3]

Seconds are the best and the median of `--repeat` runs; memory is the peak RSS of the import.
The machine is shared: read the ratio, measured in the same run.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VISUALS = REPO.parent / "shared" / "data" / "worldmedqa-v-outputs" / "visuals"
READ_ONLY = ("import glob, sys, pandas as pd; [pd.read_excel(f, dtype=str, keep_default_na=False) "
             "for f in glob.glob(sys.argv[1] + '/*/*/*_result.xlsx')]")


def timed(args: list[str]) -> float:
    start = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    repeat = parser.parse_args().repeat
    medvqa = [sys.executable, "-m", "medvqa.cli"]
    cold, warm, floor = [], [], []
    for _ in range(repeat):
        out = Path(tempfile.mkdtemp(prefix="medvqa-bench-"))
        try:
            command = [*medvqa, "import", "worldmedqa_v", str(VISUALS), "--run-dir", str(out / "runs"), "--json"]
            cold.append(timed(command))
            warm.append(timed(command))  # every run directory holds its run: all skipped
        finally:
            shutil.rmtree(out, ignore_errors=True)
        floor.append(timed([sys.executable, "-c", READ_ONLY, str(VISUALS)]))
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    for name, values in (("import, 168 tables", cold), ("again, all skipped", warm), ("only reading them", floor)):
        print(f"{name:<20} best {min(values):6.2f} s  median {statistics.median(values):6.2f} s")
    print(f"import / reading alone: {min(cold) / min(floor):.2f}; peak RSS of a child {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()

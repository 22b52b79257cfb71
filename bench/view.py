"""The item browser on a real run: IgakuQA's 2,000 items, one run and two runs side by side.

    python bench/view.py

Makes two replay runs of ../shared/data/igakuqa (C+Q; one answers every item right, the other
every third item wrong, with long-ish responses), writes `medvqa view` pages of one and of both
runs, and prints for each: the page size, the seconds `medvqa.view` took, and in headless
Chromium the milliseconds from navigation start to the first page of items rendered (the page
records it on <body data-rendered-ms>) and the wall-clock seconds of the whole load (browser
start included). The goal: it opens in a couple of seconds.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import medvqa

GOAL_MS = 2000
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "igakuqa"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def replay_run(tmp: Path, name: str, items, wrong_every: int | None) -> Path:
    lines = []
    for i, it in enumerate(items):
        keys = list(it.gold.alternatives[0])
        if wrong_every and i % wrong_every == 0:
            keys = [next((k for k in it.keys if k not in it.gold.keys), keys[0])]
        reasoning = f"Considering each option of question {it.id} in turn. " * 6
        lines.append({"item_id": it.id, "condition": "C+Q",
                      "response": reasoning + json.dumps({"answer": keys})})
    replay = tmp / f"{name}.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    run_dir = tmp / name
    medvqa.run("igakuqa", f"replay:{replay}", data=str(DATA), conditions="C+Q", cache=False, run_dir=str(run_dir),
               progress=False)
    return run_dir


def first_render(chromium: str, page: Path, profile: Path) -> tuple[int, float]:
    started = time.perf_counter()
    out = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - started
    found = re.search(r'data-rendered-ms="(\d+)"', out.stdout)
    if out.returncode != 0 or not found:
        raise SystemExit(f"chromium could not render {page}:\n{out.stderr[-2000:]}")
    return int(found.group(1)), wall


def main() -> int:
    if not DATA.is_dir():
        print(f"real data not found at {DATA}", file=sys.stderr)
        return 1
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("headless Chromium is not installed (apt-get install -y chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        items = medvqa.load("igakuqa", DATA)
        runs = [replay_run(tmp, "right", items, None), replay_run(tmp, "third-wrong", items, 3)]
        print(f"IgakuQA: {len(items)} items, C+Q")
        print(f"{'runs':>4} {'page MiB':>9} {'write s':>8} {'first render ms':>16} {'chromium load s':>16} "
              f"{'render / goal':>14}")
        for n in (1, 2):
            page = tmp / f"view-{n}.html"
            started = time.perf_counter()
            medvqa.view(*runs[:n], html=page)
            write_s = time.perf_counter() - started
            rendered_ms, wall = first_render(chromium, page, tmp / f"profile-{n}")
            print(f"{n:>4} {page.stat().st_size / 2 ** 20:>9.2f} {write_s:>8.2f} {rendered_ms:>16} {wall:>16.2f} "
                  f"{rendered_ms / GOAL_MS:>14.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

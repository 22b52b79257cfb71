"""The item browser on a real run: IgakuQA's 2,000 items, one run and two runs side by side.

    python bench/view.py

Makes two replay runs of ../shared/data/igakuqa (C+Q; one answers every item right, the other
every third item wrong, with long-ish responses), writes `medvqa view` pages of one and of both
runs, and prints for each: the page size, the seconds `medvqa.view` took, and in headless
Chromium the milliseconds from navigation start to the first page of items rendered (the page
records it on <body data-rendered-ms>) and the wall-clock seconds of the whole load (browser
start included). The goal: it opens in a couple of seconds. The same for the 800-item JMed48k
sample (../shared/data/jmed48k-sample: C+Q and C+Q+I, images embedded) when it is there.
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
JMED = DATA.parent / "jmed48k-sample"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def replay_run(
    tmp: Path,
    name: str,
    items,
    wrong_every: int | None,
    benchmark: str = "igakuqa",
    data: Path = DATA,
    conditions: tuple[str, ...] = ("C+Q",),
) -> Path:
    lines = []
    for i, it in enumerate(items):
        keys = list(it.gold.alternatives[0])
        if wrong_every and i % wrong_every == 0:
            keys = [next((k for k in it.keys if k not in it.gold.keys), keys[0])]
        reasoning = f"Considering each option of question {it.id} in turn. " * 6
        for cond in conditions:
            if cond == "C+Q+I" and not it.image_available:
                continue
            lines.append({"item_id": it.id, "condition": cond, "response": reasoning + json.dumps({"answer": keys})})
    replay = tmp / f"{name}.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    run_dir = tmp / name
    medvqa.run(
        benchmark,
        f"replay:{replay}",
        data=str(data),
        conditions=",".join(conditions),
        cache=False,
        run_dir=str(run_dir),
        progress=False,
    )
    return run_dir


def first_render(chromium: str, page: Path, profile: Path) -> tuple[int, float]:
    started = time.perf_counter()
    out = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=300,
    )
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
        measure(chromium, tmp, "igakuqa", runs)
        if JMED.is_dir():  # 800 items, 17 of them with images, C+Q and C+Q+I
            jmed = medvqa.load("jmed48k", path=JMED)
            runs = [
                replay_run(tmp, f"jmed-{name}", jmed, every, "jmed48k", JMED, ("C+Q", "C+Q+I"))
                for name, every in (("right", None), ("third-wrong", 3))
            ]
            print(f"JMed48k sample: {len(jmed)} items, C+Q and C+Q+I")
            measure(chromium, tmp, "jmed", runs)
    return 0


def measure(chromium: str, tmp: Path, name: str, runs: list[Path]) -> None:
    print(
        f"{'runs':>4} {'page MiB':>9} {'write s':>8} {'first render ms':>16} {'chromium load s':>16} "
        f"{'render / goal':>14}"
    )
    for n in (1, 2):
        page = tmp / f"{name}-view-{n}.html"
        started = time.perf_counter()
        medvqa.view(*runs[:n], html=page)
        write_s = time.perf_counter() - started
        rendered_ms, wall = first_render(chromium, page, tmp / f"{name}-profile-{n}")
        print(
            f"{n:>4} {page.stat().st_size / 2**20:>9.2f} {write_s:>8.2f} {rendered_ms:>16} {wall:>16.2f} "
            f"{rendered_ms / GOAL_MS:>14.2f}"
        )


if __name__ == "__main__":
    raise SystemExit(main())

"""Seconds to extract one real booklet pair (77AM.pdf + 77AMimage.pdf) on one core.

Usage: python bench/extract.py [DATA_DIR]   (default: ../shared/data/mhlw-pdf/rt77/pdfs)
Goal: under 20 s for the pair.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from time import perf_counter

from medvqa.adapters.jmed48k.extract import extract
from medvqa.adapters.jmed48k.extract.booklet import read_booklet
from medvqa.adapters.jmed48k.extract.figures import read_figure_booklet
from medvqa.adapters.jmed48k.extract.questions import parse_questions

GOAL = 20.0


def timed(fn, *args, **kwargs):
    start = perf_counter()
    value = fn(*args, **kwargs)
    return value, perf_counter() - start


def main() -> int:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    repo = Path(__file__).resolve().parents[1]
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else repo.parent / "shared" / "data" / "mhlw-pdf" / "rt77" / "pdfs"
    questions, figures = data / "77AM.pdf", data / "77AMimage.pdf"
    for path in (questions, figures):
        if not path.is_file():
            print(f"missing {path}", file=sys.stderr)
            return 2
    flow, t_read = timed(read_booklet, questions)
    (found, _), t_parse = timed(parse_questions, flow, "AM")
    flow.booklet.close()
    figure_booklet, t_figures = timed(read_figure_booklet, figures)
    figure_booklet.close()
    with tempfile.TemporaryDirectory() as out:
        result, t_total = timed(
            extract,
            questions=[questions],
            figures=[figures],
            profession="Radiological Technologist",
            year=2025,
            section_names=["AM"],
            out=Path(out),
        )
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cores used: {cores}")
    print(f"{questions.name}: read {t_read:.2f} s, parse {t_parse:.2f} s ({len(found)} questions)")
    print(f"{figures.name}: {t_figures:.2f} s ({len(figure_booklet.figures)} figures, {figure_booklet.method})")
    print(
        f"extract() for the pair, images and report written: {t_total:.2f} s "
        f"({len(result.records)} records, {len(result.errors)} errors) — goal < {GOAL:.0f} s: "
        f"{'met' if t_total < GOAL else 'missed'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

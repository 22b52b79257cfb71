"""Hostile files: workbooks, config files and names taken from data that try to write outside
their place, exhaust memory, wedge a plan or run as a spreadsheet formula. Each test builds its
attack in a temporary folder (the workbook with openpyxl and zipfile, the YAML as text) and runs
the real command line in its own process, as a user would; each guards one line of docs/runs.md's
"What is guaranteed"."""

from __future__ import annotations

import csv
import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

MEMORY_LIMIT = 2 * 1024**3  # a command that reads a hostile file stays far below this


def medvqa(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real command line in its own process, its address space capped (an attack that gets
    through fails there instead of taking the machine's memory)."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = {**os.environ, "MEDVQA_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "medvqa.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, errors="backslashreplace", timeout=timeout, preexec_fn=cap)


def assert_clean_failure(result: subprocess.CompletedProcess, status: int = 1) -> str:
    """One short error line, no traceback; returns stderr."""
    assert result.returncode == status, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(result.stderr) < 2000, result.stderr[:2000]
    return result.stderr


# -- CSV outputs: a cell from data never runs as a formula -----------------------------------------


def test_csv_cells_that_start_like_a_formula_are_prefixed_and_numbers_are_not(tmp_path):
    names = ['=HYPERLINK("http://example.com","x")', "+1+1", "@SUM(A1)", "-2+3"]
    for n, name in enumerate(names):
        run = medvqa("run", "jmed48k", "--sample", "--model", f"constant:{n}", "--model-name", name,
                     "--conditions", "C+Q", "--run-dir", f"run{n}", cwd=tmp_path)
        assert run.returncode == 0, run.stderr[-2000:]
    out = medvqa("compare", *(f"run{n}" for n in range(len(names))), "--format", "csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["model"] for r in rows} == {"'" + name for name in names}
    overall = [r for r in rows if r["stratum"] == "overall"]
    # the sample's 17 C+Q items with a gold answer, as numbers: nothing else was prefixed
    assert [int(r["n"]) for r in overall] == [17] * len(names)
    assert all(0 <= float(r["value"]) <= 1 for r in overall)

"""Ctrl-C on a real `medvqa run` process against the test server: the run stops with status 130
and one line that says how many records are saved and the command that resumes it; that
command finishes the run without gaps or duplicates; a second Ctrl-C during the shutdown exits
at once with the same line. Progress on a stderr that is not a terminal comes as plain lines."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medvqa.core.run.store import read_records
from tests.core.inference.synthetic import write_exam
from tests.openai_server import ServerProcess

SAVED = re.compile(r"^(\d+) records saved; resume with: (.+)$")
PROGRESS = re.compile(r"^(\d+)/(\d+) \((\d+)%\)  [\d.]+ req/s  errors (\d+)  ETA (\d+:\d\d:\d\d|unknown)$")
# The same CLI, with closing the run directory made slow (a slow disk), so that a second
# Ctrl-C arrives while the first one is still shutting the run down.
SLOW_CLOSE = """
import sys, time
from medvqa.core.run import store
original = store.RunStore.close
def slow_close(self):
    time.sleep(60)
    original(self)
store.RunStore.close = slow_close
from medvqa.cli.main import cli
cli(sys.argv[1:])
"""


def run_args(data: Path, url: str, *extra: str) -> list[str]:
    """`medvqa run` on a synthetic exam against the server at `url`, four requests at a time."""
    return [
        "run",
        "jmed48k",
        "--data",
        str(data),
        "--model",
        "hosted_vllm/test",
        "--conditions",
        "C+Q",
        "--concurrency",
        "4",
        "--api-base",
        url,
        *extra,
    ]


def start(args: list[str], cwd: Path, script: str | None = None, own_group: bool = False) -> subprocess.Popen:
    head = [sys.executable, "-c", script] if script else [sys.executable, "-m", "medvqa.cli"]
    return subprocess.Popen(
        [*head, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=own_group
    )


def wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} never reached {n} lines")


@pytest.mark.slow
def test_ctrl_c_says_what_is_saved_and_the_command_resumes_the_run(tmp_path):
    data = write_exam(tmp_path / "data", 600)
    with ServerProcess("--latency", "0.04") as server:
        args = run_args(data, server.url)
        proc = start(args, cwd=tmp_path)  # no --run-dir: the default one, under tmp_path/runs
        [run_dir] = wait_for_run_dir(tmp_path / "runs", proc)
        wait_for_lines(run_dir / "records.jsonl", 150, proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err[-2000:]
        last = err.strip().splitlines()[-1]
        saved, command = SAVED.match(last).groups()
        records = read_records(run_dir)
        assert int(saved) == len(records) and 150 <= len(records) < 600
        assert out == ""
        assert shlex.split(command) == ["medvqa", *args, "--run-dir", str(run_dir.relative_to(tmp_path))]
        # the progress lines of a stderr that is not a terminal
        progress = [PROGRESS.match(line) for line in err.strip().splitlines()[:-1]]
        assert progress and all(progress)
        done = [int(m.group(1)) for m in progress]
        assert done == sorted(done) and {int(m.group(2)) for m in progress} == {600}
        # the printed command, run as given, finishes the run
        resumed = start(shlex.split(command)[1:], cwd=tmp_path)
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err[-2000:]
        counts = server.counts()
    final = read_records(run_dir)
    assert len(final) == len({(r["item_id"], r["condition"]) for r in final}) == 600
    assert all(r["status"] == "answered" for r in final)
    assert sum(n > 1 for n in counts.values()) <= 1 + 4  # the preflight, and what was in flight at Ctrl-C


def wait_for_run_dir(runs: Path, proc: subprocess.Popen, timeout: float = 60) -> list[Path]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        found = list(runs.glob("*/records.jsonl")) if runs.exists() else []
        if found:
            return [found[0].parent]
        time.sleep(0.01)
    raise AssertionError(f"no run directory appeared under {runs}")


@pytest.mark.slow
def test_a_second_ctrl_c_exits_at_once_with_the_same_line(tmp_path):
    data = write_exam(tmp_path / "data", 600)
    run_dir = tmp_path / "run"
    with ServerProcess("--latency", "0.04") as server:
        args = run_args(data, server.url, "--run-dir", str(run_dir))
        proc = start(args, cwd=tmp_path, script=SLOW_CLOSE)
        wait_for_lines(run_dir / "records.jsonl", 100, proc)
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None  # still shutting down (closing the run directory takes a minute)
        second = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - second
    assert proc.returncode == 130 and elapsed < 5
    saved, command = SAVED.match(err.strip().splitlines()[-1]).groups()
    assert shlex.split(command) == ["medvqa", *args]
    assert int(saved) == len(read_records(run_dir)) >= 100  # every appended line reached the file


@pytest.mark.slow
def test_ctrl_c_at_a_terminal_reaches_the_worker_processes_too_and_only_the_line_is_printed(tmp_path):
    data = write_exam(tmp_path / "data", 400)
    run_dir = tmp_path / "run"
    # four requests at a time at 0.25 s each: 25 s for the 400, so the run is still going when Ctrl-C
    # comes however loaded the machine (a run already finished would print its summary instead)
    with ServerProcess("--latency", "0.25") as server:
        proc = start(
            run_args(data, server.url, "--workers", "2", "--run-dir", str(run_dir)), cwd=tmp_path, own_group=True
        )
        wait_for_lines(run_dir / "records.jsonl", 60, proc)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole process group
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    last = SAVED.match(err.strip().splitlines()[-1])
    assert last, err[-2000:]
    assert int(last.group(1)) == len(read_records(run_dir)) < 400


# `medvqa` as installed (`medvqa.cli:main`), with a start-up phase made slow: loading the data, or
# importing the commands themselves. It says "starting" on stderr when Ctrl-C may come.
SLOW_START = """
import sys, time
phase = sys.argv.pop(1)
if phase == "import":
    class SlowImport:
        def find_spec(self, name, path=None, target=None):
            if name == "medvqa.cli.main":
                sys.stderr.write("starting\\n"); sys.stderr.flush(); time.sleep(60)
            return None
    sys.meta_path.insert(0, SlowImport())
else:
    from medvqa.core.run import options
    def slow_load(*args, **kwargs):
        sys.stderr.write("starting\\n"); sys.stderr.flush(); time.sleep(60)
    options.load_items = slow_load
from medvqa.cli import main
sys.argv = ["medvqa", *sys.argv[1:]]
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["import", "load"])
def test_ctrl_c_during_start_up_is_status_130_with_one_line(tmp_path, phase):
    """Ctrl-C while the commands import or the data loads: status 130 and one line, as Ctrl-C
    during the run, not click's "Aborted!" with status 1 or a traceback; nothing is written."""
    run_dir = tmp_path / "run"
    proc = start(
        [phase, "run", "jmed48k", "--sample", "--model", "random", "--run-dir", str(run_dir)],
        cwd=tmp_path,
        script=SLOW_START,
    )
    assert proc.stderr.readline() == "starting\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    assert err.strip() == "interrupted" and out == ""
    assert not run_dir.exists()

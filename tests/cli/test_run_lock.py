"""One writer per run directory: a second `medvqa run` on it fails at once, naming the first."""

import json
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.run.store import read_records
from tests.cli.test_run import SLOW_CLI


@pytest.mark.slow  # real processes or servers: seconds each
def test_a_second_run_on_the_same_directory_fails_at_once_and_nothing_is_doubled(jmed_sample, tmp_path):
    run_dir = tmp_path / "run"
    args = [
        "run",
        "jmed48k",
        "--data",
        str(jmed_sample),
        "--model",
        "random",
        "--conditions",
        "C+Q",
        "--run-dir",
        str(run_dir),
        "--json",
    ]
    first = subprocess.Popen(
        [sys.executable, "-c", SLOW_CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    records = run_dir / "records.jsonl"
    deadline = time.monotonic() + 60
    while not (records.exists() and records.read_bytes().count(b"\n") >= 50) and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    second = subprocess.run([sys.executable, "-c", SLOW_CLI, *args], capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    still_running = first.poll() is None
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert second.returncode == 1 and "Traceback" not in second.stderr
    assert second.stderr.strip() == (
        f"Error: {run_dir}: in use by process {first.pid} (lock run.lock): "
        "wait for it to finish, or choose another --run-dir"
    )
    assert still_running and elapsed < 10  # it failed at once, while the first was still writing
    lines = records.read_text().splitlines()
    assert len(lines) == len(read_records(run_dir)) == json.loads(out)["n_records"] == 800
    report = json.loads(CliRunner().invoke(cli, ["report", str(run_dir), "--by", "", "--json"]).output)
    assert [row["n"] for row in report] == [800]

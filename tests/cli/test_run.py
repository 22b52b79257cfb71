"""`medvqa run` end to end on the real JMed48k sample: counts, re-scoring, resume after SIGKILL."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.run.store import read_records

COMMAND = ["run", "jmed48k", "--model", "random", "--conditions", "C+Q,C+Q+I", "--json"]


def run_cli(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_sample_run_scores_every_item_and_rescoring_reproduces_records(jmed_sample, tmp_path):
    out = json.loads(run_cli(*COMMAND, "--data", str(jmed_sample), "--run-dir", str(tmp_path / "r")))
    assert out["n_items"] == 800 and out["n_excluded"] == 0
    assert out["n_records"] == 817  # every item under C+Q, the 17 with their images also under C+Q+I
    records = read_records(tmp_path / "r")
    by_cond = {c: sum(r["condition"] == c for r in records) for c in ("C+Q", "C+Q+I")}
    assert by_cond == {"C+Q": 800, "C+Q+I": 17}
    assert len({(r["item_id"], r["condition"]) for r in records}) == 817
    acc = sum(r["correct"] for r in records if r["condition"] == "C+Q") / 800
    assert out["accuracy"]["C+Q"] == acc and 0.1 < acc < 0.3  # random guessing on 5 options
    before = (tmp_path / "r" / "records.jsonl").read_bytes()
    rescored = json.loads(run_cli("score", str(tmp_path / "r"), "--json"))
    assert rescored == {
        "run_dir": str(tmp_path / "r"),
        "n_records": 817,
        "changed": 0,
        "warnings": [],
    }  # random answers are all read: no parse-failure warning
    assert (tmp_path / "r" / "records.jsonl").read_bytes() == before


def test_rerun_of_a_finished_run_requests_nothing(jmed_sample, tmp_path):
    args = [*COMMAND[:-1], "--data", str(jmed_sample), "--run-dir", str(tmp_path / "r"), "--limit", "50"]
    run_cli(*args, "--json")
    first = (tmp_path / "r" / "records.jsonl").read_bytes()
    out = CliRunner().invoke(cli, args)  # human output names the requests made
    assert "requested 0" in out.output
    assert (tmp_path / "r" / "records.jsonl").read_bytes() == first


SLOW_CLI = """
import sys, time
from medvqa.core.inference import baselines
original = baselines.RandomBackend.generate
def slow(self, requests):
    for pair in original(self, requests):
        time.sleep(0.004)
        yield pair
baselines.RandomBackend.generate = slow
from medvqa.cli.main import cli
cli(sys.argv[1:])
"""


@pytest.mark.slow
def test_sigkill_half_way_then_rerun_completes_without_duplicates_or_gaps(jmed_sample, tmp_path):
    args = [*COMMAND, "--data", str(jmed_sample)]
    reference = tmp_path / "reference"
    run_cli(*args, "--run-dir", str(reference))
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_CLI, *args, "--run-dir", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    records = killed / "records.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if records.exists() and records.stat().st_size > 0 and records.read_bytes().count(b"\n") >= 300:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = read_records(killed)
    assert 300 <= len(partial) < 817, "the run must be killed half-way"
    run_cli(*args, "--run-dir", str(killed))
    got = read_records(killed)
    keys = [(r["item_id"], r["condition"]) for r in got]
    assert len(keys) == len(set(keys)) == 817
    want = read_records(reference)

    def strip(rs):
        return sorted(json.dumps({k: v for k, v in r.items() if k != "latency_s"}, sort_keys=True) for r in rs)

    assert strip(got) == strip(want)

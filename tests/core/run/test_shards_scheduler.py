"""The scheduler recipe of docs/scaling.md, run for real: three `medvqa run --shard auto`
processes, each given the variables a Slurm array task has, against a local OpenAI-compatible
server; one is killed half-way and resumed as a Kubernetes indexed Job's task of the same index
would run it; `medvqa merge` joins them, and the merged records are those of one unsharded run
of the same command on the same server: the same pairs, responses, request keys and scores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medvqa.core.run.shards import shard_of
from medvqa.core.run.store import read_manifest, read_records
from tests.conftest import REPO, shared_data
from tests.openai_server import ServerProcess

pytestmark = pytest.mark.slow  # five real processes and a server: 60 to 100 s on 2 busy cores

COMPARED = ("key", "response", "error", "predicted", "status", "correct")


def medvqa(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "medvqa.cli", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen, timeout: float = 300) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return out


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def by_pair(run_dir: Path) -> dict[tuple, dict]:
    return {(r["item_id"], r["condition"]): {k: r.get(k) for k in COMPARED} for r in read_records(run_dir)}


def slurm(task: int) -> dict[str, str]:
    """What Slurm sets in task `task` of `sbatch --array=0-2`."""
    return {
        "SLURM_ARRAY_JOB_ID": "4242",
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_COUNT": "3",
        "SLURM_ARRAY_TASK_MIN": "0",
        "SLURM_ARRAY_TASK_MAX": "2",
        "SLURM_ARRAY_TASK_STEP": "1",
    }


def test_three_slurm_tasks_one_killed_and_resumed_merge_into_the_unsharded_run(tmp_path):
    data = shared_data("jmed48k-sample")  # 800 items, 17 with their images: 817 pairs under C+Q, C+Q+I
    killed = 1
    with ServerProcess("--latency", "0.03") as server:
        run = ["run", "jmed48k", "--data", str(data), "--split", "full", "--model", "hosted_vllm/test"]
        run += ["--api-base", server.url, "--conditions", "C+Q,C+Q+I", "--no-cache", "--json"]
        whole = medvqa(*run, "--concurrency", "16", "--run-dir", str(tmp_path / "whole"))
        # the array's script runs the same line in every task: `--shard auto --run-dir runs/exam-$SLURM_ARRAY_TASK_ID`
        tasks = {
            i: medvqa(
                *run, "--concurrency", "4", "--shard", "auto", "--run-dir", str(tmp_path / f"shard{i}"), env=slurm(i)
            )
            for i in range(3)
        }
        records = tmp_path / f"shard{killed}" / "records.jsonl"
        while lines(records) < 60 and tasks[killed].poll() is None:
            time.sleep(0.01)
        tasks[killed].send_signal(signal.SIGKILL)
        tasks[killed].communicate()
        partial = len(read_records(tmp_path / f"shard{killed}"))
        assert 60 <= partial < 277, "the shard must be killed half-way"
        # resumed as task 1 of a Kubernetes indexed Job of 3 completions: the same shard, so the same run
        k8s = {"JOB_COMPLETION_INDEX": str(killed), "MEDVQA_SHARD_COUNT": "3"}
        resumed = json.loads(
            finish(medvqa(*run, "--shard", "auto", "--run-dir", str(tmp_path / f"shard{killed}"), env=k8s))
        )
        assert resumed["n_records"] == len(read_records(tmp_path / f"shard{killed}"))
        for i, proc in tasks.items():
            if i != killed:
                finish(proc)
        finish(whole)

    shards = [tmp_path / f"shard{i}" for i in range(3)]
    for i, s in enumerate(shards):
        assert read_manifest(s)["shard"] == {"index": i, "count": 3, "pairs": len(read_records(s))}
        assert {shard_of(r["item_id"], 3) for r in read_records(s)} == {i}
    assert read_manifest(shards[killed]).get("resumed") == 1

    merge = medvqa("merge", *(str(s) for s in shards), "--into", str(tmp_path / "merged"), "--json")
    assert json.loads(finish(merge))["n_records"] == 817
    merged, one = by_pair(tmp_path / "merged"), by_pair(tmp_path / "whole")
    assert len(merged) == 817 and merged.keys() == one.keys()  # the same key set
    assert merged == one  # the same responses, request keys and scores
    assert {r["status"] for r in merged.values()} == {"answered"}

    # two of three: the missing one named, nothing written
    two = medvqa("merge", str(shards[0]), str(shards[2]), "--into", str(tmp_path / "two"))
    _, err = two.communicate(timeout=120)
    assert two.returncode == 1 and "shard 1/3 missing" in err and not (tmp_path / "two").exists()

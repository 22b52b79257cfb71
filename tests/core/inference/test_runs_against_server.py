"""Whole runs against the OpenAI-compatible test server: the CLI by hand, resume after SIGKILL,
injected faults, and API keys kept out of every file."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from medvqa.core import plugins
from medvqa.core.conditions import parse_conditions, plan
from medvqa.core.inference.images import to_openai
from medvqa.core.inference.preflight import PROBE_MESSAGES
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.store import read_manifest, read_records
from tests.conftest import REPO, shared_data
from tests.core.inference.synthetic import write_exam
from tests.openai_server import Faults, OpenAIServer, ServerProcess, content_key

# Not the request key: it names the server, and compared runs may use different servers.
COMPARED = ("response", "error", "predicted", "status", "correct")


def medvqa(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "medvqa.cli", "run", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen, timeout: float = 180) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return out


def server_keys(data: Path, conditions: str) -> dict[tuple[str, str], str]:
    """(item_id, condition) -> the server's content key of that request."""
    bench = plugins.get_benchmark("jmed48k")
    items = bench.load(data, None)
    return {
        (item.id, cond.value): content_key(to_openai(bench.render(item, cond)))
        for item, cond in plan(items, parse_conditions(conditions))
    }


def by_pair(records: list[dict]) -> dict[tuple[str, str], dict]:
    return {(r["item_id"], r["condition"]): {k: r[k] for k in COMPARED} for r in records}


@pytest.mark.slow
def test_the_cli_runs_jmed48k_against_a_server_started_by_hand(tmp_path):
    data = shared_data("jmed48k-sample")
    with ServerProcess("--latency", "0.005") as server:
        out = finish(
            medvqa(
                "jmed48k",
                "--data",
                str(data),
                "--model",
                "hosted_vllm/test",
                "--api-base",
                server.url,
                "--conditions",
                "C+Q,C+Q+I",
                "--run-dir",
                str(tmp_path / "run"),
                "--concurrency",
                "32",
                "--json",
            )
        )
        stats = server.stats()
    summary = json.loads(out)
    assert (summary["n_items"], summary["n_records"]) == (800, 817)
    records = read_records(tmp_path / "run")
    assert Counter(r["condition"] for r in records) == {"C+Q": 800, "C+Q+I": 17}
    assert Counter(r["status"] for r in records) == {"answered": 817}
    assert stats["requests"] == 817 + 1  # and the preflight request
    manifest = read_manifest(tmp_path / "run")
    assert manifest["params"] == {"temperature": 0, "seed": 0, "response_format": {"type": "json_object"}}
    assert manifest["backend"]["api_base"] == server.url and manifest["backend"]["concurrency"] == 32
    # records and the cache hold image hashes and paths, never the image bytes
    text = (tmp_path / "run" / "records.jsonl").read_text() + (tmp_path / "run" / "manifest.json").read_text()
    assert "base64" not in text and "image_url" not in text


@pytest.mark.slow
def test_a_run_killed_five_times_ends_like_an_uninterrupted_one(tmp_path):
    data = write_exam(tmp_path / "data", 1000)  # text only: C and C+Q give 2,000 requests
    conditions = "C,C+Q"
    keys = server_keys(data, conditions)
    assert len(keys) == 2000
    args = [
        "jmed48k",
        "--data",
        str(data),
        "--model",
        "hosted_vllm/test",
        "--conditions",
        conditions,
        "--concurrency",
        "64",
        "--json",
    ]
    rng = random.Random(20260)
    snapshots = []
    with ServerProcess("--latency", "0.002") as other, ServerProcess("--latency", "0.002") as server:
        whole = medvqa(
            *args, "--api-base", other.url, "--run-dir", str(tmp_path / "whole"), "--no-cache", "--workers", "2"
        )  # and its requests spread over two worker processes
        run_dir = tmp_path / "killed"
        for _ in range(5):
            before = len(read_records(run_dir)) if run_dir.exists() else 0
            target = before + rng.randint(1, (2000 - before) // 3)
            proc = medvqa(*args, "--api-base", server.url, "--run-dir", str(run_dir))
            while _lines(run_dir / "records.jsonl") < target and proc.poll() is None:
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            completed = {keys[(r["item_id"], r["condition"])] for r in read_records(run_dir)}
            assert len(completed) > before
            snapshots.append((completed, server.counts()))
        finish(medvqa(*args, "--api-base", server.url, "--run-dir", str(run_dir)))
        final_counts = server.counts()
        assert final_counts.pop(content_key(PROBE_MESSAGES)) == 6  # one preflight request per process
        finish(whole)  # the uninterrupted run, on its own server, ran alongside

    final = read_records(run_dir)
    assert len(final) == 2000  # none lost, none duplicated
    assert len({(r["item_id"], r["condition"]) for r in final}) == 2000
    assert by_pair(final) == by_pair(read_records(tmp_path / "whole"))
    assert set(final_counts) == set(keys.values())
    for completed, counts in snapshots:  # a request with a record was never sent again
        assert all(final_counts[k] == counts[k] for k in completed)
    resent = sum(n - 1 for n in final_counts.values())
    assert resent <= 5 * 64  # only requests in flight at a kill are sent twice


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow  # real processes or servers: seconds each
def test_with_twenty_percent_faults_of_every_kind_every_record_is_answered_or_error(tmp_path):
    data = shared_data("jmed48k-sample")
    faults = Faults.every_kind(0.2, retry_after_s=0.02, hang_s=3)
    with OpenAIServer(faults=faults, seed=3) as server:
        result = run(
            RunOptions(
                benchmark="jmed48k",
                model="hosted_vllm/test",
                data=str(data),
                limit=300,
                conditions="C+Q,C+Q+I",
                run_dir=str(tmp_path / "run"),
                backend_options={"api_base": server.url, "concurrency": 64, "timeout": 1.0, "retry_wait": 0.05},
            ),
            progress=False,
        )
        outcomes = dict(server.outcomes)
    assert set(outcomes) == {"answered", "rate_limit", "server_error", "timeout", "truncated", "non_json"}
    records = read_records(tmp_path / "run")
    n_image = sum(1 for r in records if r["condition"] == "C+Q+I")
    assert sum(outcomes.values()) - outcomes["answered"] > 0.15 * (300 + n_image)
    assert Counter(r["condition"] for r in records) == {"C+Q": 300, "C+Q+I": n_image} and n_image > 0  # denominators
    assert {r["status"] for r in records} <= {"answered", "error"}
    assert all(r["error"] for r in records if r["status"] == "error")
    assert set(result.accuracy()) == {"C+Q", "C+Q+I"}


def test_no_file_of_a_run_or_the_cache_contains_an_api_key(tmp_path, monkeypatch):
    secret = "sk-medvqa-secret-9f8e7d6c5b4a39281706"
    monkeypatch.setenv("HOSTED_VLLM_API_KEY", secret)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    cache = Path(os.environ["MEDVQA_CACHE_DIR"])
    with OpenAIServer(faults=Faults(auth_error=0.3), seed=5) as server:
        run(
            RunOptions(
                benchmark="jmed48k",
                model="openai/test",
                sample=True,
                conditions="C+Q,C+Q+I",
                run_dir=str(tmp_path / "run"),
                backend_options={"api_base": server.url},
            ),
            progress=False,
        )
        assert server.outcomes["auth_error"] > 0 and server.outcomes["answered"] > 0
    records = read_records(tmp_path / "run")
    assert any("Incorrect API key provided: ***" in (r["error"] or "") for r in records)
    files = [p for p in [*(tmp_path / "run").rglob("*"), *cache.rglob("*")] if p.is_file()]
    assert any(p.suffix == ".sqlite3" for p in files)
    for path in files:
        assert secret.encode() not in path.read_bytes(), path

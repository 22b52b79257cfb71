"""One poisoned answer never stops a run: whatever the reader raises on one answer, that record is
a `parse_failure` keeping the reason in `scoring_error`, the run goes on, and the answer is not
cached as good. Over real HTTP against the test server."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from medvqa.core.run import recording
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.rescore import rescore
from medvqa.core.run.store import read_records
from tests.conftest import REPO
from tests.openai_server import Faults, OpenAIServer, ServerProcess

POISON = '{"answer": ' + "[" * 1000


def cached_keys(cache_dir) -> set[str]:
    with sqlite3.connect(cache_dir / "responses.sqlite3") as db:
        return {key for (key,) in db.execute("SELECT key FROM responses")}


@pytest.mark.slow
def test_answers_nested_a_thousand_deep_never_stop_a_run(jmed_sample, tmp_path):
    env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache")}
    with ServerProcess("--deep-nesting", "0.25") as server:

        def medvqa(run_dir):
            return subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "medvqa.cli",
                    "run",
                    "jmed48k",
                    "--data",
                    str(jmed_sample),
                    "--model",
                    "hosted_vllm/test",
                    "--api-base",
                    server.url,
                    "--conditions",
                    "C+Q",
                    "--limit",
                    "80",
                    "--run-dir",
                    str(run_dir),
                    "--json",
                ],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )

        first = medvqa(tmp_path / "first")
        assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr[-3000:]
        records = read_records(tmp_path / "first")
        poisoned = [r for r in records if r["response"] == POISON]
        assert len(records) == 80 and 5 < len(poisoned) < 40
        assert all(r["status"] == "parse_failure" and r["correct"] is False for r in poisoned)
        assert all(r["status"] == "answered" for r in records if r["response"] != POISON)
        cached = cached_keys(tmp_path / "cache")
        for r in records:  # an answer the reader could not read is never cached as good
            assert (r["key"] in cached) == ("scoring_error" not in r), r
        second = medvqa(tmp_path / "second")  # same cache, new run directory
        assert second.returncode == 0, second.stderr[-3000:]
        assert len(read_records(tmp_path / "second")) == 80


class ReaderBug(Exception):
    pass


@pytest.fixture
def broken_reader(monkeypatch):
    """A reader that raises on the items whose ids are in the returned set."""
    broken: set[str] = set()
    scored = recording.scored

    def reader(benchmark, item, *args, **options):
        if item.id in broken:
            raise (RecursionError if item.id.startswith("Nurse") else ReaderBug)(f"cannot read the answer to {item.id}")
        return scored(benchmark, item, *args, **options)

    monkeypatch.setattr(recording, "scored", reader)
    return broken


def test_any_exception_of_the_reader_is_a_parse_failure_with_its_reason(broken_reader, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    broken_reader.update({"Physician_2024_A_Q1", "Nurse_2023_AM_Q2", "Physician_2024_B_Q3"})
    with OpenAIServer(faults=Faults()) as server:
        options = RunOptions(
            benchmark="jmed48k",
            model="hosted_vllm/test",
            sample=True,
            conditions="C+Q",
            run_dir=str(tmp_path / "run"),
            backend_options={"api_base": [server.url]},
        )
        result = run(options, progress=False)
        assert len(result.records) == 17
        records = {r["item_id"]: r for r in read_records(tmp_path / "run")}
        for item_id in broken_reader:
            r = records[item_id]
            assert (r["status"], r["correct"], r["predicted"]) == ("parse_failure", False, None)
            kind = "RecursionError" if item_id.startswith("Nurse") else "ReaderBug"
            assert r["scoring_error"] == f"{kind}: cannot read the answer to {item_id}"
            assert r["profession"] in ("Physician", "Nurse")  # the strata are kept
        others = [r for r in records.values() if r["item_id"] not in broken_reader]
        assert len(others) == 14 and all(r["status"] == "answered" and "scoring_error" not in r for r in others)
        cached = cached_keys(tmp_path / "cache")
        assert cached == {r["key"] for r in others}
        assert sum(server.counts.values()) == 17 + 1  # and the preflight request
        # re-scoring while the reader still fails keeps the reasons; once it reads, they are gone
        assert rescore(tmp_path / "run") == (17, 0)
        broken_reader.clear()
        assert rescore(tmp_path / "run") == (17, 3)
        rescored = {r["item_id"]: r for r in read_records(tmp_path / "run")}
        assert all("scoring_error" not in r and r["status"] == "answered" for r in rescored.values())

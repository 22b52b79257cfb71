"""Broken files never give tracebacks: a corrupt response cache, a read-only run directory and a
full disk each end in one line naming the file and what to do, with nothing half-written. Every
case runs the real CLI in its own process."""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from medvqa.core.inference.base import Response
from medvqa.core.inference.cache import ResponseCache
from medvqa.core.run.store import read_records
from tests.conftest import REPO
from tests.openai_server import ServerProcess


def medvqa(*args: str, cache: Path, file_limit: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEDVQA_CACHE_DIR": str(cache)}
    if file_limit is not None:  # the largest file the command may write: a full disk, for it

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run(
        [sys.executable, "-m", "medvqa.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit if file_limit is not None else None,
    )


def one_clean_line(result: subprocess.CompletedProcess) -> str:
    """The single line a failed command printed (it exits 1 without a traceback)."""
    assert result.returncode == 1, (result.stdout[-2000:], result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr[-3000:]
    return lines[0]


def whole_lines(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n")
    return [json.loads(line) for line in data.splitlines()]


SAMPLE_RUN = ("run", "jmed48k", "--sample", "--model", "random", "--json")  # --json: no progress lines


@pytest.mark.slow  # real processes or servers: seconds each
def test_a_corrupt_cache_database_is_one_line_naming_it(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "responses.sqlite3").write_bytes(b"this is no database; " * 500)
    line = one_clean_line(medvqa(*SAMPLE_RUN, "--run-dir", str(tmp_path / "run"), cache=cache))
    assert line == (
        f"Error: {cache / 'responses.sqlite3'}: response cache: file is not a database: it is not a "
        "SQLite database: move it aside (a new cache is started) or run with --no-cache"
    )
    assert not (tmp_path / "run").exists()
    assert medvqa(*SAMPLE_RUN, "--run-dir", str(tmp_path / "run"), "--no-cache", cache=cache).returncode == 0


@pytest.mark.slow
def test_a_cache_corrupt_inside_fails_cleanly_and_the_run_resumes_without_it(tmp_path):
    cache = tmp_path / "cache"
    filler = ResponseCache(cache / "responses.sqlite3")
    for i in range(3000):
        filler.put(f"key-{i}", "m", Response(text="x" * 200))
    filler.close()
    data = bytearray((cache / "responses.sqlite3").read_bytes())
    for page in range(3 * 4096, len(data), 4096):  # the header and schema are fine, the table's pages are not
        data[page : page + 100] = b"\xff" * 100
    (cache / "responses.sqlite3").write_bytes(bytes(data))
    with ServerProcess() as server:
        args = (
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "hosted_vllm/test",
            "--api-base",
            server.url,
            "--run-dir",
            str(tmp_path / "run"),
            "--json",
        )
        line = one_clean_line(medvqa(*args, cache=cache))
        assert line.startswith(
            f"Error: {cache / 'responses.sqlite3'}: response cache: database disk image is "
            "malformed: it is corrupt: move it aside"
        )
        # the cache failed before any answer: nothing was written, not even the run directory
        assert not (tmp_path / "run").exists()
        assert medvqa(*args, "--no-cache", cache=cache).returncode == 0
    assert len(read_records(tmp_path / "run")) == 22


@pytest.mark.slow  # real processes or servers: seconds each
def test_a_full_disk_stops_the_run_with_one_line_and_only_whole_records(jmed_sample, tmp_path):
    run_dir = tmp_path / "run"
    args = (
        "run",
        "jmed48k",
        "--data",
        str(jmed_sample),
        "--model",
        "random",
        "--run-dir",
        str(run_dir),
        "--no-cache",
        "--json",
    )
    line = one_clean_line(medvqa(*args, cache=tmp_path / "cache", file_limit=100_000))
    assert line == (
        f"Error: {run_dir / 'records.jsonl'}: cannot write (File too large): free disk space (or raise "
        "the file-size limit) and run the same command again to resume"
    )
    saved = whole_lines(run_dir / "records.jsonl")
    assert 100 < len(saved) < 817 and (run_dir / "records.jsonl").stat().st_size <= 100_000
    assert not list(run_dir.glob("*.tmp"))
    assert medvqa(*args, cache=tmp_path / "cache").returncode == 0  # space freed: it resumes
    records = whole_lines(run_dir / "records.jsonl")
    assert len(records) == len({(r["item_id"], r["condition"]) for r in records}) == 817
    assert records[: len(saved)] == saved


def test_a_full_disk_under_the_cache_is_one_line_naming_it(tmp_path):
    cache = tmp_path / "cache"
    line = one_clean_line(medvqa(*SAMPLE_RUN, "--run-dir", str(tmp_path / "run"), cache=cache, file_limit=20_000))
    assert line.startswith(f"Error: {cache / 'responses.sqlite3'}: response cache: ")
    assert line.endswith("free disk space, or run with --no-cache")
    assert not (tmp_path / "run").exists()


def read_only_command(folder: Path) -> list[str] | None:
    """The prefix that runs a command with `folder` read-only: under root (whom permissions do
    not bind) a private read-only bind mount, elsewhere the folder's write bits are cleared.
    None when neither is possible here."""
    if os.geteuid() != 0:
        for p in [folder, *folder.rglob("*")]:
            p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        return []
    prefix = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        'mount --bind -o ro "$0" "$0" && exec "$@"',
        str(folder),
    ]
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        return None
    return prefix


@pytest.mark.slow  # real processes or servers: seconds each
def test_a_read_only_run_directory_is_reported_audited_and_resumed_without_writes(tmp_path):
    folder = tmp_path / "runs"
    run_dir = folder / "run"
    assert medvqa(*SAMPLE_RUN, "--run-dir", str(run_dir), "--no-cache", cache=tmp_path / "cache").returncode == 0
    lines = (run_dir / "records.jsonl").read_text().splitlines(keepends=True)
    unfinished = folder / "unfinished"
    shutil.copytree(run_dir, unfinished)
    (unfinished / "records.jsonl").write_text("".join(lines[:-3]))  # as if killed three records early
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}
    prefix = read_only_command(folder)
    if prefix is None:
        pytest.skip("cannot make a folder read-only here: running as root without `unshare` and mount rights")
    env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache"), "MPLCONFIGDIR": str(tmp_path / "mpl")}

    def medvqa_read_only(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "medvqa.cli", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    try:
        for args in (
            ("report", str(run_dir)),
            ("report", str(run_dir), "--pass"),
            ("audit", str(run_dir)),
            ("score", str(run_dir)),
            (*SAMPLE_RUN, "--run-dir", str(run_dir), "--no-cache"),
        ):
            result = medvqa_read_only(*args)
            assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stderr[-3000:])
        assert json.loads(result.stdout)["n_records"] == 22
        line = one_clean_line(medvqa_read_only(*SAMPLE_RUN, "--run-dir", str(unfinished), "--no-cache"))
        assert line.startswith(f"Error: {unfinished / 'manifest.json'}: cannot write (")
        assert line.endswith("): make it writable, or choose another --run-dir")
        assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()} == before
    finally:
        for p in [folder, *folder.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


@pytest.mark.slow  # real processes or servers: seconds each
def test_a_read_only_partial_run_fails_before_its_first_request(tmp_path):
    """A run killed three records early, in a directory that became read-only: re-running it
    against a model fails with one line naming the file before anything is asked (no preflight,
    no request reaches the server), rather than after answers were received and thrown away."""
    folder = tmp_path / "runs"
    run_dir = folder / "run"
    with ServerProcess() as server:
        args = (
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "hosted_vllm/test",
            "--api-base",
            server.url,
            "--json",
            "--no-cache",
            "--run-dir",
            str(run_dir),
        )
        assert medvqa(*args, cache=tmp_path / "cache").returncode == 0
        lines = (run_dir / "records.jsonl").read_text().splitlines(keepends=True)
        (run_dir / "records.jsonl").write_text("".join(lines[:-3]))
        before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
        asked = server.stats()["requests"]
        prefix = read_only_command(folder)
        if prefix is None:
            pytest.skip("cannot make a folder read-only here: running as root without `unshare` and mount rights")
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache")}
        try:
            result = subprocess.run(
                [*prefix, sys.executable, "-m", "medvqa.cli", *args],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
        finally:
            for p in [folder, *folder.rglob("*")]:
                p.chmod(p.stat().st_mode | stat.S_IWUSR)
        assert server.stats()["requests"] == asked  # not even the preflight
    line = one_clean_line(result)
    assert line.startswith(f"Error: {run_dir / 'manifest.json'}: cannot write (")
    assert line.endswith("): make it writable, or choose another --run-dir")
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_a_read_only_run_directory_without_its_lock_file_is_scored_and_re_run(tmp_path):
    """A finished run copied without `run.lock` onto a read-only mount: `score` and the same
    `run` have no lock to take and nothing to write, so both finish (status 0) and change
    nothing, instead of trying for ever to create the lock file."""
    folder = tmp_path / "runs"
    run_dir = folder / "run"
    assert medvqa(*SAMPLE_RUN, "--run-dir", str(run_dir), "--no-cache", cache=tmp_path / "cache").returncode == 0
    (run_dir / "run.lock").unlink()
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    prefix = read_only_command(folder)
    if prefix is None:
        pytest.skip("cannot make a folder read-only here: running as root without `unshare` and mount rights")
    env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache")}
    try:
        for args in (("score", str(run_dir), "--json"), (*SAMPLE_RUN, "--run-dir", str(run_dir), "--no-cache")):
            result = subprocess.run(
                [*prefix, sys.executable, "-m", "medvqa.cli", *args],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert result.returncode == 0 and result.stderr == "", (args, result.stderr[-2000:])
    finally:
        for p in [folder, *folder.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    assert json.loads(result.stdout)["n_records"] == 22
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before

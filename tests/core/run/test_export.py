"""`medvqa export`'s predictions file is written atomically: a disk that fills mid-write leaves
no partial file, and a predictions file written before stays whole."""

from __future__ import annotations

import contextlib
import resource
import signal

import pytest

import medvqa
from medvqa import DataError
from medvqa.core.run.export import export_predictions


@contextlib.contextmanager
def disk_full_after(n_bytes: int):
    """No file of this process may grow past `n_bytes` (EFBIG, as a full disk gives ENOSPC)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (n_bytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)


def test_a_write_that_fails_midway_leaves_no_partial_file_and_the_old_one_whole(tmp_path):
    medvqa.run("jmed48k", "random", sample=True, run_dir=str(tmp_path / "run"), cache=False, progress=False)
    out = tmp_path / "out" / "predictions.jsonl"
    whole = export_predictions(tmp_path / "run", out)
    before = out.read_bytes()
    assert len(before) > 4096 and whole["n_predictions"] == len(before.splitlines())
    # a new file, then one over the earlier export: each write fails after its first 2,000 bytes
    for target, expected in ((tmp_path / "out" / "new.jsonl", None), (out, before)):
        with disk_full_after(2000), pytest.raises(DataError, match=rf"{target.name}: cannot write"):
            export_predictions(tmp_path / "run", target)
        assert (target.read_bytes() if target.exists() else None) == expected
    assert sorted(p.name for p in out.parent.iterdir()) == ["predictions.jsonl"]  # no temporary file left

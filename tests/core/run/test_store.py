import errno
import json
import os

import pytest

from medvqa.core.items import DataError
from medvqa.core.run.store import RunStore, read_records, rewrite_records

MANIFEST = {"benchmark": "b", "split": "s", "data_fingerprint": "f", "model": "m", "params": {},
            "conditions": ["C+Q"], "templates": {}}


def test_append_and_resume_returns_existing_records(tmp_path):
    with RunStore(tmp_path) as store:
        assert store.open(MANIFEST) == []
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
        store.append({"item_id": "2", "condition": "C+Q", "status": "answered"})
    files = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    store = RunStore(tmp_path)
    assert [r["item_id"] for r in store.open(MANIFEST)] == ["1", "2"]
    store.close()
    # opening a run writes nothing (but the PID in its lock file) until a record is appended
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir() if p.name != "run.lock"} \
        == {k: v for k, v in files.items() if k != "run.lock"}
    assert "resumed" not in json.loads((tmp_path / "manifest.json").read_text())
    with RunStore(tmp_path) as store:
        store.open(MANIFEST)
        store.append({"item_id": "3", "condition": "C+Q", "status": "answered"})
    assert json.loads((tmp_path / "manifest.json").read_text())["resumed"] == 1
    assert [r["item_id"] for r in read_records(tmp_path)] == ["1", "2", "3"]


def test_partial_last_line_from_a_killed_writer_is_dropped_and_truncated(tmp_path):
    with RunStore(tmp_path) as store:
        store.open(MANIFEST)
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
    with (tmp_path / "records.jsonl").open("a") as fh:
        fh.write('{"item_id": "2", "cond')
    store = RunStore(tmp_path)
    assert len(store.open(MANIFEST)) == 1
    store.append({"item_id": "2", "condition": "C+Q", "status": "answered"})
    store.close()
    assert [r["item_id"] for r in read_records(tmp_path)] == ["1", "2"]


def test_corrupt_line_in_the_middle_names_file_and_line(tmp_path):
    (tmp_path / "records.jsonl").write_text('{"item_id": "1", "condition": "C", "status": "answered"}\nnot json\n'
                                            '{"item_id": "3", "condition": "C", "status": "answered"}\n')
    with pytest.raises(DataError, match=r"records.jsonl: record line 2"):
        read_records(tmp_path)


def test_resuming_a_different_run_is_refused_and_nothing_is_lost(tmp_path):
    with RunStore(tmp_path) as store:
        store.open(MANIFEST)
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
    before = (tmp_path / "records.jsonl").read_bytes()
    with pytest.raises(DataError, match="differs in: model"):
        RunStore(tmp_path).open({**MANIFEST, "model": "other"})
    assert (tmp_path / "records.jsonl").read_bytes() == before


def test_rewrite_is_atomic_and_complete(tmp_path):
    rewrite_records(tmp_path, [{"item_id": str(i), "condition": "C", "status": "answered", "a": i} for i in range(3)])
    assert [r["a"] for r in read_records(tmp_path)] == [0, 1, 2]
    assert not list(tmp_path.glob("*.tmp"))


def test_readers_take_the_newest_record_of_each_pair(tmp_path):
    with RunStore(tmp_path) as store:
        store.open(MANIFEST)
        store.append({"item_id": "1", "condition": "C+Q", "status": "error"})
        store.append({"item_id": "2", "condition": "C+Q", "status": "answered"})
        store.append({"item_id": "1", "condition": "C+Q+I", "status": "answered"})
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == 4
    newest = [(r["item_id"], r["condition"], r["status"]) for r in read_records(tmp_path)]
    assert newest == [("1", "C+Q", "answered"), ("2", "C+Q", "answered"), ("1", "C+Q+I", "answered")]
    store = RunStore(tmp_path)
    assert len(store.open(MANIFEST)) == 3
    store.close()


def test_a_second_writer_fails_at_once_naming_the_holder(tmp_path):
    with RunStore(tmp_path) as first:
        first.open(MANIFEST)
        first.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
        with pytest.raises(DataError, match=rf"in use by process {os.getpid()} \(lock run.lock\)"):
            RunStore(tmp_path).open(MANIFEST)
        with pytest.raises(DataError, match=rf"in use by process {os.getpid()}"):
            rewrite_records(tmp_path, [])
    assert [r["item_id"] for r in read_records(tmp_path)] == ["1"]
    with RunStore(tmp_path) as second:  # released on close
        assert len(second.open(MANIFEST)) == 1


def test_a_failed_write_cuts_the_file_back_to_its_last_whole_line(tmp_path, monkeypatch):
    store = RunStore(tmp_path)
    store.open(MANIFEST)
    store.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
    real_write = os.write

    def short_then_full(fd, data):
        if fd == store._fd and len(data) > 10:
            real_write(fd, data[:10])  # half a line reaches the file, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", short_then_full)
    with pytest.raises(DataError, match=r"records.jsonl: cannot write \(No space left on device\): free disk space"):
        store.append({"item_id": "2", "condition": "C+Q", "status": "answered"})
    monkeypatch.undo()
    store.close()
    assert (tmp_path / "records.jsonl").read_text().count("\n") == 1
    assert [r["item_id"] for r in read_records(tmp_path)] == ["1"]


def test_records_are_scrubbed_and_a_lone_surrogate_reads_back(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_API_KEY", "lab-secret-0123456789")
    with RunStore(tmp_path) as store:
        store.open({**MANIFEST, "command_line": ["medvqa", "--api-base", "http://me:pw-0123456789@host/v1"]})
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered", "response": "key lab-secret-0123456789 \ud800"})
    text = (tmp_path / "records.jsonl").read_text() + (tmp_path / "manifest.json").read_text()
    assert "lab-secret" not in text and "pw-0123456789" not in text and "http://***@host/v1" in text
    assert read_records(tmp_path)[0]["response"] == "key *** \ud800"


def test_a_duplicated_record_never_doubles_a_denominator_in_report(tmp_path):
    from click.testing import CliRunner

    from medvqa.cli.main import cli

    run_dir = tmp_path / "run"
    assert CliRunner().invoke(cli, ["run", "jmed48k", "--sample", "--model", "random", "--run-dir", str(run_dir),
                                    "--json"]).exit_code == 0
    single = json.loads(CliRunner().invoke(cli, ["report", str(run_dir), "--by", "", "--json"]).output)
    path = run_dir / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines + lines))  # every pair written twice, as by two writers
    doubled = json.loads(CliRunner().invoke(cli, ["report", str(run_dir), "--by", "", "--json"]).output)
    assert doubled == single
    assert sum(row["n"] for row in single) == len(lines) == 22

import errno
import json
import os
import re

import pytest

from medvqa.core.items import DataError
from medvqa.core.run.store import RunStore, read_records, rewrite_records

MANIFEST = {
    "benchmark": "b",
    "split": "s",
    "data_fingerprint": "f",
    "model": "m",
    "params": {},
    "conditions": ["C+Q"],
    "templates": {},
}


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
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir() if p.name != "run.lock"} == {
        k: v for k, v in files.items() if k != "run.lock"
    }
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
    (tmp_path / "records.jsonl").write_text(
        '{"item_id": "1", "condition": "C", "status": "answered"}\nnot json\n'
        '{"item_id": "3", "condition": "C", "status": "answered"}\n'
    )
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
        store.append(
            {"item_id": "1", "condition": "C+Q", "status": "answered", "response": "key lab-secret-0123456789 \ud800"}
        )
    text = (tmp_path / "records.jsonl").read_text() + (tmp_path / "manifest.json").read_text()
    assert "lab-secret" not in text and "pw-0123456789" not in text and "http://***@host/v1" in text
    assert read_records(tmp_path)[0]["response"] == "key *** \ud800"


def test_a_duplicated_record_never_doubles_a_denominator_in_report(tmp_path):
    from click.testing import CliRunner

    from medvqa.cli.main import cli

    run_dir = tmp_path / "run"
    assert (
        CliRunner()
        .invoke(cli, ["run", "jmed48k", "--sample", "--model", "random", "--run-dir", str(run_dir), "--json"])
        .exit_code
        == 0
    )
    single = json.loads(CliRunner().invoke(cli, ["report", str(run_dir), "--by", "", "--json"]).output)
    path = run_dir / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines + lines))  # every pair written twice, as by two writers
    doubled = json.loads(CliRunner().invoke(cli, ["report", str(run_dir), "--by", "", "--json"]).output)
    assert doubled == single
    assert sum(row["n"] for row in single) == len(lines) == 22


def _finished_run(run_dir):
    with RunStore(run_dir) as store:
        store.open(MANIFEST)
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
    return {p.name: p.read_bytes() for p in run_dir.iterdir()}


@pytest.mark.parametrize(
    "name", ["run.lock", "records.jsonl.tmp", "manifest.json.tmp", "records.jsonl", "manifest.json"]
)
def test_a_planted_link_is_refused_and_the_file_it_points_to_is_untouched(tmp_path, name):
    run_dir = tmp_path / "run"
    before = _finished_run(run_dir)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    if (run_dir / name).exists():
        (run_dir / name).unlink()
    (run_dir / name).symlink_to(victim)
    store = RunStore(run_dir)
    with pytest.raises(
        DataError,
        match=rf"run/{re.escape(name)}: is a symbolic link: files in a run directory are "
        r"never written through a link; remove it, or choose another --run-dir$",
    ):
        store.open(MANIFEST)
        store.append(
            {"item_id": "2", "condition": "C+Q", "status": "answered"}
        )  # a resumed run rewrites its manifest first
    store.close()
    with pytest.raises(DataError, match="is a symbolic link"):
        rewrite_records(run_dir, [{"item_id": "1", "condition": "C+Q", "status": "answered"}])
    assert victim.read_text() == "precious\n"
    assert {p.name: p.read_bytes() for p in run_dir.iterdir() if p.name != name} == {
        k: v for k, v in before.items() if k != name
    }
    assert (run_dir / name).is_symlink()


def test_a_replaced_file_is_written_through_a_temporary_file_of_its_own(tmp_path):
    """Even without the directory check, an atomic write never opens a file planted beside its
    target: its temporary file is new, created exclusively."""
    from medvqa.core.run.store import write_json_atomic

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "manifest.json.tmp").symlink_to(victim)
    write_json_atomic(tmp_path / "manifest.json", {"a": 1})
    assert victim.read_text() == "precious\n"
    assert json.loads((tmp_path / "manifest.json").read_text()) == {"a": 1}
    assert not (tmp_path / "manifest.json").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "manifest.json.tmp", "victim.txt"]


def test_the_lock_file_is_opened_without_following_a_link(tmp_path):
    from medvqa.core.run.lock import lock_run_dir

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.lock").symlink_to(victim)
    with pytest.raises(DataError, match="run.lock: is a symbolic link"):
        lock_run_dir(tmp_path / "run")
    assert victim.read_text() == "precious\n"


def test_a_run_that_closes_before_its_first_record_leaves_nothing_behind(tmp_path):
    run_dir = tmp_path / "runs" / "new"
    store = RunStore(run_dir)
    assert store.open(MANIFEST) == []
    assert sorted(p.name for p in run_dir.iterdir()) == ["run.lock"]  # held while the run lasts
    store.close()
    assert not (tmp_path / "runs").exists()  # the folders it made are gone with the lock
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x")
    with RunStore(tmp_path / "mine") as store:
        store.open(MANIFEST)
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]  # a folder it found stays
    with RunStore(run_dir) as store:  # the first record writes the manifest with it
        store.open(MANIFEST)
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
    assert sorted(p.name for p in run_dir.iterdir()) == ["manifest.json", "records.jsonl", "run.lock"]
    assert json.loads((run_dir / "manifest.json").read_text())["model"] == "m"


def test_a_folder_with_records_but_no_manifest_is_refused_before_anything_is_written(tmp_path):
    folder = tmp_path / "foreign"
    folder.mkdir()
    (folder / "records.jsonl").write_text('{"id": 1, "label": "x"}\n')
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(
        DataError,
        match=r"foreign: holds records.jsonl but no readable manifest.json: not a run "
        r"medvqa wrote; choose another --run-dir$",
    ):
        RunStore(folder).open(MANIFEST)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_run_in_progress_keeps_score_out(tmp_path):
    """`score` holds the run's lock for its whole read and write: during a run it fails at once,
    naming the holder, even when it would change nothing; afterwards it works."""
    from medvqa.core.run.lock import locked

    with RunStore(tmp_path) as store:
        store.open(MANIFEST)
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered"})
        with pytest.raises(DataError, match=rf"in use by process {os.getpid()} \(lock run.lock\)"):
            with locked(tmp_path):
                pass
    with locked(tmp_path):
        pass


def test_lines_the_fast_parser_refuses_are_read_as_json_reads_them(tmp_path):
    """Records are parsed by jiter where it can; a line it refuses (an escaped lone surrogate, a
    byte-order mark, nesting deeper than it goes) is read by json, so every record is the one
    json gives, in order, and a line neither reads is still named."""
    deep = {"item_id": "4", "condition": "C", "status": "answered", "extra": json.loads("[" * 300 + "]" * 300)}
    lines = [
        '{"item_id": "1", "condition": "C", "status": "answered", "response": "\\ud83d cut"}',
        '\ufeff{"item_id": "2", "condition": "C", "status": "answered"}',
        '{"item_id": "3", "condition": "C", "status": "answered", "latency_s": 1e400, "z": 1, "a": -0.0}',
        json.dumps(deep),
    ]
    (tmp_path / "records.jsonl").write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    got = read_records(tmp_path)
    assert got == [json.loads(line.encode("utf-8")) for line in lines]
    assert got[0]["response"] == "\ud83d cut"
    assert list(got[2]) == ["item_id", "condition", "status", "latency_s", "z", "a"]
    (tmp_path / "records.jsonl").write_bytes(("\n".join([*lines, "{'item_id': 5}", lines[2]]) + "\n").encode("utf-8"))
    with pytest.raises(DataError, match=r"records.jsonl: record line 5"):
        read_records(tmp_path)

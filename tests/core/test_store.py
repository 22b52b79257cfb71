import json

import pytest

from medvqa.core.items import DataError
from medvqa.core.store import RunStore, read_records, rewrite_records

MANIFEST = {"benchmark": "b", "split": "s", "data_fingerprint": "f", "model": "m", "params": {},
            "conditions": ["C+Q"], "templates": {}}


def test_append_and_resume_returns_existing_records(tmp_path):
    with RunStore(tmp_path) as store:
        assert store.open(MANIFEST) == []
        store.append({"item_id": "1", "condition": "C+Q"})
        store.append({"item_id": "2", "condition": "C+Q"})
    store = RunStore(tmp_path)
    assert [r["item_id"] for r in store.open(MANIFEST)] == ["1", "2"]
    store.close()
    assert json.loads((tmp_path / "manifest.json").read_text())["resumed"] == 1


def test_partial_last_line_from_a_killed_writer_is_dropped_and_truncated(tmp_path):
    with RunStore(tmp_path) as store:
        store.open(MANIFEST)
        store.append({"item_id": "1", "condition": "C+Q"})
    with (tmp_path / "records.jsonl").open("a") as fh:
        fh.write('{"item_id": "2", "cond')
    store = RunStore(tmp_path)
    assert len(store.open(MANIFEST)) == 1
    store.append({"item_id": "2", "condition": "C+Q"})
    store.close()
    assert [r["item_id"] for r in read_records(tmp_path)] == ["1", "2"]


def test_corrupt_line_in_the_middle_names_file_and_line(tmp_path):
    (tmp_path / "records.jsonl").write_text('{"item_id": "1"}\nnot json\n{"item_id": "3"}\n')
    with pytest.raises(DataError, match=r"records.jsonl: record line 2"):
        read_records(tmp_path)


def test_resuming_a_different_run_is_refused_and_nothing_is_lost(tmp_path):
    with RunStore(tmp_path) as store:
        store.open(MANIFEST)
        store.append({"item_id": "1", "condition": "C+Q"})
    before = (tmp_path / "records.jsonl").read_bytes()
    with pytest.raises(DataError, match="differs in: model"):
        RunStore(tmp_path).open({**MANIFEST, "model": "other"})
    assert (tmp_path / "records.jsonl").read_bytes() == before


def test_rewrite_is_atomic_and_complete(tmp_path):
    rewrite_records(tmp_path, [{"item_id": str(i), "condition": "C", "a": i} for i in range(3)])
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

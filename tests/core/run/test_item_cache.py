"""The items of a run's data kept between analyses (`core/run/item_cache.py`): `audit`, `compare`
and `score` of saved runs give the same JSON whether the items are loaded and checked (the first
analysis) or read back from the cache folder, a damaged entry is loaded afresh and replaced,
and data changed since the run is the same error with or without a kept entry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.run import item_cache, saved
from tests.conftest import shared_data

QUESTIONS = Path("JMed48k") / "Physician" / "Physician_2026" / "2026_CORRECTED.json"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def as_json(*args) -> dict:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The JMed48k sample (800 items, 17 with their images) copied into a data folder of our own,
    and two runs of it (random and constant:A) under C+Q and C+Q+I."""
    tmp = tmp_path_factory.mktemp("item-cache")
    data = tmp / "data"
    shutil.copytree(shared_data("jmed48k-sample"), data)
    runs = []
    for model in ("random", "constant:A"):
        run_dir = tmp / model.replace(":", "-")
        as_json("run", "jmed48k", "--data", data, "--split", "full", "--model", model, "--conditions", "C+Q,C+Q+I",
                "--no-cache", "--run-dir", run_dir, "--json")
        runs.append(run_dir)
    return data, runs


def commands(runs) -> dict:
    a, b = runs
    return {"audit": ["audit", a, "--json", "--resamples", "50"],
            "compare": ["compare", a, b, "--json", "--resamples", "50"],
            "score": ["score", a, "--json"]}


@pytest.fixture
def loads(monkeypatch) -> list:
    """Each load of a run's items from its data (not from the cache folder), as a list that grows."""
    seen = []
    real = saved.load_items

    def counted(benchmark, load):
        seen.append(load["data"])
        return real(benchmark, load)

    monkeypatch.setattr(saved, "load_items", counted)
    return seen


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "items").glob("*.pickle"))


def test_a_saved_run_rescored_and_reaudited_gives_the_same_json_from_kept_items(made, tmp_path, monkeypatch, loads):
    data, runs = made
    cold = {}
    for name, args in commands(runs).items():  # each the first analysis of its cache folder
        monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / f"cold-{name}"))
        cold[name] = as_json(*args)
        assert len(entries(tmp_path / f"cold-{name}")) == 1
    assert len(loads) == 3  # one load each: the two runs of compare share theirs

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cold-audit"))  # the items the first audit kept
    warm = {name: as_json(*args) for name, args in commands(runs).items()}
    assert len(loads) == 3  # nothing loaded from the data again
    assert warm == cold
    assert warm["audit"]["n_records"] == warm["score"]["n_records"] == 817 and warm["compare"]["table"]


@pytest.mark.parametrize("damage", ["cut short", "a byte changed", "another format", "a function named", "empty"])
def test_a_damaged_entry_is_loaded_afresh_and_replaced(made, tmp_path, monkeypatch, loads, damage):
    data, runs = made
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path))
    first = as_json("audit", runs[0], "--json", "--resamples", "50")
    [entry] = entries(tmp_path)
    whole = entry.read_bytes()
    if damage == "cut short":
        entry.write_bytes(whole[: len(whole) // 2])
    elif damage == "a byte changed":
        at = len(whole) - 100
        entry.write_bytes(whole[:at] + bytes([whole[at] ^ 1]) + whole[at + 1:])
    elif damage in ("another format", "a function named"):  # whole, with its digest, but not items of this key
        import hashlib
        import pickle

        payload = pickle.dumps({"key": ["another"], "fingerprint": "f", "items": []} if damage == "another format"
                               else {"items": [shutil.rmtree]})  # never called: the entry is not read
        entry.write_bytes(item_cache.MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload)
    else:
        entry.write_bytes(b"")
    assert as_json("audit", runs[0], "--json", "--resamples", "50") == first
    assert len(loads) == 2  # loaded afresh once
    assert entry.read_bytes() == whole  # and kept again, whole
    assert as_json("audit", runs[0], "--json", "--resamples", "50") == first
    assert len(loads) == 2


def test_data_changed_since_the_run_is_an_error_with_a_kept_entry_too(made, tmp_path, monkeypatch, loads):
    data, runs = made
    own = tmp_path / "data"
    shutil.copytree(data, own)
    run_dir = tmp_path / "run"
    shutil.copytree(runs[0], run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    manifest["load"]["data"] = manifest["data"] = str(own)
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    before = as_json("score", run_dir, "--json")
    assert len(loads) == 1 and len(entries(tmp_path / "cache")) == 1

    (own / "notes.txt").write_text("a file beside the exams", encoding="utf-8")  # not an item: the same items
    assert as_json("score", run_dir, "--json") == before
    assert len(loads) == 2  # a changed folder is loaded afresh

    questions = json.loads((own / QUESTIONS).read_text(encoding="utf-8"))
    questions["questions"][0]["question_text"] += "。"
    (own / QUESTIONS).write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    for _ in range(2):  # once loaded afresh, then from the entry kept of the new data
        result = invoke("audit", run_dir, "--json")
        assert result.exit_code != 0
        assert "the benchmark data changed since this run (data fingerprint differs)" in result.output
    assert len(loads) == 3


def test_runs_of_data_that_is_no_local_folder_load_their_items_as_before(tmp_path, monkeypatch, loads):
    run_dir = tmp_path / "run"
    as_json("run", "jmed48k", "--sample", "--model", "random", "--no-cache", "--run-dir", run_dir, "--json")
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):
        as_json("score", run_dir, "--json")
    assert len(loads) == 2 and not entries(tmp_path / "cache")

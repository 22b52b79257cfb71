"""The items of a run's data kept between analyses (`core/run/item_cache.py`): `audit`, `compare`
and `score` of saved runs give the same JSON whether the items are loaded and checked (the first
analysis) or read back from the cache folder, a damaged entry is loaded afresh and replaced,
and data changed since the run is the same error with or without a kept entry."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from medvqa.cli.main import cli
from medvqa.core.audit import thumbnails
from medvqa.core.items import Item, fingerprint_items, fingerprint_texts
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
        as_json(
            "run",
            "jmed48k",
            "--data",
            data,
            "--split",
            "full",
            "--model",
            model,
            "--conditions",
            "C+Q,C+Q+I",
            "--no-cache",
            "--run-dir",
            run_dir,
            "--json",
        )
        runs.append(run_dir)
    return data, runs


def commands(runs) -> dict:
    a, b = runs
    return {
        "audit": ["audit", a, "--json", "--resamples", "50"],
        "compare": ["compare", a, b, "--json", "--resamples", "50"],
        "score": ["score", a, "--json"],
    }


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


def test_a_run_leaves_the_entry_its_first_analysis_reads_without_loading_again(made, tmp_path, monkeypatch, loads):
    """`run` keeps the items it has just loaded and checked (`item_cache.keep`): the first `audit`,
    `compare` and `score` after it read that entry and load nothing from the data (`loads` counts
    every load by an analysis), and print what an analysis of a cold cache folder prints. The
    entry is byte for byte the one that cold analysis writes: the same key, the same items."""
    data, _ = made
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "after-run"))
    runs = []
    for model in ("random", "constant:A"):
        run_dir = tmp_path / model.replace(":", "-")
        args = ["--conditions", "C+Q,C+Q+I", "--no-cache", "--run-dir", run_dir, "--json"]
        as_json("run", "jmed48k", "--data", data, "--split", "full", "--model", model, *args)
        runs.append(run_dir)
    [entry] = entries(tmp_path / "after-run")  # both runs read the same data: one entry
    assert loads == []
    warm = {name: as_json(*args) for name, args in commands(runs).items()}
    assert loads == []  # the first analyses after the runs loaded nothing

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cold"))
    cold = {name: as_json(*args) for name, args in commands(runs).items()}
    assert len(loads) == 1  # the cold folder's first analysis loads once, and keeps its entry
    assert warm == cold and warm["audit"]["n_records"] == 817
    [cold_entry] = entries(tmp_path / "cold")
    assert cold_entry.name == entry.name and cold_entry.read_bytes() == entry.read_bytes()


def test_a_run_keeps_nothing_for_data_that_changed_while_it_loaded(made, tmp_path, monkeypatch, loads):
    """The run signs the data before it loads it: a file that changes during the load leaves an
    entry the next analysis does not take (its signature is not the data's any more), so that
    analysis loads afresh, as it would without the run's entry."""
    own = tmp_path / "data"
    shutil.copytree(made[0], own)
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    from medvqa.core.run import options

    real = options.load_items

    def load_then_touch(benchmark, load):
        got = real(benchmark, load)
        (own / "notes.txt").write_text("written while the run loaded", encoding="utf-8")
        return got

    monkeypatch.setattr(options, "load_items", load_then_touch)
    run_dir = tmp_path / "run"
    args = ["--split", "full", "--model", "random", "--no-cache", "--run-dir", run_dir, "--json"]
    as_json("run", "jmed48k", "--data", own, *args)
    assert len(entries(tmp_path / "cache")) == 1
    as_json("score", run_dir, "--json")
    assert len(loads) == 1  # the run's entry was signed before the new file: loaded afresh


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
        entry.write_bytes(whole[:at] + bytes([whole[at] ^ 1]) + whole[at + 1 :])
    elif damage in ("another format", "a function named"):  # whole, with its digest, but not items of this key
        import hashlib
        import pickle

        payload = pickle.dumps(
            {"key": ["another"], "fingerprint": "f", "items": []}
            if damage == "another format"
            else {"items": [shutil.rmtree]}
        )  # never called: the entry is not read
        entry.write_bytes(item_cache.MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload)
    else:
        entry.write_bytes(b"")
    assert as_json("audit", runs[0], "--json", "--resamples", "50") == first
    assert len(loads) == 2  # loaded afresh once
    assert entry.read_bytes() == whole  # and kept again, whole
    assert as_json("audit", runs[0], "--json", "--resamples", "50") == first
    assert len(loads) == 2


def own_copy(made, tmp_path, monkeypatch):
    """(a copy of the data, a copy of the first run reading it) in `tmp_path`, with a cache
    folder of their own: data a test may edit without touching the module's."""
    data, runs = made
    own = tmp_path / "data"
    shutil.copytree(data, own)
    run_dir = tmp_path / "run"
    shutil.copytree(runs[0], run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    manifest["load"]["data"] = manifest["data"] = str(own)
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    return own, run_dir


def test_data_changed_since_the_run_is_an_error_with_a_kept_entry_too(made, tmp_path, monkeypatch, loads):
    own, run_dir = own_copy(made, tmp_path, monkeypatch)
    before = as_json("score", run_dir, "--json")
    assert len(loads) == 1 and len(entries(tmp_path / "cache")) == 1

    (own / "notes.txt").write_text("a file beside the exams", encoding="utf-8")  # not an item: the same items
    assert as_json("score", run_dir, "--json") == before
    assert len(loads) == 2  # a changed folder is loaded afresh

    questions = json.loads((own / QUESTIONS).read_text(encoding="utf-8"))
    questions["questions"][0]["question_text"] += "。"
    (own / QUESTIONS).write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    for _ in range(2):  # loaded afresh each time: a kept entry never says the data changed, the data does
        result = invoke("audit", run_dir, "--json")
        assert result.exit_code != 0
        assert "the benchmark data changed since this run (data fingerprint differs)" in result.output
    assert len(loads) == 4


def test_runs_of_data_that_is_no_local_folder_load_their_items_as_before(tmp_path, monkeypatch, loads):
    run_dir = tmp_path / "run"
    as_json("run", "jmed48k", "--sample", "--model", "random", "--no-cache", "--run-dir", run_dir, "--json")
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):
        as_json("score", run_dir, "--json")
    assert len(loads) == 2 and not entries(tmp_path / "cache")


# ---------------------------------------------------------------- a kept entry is read as untrusted


def own_run(made, tmp_path) -> Path:
    """A copy of the random run (score rewrites its records)."""
    run_dir = tmp_path / "run"
    shutil.copytree(made[1][0], run_dir)
    return run_dir


def forge(entry: Path, edit) -> None:
    """The entry's items edited by `edit(stored)` (each item as the item model's data) and written
    back whole as medvqa writes them, with a digest that matches: what anyone who can write the
    cache folder can do."""
    stored = pickle.loads(entry.read_bytes()[len(item_cache.MAGIC) + 64 :])
    stored["items"] = [item_cache.rebuild_item(*kept).model_dump() for kept in stored["items"]]
    edit(stored)
    stored["items"] = [
        (it.canonical(), [None if im.path is None else str(im.path) for im in it.images], list(it.meta))
        for it in map(Item.model_validate, stored["items"])
    ]
    payload = pickle.dumps(stored)
    entry.write_bytes(item_cache.MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload)


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("fingerprint", ["kept", "recomputed"])
def test_a_forged_entry_never_changes_a_gold_answer(made, tmp_path, monkeypatch, loads, fingerprint):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = own_run(made, tmp_path)
    assert as_json("score", run_dir, "--json")["changed"] == 0
    [entry] = entries(tmp_path / "cache")
    whole = entry.read_bytes()
    predicted = {r["item_id"]: r["predicted"] for r in records(run_dir) if r["condition"] == "C+Q" and r["predicted"]}

    def golds_as_predicted(stored):  # every gold replaced by what the random model answered
        for d in stored["items"]:
            if d.get("gold") and d["id"] in predicted:
                d["gold"] = {"alternatives": (tuple(predicted[d["id"]]),), "raw": predicted[d["id"]]}
        if fingerprint == "recomputed":  # the stored fingerprint made to match the forged items
            stored["fingerprint"] = fingerprint_items([Item.model_validate(d) for d in stored["items"]])

    forge(entry, golds_as_predicted)
    cq = [r for r in records(run_dir) if r["condition"] == "C+Q" and r["status"] != "missing"]
    right = sum(r["correct"] is True for r in cq)
    assert 0 < right < len(predicted) - 100  # the forgery would make hundreds of wrong answers right

    assert as_json("score", run_dir, "--json")["changed"] == 0  # the items loaded afresh instead
    assert len(loads) == 2 and entry.read_bytes() == whole  # and the genuine entry kept again
    [row] = [r for r in as_json("report", run_dir, "--json", "--by", "") if r["condition"] == "C+Q"]
    assert row["correct"] == right and row["n"] == len([r for r in cq if r["correct"] is not None])


@pytest.mark.parametrize("edit", ["touch -r", "cp -p"])
def test_an_edit_of_the_same_size_with_the_old_modification_time_is_seen(made, tmp_path, monkeypatch, loads, edit):
    own, run_dir = own_copy(made, tmp_path, monkeypatch)
    as_json("score", run_dir, "--json")

    questions = own / QUESTIONS
    before = questions.stat()
    edited = questions.read_bytes().replace("胃癌に伴う".encode(), "肺癌に伴う".encode(), 1)  # the same size
    stamp = tmp_path / "stamp"
    stamp.touch()
    subprocess.run(["touch", "-r", str(questions), str(stamp)], check=True)
    if edit == "touch -r":  # edited in place, its modification time put back
        questions.write_bytes(edited)
        subprocess.run(["touch", "-r", str(stamp), str(questions)], check=True)
    else:  # an edited copy with the old time copied over it
        (tmp_path / "edited.json").write_bytes(edited)
        subprocess.run(["touch", "-r", str(stamp), str(tmp_path / "edited.json")], check=True)
        subprocess.run(["cp", "-p", str(tmp_path / "edited.json"), str(questions)], check=True)
    after = questions.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    result = invoke("audit", run_dir, "--json")
    assert result.exit_code == 1
    assert "the benchmark data changed since this run (data fingerprint differs)" in result.output
    assert len(loads) == 2


def test_a_forged_entry_pointing_an_image_outside_the_data_folder_is_not_shown(made, tmp_path, monkeypatch, loads):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = made[1][0]
    invoke("view", run_dir, "--html", tmp_path / "genuine.html")
    [entry] = entries(tmp_path / "cache")
    secret = tmp_path / "private" / "secret.png"
    secret.parent.mkdir()
    Image.new("RGB", (64, 64), (0, 255, 0)).save(secret)

    def elsewhere(stored):  # the first image of the data replaced by a file outside it
        d = next(d for d in stored["items"] if any(im.get("path") for im in d.get("images", ())))
        d["images"][0]["path"] = secret

    forge(entry, elsewhere)
    thumbnails.thumbnail.cache_clear()
    invoke("view", run_dir, "--html", tmp_path / "forged.html")
    page = (tmp_path / "forged.html").read_text(encoding="utf-8")
    leaked = thumbnails.thumbnail(str(secret), 384, "JPEG") in page
    assert not leaked
    genuine = (tmp_path / "genuine.html").read_text(encoding="utf-8")
    same = re.sub("forged|genuine", "", page) == re.sub("forged|genuine", "", genuine)  # (a page is too long to diff)
    assert same and len(loads) == 2  # the forged entry refused, the items loaded afresh


# ---------------------------------------------------------------- the data signature and links


def small_data(tmp_path) -> Path:
    data = tmp_path / "data"
    (data / "exam").mkdir(parents=True)
    (data / "exam" / "items.json").write_text("[]", encoding="utf-8")
    (data / "exam" / "key.csv").write_text("id,answer\n", encoding="utf-8")
    return data


def test_the_signature_follows_no_link_out_of_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(item_cache, "MAX_FILES", 20)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for i in range(30):
        (outside / f"{i}.txt").write_text(str(i), encoding="utf-8")
    data = small_data(tmp_path)
    (data / "escape").symlink_to(outside)
    signed = item_cache.data_signature(data)
    assert signed is not None  # the 30 files outside are not counted: not walked

    (outside / "0.txt").write_text("changed outside", encoding="utf-8")
    assert item_cache.data_signature(data) == signed  # nothing outside is signed
    (data / "escape").unlink()
    (data / "escape").symlink_to(tmp_path)
    assert item_cache.data_signature(data) != signed  # where the link points is

    (data / "escape").unlink()
    (data / "escape").symlink_to("exam")  # a link inside is followed: what it reaches is signed
    inside = item_cache.data_signature(data)
    (data / "exam" / "key.csv").write_text("id,answer\nq1,A\n", encoding="utf-8")
    assert item_cache.data_signature(data) != inside


def test_a_link_to_the_root_of_the_file_system_is_not_walked(tmp_path):
    data = small_data(tmp_path)
    (data / "root").symlink_to("/")
    (data / "exam" / "up").symlink_to("../..")  # and a link back above the folder
    signed = item_cache.data_signature(data)
    assert signed is not None and item_cache.data_signature(data) == signed


def test_an_entry_that_is_no_regular_file_is_never_read_and_is_replaced(made, tmp_path, monkeypatch, loads):
    data, runs = made
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path))
    first = as_json("audit", runs[0], "--json", "--resamples", "50")
    [entry] = entries(tmp_path)
    whole = entry.read_bytes()
    entry.unlink()
    os.mkfifo(entry)  # reading it would wait for a writer for ever (and a link to /dev/zero read for ever)
    assert as_json("audit", runs[0], "--json", "--resamples", "50") == first
    assert len(loads) == 2 and entry.read_bytes() == whole


def test_a_forged_entry_of_the_whole_exams_never_changes_a_pass_verdict(tmp_path, monkeypatch):
    """`report --pass` of a run of a selection reads the whole exams from another entry: it is used
    only when it holds the run's own items as they are."""
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = tmp_path / "run"
    as_json(
        "run",
        "igakuqa",
        "--data",
        shared_data("igakuqa"),
        "--model",
        "constant:a",
        "--select",
        "year=2022",
        "--conditions",
        "C+Q",
        "--no-cache",
        "--run-dir",
        run_dir,
        "--json",
    )
    before = as_json("report", run_dir, "--pass", "--json")
    [hisshu] = [r for r in before["rows"] if r["criterion"] == "hisshu"]
    assert (hisshu["status"], hisshu["points"], hisshu["maximum"]) == ("fail", 29, 197)

    def slot(entry):
        return json.loads(pickle.loads(entry.read_bytes()[len(item_cache.MAGIC) + 64 :])["key"][1])

    [whole] = [e for e in entries(tmp_path / "cache") if slot(e)[3]["select"] is None]

    def credited_to_all(stored):  # every 2022 question "scored correct for every examinee", the fingerprint to match
        for d in stored["items"]:
            if d["id"].startswith("116"):
                d["meta"]["credited_to_all"] = True
        stored["fingerprint"] = fingerprint_items([Item.model_validate(d) for d in stored["items"]])

    forge(whole, credited_to_all)
    assert as_json("report", run_dir, "--pass", "--json") == before


# ---------------------------------------------------------------- each item kept as its fingerprint's text

BUILT_IN = {
    "jmed48k": lambda: shared_data("jmed48k-sample"),
    "igakuqa": lambda: shared_data("igakuqa"),
    "yakugakuqa": lambda: shared_data("yakugakuqa"),
    "mir": lambda: shared_data("mir"),
    "worldmedqa_v": lambda: shared_data("worldmedqa-v-japan"),
    "mmbu_hard": lambda: shared_data("mmbu-proxy"),
    "polish_pes": lambda: Path(__file__).parents[2] / "adapters" / "polish_pes" / "data",
}


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_every_item_of_the_built_in_data_is_rebuilt_from_its_fingerprint_text(name):
    """The genuine canonical text rebuilds the genuine item: the same fields, image paths and meta
    order, and the same fingerprint, so an entry whose texts hash to the manifest's fingerprint
    holds the run's items."""
    import medvqa

    items = medvqa.load(name, BUILT_IN[name]())
    assert len(items) >= 10
    for it in items:
        text = it.canonical()
        again = item_cache.rebuild_item(*item_cache.keep_item(it, text))
        assert again == it and list(again.meta) == list(it.meta), it.id
        assert [im.path for im in again.images] == [im.path for im in it.images], it.id
        assert again.fingerprint() == hashlib.sha256(text.encode()).hexdigest() == it.fingerprint(), it.id
    assert fingerprint_texts(it.canonical() for it in items) == fingerprint_items(items)


def test_a_kept_entry_is_read_without_fingerprinting_an_item_again(made, tmp_path, monkeypatch, loads):
    """Reading an entry hashes the texts it keeps; it never dumps each item again (0.5 s for 24,000)."""
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path))
    cold = as_json("score", made[1][0], "--json")
    dumped = []
    real = Item.canonical
    monkeypatch.setattr(Item, "canonical", lambda self: dumped.append(self.id) or real(self))
    assert as_json("score", made[1][0], "--json") == cold
    assert len(loads) == 1 and dumped == []


def test_a_forged_image_path_where_the_text_has_none_is_not_used(made, tmp_path, monkeypatch, loads):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path))
    first = as_json("audit", made[1][0], "--json", "--resamples", "50")
    [entry] = entries(tmp_path)
    stored = pickle.loads(entry.read_bytes()[len(item_cache.MAGIC) + 64 :])
    shown = next(paths[0] for _, paths, _ in stored["items"] if paths and paths[0])  # an image file of the data
    text, paths, order = next(kept for kept in stored["items"] if kept[1] and kept[1][0] is None)
    stored["items"] = [(t, [shown] + p[1:] if t == text else p, o) for t, p, o in stored["items"]]
    payload = pickle.dumps(stored)
    entry.write_bytes(item_cache.MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload)
    assert as_json("audit", made[1][0], "--json", "--resamples", "50") == first
    assert len(loads) == 2  # the forged entry refused, the items loaded afresh


def test_kept_meta_keys_and_image_marks_must_be_the_texts_own():
    """An entry's `meta` order must name each key of the text once, and an image path is put back
    only where the text says the image is there."""
    import medvqa

    it = next(i for i in medvqa.load("jmed48k", split="sample") if i.images and i.image_available)
    text, paths, order = item_cache.keep_item(it, it.canonical())
    assert item_cache.rebuild_item(text, paths, order) == it
    for bad_order in ([*order[:-1], order[0]], order[:-1], [*order, "extra"]):
        with pytest.raises(ValueError, match="meta keys"):
            item_cache.rebuild_item(text, paths, bad_order)
    with pytest.raises(ValueError, match="image path"):
        item_cache.rebuild_item(text, [None, *paths[1:]], order)

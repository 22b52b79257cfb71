"""A run split into shards and merged back (`core/run/shards.py`, `medvqa run --shard`,
`medvqa merge`): which shard an item is, `--shard auto` from a scheduler's variables, shards of
the real JMed48k sample merged into the records of the unsharded run, and every merge refused
that is not every shard of one run, each once."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.errors import UsageError
from medvqa.core.items import DataError
from medvqa.core.run.shards import Shard, check_shards, from_environment, merge_shards, parse_shard, shard_of
from medvqa.core.run.store import read_manifest, read_records
from tests.conftest import shared_data

# What a record answers, and how: the request key names no server here (a baseline), so it is compared too.
COMPARED = ("key", "response", "error", "predicted", "status", "correct")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def ok(*args) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.output


def by_pair(run_dir: Path) -> dict[tuple, dict]:
    return {
        (r["item_id"], r["condition"], r.get("repeat") or 0): {k: r.get(k) for k in COMPARED}
        for r in read_records(run_dir)
    }


def test_an_item_s_shard_is_its_hashed_id_modulo_the_count():
    # SHA-256("medvqa-shard\0Nurse_2023_AM_Q1") begins 5067be8e5dd62c94. 16 ≡ 1 (mod 3), so a hex
    # number is its digit sum mod 3: 5+0+6+7+11+14+8+14+5+13+13+6+2+12+9+4 = 129 ≡ 0, shard 0 of 3;
    # mod 2 its last digit decides: 4 is even, shard 0 of 2; mod 16 it is that digit: shard 4 of 16.
    assert [shard_of("Nurse_2023_AM_Q1", n) for n in (1, 2, 3, 16)] == [0, 0, 0, 4]
    assert Shard(0, 3).holds("Nurse_2023_AM_Q1") and not Shard(1, 3).holds("Nurse_2023_AM_Q1")


def test_the_800_items_of_the_sample_fall_into_three_balanced_shards(jmed_sample):
    from medvqa.core import plugins

    items = plugins.get_benchmark("jmed48k").load(jmed_sample, "full")
    counts = Counter(shard_of(it.id, 3) for it in items)
    assert sorted(counts.items()) == [(0, 246), (1, 277), (2, 277)]  # as the module's docstring says
    assert sum(counts.values()) == 800


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("0/3", {}, Shard(0, 3)),
        (" 2 / 3 ", {}, Shard(2, 3)),
        # sbatch --array=0-2: tasks 0, 1, 2 of 3
        ("auto", {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0"}, Shard(2, 3)),
        # sbatch --array=1-3: task 1 is the first shard
        ("auto", {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1"}, Shard(0, 3)),
        # sbatch --array=10-30:10: tasks 10, 20, 30; task 30 is (30 - 10) / 10 = shard 2
        (
            "auto",
            {
                "SLURM_ARRAY_TASK_ID": "30",
                "SLURM_ARRAY_TASK_COUNT": "3",
                "SLURM_ARRAY_TASK_MIN": "10",
                "SLURM_ARRAY_TASK_STEP": "10",
            },
            Shard(2, 3),
        ),
        # a Kubernetes indexed Job of 3 completions
        ("auto", {"JOB_COMPLETION_INDEX": "1", "MEDVQA_SHARD_COUNT": "3"}, Shard(1, 3)),
    ],
)
def test_shard_from_the_option_or_the_scheduler_s_variables(text, environ, expected):
    assert parse_shard(text, environ) == expected


@pytest.mark.parametrize(
    ("text", "environ", "message"),
    [
        ("3/3", {}, "from 0 to 2, not 3"),
        ("1/0", {}, "from 1 to 100000, not 0"),
        ("1of3", {}, "--shard takes I/N"),
        ("-1/3", {}, "--shard takes I/N"),
        ("auto", {}, "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT"),
        ("auto", {"SLURM_ARRAY_TASK_ID": "1"}, "SLURM_ARRAY_TASK_COUNT is None"),
        ("auto", {"JOB_COMPLETION_INDEX": "1"}, "MEDVQA_SHARD_COUNT is None"),
        (
            "auto",
            {"SLURM_ARRAY_TASK_ID": "15", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_STEP": "10"},
            "not one",
        ),
    ],
)
def test_a_shard_that_cannot_be_is_refused_naming_why(text, environ, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        parse_shard(text, environ)


def test_auto_reads_the_process_environment(monkeypatch):
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "0")
    monkeypatch.setenv("MEDVQA_SHARD_COUNT", "2")
    monkeypatch.delenv("SLURM_ARRAY_TASK_ID", raising=False)
    assert parse_shard("auto") == from_environment({"JOB_COMPLETION_INDEX": "0", "MEDVQA_SHARD_COUNT": "2"})


RUN = ["run", "jmed48k", "--split", "full", "--conditions", "C+Q,C+Q+I", "--no-cache", "--json"]


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The 800-item sample run whole, and in 3 shards, by the `random` baseline (answers drawn from
    (seed, item, condition): the same in a shard as in the whole run)."""
    tmp = tmp_path_factory.mktemp("shards")
    data = shared_data("jmed48k-sample")
    ok(*RUN, "--data", data, "--model", "random", "--run-dir", tmp / "whole")
    shards = []
    for i in range(3):
        shards.append(tmp / f"shard{i}")
        summary = json.loads(
            ok(*RUN, "--data", data, "--model", "random", "--run-dir", shards[-1], "--shard", f"{i}/3")
        )
        assert summary["n_items"] == (246, 277, 277)[i]  # a shard's summary counts its own items
    return tmp, data, shards


def test_three_shards_merge_into_the_records_of_the_whole_run(sharded, tmp_path):
    tmp, _, shards = sharded
    sizes = [len(read_records(s)) for s in shards]
    # every item under C+Q (246, 277, 277) and the 17 with their images under C+Q+I too: 817 in all
    assert sum(sizes) == 817 and sizes[0] >= 246 and sizes[1] >= 277 and sizes[2] >= 277
    for i, s in enumerate(shards):
        assert read_manifest(s)["shard"] == {"index": i, "count": 3, "pairs": len(read_records(s))}
        assert all(shard_of(r["item_id"], 3) == i for r in read_records(s))

    out = json.loads(ok("merge", *reversed(shards), "--into", tmp_path / "merged", "--json"))
    assert out["n_records"] == 817 and [s["shard"] for s in out["shards"]] == ["0/3", "1/3", "2/3"]
    merged, whole = by_pair(tmp_path / "merged"), by_pair(tmp / "whole")
    assert merged == whole and len(merged) == 817  # same key set, same responses, same scores
    manifest, whole_manifest = read_manifest(tmp_path / "merged"), read_manifest(tmp / "whole")
    assert "shard" not in manifest and manifest["merged"]["count"] == 3
    for key in ("benchmark", "data_fingerprint", "n_items", "model", "params", "conditions", "templates", "excluded"):
        assert manifest[key] == whole_manifest[key]
    # every command reads the merged run as the whole one: the same numbers
    score = [json.loads(ok("score", d, "--json")) for d in (tmp_path / "merged", tmp / "whole")]
    assert score[0]["n_records"] == score[1]["n_records"] == 817
    audits = [json.loads(ok("audit", d, "--json", "--resamples", "50")) for d in (tmp_path / "merged", tmp / "whole")]
    for audit in audits:
        audit.pop("source")  # the run directory read
    assert audits[0] == audits[1]


def test_merging_two_of_three_shards_names_the_missing_one(sharded, tmp_path):
    _, _, shards = sharded
    result = invoke("merge", shards[0], shards[2], "--into", tmp_path / "merged")
    assert result.exit_code == 1
    assert "shard 1/3 missing" in result.output and str(shards[0]) in result.output
    assert not (tmp_path / "merged").exists()  # nothing written


def test_a_shard_given_twice_is_an_overlap(sharded, tmp_path):
    _, _, shards = sharded
    twice = tmp_path / "again"
    shutil.copytree(shards[1], twice)
    with pytest.raises(DataError, match="is shard 1/3, as .* is: give each shard once"):
        check_shards([shards[0], shards[1], twice, shards[2]])


def test_shards_of_two_different_runs_fail_naming_the_difference(sharded, tmp_path):
    tmp, data, shards = sharded
    other = tmp_path / "constant-shard1"
    ok(*RUN, "--data", data, "--model", "constant:A", "--run-dir", other, "--shard", "1/3")
    result = invoke("merge", shards[0], other, shards[2], "--into", tmp_path / "merged")
    assert result.exit_code == 1
    assert f"{other}" in result.output and "is not a shard of the same run as" in result.output
    assert "(differs in: model, params)" in result.output  # constant:A has no seed among its parameters

    four = tmp_path / "of-four"
    ok(*RUN, "--data", data, "--model", "random", "--run-dir", four, "--shard", "1/4")
    result = invoke("merge", shards[0], four, shards[2], "--into", tmp_path / "merged")
    assert "(differs in: shard count)" in result.output


def test_a_record_outside_its_shard_is_named(sharded, tmp_path):
    _, _, shards = sharded
    moved = tmp_path / "shard0"
    shutil.copytree(shards[0], moved)
    stray = next(r for r in read_records(shards[1]))
    with open(moved / "records.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(stray, ensure_ascii=False) + "\n")
    with pytest.raises(DataError, match=f"holds a record of item '{stray['item_id']}', which is shard 1/3's"):
        merge_shards([moved, shards[1], shards[2]], tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_a_directory_that_is_no_shard_or_a_merge_into_a_run_is_refused(sharded, tmp_path):
    tmp, _, shards = sharded
    with pytest.raises(DataError, match="is not a shard"):
        check_shards([tmp / "whole", *shards])
    merged = tmp_path / "merged"
    merge_shards(shards, merged)
    with pytest.raises(DataError, match="already holds records: merge into a new directory"):
        merge_shards(shards, merged)


def test_a_shard_resumes_as_its_own_shard_only(sharded, tmp_path):
    _, data, shards = sharded
    copy = tmp_path / "shard0"
    shutil.copytree(shards[0], copy)
    again = json.loads(ok(*RUN, "--data", data, "--model", "random", "--run-dir", copy, "--shard", "0/3"))
    assert again["n_records"] == len(read_records(shards[0]))  # nothing asked again, nothing added
    result = invoke(*RUN, "--data", data, "--model", "random", "--run-dir", copy, "--shard", "1/3")
    assert result.exit_code == 1 and "differs in: shard" in result.output
    result = invoke(*RUN, "--data", data, "--model", "random", "--run-dir", copy)  # the whole run is another run
    assert result.exit_code == 1 and "differs in: shard" in result.output


def test_adding_a_condition_keeps_every_item_in_its_shard(sharded, tmp_path):
    _, data, _ = sharded
    run_dir = tmp_path / "shard2"
    args = ["--data", data, "--model", "random", "--shard", "2/3", "--no-cache", "--json", "--split", "full"]
    ok("run", "jmed48k", *args, "--conditions", "C+Q", "--run-dir", run_dir)
    ok("run", "jmed48k", *args, "--conditions", "C,C+Q", "--run-dir", tmp_path / "more")
    first = {r["item_id"] for r in read_records(run_dir)}
    more = read_records(tmp_path / "more")
    assert first == {r["item_id"] for r in more if r["condition"] == "C"} and len(first) == 277


def test_a_dry_run_of_a_shard_counts_its_own_pairs(sharded):
    _, data, _ = sharded
    out = json.loads(ok(*RUN, "--data", data, "--model", "random", "--shard", "1/3", "--dry-run"))
    # shard 1's 277 items under C+Q, and its items with their images under C+Q+I
    assert out["pairs"] == out["to_ask"] >= 277 and out["pairs"] < 817


def test_shards_with_image_variants_merge_into_the_whole_run(tmp_path):
    """A swapped image's partner is drawn from every item of the data, so a shard plans the
    variants of the whole data and asks its own items' only: merged, the same 845 records (800
    under C+Q; the 17 with their images under C+Q+I and flipped; the 11 of them with a partner in
    their group swapped, as the whole run asks them) with the same request keys, which hash the
    images shown."""
    data = shared_data("jmed48k-sample")
    args = [*RUN, "--data", data, "--model", "random", "--variants", "swap,hflip"]
    ok(*args, "--run-dir", tmp_path / "whole")
    for i in range(2):
        ok(*args, "--run-dir", tmp_path / f"half{i}", "--shard", f"{i}/2")
    merge_shards([tmp_path / "half0", tmp_path / "half1"], tmp_path / "merged")
    merged, whole = by_pair(tmp_path / "merged"), by_pair(tmp_path / "whole")
    assert merged == whole and len(whole) == 845
    assert Counter(c for _, c, _ in whole) == {"C+Q": 800, "C+Q+I": 17, "C+Q+I~hflip": 17, "C+Q+I~swap": 11}


def test_a_shard_stopped_early_is_refused_until_it_is_resumed(sharded, tmp_path):
    """Shard 0 asks 250 pairs (its 246 items under C+Q, and the 4 of them with their images under
    C+Q+I): its manifest counts them, and a copy cut back to its first 100 records is not merged."""
    _, data, shards = sharded
    assert read_manifest(shards[0])["shard"] == {"index": 0, "count": 3, "pairs": 250}
    cut = tmp_path / "shard0"
    shutil.copytree(shards[0], cut)
    lines = (cut / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (cut / "records.jsonl").write_text("".join(lines[:100]), encoding="utf-8")
    with pytest.raises(DataError, match="shard 0/3 is not finished: 100 of its 250 pairs recorded; resume it"):
        merge_shards([cut, shards[1], shards[2]], tmp_path / "merged")
    assert not (tmp_path / "merged").exists()
    ok(*RUN, "--data", data, "--model", "random", "--run-dir", cut, "--shard", "0/3")  # resumed: finished
    assert merge_shards([cut, shards[1], shards[2]], tmp_path / "merged").n_records == 817


def test_a_shard_counts_every_repeat_of_its_pairs(tmp_path):
    """Shard 0 of 3 with 2 repeats: its 250 pairs asked twice, 500 records, as its manifest counts."""
    data = shared_data("jmed48k-sample")
    run_dir = tmp_path / "repeated"
    out = json.loads(
        ok(*RUN, "--data", data, "--model", "random", "--repeats", "2", "--shard", "0/3", "--run-dir", run_dir)
    )
    assert read_manifest(run_dir)["shard"]["pairs"] == out["n_records"] == len(read_records(run_dir)) == 500

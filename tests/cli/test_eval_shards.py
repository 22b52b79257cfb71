"""`medvqa eval SET --shard I/N` and `--merge`: an eval set split across machines runs one shard of
every experiment, and the merged set holds the records and the compare of the set run whole; a
missing shard fails its experiments, naming it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.run.store import read_manifest
from tests.conftest import shared_data, study_records

COMPARED = ("key", "response", "error", "predicted", "status", "correct")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def write_set(path: Path, study: str) -> Path:
    """Two baselines on the first 120 physician items of the JMed48k sample, under C+Q and C+Q+I."""
    path.write_text(
        f'study_dir = "{study}"\n'
        '[[models]]\nmodel = "random"\n[[models]]\nmodel = "constant:A"\n'
        f'[[benchmarks]]\nbenchmark = "jmed48k"\ndata = "{shared_data("jmed48k-sample")}"\nsplit = "full"\n'
        'limit = 120\nconditions = "C+Q,C+Q+I"\n',
        encoding="utf-8",
    )
    return path


def test_a_set_run_in_two_shards_and_merged_is_the_set_run_whole(tmp_path):
    whole = write_set(tmp_path / "whole.toml", "whole")
    assert invoke("eval", whole, "--json").exit_code == 0
    split = write_set(tmp_path / "split.toml", "split")
    for i in range(2):
        result = invoke("eval", split, "--shard", f"{i}/2", "--json")
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        assert doc["compare"] is None and "--merge" in doc["notes"][0]  # a shard compares nothing
    shards = sorted((tmp_path / "split" / ".shards").glob("*/*/*/manifest.json"))
    assert [m.relative_to(tmp_path / "split" / ".shards").parts[0] for m in shards] == ["0of2"] * 2 + ["1of2"] * 2
    assert {read_manifest(m.parent)["shard"]["count"] for m in shards} == {2}

    result = invoke("eval", split, "--merge", "--json")
    assert result.exit_code == 0, result.output
    merged = json.loads(result.output)
    assert [e["n_records"] for e in merged["experiments"]] == [120 + 2, 120 + 2]  # 2 of the 120 show their images
    whole = study_records(tmp_path / "whole", COMPARED)
    assert study_records(tmp_path / "split", COMPARED) == whole and len(whole) == 244
    tables = [
        json.loads((tmp_path / s / "compare.json").read_text(encoding="utf-8"))["table"] for s in ("split", "whole")
    ]
    for table in tables:
        for row in table:
            row.pop("runs")  # the run directories read
    assert tables[0] == tables[1] and len(tables[0]) > 2


def test_merging_a_set_with_a_shard_missing_names_it_for_every_experiment(tmp_path):
    split = write_set(tmp_path / "split.toml", "split")
    assert invoke("eval", split, "--shard", "1/3").exit_code == 0
    result = invoke("eval", split, "--merge", "--json")
    assert result.exit_code == 4  # the set ran, its experiments failed
    doc = json.loads(result.output)
    assert doc["failed"] and all("shards 0/3, 2/3 missing" in e["failure"] for e in doc["experiments"])
    assert not list((tmp_path / "split").glob("*/*/manifest.json"))  # nothing merged


def test_shard_and_merge_together_or_with_a_dry_run_are_refused(tmp_path, monkeypatch):
    for name in ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"):  # (as on a machine outside any scheduler)
        monkeypatch.delenv(name, raising=False)
    split = write_set(tmp_path / "split.toml", "split")
    for args, message in (
        (["--shard", "0/2", "--merge"], "give --shard (run one shard of the set) or --merge"),
        (["--shard", "0/2", "--dry-run"], "--dry-run plans the whole set"),
        (["--shard", "auto"], "--shard auto needs a scheduler's task variables"),
    ):
        result = invoke("eval", split, *args)
        assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "split").exists()  # nothing ran

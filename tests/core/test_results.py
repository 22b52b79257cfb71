"""The results model: records and manifests validate as medvqa.Record / medvqa.Manifest, the
manifest is versioned, a run written before the version existed reads with the same numbers, and a
damaged record is one error naming its file and line."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.items import DataError
from medvqa.core.results import FORMAT_VERSION, upgrade_manifest
from medvqa.core.run.store import RunStore, read_manifest, read_records
from medvqa.stats import binomial_ci

LEGACY = Path(__file__).parents[1] / "fixtures" / "legacy_run_v1"


@pytest.fixture
def legacy(tmp_path) -> Path:
    """A jmed48k sample run written before records and manifests were typed (format 1: no
    `format` field), with what `report`, `report --table jmed48k` and `audit` printed then."""
    run_dir = tmp_path / "legacy"
    run_dir.mkdir()
    for name in ("manifest.json", "records.jsonl"):
        shutil.copy(LEGACY / name, run_dir / name)
    return run_dir


def before() -> dict:
    return json.loads((LEGACY / "reported_before.json").read_text(encoding="utf-8"))


def test_a_run_written_before_the_format_version_reports_the_same_numbers(legacy):
    assert "format" not in json.loads((legacy / "manifest.json").read_text())
    assert read_manifest(legacy)["format"] == FORMAT_VERSION
    files = {p.name: p.read_bytes() for p in legacy.iterdir()}

    def key(row):  # report levels are text now; before, a missing level was null
        return (row["condition"], row.get("profession") or "", row.get("dominant_type") or "")

    old = {key(r): r for r in before()["report"]}
    new = {key(r): r for r in medvqa.report(legacy, fmt="json") if not (r.get("profession") and r.get("dominant_type"))}
    assert set(old) == set(new)
    for k, row in old.items():
        for field in ("n", "correct", "accuracy", "answered", "refusal", "parse_failure", "error", "missing"):
            assert new[k][field] == pytest.approx(row[field], abs=1e-9), (k, field)
        # the intervals printed then were Clopper-Pearson; an accuracy's interval is Wilson's now
        assert (new[k]["ci_low"], new[k]["ci_high"]) == binomial_ci(row["correct"], row["n"]), k
        assert row["ci_low"] <= new[k]["ci_low"] and new[k]["ci_high"] <= row["ci_high"], k
    tables = medvqa.report(legacy, table="jmed48k")
    for name, rows in before()["table"].items():
        assert len(tables[name]) == len(rows)
        for got, want in zip(tables[name].to_dict(orient="records"), rows):
            for field in ("n", "correct", "accuracy", "items", "scored", "excluded"):
                if field in want:
                    assert got[field] == pytest.approx(want[field], abs=1e-9), (name, field)
    paired = medvqa.audit(legacy)["paired"]["overall"]
    # the McNemar p reported before was the exact conditional one: it stands beside the mid-p now
    renamed = {"mcnemar_p": "mcnemar_exact_p"}
    for field, value in before()["paired_overall"].items():
        assert paired[renamed.get(field, field)] == pytest.approx(value, abs=1e-9), field
    assert {p.name: p.read_bytes() for p in legacy.iterdir()} == files  # reading writes nothing


def test_records_and_manifests_validate_as_the_public_models(legacy):
    manifest = medvqa.Manifest.model_validate(read_manifest(legacy))
    assert manifest.benchmark == "jmed48k" and manifest.format == FORMAT_VERSION
    records = [medvqa.Record.model_validate(r) for r in read_records(legacy)]
    assert len(records) == 44 and {r.status for r in records} == {medvqa.Status.ANSWERED}
    assert records[0].model_extra["profession"] == "Nurse"  # the strata are kept as extra fields
    forced = medvqa.Record(item_id="q", condition="C+Q/forced", status="refusal")
    assert forced.derived and forced.base == medvqa.Condition.CQ
    with pytest.raises(ValueError, match="unknown condition 'C\\+X'"):
        medvqa.Record(item_id="q", condition="C+X", status="answered")


def test_a_manifest_of_a_newer_format_is_refused_naming_the_file(tmp_path):
    with pytest.raises(DataError, match="manifest format 99 is not one this medvqa reads"):
        upgrade_manifest({"format": 99, "benchmark": "jmed48k", "model": "m"}, file=tmp_path / "manifest.json")


@pytest.mark.parametrize("damage", [{"predicted": 5}, {"status": "fine"}, {"correct": "maybe"}, {"condition": 3}])
def test_a_damaged_record_is_one_line_naming_the_file_and_the_line(legacy, damage):
    lines = (legacy / "records.jsonl").read_text(encoding="utf-8").splitlines()
    lines[6] = json.dumps({**json.loads(lines[6]), **damage})
    (legacy / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"records.jsonl: record line 7: damaged record"):
        read_records(legacy)
    for command in (["audit", str(legacy), "--json"], ["report", str(legacy)], ["compare", str(legacy)]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 1, (command, result.output)
        assert "records.jsonl: record line 7: damaged record" in result.output
        assert "Traceback" not in result.output


def test_the_writer_refuses_an_invalid_record_before_writing_anything(tmp_path):
    manifest = {"benchmark": "b", "model": "m", "params": {}, "conditions": ["C+Q"]}
    with RunStore(tmp_path) as store:
        store.open(manifest)
        store.append({"item_id": "1", "condition": "C+Q", "status": "answered", "correct": True})
        with pytest.raises(DataError, match="damaged record"):
            store.append_many(
                [
                    {"item_id": "2", "condition": "C+Q", "status": "answered"},
                    {"item_id": "3", "condition": "C+Q", "status": "done"},
                ]
            )
    assert [r["item_id"] for r in read_records(tmp_path)] == ["1"]

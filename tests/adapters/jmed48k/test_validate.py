"""`validate_release` on the real sample (no errors) and on a folder with every rule broken."""

import pytest

import medvqa
from medvqa.adapters.jmed48k.validate import validate_release
from medvqa.core.items import DataError
from medvqa.core.plugins import get_benchmark
from medvqa.core.validation import errors, require_valid

from .broken_release import EXPECTED, write_broken_release


def test_real_sample_has_no_errors_only_warnings_for_images_not_redistributed(jmed_sample):
    findings = validate_release(jmed_sample)
    assert errors(findings) == []
    assert {(f.rule, f.level) for f in findings} == {("image-missing", "warning")}
    # 201 items reference images, 17 have them: the other 184 are Other/Unclear without files
    assert len(findings) == 184 == len({(f.file, f.section, f.number) for f in findings})
    items = {it.id: it for it in medvqa.load("jmed48k", path=jmed_sample, split="full")}
    for f in findings:
        year = 2025 if "2025_CORRECTED" in f.file else 2026
        item = items[f"Physician_{year}_{f.section}_Q{f.number}"]
        assert item.has_images and not item.image_available and item.meta["dominant_type"] == "Other/Unclear"


def test_every_rule_is_caught_and_names_its_record(tmp_path):
    path = write_broken_release(tmp_path)
    findings = validate_release(tmp_path)
    assert {f.file for f in findings} == {str(path)}
    assert {(f.section, f.number, f.rule, f.level) for f in findings} == EXPECTED
    by_number = {f.number: f for f in findings}
    assert "missing field(s) options" in by_number[2].message
    assert "'bb'" in by_number[3].message
    assert "already appears as question #3" in by_number[4].message
    assert "['F']" in by_number[5].message and "['Z']" in by_number[6].message
    assert "leaves the cell folder" in by_number[11].message
    assert "question #17 is not a JSON object" == next(f for f in findings if f.rule == "record").message
    assert str(by_number[2]).startswith(f"error: {path}: record A2: [required-field]")


def test_a_run_refuses_data_with_errors_unless_allowed(tmp_path, jmed_sample):
    write_broken_release(tmp_path)
    bench = get_benchmark("jmed48k")
    with pytest.raises(DataError) as err:
        require_valid(bench, tmp_path, allow_invalid=False)
    message = str(err.value)
    assert "13 error(s)" in message and "--allow-invalid" in message
    assert "record A12: [image-unreadable]" in message and "record A10" not in message  # a warning
    assert len(require_valid(bench, tmp_path, allow_invalid=True)) == len(EXPECTED)
    assert len(require_valid(bench, jmed_sample, allow_invalid=False)) == 184  # warnings only
    assert require_valid(bench, None, allow_invalid=False) == []

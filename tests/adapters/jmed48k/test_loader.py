import json
import shutil
from collections import Counter

import pytest

import medvqa
from medvqa.core.conditions import Condition, applicable
from medvqa.core.items import DataError, ImageRole


def test_real_sample_loads_800_items_with_release_ids_and_images(jmed_sample):
    items = medvqa.load("jmed48k", path=jmed_sample, split="full")
    assert len(items) == 800
    by_id = {it.id: it for it in items}
    assert len(by_id) == 800
    a1 = by_id["Physician_2025_A_Q1"]
    assert [o.key for o in a1.options] == ["A", "B", "C", "D", "E"]
    assert [o.label for o in a1.options] == ["a", "b", "c", "d", "e"]
    assert a1.gold.alternatives == (("A",),) and a1.language == "ja"
    assert sum(it.has_images for it in items) == 201
    assert sum(it.image_available for it in items) == 17
    c42 = by_id["Physician_2025_C_Q42"]  # five content images, as a list in the source
    assert [im.role for im in c42.images] == [ImageRole.CONTENT] * 5 and c42.image_available
    assert c42.image_as_options and c42.meta["dominant_type"] == "Chart/Graph/Table"
    assert by_id["Physician_2025_E_Q28"].gold.alternatives == (("A",), ("C",))
    a75 = by_id["Physician_2025_A_Q75"]
    assert a75.answer_format == "numeric" and a75.options == () and a75.gold.alternatives == (("6", "0", "0"),)
    assert by_id["Physician_2025_A_Q12"].n_select == 2
    unclear = by_id["Physician_2025_A_Q15"]
    assert unclear.has_images and not unclear.image_available
    assert applicable(unclear) == (Condition.C, Condition.CQ)
    assert sum(it.image_as_options for it in items) == 16


def test_eval_split_is_the_five_most_recent_years_per_profession(jmed_sample):
    assert len(medvqa.load("jmed48k", path=jmed_sample, split="eval")) == 800
    only_2026 = medvqa.load("jmed48k", path=jmed_sample, split="full", years=[2026])
    assert {it.meta["year"] for it in only_2026} == {2026} and len(only_2026) == 400


def test_bundled_sample_has_every_gold_format():
    items = medvqa.load("jmed48k", split="sample")
    formats = Counter(it.meta["answer_format"] for it in items if not it.excluded)
    assert {"single", "multi", "alternatives", "numeric"} <= set(formats)
    assert any(it.image_as_options and it.image_available for it in items)
    assert any(len(it.images) > 1 and it.image_available for it in items)
    assert any(it.text_reference for it in items)
    assert sum(it.excluded for it in items) == 1
    assert {it.meta["profession"] for it in items} == {"Physician", "Nurse"}


def _copy_cell(jmed_sample, tmp_path):
    src = jmed_sample / "JMed48k" / "Physician" / "Physician_2026"
    dst = tmp_path / "JMed48k" / "Physician" / "Physician_2026"
    shutil.copytree(src, dst)
    return dst


def test_image_reference_escaping_the_cell_folder_is_refused(jmed_sample, tmp_path):
    cell = _copy_cell(jmed_sample, tmp_path)
    path = cell / "2026_CORRECTED.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["questions"][3]["img"]["content_img"] = "../../../../etc/passwd"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataError) as err:
        medvqa.load("jmed48k", path=tmp_path, split="full")
    q = data["questions"][3]
    assert str(path) in str(err.value)
    assert f"Physician_2026_{q['section']}_Q{q['question_number']}" in str(err.value)
    assert "escapes the dataset folder" in str(err.value)


def test_missing_field_names_file_and_record(jmed_sample, tmp_path):
    cell = _copy_cell(jmed_sample, tmp_path)
    path = cell / "2026_CORRECTED.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["questions"][5]["options"]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataError, match=r"2026_CORRECTED.json: record #5 .*missing field\(s\) options"):
        medvqa.load("jmed48k", path=tmp_path, split="full")


def test_no_data_message_names_both_ways(tmp_path):
    with pytest.raises(DataError, match="no JMed48k"):
        medvqa.load("jmed48k", path=tmp_path, split="full")

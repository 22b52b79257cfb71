"""The real 77th radiological technologist booklets (MHLW PDFs, figure booklets without a text
layer, no answer key)."""

from __future__ import annotations

import csv
import re
import unicodedata

import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageStat

from medvqa.adapters.jmed48k.extract import extract
from medvqa.core.items import Gold
from tests.conftest import shared_data

# the real MHLW booklets are read end to end: tens of seconds for the module
pytestmark = pytest.mark.slow

DEBRIS = re.compile(r"DKIX|indd|\d{4}/\d\d/\d\d|―\s*\d+\s*―|[。）]\s*\d+$|別\s*冊\s*$|No\.\s*\d+$")


@pytest.fixture(scope="module")
def rt77(tmp_path_factory):
    pdfs = shared_data("mhlw-pdf", "rt77", "pdfs")
    result = extract(
        questions=[pdfs / "77AM.pdf", pdfs / "77PM.pdf"],
        figures=[pdfs / "77AMimage.pdf", pdfs / "77PMimage.pdf"],
        profession="Radiological Technologist",
        year=2025,
        section_names=["AM", "PM"],
        out=tmp_path_factory.mktemp("rt77"),
    )
    return result, pdfs


def _records(result):
    return {(r["section"], r["question_number"]): r for r in result.records}


def _texts(record):
    return [record["question_text"], *record["options"].values()]


def test_one_hundred_questions_per_booklet_with_five_options(rt77):
    result, _ = rt77
    assert result.errors == []
    for section in ("AM", "PM"):
        numbers = [r["question_number"] for r in result.records if r["section"] == section]
        assert numbers == list(range(1, 101))
    assert all(list(r["options"]) == ["1", "2", "3", "4", "5"] for r in result.records)
    assert all(o.strip() for r in result.records for o in r["options"].values())
    assert result.path.parent.name == "Radiological_Technologist_2025"


def test_number_to_choose_matches_the_printed_text(rt77):
    """Independent reading: pdfium's text of each booklet, minus the cover's worked example."""
    result, pdfs = rt77
    reports = {(q.section, q.number): q for q in result.questions}
    for section, name in (("AM", "77AM.pdf"), ("PM", "77PM.pdf")):
        doc = pdfium.PdfDocument(pdfs / name)
        text = "".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
        printed = len(re.findall(r"2つ選べ", re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)))) - 1
        two = [n for (s, n), q in reports.items() if s == section and q.n_select == 2]
        assert len(two) == printed > 10


def test_no_header_footer_or_printer_mark_debris(rt77):
    result, _ = rt77
    for record in result.records:
        for text in _texts(record):
            assert not DEBRIS.search(text), (record["section"], record["question_number"], text)
            assert "\t" not in text and "(cid:" not in text


def test_sub_and_superscripts_survive(rt77):
    records = _records(rt77[0])
    assert "T₁強調像" in records[("PM", 10)]["question_text"]
    assert "T₁強調像" in records[("AM", 5)]["options"]["1"]
    assert records[("PM", 2)]["options"]["1"].count("T₂") == 2
    assert records[("AM", 12)]["question_text"].startswith("⁹⁹Mo−⁹⁹ᵐTc")
    assert records[("PM", 19)]["question_text"].startswith("¹⁸F−FDG")
    assert "⁹⁹ᵐTc−MAA" in records[("AM", 17)]["options"]["1"]


def test_justified_words_are_joined_and_latin_spaces_kept(rt77):
    records = _records(rt77[0])
    assert records[("AM", 47)]["options"]["1"] == "補体"
    assert records[("AM", 48)]["options"]["1"].startswith("胃癌")
    assert records[("PM", 10)]["options"]["2"] == "門脈"
    assert records[("AM", 2)]["options"]["5"].startswith("functional MRI")


def _mapping_pages(pdfs):
    """image_mapping.csv: stems of the 77th exam → figure-booklet pages (`77_AM_image_p10_11.png`)."""
    out = {}
    with (pdfs / "image_mapping.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            m = re.match(r"77_(AM|PM)_image_p([\d_]+)\.png$", row["image_filename"])
            if row["exam_num"] == "77" and m:
                number = int(row["question_order"])
                out[(m.group(1), number - 100 if number > 100 else number)] = [int(p) for p in m.group(2).split("_")]
    return out


def test_every_figure_reference_resolves_to_the_mapped_pages(rt77):
    result, pdfs = rt77
    records, reports = _records(result), {(q.section, q.number): q for q in result.questions}
    referenced = {key for key, q in reports.items() if q.figure_refs}
    mapping = _mapping_pages(pdfs)
    assert referenced == set(mapping) and len(referenced) == 21
    for key in referenced:
        pages = sorted(
            {
                int(re.search(r"image\.pdf p(\d+)", im["from"]).group(1))
                for im in reports[key].images
                if "image.pdf" in im["from"]
            }
        )
        assert pages == mapping[key], key
        images = records[key]["img"]["content_img"]
        for ref in [images] if isinstance(images, str) else images:
            with Image.open(result.path.parent / ref) as im:
                assert min(im.size) > 200 and ImageStat.Stat(im.convert("L")).stddev[0] > 10, (key, ref)
    # two panels of one page (No. 4Ａ/4Ｂ, printed sideways) become two upright images
    assert len(records[("AM", 8)]["img"]["content_img"]) == 2


def test_inline_figure_of_am_question_1(rt77):
    result, _ = rt77
    report = next(q for q in result.questions if (q.section, q.number) == ("AM", 1))
    record = _records(result)[("AM", 1)]
    assert [im["from"] for im in report.images] == ["77AM.pdf p5"]
    with Image.open(result.path.parent / record["img"]["content_img"]) as im:
        assert im.width > 600 and 300 < im.height < im.width  # ≥ 150 dpi over the drawing's width
        assert ImageStat.Stat(im.convert("L")).stddev[0] > 10
    assert record["options"]["1"] == "均一性" and not record["text_only"]


def test_what_could_not_be_read_as_text_is_reported(rt77):
    result, _ = rt77
    reports = {(q.section, q.number): q for q in result.questions}
    records = _records(result)
    for key in (("AM", 65), ("PM", 69)):  # radicals and fraction bars drawn as vectors
        assert any("vector-drawn" in w for w in reports[key].warnings)
        assert records[key]["img"]["supplementary_img"]
    pm71 = records[("PM", 71)]  # five graphs are the options
    assert pm71["image_as_options"] and len(pm71["img"]["answer_img"]) == 5


def test_without_answer_key_gold_is_null_and_said(rt77):
    result, _ = rt77
    assert all(r["correct_answer"] is None for r in result.records)
    assert all(Gold.from_json(r["correct_answer"]) is None for r in result.records)
    assert any("no answer key given" in w for w in result.warnings)
    assert all(any("no answer key" in w for w in q.warnings) for q in result.questions)
    assert result.report_path.is_file()

"""Extraction of generated MHLW-like booklets: every layout, every answer-key form, rotated
pages, two-column options and shared case texts round-trip exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from medvqa.adapters.jmed48k.extract import extract
from medvqa.adapters.jmed48k.extract.figures import Caption, CaptionMachine
from medvqa.core.items import DataError, Gold

from . import pdf_fixtures as F


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("booklets")
    return {
        "plain": F.question_booklet(d / "01AM.pdf"),
        "rotated": F.question_booklet(d / "02AM.pdf", rotate=90),
        "figures": F.figure_booklet(d / "01AMimage.pdf"),
        "answers_pdf": F.answer_pdf(d / "seitou.pdf"),
        "dir": d,
    }


@pytest.fixture(scope="module")
def rotated_run(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("out_rotated")
    return extract(
        questions=[files["rotated"]],
        figures=[files["figures"]],
        answers=files["answers_pdf"],
        profession="physician",
        year=2030,
        section_names=["AM"],
        out=out,
    )


@pytest.fixture(scope="module")
def plain_run(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("out_plain")
    return extract(
        questions=[files["plain"]],
        figures=[files["figures"]],
        answers=files["answers_pdf"],
        profession="Physician",
        year=2030,
        out=out,
    )


def _by_number(result):
    return {r["question_number"]: r for r in result.records}


def test_every_question_round_trips_exactly(plain_run):
    records = _by_number(plain_run)
    assert plain_run.errors == []
    assert sorted(records) == list(range(1, 14))
    for number, expected in F.EXPECTED.items():
        assert records[number]["question_text"] == expected["text"], number
        assert records[number]["options"] == expected["options"], number
        assert records[number]["section"] == "AM"  # from the file name 01AM.pdf
    for number, record in records.items():
        assert record["text_reference"] == (F.CASE_TEXT if number in F.CASE_QUESTIONS else None)


def test_rotated_pages_read_like_upright_ones(plain_run, rotated_run):
    assert rotated_run.errors == []
    plain, rotated = _by_number(plain_run), _by_number(rotated_run)
    for number in plain:
        for key in ("question_text", "options", "correct_answer", "text_reference", "image_as_options", "text_only"):
            assert rotated[number][key] == plain[number][key], (number, key)
    assert any("turned upright" in note for b in rotated_run.booklets for note in b["notes"])


def test_every_answer_form_becomes_the_release_value(rotated_run):
    records = _by_number(rotated_run)
    reports = {q.number: q for q in rotated_run.questions}
    for number, (raw, value) in F.ANSWER_FORMS.items():
        assert records[number]["correct_answer"] == value, number
        assert reports[number].answer["raw"] == raw
        gold = Gold.from_json(value)
        assert (gold is None) == (value is None)
    reasons = {n: reports[n].answer["reason"] for n in (9, 10, 11, 12)}
    assert reasons == {9: "採点除外", 10: "解なし", 11: "全員正解", 12: "blank in the answer key"}
    assert Gold.from_json(records[7]["correct_answer"]).alternatives == (("2", "4"), ("3", "4"))


def test_csv_key_without_question_and_question_without_key_are_errors(files, tmp_path):
    forms = {n: f for n, f in F.ANSWER_FORMS.items() if n != 13}
    key = F.answer_csv(tmp_path / "key.csv", forms, section="A", extra={14: ("3", None)})
    result = extract(
        questions=[files["plain"]],
        answers=key,
        profession="Physician",
        year=2030,
        section_names=["A"],
        out=tmp_path / "out",
    )
    assert any("key for A14 but no such question" in e for e in result.errors)
    assert any(e.startswith("A13: no answer key entry") for e in result.errors)
    assert len(result.errors) == 2
    assert _by_number(result)[2]["correct_answer"] == ["C", "E"]  # `ce` from the CSV, uppercase


def test_figures_from_both_booklets_are_cropped_and_paired(rotated_run):
    records = _by_number(rotated_run)
    reports = {q.number: q for q in rotated_run.questions}
    folder = rotated_run.path.parent
    q4 = records[4]["img"]["content_img"]
    assert len(q4) == 2 and [im["from"].split(" ")[1] for im in reports[4].images] == ["p2", "p3"]
    q8 = records[8]
    assert q8["image_as_options"] and len(q8["img"]["answer_img"]) == 5 and q8["img"]["content_img"] == ""
    assert isinstance(records[6]["img"]["content_img"], str) and isinstance(records[9]["img"]["content_img"], str)
    assert records[1]["text_only"] and not records[6]["text_only"]
    for record in records.values():
        refs = record["img"]["content_img"], record["img"]["answer_img"]
        for ref in [r for group in refs for r in ([group] if isinstance(group, str) else group) if r]:
            path = (folder / ref).resolve()
            assert path.is_relative_to(folder.resolve()) and path.is_file()
            with Image.open(path) as im:
                assert im.width >= 150 and ImageStat.Stat(im.convert("L")).stddev[0] > 5
    # the sideways No. 1Ｂ is turned upright: its picture is wider than tall, as drawn
    with Image.open(folder / q4[1]) as im:
        assert im.width > im.height


def test_written_cell_and_report(rotated_run):
    cell = rotated_run.path.parent
    assert cell.name == "Physician_2030" and cell.parent.name == "Physician" and cell.parent.parent.name == "JMed48k"
    data = json.loads(rotated_run.path.read_text(encoding="utf-8"))
    assert [r["question_number"] for r in data["questions"]] == list(range(1, 14))
    report = json.loads(rotated_run.report_path.read_text(encoding="utf-8"))
    assert report["ok"] and report["counts"]["questions"] == 13
    assert report["questions"][4]["answer_slots"] == 3 and report["questions"][1]["n_select"] == 2
    assert all(q["pages"] for q in report["questions"]) and all(q["boxes"] for q in report["questions"])


def test_running_header_footer_and_printer_marks_are_dropped(plain_run):
    texts = [t for r in plain_run.records for t in [r["question_text"], *r["options"].values()]]
    for debris in ("模擬試験", "MOCK", "indd", "―", "別冊No. 1\n"):
        assert not any(debris in t for t in texts), debris


def test_caption_machine_reads_caption_forms():
    assert CaptionMachine("No. 3").run() == Caption(3)
    assert CaptionMachine("No. 6Ａ").run() == Caption(6, "A")
    assert CaptionMachine("No. 12 （A問題 15）").run() == Caption(12, None, "A問題15")
    assert CaptionMachine("別冊 No. 2 （問題 8）").run() == Caption(2, None, "問題8")
    assert CaptionMachine("Notes 1") is not None and CaptionMachine("Notes 1").run() is None
    assert CaptionMachine("図 1").run() is None


def test_missing_font_fails_with_a_clear_message(monkeypatch):
    monkeypatch.setattr(F, "FONT_PATH", F.FONT_PATH.with_name("absent.ttf"))
    with pytest.raises(pytest.fail.Exception, match="matplotlib-fontja"):
        F.register_font()


def test_bad_inputs_raise_data_errors(files, tmp_path):
    with pytest.raises(DataError, match="unknown profession"):
        extract(questions=[files["plain"]], profession="astronaut", year=2030, out=tmp_path)
    with pytest.raises(DataError, match="not found"):
        extract(questions=[tmp_path / "none.pdf"], profession="nurse", year=2030, out=tmp_path)
    with pytest.raises(DataError, match="engine"):
        extract(questions=[files["plain"]], profession="nurse", year=2030, engine="ocr", out=tmp_path)


def _booklet(method, figures):
    from medvqa.adapters.jmed48k.extract.figures import FigureBooklet

    return FigureBooklet(Path("x_image.pdf"), figures, method)


def _figure(index, pages, panels, caption=None):
    from medvqa.adapters.jmed48k.extract.figures import BookletFigure

    return BookletFigure(index, caption, pages, [(p, b) for p, b in panels], {p: 0 for p in pages})


def test_ambiguous_booklet_order_leaves_references_unresolved():
    from medvqa.adapters.jmed48k.extract.figures import pair_references
    from medvqa.adapters.jmed48k.extract.questions import FigureRef

    box = (0.0, 0.0, 100.0, 100.0)
    figures = [_figure(i, [i], [(i, box)]) for i in range(3)]
    resolved, warnings = pair_references([FigureRef(1), FigureRef(2)], _booklet("order", figures))
    assert resolved == {} and len(warnings) == 1 and "ambiguous" in warnings[0]
    resolved, warnings = pair_references([FigureRef(1), FigureRef(2), FigureRef(3)], _booklet("order", figures))
    assert [r.page for regions in resolved.values() for r in regions] == [0, 1, 2] and warnings == []


def test_panels_that_cannot_be_told_apart_give_the_whole_figure_with_a_warning():
    from medvqa.adapters.jmed48k.extract.figures import pair_references
    from medvqa.adapters.jmed48k.extract.questions import FigureRef

    one_panel = _figure(0, [4], [(4, (10.0, 10.0, 200.0, 200.0))])
    refs = [FigureRef(1, "A"), FigureRef(1, "B")]
    resolved, warnings = pair_references(refs, _booklet("order", [one_panel]))
    assert resolved[refs[0]] == resolved[refs[1]] and len(resolved[refs[0]]) == 1
    assert len(warnings) == 2 and all("cannot be told apart" in w for w in warnings)

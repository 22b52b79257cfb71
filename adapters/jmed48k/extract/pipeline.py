"""`extract`: MHLW booklets (+ figure booklets, + answer key) → one JMed48k release cell."""

from __future__ import annotations

import re
from pathlib import Path
from time import perf_counter

from PIL import Image, ImageStat

from medvqa import DataError

from ..loader import Cell
from ..professions import specialty_key
from ..validate import validate_cell
from . import mineru
from .answers import AnswerError, normalise_section, parse_answer, read_answer_key
from .booklet import Figure, Flow, read_booklet
from .figures import FigureBooklet, Region, pair_references, read_figure_booklet
from .questions import QuestionDraft, parse_questions
from .report import ExtractionResult, QuestionReport
from .writer import cell_folder, image_ref, write_cell, write_report

ENGINES = ("pdfplumber", "mineru")
DPI = 200


def extract(
    *,
    questions: list[Path],
    figures: list[Path] = (),
    answers: Path | None = None,
    profession: str,
    year: int,
    section_names: list[str] | None = None,
    engine: str = "pdfplumber",
    mineru_output: Path | None = None,
    out: Path,
) -> ExtractionResult:
    """Extract question booklets (one section each) into `out/JMed48k/{specialty}/{specialty}_{year}/`.

    Figure booklets are paired with question booklets by position (same count) or by file
    name prefix (`77AMimage.pdf` → `77AM.pdf`). Gold answers come only from `answers`; without
    it every `correct_answer` is null. Problems that make the output unusable are returned
    in `errors`; everything else the reader noticed is in the warnings."""
    booklets = [Path(q) for q in questions]
    figure_files = [Path(f) for f in figures]
    if not booklets:
        raise DataError("no question booklet given")
    for path in booklets + figure_files + ([Path(answers)] if answers else []):
        if not path.is_file():
            raise DataError("file not found", file=path)
    if engine not in ENGINES:
        raise DataError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    try:
        specialty = specialty_key(profession)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    sections = list(section_names) if section_names else default_sections(booklets)
    if len(sections) != len(booklets) or len(set(sections)) != len(sections):
        raise DataError(f"need one distinct section name per question booklet, got {sections}")
    pairing = pair_figure_booklets(booklets, figure_files)
    result = ExtractionResult(None, [], [])
    images: dict[str, Image.Image] = {}
    drafts: list[QuestionDraft] = []
    for i, (path, section) in enumerate(zip(booklets, sections)):
        started = perf_counter()
        flow = read_booklet(path) if engine == "pdfplumber" else mineru.read_flow(path, mineru_output)
        found, warnings = parse_questions(flow, section)
        result.warnings.extend(f"{path.name}: {w}" for w in flow.warnings + warnings)
        figure_booklet = read_figure_booklet(pairing[i]) if i in pairing else None
        try:
            resolved = _resolve(found, figure_booklet, result)
            for draft in found:
                record, report = _record(draft, specialty, year, flow, figure_booklet, resolved, images)
                result.records.append(record)
                result.questions.append(report)
        finally:
            if flow.booklet is not None:
                flow.booklet.close()
            if figure_booklet is not None:
                figure_booklet.close()
        drafts.extend(found)
        result.booklets.append(
            {
                "file": str(path),
                "section": section,
                "engine": engine,
                "pages": flow.pages,
                "questions": len(found),
                "figure_booklet": str(pairing[i]) if i in pairing else None,
                "figure_pairing": figure_booklet.method if figure_booklet else None,
                "notes": flow.notes + (figure_booklet.notes if figure_booklet else []),
                "seconds": round(perf_counter() - started, 2),
            }
        )
        if not found:
            result.errors.append(f"{path.name}: no question found")
    _join_answers(answers, drafts, result)
    folder = cell_folder(out, specialty, year)
    result.path = write_cell(folder, year, result.records, images)
    # Quality control: the release's own validation rules, on exactly what was written.
    for finding in validate_cell(Cell(specialty, year, folder)):
        (result.errors if finding.level == "error" else result.warnings).append(str(finding))
    result.report_path = folder / f"{year}_extraction_report.json"
    write_report(folder, year, result.to_json())
    return result


def default_sections(booklets: list[Path]) -> list[str]:
    """The letters ending each file name (`77AM.pdf` → `AM`, `119A.pdf` → `A`), else A, B, …"""
    names = []
    for path in booklets:
        m = re.search(r"([A-Za-z]+)$", path.stem)
        names.append(m.group(1).upper() if m else "")
    if all(names) and len(set(names)) == len(names):
        return names
    return [chr(ord("A") + i) for i in range(len(booklets))]


def pair_figure_booklets(booklets: list[Path], figures: list[Path]) -> dict[int, Path]:
    """Question-booklet index → its figure booklet."""
    if not figures:
        return {}
    if len(figures) == len(booklets):
        return dict(enumerate(figures))
    pairing = {}
    for fig in figures:
        matches = [i for i, b in enumerate(booklets) if fig.stem.startswith(b.stem)]
        if not matches:
            raise DataError("cannot tell which question booklet this figure booklet belongs to", file=fig)
        pairing[max(matches, key=lambda i: len(booklets[i].stem))] = fig
    return pairing


def _resolve(drafts: list[QuestionDraft], figure_booklet: FigureBooklet | None, result: ExtractionResult) -> dict:
    refs = [r for d in drafts for r in d.refs]
    if not refs:
        return {}
    if figure_booklet is None:
        result.warnings.append(f"section {drafts[0].section}: stems cite the figure booklet but none was given")
        return {}
    resolved, warnings = pair_references(refs, figure_booklet)
    result.warnings.extend(warnings)
    return resolved


def _record(
    draft: QuestionDraft,
    specialty: str,
    year: int,
    flow: Flow,
    figure_booklet: FigureBooklet | None,
    resolved: dict,
    images: dict[str, Image.Image],
) -> tuple[dict, QuestionReport]:
    report = QuestionReport(
        draft.section,
        draft.number,
        [p + 1 for p in draft.pages],
        n_select=draft.n_select,
        answer_slots=draft.slots,
        figure_refs=[r.name for r in draft.refs],
        image_as_options=draft.image_as_options,
        warnings=list(draft.warnings),
    )
    unit = "pt" if flow.booklet is not None else "1/1000 page"
    report.boxes = [
        {"page": ln.page + 1, "box": [round(v, 1) for v in ln.box], "unit": unit} for ln in draft.lines if ln.box
    ]
    content, answer, extra = [], [], []
    seen: set[Region] = set()
    for figure in draft.figures:
        content.append((_render_inline(flow, figure), f"{flow.source.name} p{figure.page + 1}"))
    for option in draft.options:
        for figure in option.figures:
            answer.append(
                (_render_inline(flow, figure), f"{flow.source.name} p{figure.page + 1} option {option.label}")
            )
    for ref in draft.refs:
        regions = resolved.get(ref)
        if not regions:
            report.warnings.append(f"（別冊{ref.name}） unresolved (see the booklet warnings)")
            continue
        target = answer if ref.options else content
        for region in regions:
            if region in seen:
                continue  # one picture cited twice (a figure whose panels could not be split)
            seen.add(region)
            target.append(
                (_render_region(figure_booklet, region), f"{figure_booklet.path.name} p{region.page + 1} ({ref.name})")
            )
    if flow.booklet is not None:
        extra = [
            (_render_inline(flow, f), f"{flow.source.name} p{f.page + 1} (printed question)")
            for f in draft.supplementary
        ]
    elif draft.supplementary:
        report.warnings.append("no supplementary image: the engine gave no page positions")
    img = {}
    for role, key, found in (
        ("content", "content_img", content),
        ("answer", "answer_img", answer),
        ("supplementary", "supplementary_img", extra),
    ):
        refs = []
        for n, (image, where) in enumerate(found, start=1):
            ref = image_ref(specialty, year, draft.section, draft.number, role, n if len(found) > 1 else None)
            images[ref] = image
            refs.append(ref)
            report.images.append({"file": ref, "role": role, "from": where})
            if _blank(image):
                report.warnings.append(f"{ref} looks blank")
        if refs or role != "supplementary":
            img[key] = refs[0] if len(refs) == 1 else (refs or "")
    record = {
        "question_number": draft.number,
        "section": draft.section,
        "question_text": draft.stem,
        "options": {o.label: o.text for o in draft.options},
        "correct_answer": None,
        "text_only": not (content or answer or extra),
        "img": img,
        "text_reference": draft.text_reference,
        "image_as_options": draft.image_as_options,
    }
    return record, report


def _render_inline(flow: Flow, figure: Figure) -> Image.Image:
    if figure.image is not None:
        with Image.open(figure.image) as im:
            return im.convert("RGB")
    return flow.booklet.render(figure.page, figure.box, dpi=DPI)


def _render_region(figure_booklet: FigureBooklet, region: Region) -> Image.Image:
    return figure_booklet.booklet.render(region.page, region.box, dpi=DPI, angle=region.angle)


def _blank(image: Image.Image) -> bool:
    return ImageStat.Stat(image.convert("L")).stddev[0] < 2.0


def _join_answers(answers: Path | None, drafts: list[QuestionDraft], result: ExtractionResult) -> None:
    reports = {(normalise_section(q.section), q.number): q for q in result.questions}
    records = {(normalise_section(r["section"]), r["question_number"]): r for r in result.records}
    if answers is None:
        result.warnings.append(f"no answer key given: correct_answer is null for all {len(records)} questions")
        for q in result.questions:
            q.warnings.append("no answer key: correct_answer is null")
        return
    sections = {normalise_section(d.section) for d in drafts}
    drafted = {(normalise_section(d.section), d.number): d for d in drafts}
    keyed = set()
    for entry in read_answer_key(Path(answers)):
        section = entry.section or (next(iter(sections)) if len(sections) == 1 else None)
        key = (section, entry.number)
        label = f"{entry.section or ''}{entry.number}"
        if section is None:
            result.errors.append(f"{entry.where}: key {label} names no section but there are several booklets")
            continue
        if key not in records:
            result.errors.append(f"{entry.where}: key for {label} but no such question was extracted")
            continue
        if key in keyed:
            result.errors.append(f"{entry.where}: second key for {label}")
            continue
        keyed.add(key)
        draft, record, report = drafted[key], records[key], reports[key]
        report.answer = {"raw": entry.raw, "reason": None, "where": entry.where}
        try:
            value, reason = parse_answer(
                entry.raw, options=list(record["options"]), slots=draft.slots, n_select=draft.n_select
            )
        except AnswerError as exc:
            result.errors.append(f"{entry.where}: {report.key}: {exc}")
            continue
        record["correct_answer"] = value
        if value is None:
            report.answer["reason"] = reason
            report.warnings.append(f"no usable official answer ({reason}): correct_answer is null")
    for key in records.keys() - keyed:
        result.errors.append(f"{reports[key].key}: no answer key entry for this question")

"""A question booklet read with pdfplumber: the flow of text lines and figures.

Running headers and footers, page numbers and printer's marks are dropped; figures drawn
between a stem and its options become `Figure` entries (their labels go with them); the
`別冊 No. X` boxes that point at the figure booklet are dropped; vector marks inside text
lines (radicals, fraction bars) are counted so the question can be flagged.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from medvqa.ja import fold

from .pdfpage import (
    Box,
    Line,
    PdfBooklet,
    body_box,
    build_lines,
    cluster,
    contains_point,
    graphics,
    intersects,
    pad,
    page_chars,
    union,
)

MARKER = re.compile(r"^別冊(No\.?\d+[A-Z]?)?$")
PAGE_NUMBER = re.compile(r"^[\s\-―—–‐ー－]*\d{1,3}[\s\-―—–‐ー－]*$")
QUESTION_START = re.compile(r"^(\d{1,3})[ \t]+\S")
OPTION_START = re.compile(r"^\s*(?:[1-9１-９][．.]|[a-hａ-ｈ][ \t\u3000])")
OPENING = "（(「『〈《【〔［[“‘"
MIN_FIGURE = (40.0, 25.0)  # width, height in points


@dataclass
class Figure:
    """A picture in the flow: a region of a PDF page to render, or a file an engine wrote."""

    page: int
    box: Box | None
    image: Path | None = None


@dataclass
class Flow:
    """A booklet as the question parser reads it: lines and figures in reading order."""

    source: Path
    entries: list = field(default_factory=list)
    pages: int = 0
    booklet: PdfBooklet | None = None  # for rendering regions; None when images are files
    notes: list[str] = field(default_factory=list)  # how it was read
    warnings: list[str] = field(default_factory=list)  # what could not be read


@dataclass
class _Page:
    index: int
    body: Box
    chars: list
    objects: list


def read_booklet(path: Path) -> Flow:
    """Read a question booklet. The returned flow keeps the booklet open for rendering;
    close it with `flow.booklet.close()`."""
    booklet = PdfBooklet(path)
    pages = []
    for i, page in enumerate(booklet.pages):
        body = body_box(page)
        pages.append(_Page(i, body, page_chars(page, body), graphics(page, body)))
    repeated = repeated_objects([p.objects for p in pages])
    flow = Flow(Path(path), pages=len(pages), booklet=booklet)
    if booklet.turned:
        flow.notes.append("pages with /Rotate were turned upright before reading")
    page_lines = []
    for p in pages:
        objects = [o for o in p.objects if signature(o) not in repeated]
        lines, figures = _read_page(p, objects, lambda c, i=p.index: booklet.glyph_text(i, c))
        page_lines.append((p, lines, figures))
    furniture = _furniture([lines for _, lines, _ in page_lines])
    for p, lines, figures in page_lines:
        lines = [ln for ln in lines if id(ln) not in furniture and not _is_page_number(ln, p.body)]
        _mark_numbers(lines)
        entries = sorted(lines + figures, key=lambda e: e.box[1])
        flow.entries.extend(entries)
    return flow


def signature(obj: dict) -> tuple:
    return (obj["kind"],) + tuple(round(v) for v in obj["box"])


def repeated_objects(pages: list[list[dict]]) -> set:
    """Drawings printed at the same place on most pages: crop marks, page-number rules.
    Raster images are never furniture here (figure pages often share one layout)."""
    counts = Counter(sig for objects in pages for sig in {signature(o) for o in objects if o["kind"] != "image"})
    floor = max(2, len(pages) // 2)
    return {sig for sig, n in counts.items() if n >= floor}


def _segments(line: Line) -> list[str]:
    return [re.sub(r"\d+", "#", fold(seg)) for seg in line.text.split("\t") if seg.strip()]


def _furniture(pages: list[list[Line]]) -> set[int]:
    """Lines made only of text repeated at the same height on most pages once digits are
    ignored: running headers, footer codes such as `DKIX-06-前H-5`, page numbers."""
    seen: dict[str, list[tuple[int, float]]] = {}
    for page, lines in enumerate(pages):
        for ln in lines:
            for seg in _segments(ln):
                seen.setdefault(seg, []).append((page, ln.box[3]))
    floor = max(2, len(pages) // 2)

    def repeated(seg: str, bottom: float) -> bool:
        return len({p for p, b in seen[seg] if abs(b - bottom) <= 4}) >= floor

    return {id(ln) for lines in pages for ln in lines if all(repeated(seg, ln.box[3]) for seg in _segments(ln))}


def _is_page_number(line: Line, body: Box) -> bool:
    margin = 0.07 * (body[3] - body[1])
    near_edge = line.box[1] < body[1] + margin or line.box[3] > body[3] - margin
    return near_edge and bool(PAGE_NUMBER.match(line.text))


def _read_page(p: _Page, objects: list[dict], resolve) -> tuple[list[Line], list[Figure]]:
    chars = p.chars
    objects, chars = _drop_markers(objects, chars)
    groups = cluster([o["box"] for o in objects], gap=8.0)
    figure_boxes, small = [], []
    for group in groups:
        members = [objects[i] for i in group]
        box = union(o["box"] for o in members)
        if any(o["kind"] == "image" for o in members) or (
            box[2] - box[0] >= MIN_FIGURE[0] and box[3] - box[1] >= MIN_FIGURE[1]
        ):
            figure_boxes.append(box)
        else:
            small.append((box, members))
    marks = []
    changed = True
    while changed and figure_boxes:  # outlined labels and tick marks around a drawing
        changed = False
        rest = []
        for box, members in small:
            hit = next((i for i, f in enumerate(figure_boxes) if intersects(pad(f, 14, 8), box)), None)
            if hit is None:
                rest.append((box, members))
            else:
                figure_boxes[hit] = union([figure_boxes[hit], box])
                changed = True
        small = rest
    for _, members in small:
        marks.extend(members)
    figure_boxes = _merge_overlapping(figure_boxes)
    inside = {
        id(c)
        for c in chars
        if any(contains_point(pad(b, 2), (c["x0"] + c["x1"]) / 2, (c["top"] + c["bottom"]) / 2) for b in figure_boxes)
    }
    lines = build_lines([c for c in chars if id(c) not in inside], p.index, resolve)
    figure_boxes, lines = _absorb_labels(figure_boxes, lines, p.body)
    _count_marks(lines, marks)
    lines = _merge_stacked(lines)
    return lines, [Figure(p.index, b) for b in figure_boxes]


def _drop_markers(objects: list[dict], chars: list[dict]) -> tuple[list[dict], list[dict]]:
    """Remove `別冊 No. X` boxes (rectangles whose text only points at the figure booklet)."""
    keep_objects, drop_chars = [], set()
    for o in objects:
        if o["kind"] == "rect":
            box = o["box"]
            inner = [c for c in chars if contains_point(box, (c["x0"] + c["x1"]) / 2, (c["top"] + c["bottom"]) / 2)]
            text = fold("".join(c["text"] for c in sorted(inner, key=lambda c: (round(c["top"] / 5), c["x0"]))))
            if inner and MARKER.match(text):
                drop_chars.update(id(c) for c in inner)
                continue
        keep_objects.append(o)
    return keep_objects, [c for c in chars if id(c) not in drop_chars]


def _merge_overlapping(boxes: list[Box]) -> list[Box]:
    groups = cluster(boxes, gap=2.0)
    return [union(boxes[i] for i in g) for g in groups]


def _absorb_labels(figures: list[Box], lines: list[Line], body: Box) -> tuple[list[Box], list[Line]]:
    """Text touching a figure (axis labels, titles, callouts) belongs to the figure, except
    lines that start a question or an option and full-width lines of running text."""
    width = body[2] - body[0]
    changed = True
    while changed and figures:
        changed = False
        rest = []
        for ln in lines:
            hit = next((i for i, f in enumerate(figures) if intersects(pad(f, 12, 4), ln.box)), None)
            starts = QUESTION_START.match(ln.text) or OPTION_START.match(ln.text)
            if hit is not None and not starts and (ln.box[2] - ln.box[0]) < 0.7 * width:
                figures[hit] = union([figures[hit], ln.box])
                changed = True
            else:
                rest.append(ln)
        lines = rest
        if changed:
            figures = _merge_overlapping(figures)
    return figures, lines


def _count_marks(lines: list[Line], marks: list[dict]) -> None:
    """Count vector marks drawn inside a text line: curves, slanted strokes (radical signs)
    and short rules (fraction bars). Long rules (connectors between table cells,
    underlines) are layout, not text."""
    for m in marks:
        x0, top, x1, bottom = m["box"]
        for ln in lines:
            em = ln.size or 10.0
            if not intersects(pad(ln.box, 0.5, 0.6 * em), m["box"]):
                continue
            flat = bottom - top < 1.0
            if m["kind"] == "rect" or (flat and x1 - x0 >= 2 * em):
                break
            ln.drawn += 1
            break


def _merge_stacked(lines: list[Line]) -> list[Line]:
    """Put a stacked fraction (a short numerator line just above and a denominator just
    below a line) into that line as `a/b`."""
    short = [ln for ln in lines if len(ln.text.strip()) <= 4]
    used: set[int] = set()
    for base in lines:
        em = base.size or 10.0
        mid = (base.box[1] + base.box[3]) / 2
        above = [
            s
            for s in short
            if s is not base and id(s) not in used and 0.3 * em < mid - (s.box[1] + s.box[3]) / 2 < 1.0 * em
        ]
        below = [
            s
            for s in short
            if s is not base and id(s) not in used and 0.3 * em < (s.box[1] + s.box[3]) / 2 - mid < 1.0 * em
        ]
        for a in above:
            b = next((s for s in below if s.box[0] < a.box[2] + em and a.box[0] < s.box[2] + em), None)
            if b is None or a.box[0] < base.box[0]:
                continue
            used.update((id(a), id(b)))
            base.text = f"{base.text} {a.text.strip()}/{b.text.strip()}"
            base.drawn += a.drawn + b.drawn + 1
            base.box = union([base.box, a.box, b.box])
    return [ln for ln in lines if id(ln) not in used]


def _mark_numbers(lines: list[Line]) -> None:
    """A question number hangs left of the text column: its digits end before the left edge
    of every other line on the page."""
    candidates = [ln for ln in lines if QUESTION_START.match(ln.text) and ln.glyphs]
    others = [_text_edge(ln) for ln in lines if ln not in candidates and ln.glyphs]
    if not candidates:
        return
    column = min(others) if others else statistics.median(_after_number(ln) for ln in candidates)
    for ln in candidates:
        digits = QUESTION_START.match(ln.text).group(1)
        number_end = ln.glyphs[len(digits) - 1][2]
        if number_end <= column + 1.0 and number_end < _after_number(ln) - 0.3 * (ln.size or 10):
            ln.number = int(digits)
            ln.text = ln.text[len(digits) :].lstrip(" \t")


def _text_edge(line: Line) -> float:
    """Left edge of a line's text, ignoring an opening bracket set into the margin."""
    return next((x0 for t, x0, _ in line.glyphs if t not in OPENING), line.box[0])


def _after_number(line: Line) -> float:
    digits = QUESTION_START.match(line.text).group(1)
    return line.glyphs[len(digits)][1] if len(line.glyphs) > len(digits) else line.box[2]

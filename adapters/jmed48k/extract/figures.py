"""Figure booklets (別冊): which pictures are `No. X`, and which way up they are.

With a text layer, captions `No. X`, `No. X (Y問題 Z)`, `No. 6Ａ` are read by a small
finite-state machine, each page in three orientations (as printed, turned 90° and 270°), and
the orientation whose captions read cleanest wins. Without a text layer (captions printed as
outlines) the figures are taken in booklet order: a caption is still located as a cluster of
glyph outlines beside the pictures, which tells which way the page is turned and which
consecutive pages repeat the same caption (one figure over several pages).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from medvqa.ja import fold

from .booklet import repeated_objects, signature
from .pdfpage import Box, PdfBooklet, body_box, build_lines, cluster, graphics, intersects, pad, page_chars, turn, union

ANGLES = (0, 90, 270)
GLYPH_MAX = 20.0  # outlines of caption characters are smaller than this (points)


@dataclass(frozen=True)
class Caption:
    number: int
    letter: str | None = None
    question: str | None = None  # "(Y問題 Z)" as read, e.g. "問題5" or "A問題15"


@dataclass
class BookletFigure:
    """One `No. X` figure: its pages, panels (pictures) per page, and the caption if read."""

    index: int  # position in the booklet, from 0
    caption: Caption | None
    pages: list[int]
    panels: list[tuple[int, Box]]  # (page, box) in reading order
    angle: dict[int, int]  # page → degrees turned clockwise to read it upright
    signature: tuple = ()
    labels: list[tuple[int, Box]] = field(default_factory=list)  # text printed beside the pictures

    def box_on(self, page: int) -> Box:
        """The figure on one page (unturned coordinates): its pictures and the labels printed
        beside them."""
        return pad(union([b for p, b in self.panels + self.labels if p == page]), 2)


@dataclass
class FigureBooklet:
    path: Path
    figures: list[BookletFigure]
    method: str  # "captions" (text layer) or "order" (no text layer)
    booklet: PdfBooklet | None = None  # upright copy used for rendering
    notes: list[str] = field(default_factory=list)

    def close(self) -> None:
        if self.booklet is not None:
            self.booklet.close()


class CaptionMachine:
    """`No` `.`? digits letter? [`(` letters? `問題` digits `)`] over folded text."""

    def __init__(self, text: str):
        self.s = fold(text)

    def run(self) -> Caption | None:
        i = self.s.find("No")
        while i >= 0:
            caption = self._from(i + 2)
            if caption:
                return caption
            i = self.s.find("No", i + 2)
        return None

    def _from(self, i: int) -> Caption | None:
        s, state = self.s, "dot"
        number = letter = section = qnum = ""
        while i <= len(s):
            ch = s[i] if i < len(s) else ""
            if state == "dot":
                state, i = "num", i + (ch == ".")
            elif state == "num":
                if ch.isdigit():
                    number, i = number + ch, i + 1
                else:
                    state = "letter" if number else "fail"
            elif state == "letter":
                if ch.isalpha() and ch.isascii() and ch.isupper() and not letter:
                    letter, i = ch, i + 1
                else:
                    state = "open"
            elif state == "open":
                state, i = ("section", i + 1) if ch == "(" else ("done", i)
            elif state == "section":
                if ch.isascii() and ch.isalpha():
                    section, i = section + ch, i + 1
                elif s.startswith("問題", i):
                    state, i = "qnum", i + 2
                else:
                    state = "done"
            elif state == "qnum":
                if ch.isdigit():
                    qnum, i = qnum + ch, i + 1
                else:
                    state = "done"
            if state == "fail":
                return None
            if state == "done":
                break
        question = f"{section}問題{qnum}" if qnum else None
        return Caption(int(number), letter or None, question) if number else None


def read_figure_booklet(path: Path) -> FigureBooklet:
    plain = PdfBooklet(path)
    if any(page.chars for page in plain.pages):
        plain.close()
        return _with_captions(Path(path))
    return _by_order(plain)


def _objects(booklet: PdfBooklet) -> list[list[dict]]:
    """Each page's graphics, without those repeated on most pages (marks, page furniture)."""
    pages = [graphics(page, body_box(page)) for page in booklet.pages]
    repeated = repeated_objects(pages)
    return [[o for o in objects if signature(o) not in repeated] for objects in pages]


def _captions_on(booklet: PdfBooklet, index: int) -> list[tuple[Caption, Box]]:
    page = booklet.pages[index]
    out = []
    for line in build_lines(page_chars(page, body_box(page)), index):
        caption = CaptionMachine(line.text).run()
        if caption:
            out.append((caption, line.box))
    return out


def _with_captions(path: Path) -> FigureBooklet:
    readings = {}
    for angle in ANGLES:
        with PdfBooklet(path, {i: angle for i in range(_page_count(path))}) as turned:
            readings[angle] = [_captions_on(turned, i) for i in range(len(turned.pages))]
    count = len(readings[0])
    best = {i: max(ANGLES, key=lambda a: (len(readings[a][i]), -ANGLES.index(a))) for i in range(count)}
    booklet = PdfBooklet(path, {i: a for i, a in best.items() if a})
    result = FigureBooklet(path, [], "captions", booklet)
    turned_pages = sorted(i + 1 for i, a in best.items() if a)
    if turned_pages:
        result.notes.append(f"pages {turned_pages} read turned (their captions read cleaner that way)")
    objects = _objects(booklet)
    for index in range(count):
        captions = readings[best[index]][index]
        if not captions:
            continue
        boxes = [b for _, b in captions]
        panels = _panels([o for o in objects[index] if not any(intersects(o["box"], pad(b, 1)) for b in boxes)])
        by_caption: dict[int, list[Box]] = {i: [] for i in range(len(captions))}
        for panel in panels:
            nearest = min(range(len(captions)), key=lambda i: _distance(captions[i][1], panel))
            by_caption[nearest].append(panel)
        page = booklet.pages[index]
        texts = [
            ln.box for ln in build_lines(page_chars(page, body_box(page)), index) if not CaptionMachine(ln.text).run()
        ]
        for i, (caption, _) in enumerate(captions):
            found = by_caption[i]
            if not found:
                result.notes.append(f"page {index + 1}: caption {caption} has no picture beside it")
                continue
            labels = [(index, t) for t in _beside(texts, found)]
            result.figures.append(
                BookletFigure(
                    len(result.figures), caption, [index], [(index, b) for b in found], {index: 0}, (), labels
                )
            )
    return result


def _page_count(path: Path) -> int:
    with PdfBooklet(path) as plain:
        return len(plain.pages)


def _distance(caption: Box, panel: Box) -> float:
    """Captions sit above their pictures; prefer those, then the nearest."""
    above = caption[3] <= panel[1] + 4
    dy = max(0.0, panel[1] - caption[3], caption[1] - panel[3])
    dx = max(0.0, panel[0] - caption[2], caption[0] - panel[2])
    return (0 if above else 1000) + dx + dy


def _panels(objects: list[dict]) -> list[Box]:
    """Pictures on a page: raster images (strips joined) and large drawings, with the arrows
    printed over them."""
    images = [o["box"] for o in objects if o["kind"] == "image"]
    big = [
        o["box"]
        for o in objects
        if o["kind"] != "image" and (o["box"][2] - o["box"][0]) * (o["box"][3] - o["box"][1]) >= 3600
    ]
    boxes = images + big
    panels = [union(boxes[i] for i in g) for g in cluster(boxes, gap=3.0)]
    return [p for p in panels if (p[2] - p[0]) >= 20 and (p[3] - p[1]) >= 20]


def _beside(rows: list[Box], panels: list[Box]) -> list[Box]:
    """Text rows next to the pictures (panel names, sequence names), not the caption above."""
    frame = union(panels)
    return [r for r in rows if r[1] >= frame[1] - 2 and any(intersects(pad(p, 16), r) for p in panels)]


def _glyph_rows(objects: list[dict], panels: list[Box]) -> list[Box]:
    """Clusters of small outlines that are not on a picture: printed text (captions, labels)."""
    glyphs = [
        o["box"]
        for o in objects
        if o["kind"] in ("curve", "rect")
        and max(o["box"][2] - o["box"][0], o["box"][3] - o["box"][1]) <= GLYPH_MAX
        and not any(intersects(o["box"], p) for p in panels)
    ]
    return [union(glyphs[i] for i in g) for g in cluster(glyphs, gap=6.0)]


def _outline_caption(objects: list[dict], panels: list[Box], rows: list[Box]) -> tuple[int, tuple, Box | None]:
    """The caption of a page without text: the row of glyph outlines nearest the pictures,
    above them (page upright) or beside them reading sideways (page printed turned).
    Returns (degrees to turn the page clockwise, signature of the caption's outlines, its box)."""
    frame = union(panels)
    candidates = []
    for row in rows:
        w, h = row[2] - row[0], row[3] - row[1]
        if max(w, h) < 2 * min(w, h):
            continue  # a lone label such as "A", not a line of caption text
        beside = row[1] < frame[3] and frame[1] < row[3]  # level with the pictures
        above = row[0] < frame[2] and frame[0] < row[2]
        if w > h and above and row[3] <= frame[1] + 2:
            candidates.append((frame[1] - row[3], 0, row))
        elif h > w and beside and row[2] <= frame[0] + 2:
            candidates.append((frame[0] - row[2], 90, row))
        elif h > w and beside and row[0] >= frame[2] - 2:
            candidates.append((row[0] - frame[2], 270, row))
    if not candidates:
        return 0, (), None
    _, angle, nearest = min(candidates)
    if angle == 0:
        band = [r for r in rows if abs(r[1] - nearest[1]) <= 4 and r[3] <= frame[1] + 2]
    else:
        band = [r for r in rows if abs(r[0] - nearest[0]) <= 4]
    caption = union(band)
    glyphs = sorted(
        o["box"] for o in objects if o["kind"] in ("curve", "rect") and intersects(o["box"], pad(caption, 0.5))
    )
    return angle, tuple(tuple(round(v - caption[k % 2]) for k, v in enumerate(g)) for g in glyphs), caption


def _by_order(booklet: PdfBooklet) -> FigureBooklet:
    """Figures of a booklet without text, in booklet order; consecutive pages with the same
    caption outlines are one figure."""
    result = FigureBooklet(booklet.path, [], "order", booklet)
    result.notes.append(
        "the figure booklet has no text layer (captions are outlines): figures are "
        "paired with the stems' references in booklet order"
    )
    turned = []
    for i, objects in enumerate(_objects(booklet)):
        panels = _panels(objects)
        if not panels:
            continue
        rows = _glyph_rows(objects, panels)
        angle, caption, caption_box = _outline_caption(objects, panels, rows)
        if angle:
            turned.append(i + 1)
        page = booklet.pages[i]
        panels.sort(key=lambda b: _reading_key(turn(b, angle, page.width, page.height)))
        labels = [
            (i, r)
            for r in rows
            if any(intersects(pad(p, 16), r) for p in panels)
            and not (caption_box and intersects(pad(caption_box, 1), r))
        ]
        last = result.figures[-1] if result.figures else None
        if last and caption and last.signature == caption and last.pages[-1] == i - 1:
            last.pages.append(i)
            last.panels.extend((i, b) for b in panels)
            last.labels.extend(labels)
            last.angle[i] = angle
            continue
        result.figures.append(
            BookletFigure(len(result.figures), None, [i], [(i, b) for b in panels], {i: angle}, caption, labels)
        )
    if turned:
        result.notes.append(f"pages {turned} are printed sideways; turned by the side their caption is on")
    return result


def _reading_key(box: Box) -> tuple:
    return (round(box[1] / 20), box[0])


@dataclass(frozen=True)
class Region:
    """Part of a figure-booklet page to render, and how far to turn it."""

    page: int
    box: Box
    angle: int


def pair_references(refs: list, booklet: FigureBooklet) -> tuple[dict, list[str]]:
    """Map each `FigureRef` (in the order the stems cite them) to the regions of the figure
    booklet that show it. Unresolvable references are left out, each with a warning."""
    warnings: list[str] = []
    numbers = list(dict.fromkeys(r.number for r in refs))
    letters = {n: sorted({r.letter for r in refs if r.number == n and r.letter}) for n in numbers}
    if booklet.method == "captions":
        by_number: dict[int, list[BookletFigure]] = {}
        for f in booklet.figures:
            by_number.setdefault(f.caption.number, []).append(f)
    elif len(booklet.figures) == len(numbers):
        ordered = sorted(numbers)
        by_number = {n: [f] for n, f in zip(ordered, booklet.figures)}
        if ordered != list(range(ordered[0], ordered[0] + len(ordered))):
            warnings.append(
                f"{booklet.path.name}: referenced numbers {ordered} are not consecutive; paired in order anyway"
            )
    else:
        warnings.append(
            f"{booklet.path.name}: {len(booklet.figures)} figures in the booklet but the stems cite "
            f"{len(numbers)} numbers; without readable captions the order is ambiguous, so no "
            "reference is resolved"
        )
        return {}, warnings
    resolved = {}
    for ref in dict.fromkeys(refs):
        figures = by_number.get(ref.number)
        if not figures:
            warnings.append(f"{booklet.path.name}: {ref.name} is not in the figure booklet")
            continue
        regions, note = _regions(ref, figures, letters[ref.number])
        if note:
            warnings.append(f"{booklet.path.name}: {note}")
        resolved[ref] = regions
    return resolved, warnings


def _whole(figures: list[BookletFigure]) -> list[Region]:
    return [Region(p, f.box_on(p), f.angle[p]) for f in figures for p in f.pages]


def _regions(ref, figures: list[BookletFigure], letters: list[str]) -> tuple[list[Region], str | None]:
    if ref.letter is None:
        if ref.options and len(figures) == 1 and len(figures[0].panels) == ref.options[1] - ref.options[0] + 1:
            f = figures[0]
            return [Region(p, _panel_box(f, p, b), f.angle[p]) for p, b in f.panels], None
        return _whole(figures), None
    exact = [f for f in figures if f.caption and f.caption.letter == ref.letter]
    if exact:
        return _whole(exact), None
    f = figures[0]
    k = letters.index(ref.letter)
    if len(figures) == 1 and len(f.pages) == len(letters):
        page = f.pages[k]
        return [Region(page, f.box_on(page), f.angle[page])], None
    if len(figures) == 1 and len(f.pages) == 1 and len(f.panels) == len(letters):
        page, box = f.panels[k]
        return [Region(page, _panel_box(f, page, box), f.angle[page])], None
    return _whole(figures), (
        f"the panels of No. {ref.number} cannot be told apart for {ref.name}; the whole figure is used"
    )


def _panel_box(figure: BookletFigure, page: int, panel: Box) -> Box:
    """One panel with the labels printed at it (a label row is cut to the panel's width)."""
    near = pad(panel, 16)
    labels = [
        (max(b[0], near[0]), b[1], min(b[2], near[2]), b[3])
        for p, b in figure.labels
        if p == page and intersects(near, b)
    ]
    return pad(union([panel] + labels), 2)

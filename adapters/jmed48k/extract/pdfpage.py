"""Reading one PDF: upright pages, text lines from characters, graphics, rendering crops.

Coordinates are PDF points with the origin at the top-left of the (upright) page, as
pdfplumber gives them: `Box = (x0, top, x1, bottom)`.
"""

from __future__ import annotations

import io
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import pdfplumber
import pypdfium2 as pdfium
from PIL import Image

from .text import subscript, superscript

Box = tuple[float, float, float, float]
SPACES = (" ", "\u3000", "\xa0", "\t")
TAB_EM = 2.0  # a gap this many ems wide between glyphs is a column gap (table cell, tab stop)


@dataclass
class Line:
    """One line of text in reading order. `text` keeps the spaces the page shows (tabs mark
    column gaps); `number` is a question number hanging in the left margin."""

    text: str
    page: int
    box: Box | None = None
    size: float = 0.0
    number: int | None = None
    unmapped: int = 0  # glyphs the text layer cannot name ("(cid:N)")
    drawn: int = 0  # vector marks on the line that are not text (radicals, fraction bars)
    glyphs: tuple[tuple[str, float, float], ...] = field(default=(), repr=False)


def turn(box: Box, angle: int, width: float, height: float) -> Box:
    """A box of a width × height page as it lies once the page is turned `angle`° clockwise."""
    x0, top, x1, bottom = box
    if angle == 90:
        return (height - bottom, x0, height - top, x1)
    if angle == 180:
        return (width - x1, height - bottom, width - x0, height - top)
    if angle == 270:
        return (top, width - x1, bottom, width - x0)
    return box


def union(boxes) -> Box:
    boxes = list(boxes)
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def pad(box: Box, dx: float, dy: float | None = None) -> Box:
    dy = dx if dy is None else dy
    return (box[0] - dx, box[1] - dy, box[2] + dx, box[3] + dy)


def intersects(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def contains_point(box: Box, x: float, y: float) -> bool:
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def cluster(boxes: list[Box], gap: float) -> list[list[int]]:
    """Indices of boxes grouped so that boxes closer than `gap` share a group."""
    parent = list(range(len(boxes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    order = sorted(range(len(boxes)), key=lambda i: boxes[i][0])
    for n, i in enumerate(order):
        grown = pad(boxes[i], gap)
        for j in order[n + 1 :]:
            if boxes[j][0] > grown[2]:
                break
            if intersects(grown, boxes[j]):
                parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(boxes)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _box_from_pdf(rect, page) -> Box:
    """A PDF rectangle [x0 y0 x1 y1] (bottom-up) in this page's top-left coordinates."""
    mx0, _, _, my1 = (float(v) for v in page.page_obj.attrs.get("MediaBox", page.mediabox))
    x0, y0, x1, y1 = (float(v) for v in rect)
    return (min(x0, x1) - mx0, my1 - max(y0, y1), max(x0, x1) - mx0, my1 - min(y0, y1))


def body_box(page) -> Box:
    """The printed area: the TrimBox when the PDF has one (printer's marks lie outside it),
    else the CropBox."""
    attrs = page.page_obj.attrs
    for key in ("TrimBox", "CropBox"):
        if key in attrs:
            return _box_from_pdf(attrs[key], page)
    return (0.0, 0.0, float(page.width), float(page.height))


def _rotation_matrix(angle: int, w: float, h: float) -> tuple[float, ...]:
    """Maps user space (0..w, 0..h) to the page as a viewer shows it with /Rotate `angle`."""
    return {90: (0, -1, 1, 0, 0, w), 180: (-1, 0, 0, -1, w, h), 270: (0, 1, -1, 0, h, 0)}[angle]


def _apply(m, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def upright_copy(data: bytes, extra: dict[int, int] | None = None) -> bytes | None:
    """A copy of the PDF whose pages read upright: each page's /Rotate (plus `extra[i]`
    degrees clockwise, for content printed sideways) is baked into the content. None when
    nothing needs turning."""
    src = pdfium.PdfDocument(data)
    extra = extra or {}
    if not any(src[i].get_rotation() or extra.get(i, 0) for i in range(len(src))):
        src.close()
        return None
    dst = pdfium.PdfDocument.new()
    for i in range(len(src)):
        page, turn_by = src[i], extra.get(i, 0) % 360
        rotation = page.get_rotation()
        if not (rotation or turn_by):
            dst.import_pages(src, [i])
            continue
        left, b, r, t = page.get_cropbox()
        cw, ch = r - left, t - b
        # pdfium's form object shows the page as displayed (its /Rotate applied), from the crop box origin
        dw, dh = (ch, cw) if rotation in (90, 270) else (cw, ch)
        new = dst.new_page(*((dh, dw) if turn_by in (90, 270) else (dw, dh)))
        obj = src.page_as_xobject(i, dst).as_pageobject()
        matrix = _rotation_matrix(turn_by, dw, dh) if turn_by else (1, 0, 0, 1, 0, 0)
        obj.transform(pdfium.PdfMatrix(*matrix))
        new.insert_obj(obj)
        new.gen_content()
        shown = _rotation_matrix(rotation, cw, ch) if rotation else (1, 0, 0, 1, 0, 0)
        x0, y0, x1, y1 = page.get_trimbox()
        pts = [_apply(matrix, *_apply(shown, x - left, y - b)) for x, y in ((x0, y0), (x1, y1))]
        new.set_trimbox(min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts))
    out = io.BytesIO()
    dst.save(out)
    dst.close()
    src.close()
    return out.getvalue()


class PdfBooklet:
    """A PDF opened upright for reading (pdfplumber) and rendering (pdfium) of the same bytes."""

    def __init__(self, path: Path, extra_rotation: dict[int, int] | None = None):
        self.path = Path(path)
        original = self.path.read_bytes()
        turned = upright_copy(original, extra_rotation)
        self.turned = turned is not None
        self.data = turned or original
        self.plumber = pdfplumber.open(io.BytesIO(self.data))
        self.pdfium = pdfium.PdfDocument(self.data)
        self._textpages: dict[int, pdfium.PdfTextPage] = {}

    def __enter__(self) -> PdfBooklet:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.plumber.close()
        self.pdfium.close()

    @property
    def pages(self):
        return self.plumber.pages

    def glyph_text(self, index: int, char: dict) -> str | None:
        """What pdfium reads for a character pdfminer could not map (`(cid:N)`): pdfium
        also knows the CID → Unicode tables of the standard Japanese character collections."""
        if index not in self._textpages:
            self._textpages[index] = self.pdfium[index].get_textpage()
        textpage = self._textpages[index]
        page_top = self.pdfium[index].get_mediabox()[3]
        x = (char["x0"] + char["x1"]) / 2
        y = page_top - (char["top"] + char["bottom"]) / 2
        i = textpage.get_index(x, y, 1.0, 1.0)
        if i is None or i < 0:
            return None
        text = textpage.get_text_range(i, 1).strip()
        return text if len(text) == 1 and not text.isspace() else None

    def render(self, index: int, box: Box, dpi: int = 200, angle: int = 0) -> Image.Image:
        """Render `box` of page `index` at `dpi`, turned `angle` degrees clockwise."""
        page = self.pdfium[index]
        mx0, my0, mx1, my1 = page.get_mediabox()
        left, b, r, t = page.get_bbox()
        x0, top, x1, bottom = box
        px0, px1 = mx0 + x0, mx0 + x1
        py_top, py_bottom = my1 - top, my1 - bottom
        crop = (max(0.0, px0 - left), max(0.0, py_bottom - b), max(0.0, r - px1), max(0.0, t - py_top))
        image = page.render(scale=dpi / 72, crop=crop).to_pil().convert("RGB")
        return image.rotate(-angle, expand=True) if angle else image


def page_chars(page, body: Box) -> list[dict]:
    """Characters inside the printed area, overprinted duplicates (the doubled printer's
    marks) removed."""
    seen, out = set(), []
    for c in page.chars:
        key = (c["text"], round(c["x0"]), round(c["top"]), round(c["size"]))
        if key in seen or not contains_point(body, (c["x0"] + c["x1"]) / 2, (c["top"] + c["bottom"]) / 2):
            continue
        seen.add(key)
        out.append(c)
    return out


def build_lines(chars: list[dict], page_index: int, resolve=None) -> list[Line]:
    """Group upright characters into lines (sub/superscripts stay on their base line) and
    render each line's text."""
    rows: list[list[dict]] = []
    bands: list[list[float]] = []
    for c in sorted((c for c in chars if c.get("upright", True)), key=lambda c: (c["top"], c["x0"])):
        h = c["bottom"] - c["top"]
        for row, band in zip(reversed(rows[-4:]), reversed(bands[-4:])):
            overlap = min(band[1], c["bottom"]) - max(band[0], c["top"])
            if h > 0 and overlap / min(h, band[2]) >= 0.5:
                row.append(c)
                band[0], band[1], band[2] = min(band[0], c["top"]), max(band[1], c["bottom"]), max(band[2], h)
                break
        else:
            rows.append([c])
            bands.append([c["top"], c["bottom"], h])
    rows = _attach_small(rows)
    lines = [_line(row, page_index, resolve) for row in rows]
    return [ln for ln in lines if ln.text.strip()]


def _attach_small(rows: list[list[dict]]) -> list[list[dict]]:
    """A row of small characters riding just above or below a line of larger ones (a
    superscript or subscript set far from its base) joins that line."""

    def extent(row):
        return (
            min(c["x0"] for c in row),
            min(c["top"] for c in row),
            max(c["x1"] for c in row),
            max(c["bottom"] for c in row),
            max(c["size"] for c in row),
        )

    for i, row in enumerate(rows):
        x0, top, x1, bottom, size = extent(row)
        mid = (top + bottom) / 2
        for j in (i - 1, i + 1):
            if not 0 <= j < len(rows) or rows[j] is None:
                continue
            ox0, otop, ox1, obottom, osize = extent(rows[j])
            near = otop - 0.35 * osize <= mid <= obottom + 0.35 * osize
            if size < 0.8 * osize and near and ox0 - osize <= x0 and x1 <= ox1 + osize:
                rows[j].extend(row)
                rows[i] = None
                break
    return [row for row in rows if row]


def _line(chars: list[dict], page_index: int, resolve) -> Line:
    inked = [c for c in chars if c["text"] not in SPACES]
    if not inked:
        return Line("", page_index)
    size = max(c["size"] for c in inked)
    base = statistics.median(c["matrix"][5] for c in inked if c["size"] >= 0.8 * size)
    parts: list[str] = []
    glyphs = []
    unmapped = 0
    prev = None
    space = False
    for c in sorted(chars, key=lambda c: (c["x0"] + c["x1"]) / 2):
        t = c["text"]
        if t in SPACES:
            space = True
            continue
        if t.startswith("(cid:"):
            t = resolve(c) if resolve else None
            if not t:
                unmapped += 1
                continue
        if c["size"] < 0.8 * size:
            rise = c["matrix"][5] - base
            t = superscript(t) if rise > 0.2 * size else subscript(t) if rise < -0.1 * size else t
        if prev is not None:
            gap = c["x0"] - prev["x1"]
            if gap >= TAB_EM * size:
                parts.append("\t")
            elif space or gap >= 0.2 * size:
                parts.append(" ")
        parts.append(t)
        glyphs.append((t, c["x0"], c["x1"]))
        prev, space = c, False
    box = (
        min(c["x0"] for c in inked),
        min(c["top"] for c in inked),
        max(c["x1"] for c in inked),
        max(c["bottom"] for c in inked),
    )
    return Line("".join(parts), page_index, box, size, unmapped=unmapped, glyphs=tuple(glyphs))


def graphics(page, body: Box) -> list[dict]:
    """Drawn objects and raster images inside the printed area, as
    `{"kind": "image"|"rect"|"line"|"curve", "box": Box}`; page-sized backgrounds are dropped.
    (Fill colours are not trusted: separation inks make "1.0" mean full black.)"""
    area = (body[2] - body[0]) * (body[3] - body[1])
    out = []
    for kind, objs in (("image", page.images), ("rect", page.rects), ("line", page.lines), ("curve", page.curves)):
        for o in objs:
            box = (float(o["x0"]), float(o["top"]), float(o["x1"]), float(o["bottom"]))
            if not intersects(pad(box, 0.5), body):
                continue
            if (box[2] - box[0]) * (box[3] - box[1]) > 0.8 * area:
                continue
            out.append({"kind": kind, "box": box})
    return out

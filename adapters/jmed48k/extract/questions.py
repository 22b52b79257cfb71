"""From a booklet's flow of lines and figures to questions (stem, options, figures, shared
case texts), whatever engine read the booklet."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from medvqa.ja import fold, normalize_width, select_count

from .booklet import Figure, Flow
from .pdfpage import Line, union
from .text import clean

DIGIT_LABEL = re.compile(r"^\s*([1-9１-９])[．.]\s*")
LETTER_LABEL = re.compile(r"^\s*([a-hａ-ｈ])(?:[．.]\s*|[ \t\u3000]+)")
CASE_HEADER = re.compile(r"^次の(?:文|文章|事例|症例)を読み")
GRID = re.compile(r"解答[：:]?\s*((?:[①-⑳][\s．.]*){1,8})")
GRID_ROW = re.compile(r"^[\s0-9０-９①-⑳．.]+$")
REFERENCE = re.compile(r"別冊\s*No\.?\s*(\d+)(?:\s*([A-Z]))?(?:\s+(\d+)\s*[~〜\-]\s*(\d+))?")
MAX_GAP = 3  # question numbers may skip this many (a number the reader missed)


@dataclass
class OptionDraft:
    label: str  # as printed, e.g. "1" or "a"
    parts: list[str] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)

    @property
    def text(self) -> str:
        cells = [c for c in (clean(c) for c in " ".join(self.parts).split("\t")) if c]
        if all(len(c) == 1 for c in cells):
            return "".join(cells)  # a short word spread over a fixed width (`子   宮`)
        return " | ".join(cells)


@dataclass(frozen=True)
class FigureRef:
    """A stem's `（別冊No. X）`: figure number, panel letter, and an option range when the
    figure's panels are the options (`別冊No. 4 1~5`)."""

    number: int
    letter: str | None = None
    options: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return f"No. {self.number}{self.letter or ''}"


@dataclass
class QuestionDraft:
    section: str
    number: int
    stem_parts: list[str] = field(default_factory=list)
    options: list[OptionDraft] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)  # content figures drawn in the booklet
    supplementary: list[Figure] = field(default_factory=list)
    text_reference: str | None = None
    lines: list[Line] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    image_as_options: bool = False

    @property
    def stem(self) -> str:
        text = clean(" ".join(self.stem_parts))
        return text

    @property
    def n_select(self) -> int:
        return select_count(self.stem) or 1

    @property
    def slots(self) -> int:
        """Digits in a numeric-entry grid (`解答：①②③` → 3), 0 without a grid."""
        m = GRID.search(self.stem)
        return len(re.findall(r"[①-⑳]", m.group(1))) if m else 0

    @property
    def refs(self) -> list[FigureRef]:
        out = []
        for m in REFERENCE.finditer(normalize_width(self.stem)):
            rng = (int(m.group(3)), int(m.group(4))) if m.group(3) else None
            ref = FigureRef(int(m.group(1)), m.group(2), rng)
            if ref not in out:
                out.append(ref)
        return out

    @property
    def pages(self) -> list[int]:
        return sorted({ln.page for ln in self.lines} | {f.page for f in self.figures})


def parse_questions(flow: Flow, section: str) -> tuple[list[QuestionDraft], list[str]]:
    """Split a flow into questions. Returns the questions and booklet-level warnings."""
    warnings: list[str] = []
    questions: list[QuestionDraft] = []
    current: QuestionDraft | None = None
    case: list[str] | None = None  # a shared case text being read
    case_for: set[int] = set()
    case_text: str | None = None
    start = _first_number(flow)
    for entry in flow.entries:
        if isinstance(entry, Figure):
            if current is not None:
                _add_figure(current, entry)
            continue
        line = entry
        number = line.number
        expected = questions[-1].number + 1 if questions else start
        if number is not None and expected is not None and expected <= number <= expected + MAX_GAP:
            if number > expected:
                warnings.append(f"{section}: questions {expected}–{number - 1} not found in the booklet")
            if case is not None:
                case_text, case = _case_text(case), None
            current = QuestionDraft(section, number)
            if case_text and (not case_for or number in case_for):
                current.text_reference = case_text
            questions.append(current)
            current.lines.append(line)
            current.stem_parts.append(line.text)
            continue
        text = line.text if number is None else f"{number} {line.text}"
        if CASE_HEADER.match(fold(text)):
            case, case_for, case_text = [text], _listed_numbers(text), None
            current = None
            continue
        if case is not None:
            case.append(text)
        elif current is not None:
            current.lines.append(line)
            _add_text(current, text, line)
    for q in questions:
        _finish(q)
    return questions, warnings


def _first_number(flow: Flow) -> int | None:
    """The first question: a hanging number followed later by its successor."""
    numbers = [e.number for e in flow.entries if isinstance(e, Line) and e.number is not None]
    for i, n in enumerate(numbers):
        if any(m == n + 1 for m in numbers[i + 1 : i + 40]):
            return n
    return numbers[0] if numbers else None


def _listed_numbers(header: str) -> set[int]:
    text = fold(header)
    text = text.split("問いに答え")[0]
    out: set[int] = set()
    for a, b in re.findall(r"(\d+)[~〜～\-－](\d+)", text):
        out.update(range(int(a), int(b) + 1))
    out.update(int(n) for n in re.findall(r"\d+", text))
    return out


def _case_text(lines: list[str]) -> str:
    text = clean(" ".join(lines))
    head, sep, rest = text.partition("答えよ。")
    return rest.strip() if sep and rest.strip() else text


def _label(line_text: str, expected: str | None):
    """The option label starting this text, when it is the one expected next."""
    for pattern in (DIGIT_LABEL, LETTER_LABEL):
        m = pattern.match(line_text)
        if m:
            label = normalize_width(m.group(1))
            if label == expected or (expected is None and label in ("1", "a")):
                return label, line_text[m.end() :]
    return None


def _next_label(label: str) -> str:
    return chr(ord(label) + 1)


def _split_inline(text: str, label: str) -> list[tuple[str, str]]:
    """Options printed side by side on one line (`1．…   2．…`)."""
    parts = [(label, text)]
    while True:
        last_label, last_text = parts[-1]
        nxt = _next_label(last_label)
        if nxt.isdigit():
            pattern = re.compile(rf"[ \t\u3000]+[{nxt}{chr(ord(nxt) + 0xFEE0)}][．.]\s*")
        else:
            pattern = re.compile(rf"\t[{nxt}{chr(ord(nxt) + 0xFEE0)}](?:[．.]\s*|[ \t\u3000]+)")
        m = pattern.search(last_text)
        if not m:
            return parts
        parts[-1] = (last_label, last_text[: m.start()])
        parts.append((nxt, last_text[m.end() :]))


def _add_text(q: QuestionDraft, text: str, line: Line) -> None:
    expected = _next_label(q.options[-1].label) if q.options else None
    hit = _label(text, expected)
    if hit:
        label, rest = hit
        for lab, part in _split_inline(rest, label):
            q.options.append(OptionDraft(lab, [part] if part.strip() else []))
        return
    if q.slots and GRID_ROW.match(text):
        return  # the digit rows of an answer grid
    if not q.options:
        q.stem_parts.append(text)
        return
    q.options[-1].parts.append(text)


def _add_figure(q: QuestionDraft, figure: Figure) -> None:
    if q.options and q.options[-1].parts:
        q.warnings.append("a figure follows the options; kept as a content image")
    target = q.options[-1].figures if q.options and not q.options[-1].parts else q.figures
    target.append(figure)


def _merge_close(figures: list[Figure]) -> list[Figure]:
    """Drawings of one figure printed a little apart (views of one object) become one image."""
    out: list[Figure] = []
    for f in figures:
        prev = out[-1] if out else None
        if (
            prev
            and prev.box
            and f.box
            and prev.page == f.page
            and not (prev.image or f.image)
            and f.box[1] - prev.box[3] < 30.0
        ):
            out[-1] = Figure(prev.page, union([prev.box, f.box]))
        else:
            out.append(f)
    return out


def _finish(q: QuestionDraft) -> None:
    """Image-as-options detection, flags for text the page draws instead of printing."""
    if not q.options and len(q.figures) >= 4 and "どれか" in q.stem and not q.slots:
        q.options = [OptionDraft(str(i + 1), figures=[f]) for i, f in enumerate(q.figures)]
        q.figures = []
        q.warnings.append(f"options are drawn as figures; labelled 1–{len(q.options)} in the order printed")
    if q.options:
        q.figures = _merge_close(q.figures)
    if q.options and all(not o.parts and o.figures for o in q.options):
        q.image_as_options = True
        for o in q.options:
            o.parts = [o.label]
    if any(r.options for r in q.refs):
        q.image_as_options = True
    elif q.refs and "のうち" in q.stem and q.options and all(fold(o.text) in (o.label, "") for o in q.options):
        q.image_as_options = True
    flagged = [ln for ln in q.lines if ln.drawn or ln.unmapped]
    if flagged:
        drawn = sum(ln.drawn for ln in flagged)
        unmapped = sum(ln.unmapped for ln in flagged)
        q.warnings.append(
            f"{len(flagged)} line(s) carry {drawn} vector-drawn mark(s) (radicals, fraction bars) "
            f"and {unmapped} glyph(s) without Unicode: the text may be incomplete; the printed "
            "question is kept as a supplementary image"
        )
        for page in sorted({ln.page for ln in flagged}):
            boxes = [ln.box for ln in q.lines if ln.page == page and ln.box]
            if boxes:
                q.supplementary.append(Figure(page, union(boxes)))
    if not q.slots and not q.image_as_options and not 4 <= len(q.options) <= 8:
        q.warnings.append(f"{len(q.options)} options found (expected 4–8)")
    if "図" in q.stem and not q.figures and not q.image_as_options and "別冊" not in q.stem:
        q.warnings.append("the stem mentions a figure (図) but none was found beside it")

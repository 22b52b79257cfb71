"""Official answer keys (正答): MHLW PDF tables or CSV (`問題番号,解答`), and the reading of
one key into the release's `correct_answer`.

Forms: a single key (`3`, `a`); several keys (`2, 4`, `2,4`, `ce`); official alternatives
(`1又は4`, `1 or 4`, `2及び4又は3及び4` → list of lists); numeric slots (`600` → `["6","0","0"]`
when the stem has an entry grid); withdrawn or unresolved (`採点除外`, `解なし`, `全員正解`, blank)
→ no answer, with the reason kept. Letter keys are written uppercase.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import pdfplumber

from medvqa import DataError
from medvqa.ja import fold, normalize_width

from .pdfpage import body_box, build_lines, page_chars

WITHDRAWN = ("採点除外", "解なし", "全員正解", "削除", "不適切")
BLANK = ("", "-", "―", "—", "－", "ー")
SECTION_WORDS = {"午前": "AM", "午後": "PM"}
QUESTION_ID = re.compile(
    r"^(?:\d{2,3}(?=[A-Za-z午]))?(?P<section>[A-Za-z]+|午前|午後)?(?:問題|問)?(?P<number>\d{1,3})$"
)
HEADING = re.compile(r"(午前|午後|(?<![A-Za-z])[A-Z](?=問題))")
ALTERNATIVES = re.compile(r"\s*(?:又は|または|\bor\b)\s*", re.IGNORECASE)
TOGETHER = re.compile(r"\s*(?:及び|および|かつ|\band\b|[,、，・&＆+＋\s])\s*", re.IGNORECASE)


class AnswerError(ValueError):
    """A key that cannot be read for its question."""


@dataclass(frozen=True)
class KeyEntry:
    section: str | None  # as the key names it, e.g. "A", "AM"; None when the key has no sections
    number: int
    raw: str  # exactly as written in the key
    where: str  # file and row, for messages


def normalise_section(name: str | None) -> str | None:
    if name is None:
        return None
    name = normalize_width(name)
    return SECTION_WORDS.get(name, name).upper()


def parse_question_id(text: str) -> tuple[str | None, int] | None:
    m = QUESTION_ID.match(fold(text))
    if not m:
        return None
    return normalise_section(m.group("section")), int(m.group("number"))


def read_answer_key(path: Path) -> list[KeyEntry]:
    """Every (question, raw key) pair of a CSV or PDF answer key, in file order."""
    path = Path(path)
    if not path.is_file():
        raise DataError("answer key not found", file=path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path)
    if suffix == ".pdf":
        return _read_pdf(path)
    raise DataError("answer keys must be .csv or .pdf", file=path)


def _read_csv(path: Path) -> list[KeyEntry]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = [r for r in csv.reader(fh) if any(c.strip() for c in r)]
    if not rows:
        raise DataError("empty answer key", file=path)
    header = [c.strip() for c in rows[0]]
    q_col = next(
        (i for i, h in enumerate(header) if "問題" in h or "番号" in h or h.lower() in ("id", "question")), None
    )
    a_col = next(
        (i for i, h in enumerate(header) if any(w in h for w in ("解答", "正答", "答")) or h.lower() == "answer"), None
    )
    body = rows[1:] if q_col is not None else rows
    q_col, a_col = (q_col, a_col) if q_col is not None and a_col is not None else (0, 1)
    out = []
    for n, row in enumerate(body, start=2 if body is not rows else 1):
        where = f"{path.name} row {n}"
        qid = parse_question_id(row[q_col]) if q_col < len(row) else None
        if qid is None:
            raise DataError(
                f"unreadable question number {row[q_col] if q_col < len(row) else ''!r}", file=path, record=f"row {n}"
            )
        out.append(KeyEntry(qid[0], qid[1], row[a_col].strip() if a_col < len(row) else "", where))
    return out


def _read_pdf(path: Path) -> list[KeyEntry]:
    out: list[KeyEntry] = []
    with pdfplumber.open(path) as pdf:
        section = None
        for p, page in enumerate(pdf.pages):
            headings = [(ln.box[1], HEADING.search(ln.text)) for ln in build_lines(page_chars(page, body_box(page)), p)]
            headings = [(top, normalise_section(m.group(1))) for top, m in headings if m]
            for table in page.find_tables():
                above = [name for top, name in headings if top < table.bbox[1]]
                section = above[-1] if above else section
                out.extend(_table_entries(table.extract(), section, f"{path.name} page {p + 1}"))
    if not out:
        raise DataError("no answer table found", file=path)
    return out


def _table_entries(rows: list[list], section: str | None, where: str) -> list[KeyEntry]:
    cells = [[normalize_width(c) for c in row] for row in rows]
    pairs: list[tuple[int, int]] = []
    start = 0
    for r, row in enumerate(cells[:2]):
        q_cols = [i for i, c in enumerate(row) if "番号" in c or c in ("問題", "問")]
        if q_cols:
            a_cols = [i for i, c in enumerate(row) if "答" in c]
            pairs = [(q, min((a for a in a_cols if a > q), default=q + 1)) for q in q_cols]
            start = r + 1
            break
    if not pairs:
        width = max(len(r) for r in cells)
        pairs = [(i, i + 1) for i in range(0, width - 1, 2)]
    out = []
    for r, row in enumerate(cells[start:], start=start + 1):
        for q, a in pairs:
            if q >= len(row) or not row[q]:
                continue
            qid = parse_question_id(row[q])
            if qid is None:
                continue  # a caption or sub-heading row inside the table
            out.append(KeyEntry(qid[0] or section, qid[1], row[a] if a < len(row) else "", f"{where} row {r}"))
    return out


def parse_answer(raw: str, *, options: list[str], slots: int = 0, n_select: int = 1):
    """One key for one question → `(correct_answer, reason)`. `correct_answer` is a list of
    keys, a list of lists for official alternatives, or None with `reason` saying why.
    Raises AnswerError when the key does not fit the question."""
    text = normalize_width(raw)
    if text in BLANK:
        return None, "blank in the answer key"
    for word in WITHDRAWN:
        if word in text:
            return None, word
    letters = bool(options) and all(o.isalpha() for o in options)
    valid = {o.upper() for o in options}
    groups = []
    for alternative in ALTERNATIVES.split(text):
        keys = [k for k in TOGETHER.split(alternative) if k]
        if len(keys) == 1:
            keys = _split_compact(keys[0], letters=letters, valid=valid, slots=slots, n_select=n_select)
        keys = [k.upper() if letters else k for k in keys]
        if slots:
            if not all(k.isdigit() for k in keys) or len("".join(keys)) != slots:
                raise AnswerError(f"key {raw!r} does not fill the {slots}-digit answer grid")
            keys = list("".join(keys))
        elif valid and not set(keys) <= valid:
            raise AnswerError(f"key {raw!r} names {sorted(set(keys) - valid)}, not among the options {sorted(valid)}")
        if not keys:
            raise AnswerError(f"unreadable key {raw!r}")
        groups.append(keys)
    return (groups[0] if len(groups) == 1 else groups), None


def _split_compact(token: str, *, letters: bool, valid: set[str], slots: int, n_select: int) -> list[str]:
    """`ce` → C, E; `600` → digits (grid); `24` → 2, 4 when two keys are asked for."""
    if slots or token.upper() in valid:
        return [token]
    if letters and token.isalpha() and set(token.upper()) <= valid:
        return list(token)
    if token.isdigit() and len(token) == n_select and set(token) <= valid:
        return list(token)
    return [token]

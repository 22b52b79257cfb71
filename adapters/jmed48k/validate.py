"""`medvqa validate jmed48k`: every problem in a JMed48k release folder (Appendix A.2).

Unlike the loader, which stops at the first bad record, this reads the raw JSON itself and
collects all findings. Rules:

- `file`: a questions or taxonomy file is missing, not JSON, or not the expected shape
- `record`: a question is not a JSON object
- `required-field`: a required field is missing
- `option-keys`: options are not an object of single-letter or number labels (one kind, no
  duplicates) to text
- `duplicate-record`: the same (section, number) twice in a cell
- `gold-format`: `correct_answer` cannot be read
- `gold-outside-options`: a gold key (of any official alternative) is not an option key
- `no-options`: neither options nor a numeric-slot gold (a warning when the gold is null)
- `image-reference`: an image reference that is not a string or list of strings
- `image-escape`: an image reference that is absolute or leaves the cell folder
- `image-missing`: a referenced file is absent — a warning when the taxonomy labels the item
  `Other/Unclear` (the release omits images MHLW does not redistribute), else an error
- `image-unreadable`: a file Pillow cannot verify as an image
- `text-only-flag`: `text_only` disagrees with the image references
- `taxonomy-type`: a taxonomy label outside the paper's types (a warning)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medvqa import DataError, Finding, Gold

from .loader import IMAGE_FIELDS, OTHER, PRIMARY_TYPES, REQUIRED, Cell, cells, image_refs

KNOWN_TYPES = frozenset((*PRIMARY_TYPES, OTHER))


class _Collector:
    """Findings of one questions file."""

    def __init__(self, file: Path):
        self.file = str(file)
        self.findings: list[Finding] = []

    def add(self, q: dict | None, rule: str, message: str, level: str = "error", *, index: int | None = None) -> None:
        section = q.get("section") if isinstance(q, dict) else None
        number = q.get("question_number") if isinstance(q, dict) else None
        if index is not None and (section is None or number is None):
            message = f"(question #{index}) {message}"
        section = None if section is None else str(section)
        self.findings.append(Finding(self.file, section, number, rule, level, message))


def validate_release(path: Path) -> list[Finding]:
    """All findings for the release folder at `path` (raises DataError if it is not one)."""
    findings: list[Finding] = []
    for cell in cells(Path(path)):
        findings.extend(validate_cell(cell))
    return findings


def validate_cell(cell: Cell) -> list[Finding]:
    out = _Collector(cell.questions_file)
    taxonomy = _read_taxonomy(cell, out)
    questions = _read_questions(cell, out)
    seen: dict[tuple[str, str], int] = {}
    for index, q in enumerate(questions):
        if not isinstance(q, dict):
            out.add(None, "record", f"question #{index} is not a JSON object")
            continue
        missing = [f for f in REQUIRED if f not in q]
        if missing:
            out.add(q, "required-field", f"missing field(s) {', '.join(missing)}", index=index)
        key = (str(q.get("section")), str(q.get("question_number")))
        if "section" in q and "question_number" in q:
            if key in seen:
                out.add(q, "duplicate-record",
                        f"section {key[0]} number {key[1]} already appears as question #{seen[key]}")
            else:
                seen[key] = index
        if "options" in q and "correct_answer" in q:
            _check_gold(q, _check_options(q, out, index), out, index)
        elif "options" in q:
            _check_options(q, out, index)
        _check_images(cell, q, taxonomy.get(f"{key[0]}{key[1]}") or {}, out, index)
    return out.findings


def _read_questions(cell: Cell, out: _Collector) -> list:
    path = cell.questions_file
    if not path.is_file():
        out.add(None, "file", f"missing {path.name} in {cell.folder}")
        return []
    data = _read_json(path, out)
    questions = data.get("questions") if isinstance(data, dict) else None
    if data is not None and not isinstance(questions, list):
        out.add(None, "file", 'expected {"questions": [...]}')
    return questions if isinstance(questions, list) else []


def _read_taxonomy(cell: Cell, out: _Collector) -> dict:
    path = cell.taxonomy_file
    if not path.is_file():
        return {}
    data = _read_json(path, out)
    if not isinstance(data, dict):
        if data is not None:
            out.add(None, "file", f'{path.name}: expected {{"A1": {{"image_types": [...], ...}}, ...}}')
        return {}
    for record, entry in data.items():
        labels = [*(entry.get("image_types") or []), entry.get("dominant_type")] if isinstance(entry, dict) else []
        unknown = sorted({str(t) for t in labels if t is not None and t not in KNOWN_TYPES})
        if unknown:
            out.findings.append(Finding(str(path), None, record, "taxonomy-type", "warning",
                                        f"unknown image type(s) {', '.join(unknown)}; "
                                        f"known: {', '.join(sorted(KNOWN_TYPES))}"))
    return data


def _read_json(path: Path, out: _Collector) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        out.findings.append(Finding(str(path), None, None, "file", "error", f"not valid JSON ({exc})"))
        return None


def _check_options(q: dict, out: _Collector, index: int) -> tuple[str, ...]:
    """The canonical option keys, after reporting malformed ones."""
    options = q.get("options")
    if options is None or options == {} or options == []:
        return ()
    if not isinstance(options, dict):
        out.add(q, "option-keys", f"options must be an object of label → text, not {type(options).__name__}",
                index=index)
        return ()
    labels = [str(k).strip() for k in options]
    letters = all(len(k) == 1 and k.isascii() and k.isalpha() for k in labels)
    numbers = all(k.isascii() and k.isdigit() for k in labels)
    if not (letters or numbers):
        out.add(q, "option-keys", f"option labels {labels} must all be single letters or all numbers", index=index)
    keys = [k.upper() if letters else k for k in labels]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        out.add(q, "option-keys", f"duplicate option label(s) {duplicates}", index=index)
    empty = [label for label, text in zip(labels, options.values()) if not isinstance(text, str) or not text.strip()]
    if empty:
        out.add(q, "option-keys", f"option(s) {empty} have no text", index=index)
    return tuple(keys)


def _check_gold(q: dict, option_keys: tuple[str, ...], out: _Collector, index: int) -> None:
    try:
        gold = Gold.from_json(q["correct_answer"])
    except DataError as exc:
        out.add(q, "gold-format", str(exc), index=index)
        return
    numeric = gold is not None and all(k.isdigit() for alt in gold.alternatives for k in alt)
    if not option_keys:
        if gold is None:
            out.add(q, "no-options", "no options and no official answer (excluded from scoring)", "warning",
                    index=index)
        elif not numeric:
            out.add(q, "no-options", f"no options, and the gold {gold.raw!r} is not a numeric-slot answer", index=index)
        return
    if gold is None:
        return
    canonical = {k.upper() for k in option_keys}
    for alt in gold.alternatives:
        outside = [k for k in alt if k.upper() not in canonical]
        if outside:
            out.add(q, "gold-outside-options",
                    f"gold {gold.raw!r}: key(s) {outside} not among the options {list(option_keys)}", index=index)
            return


def _check_images(cell: Cell, q: dict, tax: dict, out: _Collector, index: int) -> None:
    img = q.get("img") or {}
    refs: list[str] = []
    if not isinstance(img, dict):
        out.add(q, "image-reference", f"img must be an object, not {type(img).__name__}", index=index)
        img = {}
    for field, _ in IMAGE_FIELDS:
        try:
            refs += image_refs(img.get(field))
        except ValueError as exc:
            out.add(q, "image-reference", f"{field}: {exc}", index=index)
    text_only = q.get("text_only")
    if text_only is not None:
        if not isinstance(text_only, bool):
            out.add(q, "text-only-flag", f"text_only must be true or false, not {text_only!r}", index=index)
        elif text_only and refs:
            out.add(q, "text-only-flag", f"text_only is true but the record references {len(refs)} image(s)",
                    index=index)
        elif not text_only and not refs:
            out.add(q, "text-only-flag", "text_only is false but the record references no image", index=index)
    unclear = tax.get("dominant_type") == OTHER or set(tax.get("image_types") or ()) == {OTHER}
    root = cell.folder.resolve()
    for ref in refs:
        target = (root / ref).resolve()
        if Path(ref).is_absolute() or "\x00" in ref or not target.is_relative_to(root):
            out.add(q, "image-escape", f"image reference {ref!r} is absolute or leaves the cell folder {root}",
                    index=index)
        elif not target.is_file():
            level = "warning" if unclear else "error"
            why = " (taxonomy Other/Unclear: the image is not redistributed)" if unclear else ""
            out.add(q, "image-missing", f"image {ref!r} not found{why}", level, index=index)
        else:
            problem = _unreadable(target)
            if problem:
                out.add(q, "image-unreadable", f"image {ref!r} is not a readable image ({problem})", index=index)


def _unreadable(path: Path) -> str | None:
    """Why Pillow cannot verify the file, or None when it can."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            im.verify()
    except Exception as exc:  # Pillow raises many types for corrupt files
        return f"{type(exc).__name__}: {exc}"
    return None

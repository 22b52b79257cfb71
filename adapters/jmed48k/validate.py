"""`medvqa validate jmed48k`: every problem in a JMed48k release folder (Appendix A.2).

Unlike the loader, which stops at the first bad record, this reads the raw JSON itself and
collects all findings, each under one of `RULES` (`medvqa validate` counts every rule, 0
included).

A file that is not UTF-8, not JSON, or nested deeper than Python reads is a `file` finding;
no data, however malformed, ends in a traceback.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from medvqa import DataError, Finding, Gold, brief, read_json

from .loader import (
    IMAGE_FIELDS,
    OTHER,
    PRIMARY_TYPES,
    REQUIRED,
    Cell,
    cells,
    image_refs,
    is_name,
    is_number,
    read_questions,
    record_problems,
    taxonomy_problems,
)

KNOWN_TYPES = frozenset((*PRIMARY_TYPES, OTHER))

# rule → what a finding under it is (the summary `medvqa validate` prints, in this order)
RULES = {
    "file": "a questions or taxonomy file is missing, not JSON, or not the expected shape",
    "record": "a question is not a JSON object",
    "record-id": "a section that is not a short name, or a question number that is neither 1-99,999 nor a short name",
    "required-field": "a required field is missing",
    "duplicate-record": "the same (section, number) twice in a cell",
    "text-field": "a question text, reference text or option that is not text",
    "text-size": "a text longer than 100,000 characters",
    "text-encoding": "a string holding a lone surrogate (\\ud800), which UTF-8 cannot encode",
    "flag-type": "a record's image_as_options that is not true or false",
    "option-keys": "options that are not single-letter or number labels (one kind, no duplicates) to text",
    "gold-format": "a correct_answer that cannot be read",
    "gold-outside-options": "a gold key (of any official alternative) that is not an option key",
    "no-options": "neither options nor a numeric-slot gold (a warning when the gold is null)",
    "image-reference": "an image reference that is not a string or list of strings",
    "image-escape": "an image reference that is absolute or leaves the cell folder",
    "image-missing": "a referenced image file is absent (a warning when the taxonomy says Other/Unclear: "
    "MHLW does not redistribute it)",
    "image-unreadable": "a file Pillow cannot verify as an image",
    "image-size": "an image with more pixels than Pillow's decompression-bomb limit",
    "text-only-flag": "text_only disagrees with the image references",
    "taxonomy-format": "a taxonomy entry that is not {image_types: [...], dominant_type, image_as_options: bool}",
    "taxonomy-type": "a taxonomy label outside the paper's image types (a warning)",
}


class _Collector:
    """Findings of one questions file."""

    def __init__(self, file: Path):
        self.file = str(file)
        self.findings: list[Finding] = []

    def add(self, q: dict | None, rule: str, message: str, level: str = "error", *, index: int | None = None) -> None:
        """A finding about record `q` (question #`index`): named by its section and number when
        both are valid, else by its position."""
        section, number = _record_id(q)
        if index is not None and (section is None or number is None):
            section, number = None, f"#{index}"
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
            out.add(None, "record", f"question #{index} is not a JSON object", index=index)
            continue
        missing = [f for f in REQUIRED if f not in q]
        if missing:
            out.add(q, "required-field", f"missing field(s) {', '.join(missing)}", index=index)
        for rule, message in record_problems(q):
            out.add(q, rule, message, index=index)
        section, number = _record_id(q)
        key = (str(section), str(number))
        if section is not None and number is not None:
            if key in seen:
                out.add(
                    q, "duplicate-record", f"section {key[0]} number {key[1]} already appears as question #{seen[key]}"
                )
            else:
                seen[key] = index
        if "options" in q and "correct_answer" in q:
            _check_gold(q, _check_options(q, out, index), out, index)
        elif "options" in q:
            _check_options(q, out, index)
        _check_images(cell, q, taxonomy.get(f"{key[0]}{key[1]}") or {}, out, index)
    return out.findings


def _record_id(q: Any) -> tuple[str | None, Any]:
    """(section, question number) of a record, each None when absent or invalid."""
    if not isinstance(q, dict):
        return None, None
    section, number = q.get("section"), q.get("question_number")
    return (section if is_name(section) else None, number if is_number(number) or is_name(number) else None)


def _read_questions(cell: Cell, out: _Collector) -> list:
    """The loader's reading of the questions file; what stops it is a `file` finding."""
    try:
        return read_questions(cell)
    except DataError as exc:
        out.add(None, "file", exc.reason)
        return []


def _read_taxonomy(cell: Cell, out: _Collector) -> dict:
    path = cell.taxonomy_file
    if not path.is_file():
        return {}
    try:
        data = read_json(path)
    except DataError as exc:
        out.findings.append(Finding(str(path), None, None, "file", "error", exc.reason))
        return {}
    if not isinstance(data, dict):
        out.findings.append(
            Finding(str(path), None, None, "file", "error", 'expected {"A1": {"image_types": [...], ...}, ...}')
        )
        return {}
    good = {}
    for record, entry in data.items():
        problems = taxonomy_problems(entry)
        for problem in problems:
            out.findings.append(Finding(str(path), None, record, "taxonomy-format", "error", problem))
        if problems:
            continue
        good[record] = entry
        labels = [*(entry.get("image_types") or []), entry.get("dominant_type")]
        unknown = sorted({t for t in labels if t is not None and t not in KNOWN_TYPES})
        if unknown:
            out.findings.append(
                Finding(
                    str(path),
                    None,
                    record,
                    "taxonomy-type",
                    "warning",
                    f"unknown image type(s) {', '.join(unknown)}; known: {', '.join(sorted(KNOWN_TYPES))}",
                )
            )
    return good


def _check_options(q: dict, out: _Collector, index: int) -> tuple[str, ...]:
    """The canonical option keys, after reporting malformed ones."""
    options = q.get("options")
    if options is None or options == {} or options == []:
        return ()
    if not isinstance(options, dict):
        out.add(
            q, "option-keys", f"options must be an object of label → text, not {type(options).__name__}", index=index
        )
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
            out.add(
                q, "no-options", "no options and no official answer (excluded from scoring)", "warning", index=index
            )
        elif not numeric:
            out.add(
                q, "no-options", f"no options, and the gold {brief(gold.raw)} is not a numeric-slot answer", index=index
            )
        return
    if gold is None:
        return
    canonical = {k.upper() for k in option_keys}
    for alt in gold.alternatives:
        outside = [k for k in alt if k.upper() not in canonical]
        if outside:
            out.add(
                q,
                "gold-outside-options",
                f"gold {brief(gold.raw)}: key(s) {outside} not among the options {list(option_keys)}",
                index=index,
            )
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
            out.add(q, "text-only-flag", f"text_only must be true or false, not {brief(text_only)}", index=index)
        elif text_only and refs:
            out.add(
                q, "text-only-flag", f"text_only is true but the record references {len(refs)} image(s)", index=index
            )
        elif not text_only and not refs:
            out.add(q, "text-only-flag", "text_only is false but the record references no image", index=index)
    unclear = tax.get("dominant_type") == OTHER or set(tax.get("image_types") or ()) == {OTHER}
    root = cell.folder.resolve()
    for ref in refs:
        if "\x00" in ref:
            out.add(q, "image-reference", f"image reference {brief(ref)} holds a NUL byte", index=index)
            continue
        target = (root / ref).resolve()
        if Path(ref).is_absolute() or not target.is_relative_to(root):
            out.add(
                q,
                "image-escape",
                f"image reference {brief(ref)} is absolute or leaves the cell folder {cell.folder}",
                index=index,
            )
            continue
        try:
            present = target.is_file()
        except OSError as exc:  # e.g. a name too long for the file system
            out.add(
                q,
                "image-reference",
                f"image reference {brief(ref)} is not a usable file name ({exc.strerror})",
                index=index,
            )
            continue
        if not present:
            level = "warning" if unclear else "error"
            why = " (taxonomy Other/Unclear: the image is not redistributed)" if unclear else ""
            out.add(q, "image-missing", f"image {brief(ref)} not found{why}", level, index=index)
            continue
        problem = _unreadable(cell.folder / ref)  # as the user reached it: Pillow names it in its message
        if problem:
            out.add(q, problem[0], f"image {brief(ref)} {problem[1]}", index=index)


def _unreadable(path: Path) -> tuple[str, str] | None:
    """(rule, why) when Pillow cannot verify the file or it is larger than Pillow's
    decompression-bomb limit; None when it is a readable image."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                im.verify()
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        return "image-size", f"is too large to decode safely ({exc})"
    except Exception as exc:  # Pillow raises many types for corrupt files
        return "image-unreadable", f"is not a readable image ({type(exc).__name__}: {exc})"
    return None

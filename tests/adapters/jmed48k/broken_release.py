"""A JMed48k release folder with one broken record per validation rule, written for tests."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

YEAR = 2030
OPTIONS = {"a": "one", "b": "two", "c": "three", "d": "four", "e": "five"}


def _q(number, *, options=OPTIONS, answer=("A",), text_only=True, content="", **extra):
    q = {
        "question_number": number,
        "section": "A",
        "question_text": f"question {number}",
        "options": options,
        "correct_answer": list(answer) if isinstance(answer, tuple) else answer,
        "text_only": text_only,
        "img": {"content_img": content, "answer_img": ""},
        "text_reference": None,
    }
    q.update(extra)
    return q


# (section, number, rule, level) of every finding the folder must produce.
EXPECTED = {
    ("A", 2, "required-field", "error"),
    ("A", 3, "option-keys", "error"),
    ("A", 4, "duplicate-record", "error"),
    ("A", 5, "gold-outside-options", "error"),
    ("A", 6, "gold-outside-options", "error"),
    ("A", 8, "no-options", "error"),
    ("A", 9, "image-missing", "error"),
    ("A", 10, "image-missing", "warning"),
    ("A", 11, "image-escape", "error"),
    ("A", 12, "image-unreadable", "error"),
    ("A", 13, "text-only-flag", "error"),
    ("A", 14, "text-only-flag", "error"),
    ("A", 15, "gold-format", "error"),
    (None, "#17", "record", "error"),
}


def write_broken_release(root: Path) -> Path:
    """Write the folder under `root`; returns the questions file."""
    cell = root / "JMed48k" / "Physician" / f"Physician_{YEAR}"
    images = cell / f"{YEAR}_images"
    images.mkdir(parents=True)
    Image.new("RGB", (8, 8), "white").save(images / "good.png")
    (images / "bad.png").write_bytes(b"this is not a PNG file")
    missing_a2 = _q(2)
    del missing_a2["options"]
    questions = [
        _q(1),
        missing_a2,
        _q(3, options={"a": "one", "bb": "two"}),
        _q(4),
        _q(4),
        _q(5, answer=("F",)),
        _q(6, answer=[["A"], ["Z"]]),
        _q(7, options={}, answer=("1", "2")),  # a numeric-slot item: valid
        _q(8, options={}, answer=("A",)),
        _q(9, text_only=False, content=f"{YEAR}_images/absent.png"),
        _q(10, text_only=False, content=f"{YEAR}_images/not_redistributed.png"),
        _q(11, text_only=False, content="../../../../etc/passwd"),
        _q(12, text_only=False, content=f"{YEAR}_images/bad.png"),
        _q(13, text_only=True, content=f"{YEAR}_images/good.png"),
        _q(14, text_only=False),
        _q(15, answer={"answer": "A"}),
        _q(16, text_only=False, content=[f"{YEAR}_images/good.png"]),  # valid image item
        "not a record",
    ]
    path = cell / f"{YEAR}_CORRECTED.json"
    path.write_text(json.dumps({"questions": questions}, ensure_ascii=False), encoding="utf-8")
    taxonomy = {
        "A9": {"image_types": ["Radiology"], "dominant_type": "Radiology", "image_as_options": False},
        "A10": {"image_types": ["Other/Unclear"], "dominant_type": "Other/Unclear", "image_as_options": False},
        "A16": {"image_types": ["Diagram"], "dominant_type": "Diagram", "image_as_options": False},
    }
    (cell / f"{YEAR}_taxonomy.json").write_text(json.dumps(taxonomy), encoding="utf-8")
    return path

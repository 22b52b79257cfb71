"""Reading the JMed48k release layout.

`<root>/JMed48k/{specialty}/{specialty}_{year}/{year}_CORRECTED.json` holds
`{"questions": [...]}`; images are referenced relative to the cell folder; an optional
`{year}_taxonomy.json` maps `"{section}{number}"` to `image_types`, `dominant_type` and
`image_as_options`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medvqa import DataError, Gold, ImageRef, ImageRole, Item, Option, brief, lone_surrogate, read_json, resolve_image
from medvqa.ja import select_count

BENCHMARK = "jmed48k"
UNKNOWN = "unknown"
OTHER = "Other/Unclear"
# The paper's eight primary image types; OTHER is kept in metadata but left out of
# type-stratified tables, and UNKNOWN marks image items with no taxonomy entry.
PRIMARY_TYPES = (
    "Clinical Photograph",
    "Radiology",
    "Pathology/Microscopy",
    "Endoscopy",
    "Chart/Graph/Table",
    "Diagram",
    "Chemical/Molecular",
    "Waveform/Signal",
)
_CELL = re.compile(r"^(?P<specialty>.+)_(?P<year>\d{4})$")
# `img` fields and the role of the images they reference (`supplementary_img` is written by
# `medvqa extract` for questions whose printed text could not be read in full).
IMAGE_FIELDS = (
    ("content_img", ImageRole.CONTENT),
    ("answer_img", ImageRole.ANSWER),
    ("supplementary_img", ImageRole.SUPPLEMENTARY),
)
REQUIRED = ("question_number", "section", "question_text", "options", "correct_answer")
MAX_NUMBER = 100_000  # question numbers run from 1 to MAX_NUMBER - 1
MAX_NAME_CHARS = 32  # sections, and question numbers written as names
MAX_TEXT_CHARS = 100_000  # a stem, reference text or option longer than this is not an exam question


@dataclass(frozen=True)
class Cell:
    specialty: str
    year: int
    folder: Path

    @property
    def questions_file(self) -> Path:
        return self.folder / f"{self.year}_CORRECTED.json"

    @property
    def taxonomy_file(self) -> Path:
        return self.folder / f"{self.year}_taxonomy.json"


def release_root(path: Path) -> Path:
    """The folder that holds the specialty folders (`.../JMed48k`)."""
    path = Path(path)
    if not path.exists():
        raise DataError("data folder not found", file=path)
    for candidate in (path / "JMed48k", path / "JMed48k-eval" / "JMed48k", path / "JMed48k-eval", path):
        if candidate.is_dir() and any(
            _CELL.match(c.name) for s in candidate.iterdir() if s.is_dir() for c in s.iterdir() if c.is_dir()
        ):
            return candidate
    raise DataError("no JMed48k/{specialty}/{specialty}_{year}/ folders found", file=path)


def cells(path: Path) -> list[Cell]:
    root = release_root(path)
    out = []
    for spec_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for cell_dir in sorted(p for p in spec_dir.iterdir() if p.is_dir()):
            m = _CELL.match(cell_dir.name)
            if m and m["specialty"] == spec_dir.name:
                out.append(Cell(spec_dir.name, int(m["year"]), cell_dir))
    return out


def read_questions(cell: Cell) -> list[dict]:
    path = cell.questions_file
    if not path.is_file():
        raise DataError(f"missing {path.name}", file=cell.folder)
    data = read_json(path)
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list):
        raise DataError('expected {"questions": [...]}', file=path)
    return questions


def read_taxonomy(cell: Cell) -> dict[str, dict]:
    path = cell.taxonomy_file
    if not path.is_file():
        return {}
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError('expected {"A1": {"image_types": [...], ...}, ...}', file=path)
    for record, entry in data.items():
        problems = taxonomy_problems(entry)
        if problems:
            raise DataError(f"[taxonomy-format] {problems[0]}", file=path, record=record)
    return data


def taxonomy_problems(entry: Any) -> list[str]:
    """What is wrong with the shape of one taxonomy entry (nothing when it is well formed)."""
    if not isinstance(entry, dict):
        return [f"entry must be an object of image_types, dominant_type and image_as_options, not {brief(entry)}"]
    out = []
    types = entry.get("image_types")
    if types is not None and not (isinstance(types, list) and all(isinstance(t, str) for t in types)):
        out.append(f"image_types must be a list of labels, not {brief(types)}")
    if not isinstance(entry.get("dominant_type"), (str, type(None))):
        out.append(f"dominant_type must be a label or null, not {brief(entry['dominant_type'])}")
    if not isinstance(entry.get("image_as_options"), (bool, type(None))):
        out.append(f"image_as_options must be true or false, not {brief(entry['image_as_options'])}")
    where = lone_surrogate(entry)
    if where:
        out.append(f"{where} holds a lone surrogate, which UTF-8 cannot encode")
    return out


def is_name(value: Any) -> bool:
    """A section (or a question number written as text): letters, digits, `-` and `_`."""
    return (
        isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS and all(ch.isalnum() or ch in "-_" for ch in value)
    )


def is_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < MAX_NUMBER


def record_problems(q: dict) -> list[tuple[str, str]]:
    """(rule, message) for each field of a release record that no item can be built from:
    ids that are neither a short name nor a question number, texts that are not text or are
    too long, flags that are not booleans, strings UTF-8 cannot encode. The loader raises the
    first; `medvqa validate` reports them all."""
    out = []
    if "section" in q and not is_name(q["section"]):
        out.append(("record-id", f"section must be a name of letters and digits, not {brief(q['section'])}"))
    number = q.get("question_number")
    if "question_number" in q and not (is_number(number) or is_name(number)):
        out.append(
            (
                "record-id",
                f"question_number must be a whole number from 1 to {MAX_NUMBER - 1:,} or a name, not {brief(number)}",
            )
        )
    texts = [
        (field, q[field])
        for field in ("question_text", "text_reference")
        if field in q and not (field == "text_reference" and q[field] is None)
    ]
    if isinstance(q.get("options"), dict):
        texts += [(f"options.{label}", text) for label, text in q["options"].items() if isinstance(text, str)]
    for field, text in texts:
        if not isinstance(text, str):
            out.append(("text-field", f"{field} must be text, not {brief(text)}"))
        elif len(text) > MAX_TEXT_CHARS:
            out.append(("text-size", f"{field} has {len(text):,} characters (at most {MAX_TEXT_CHARS:,})"))
    if not isinstance(q.get("image_as_options"), (bool, type(None))):
        out.append(("flag-type", f"image_as_options must be true or false, not {brief(q['image_as_options'])}"))
    where = lone_surrogate(q)
    if where:
        out.append(("text-encoding", f"{where} holds a lone surrogate (such as \\ud800), which UTF-8 cannot encode"))
    return out


def image_refs(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    raise ValueError(f"image reference must be a string or a list of strings, not {brief(value)}")


def canonical_key(label: str, letters: bool) -> str:
    label = str(label).strip()
    return label.upper() if letters else label


def item_id(specialty: str, year: int, section: str, number: Any) -> str:
    return f"{specialty}_{year}_{section}_Q{number}"


def build_item(cell: Cell, q: dict, taxonomy: dict[str, dict], index: int) -> Item:
    """One release record → Item. Raises DataError naming the file and record."""
    file = cell.questions_file
    missing = [f for f in REQUIRED if f not in q]
    problems = [] if missing else record_problems(q)
    if missing or problems:
        where = f"#{index} (section {brief(q.get('section'))}, number {brief(q.get('question_number'))})"
        if missing:
            raise DataError(f"missing field(s) {', '.join(missing)}", file=file, record=where)
        rule, message = problems[0]
        raise DataError(f"[{rule}] {message}", file=file, record=where)
    section, number = q["section"], q["question_number"]
    qid = item_id(cell.specialty, cell.year, section, number)
    raw_options = q["options"] or {}
    if not isinstance(raw_options, dict):
        raise DataError("options must be an object of label → text", file=file, record=qid)
    letters = bool(raw_options) and all(str(k).strip().isalpha() for k in raw_options)
    textless = [k for k, v in raw_options.items() if not isinstance(v, str)]
    if textless:
        raise DataError(f"option(s) {textless} have no text", file=file, record=qid)
    try:
        options = tuple(
            Option(key=canonical_key(k, letters), label=str(k).strip(), text=v) for k, v in raw_options.items()
        )
        gold = Gold.from_json(q["correct_answer"], file=file, record=qid)
    except ValueError as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(str(exc).splitlines()[0], file=file, record=qid) from None
    if gold is not None and letters:
        gold = Gold(alternatives=tuple(tuple(k.upper() for k in alt) for alt in gold.alternatives), raw=gold.raw)
    img = q.get("img") or {}
    if not isinstance(img, dict):
        raise DataError(f"img must be an object, not {type(img).__name__}", file=file, record=qid)
    try:
        refs = [(r, role) for field, role in IMAGE_FIELDS for r in image_refs(img.get(field))]
    except ValueError as exc:
        raise DataError(str(exc), file=file, record=qid) from None
    images = tuple(
        ImageRef(ref=r, role=role, path=resolve_image(cell.folder, r, file=file, record=qid)) for r, role in refs
    )
    tax = taxonomy.get(f"{section}{number}") or {}
    image_types = list(tax.get("image_types") or ([UNKNOWN] if images else []))
    dominant = tax.get("dominant_type") or (UNKNOWN if images else None)
    numeric = not options and gold is not None and all(k.isdigit() for alt in gold.alternatives for k in alt)
    meta = {
        "profession": cell.specialty,
        "year": cell.year,
        "section": section,
        "number": number,
        "has_image": bool(images),
        "image_types": image_types,
        "dominant_type": dominant,
        # the taxonomy file decides; records written by `medvqa extract` carry the flag themselves
        "image_as_options": bool(tax.get("image_as_options", q.get("image_as_options", False))),
        "answer_format": "numeric" if numeric else (gold.format if gold else None),
        "text_only_flag": q.get("text_only") if isinstance(q.get("text_only"), bool) else None,
    }
    return Item(
        id=qid,
        benchmark=BENCHMARK,
        question=str(q["question_text"]),
        options=options,
        gold=gold,
        answer_format="numeric" if numeric else "choice",
        n_select=select_count(str(q["question_text"])),
        images=images,
        image_as_options=meta["image_as_options"],
        text_reference=q.get("text_reference") or None,
        language="ja",
        meta=meta,
        exclusion_reason=None if gold is not None else "correct_answer is null (no usable official answer)",
    )


def iter_items(selected: list[Cell]) -> Iterator[Item]:
    for cell in selected:
        taxonomy = read_taxonomy(cell)
        seen: dict[str, int] = {}
        for i, q in enumerate(read_questions(cell)):
            if not isinstance(q, dict):
                raise DataError("question is not an object", file=cell.questions_file, record=f"#{i}")
            item = build_item(cell, q, taxonomy, i)
            if item.id in seen:
                raise DataError(
                    f"[duplicate-record] {item.id} already appears as question #{seen[item.id]}",
                    file=cell.questions_file,
                    record=f"#{i}",
                )
            seen[item.id] = i
            yield item


def eval_cells(all_cells: list[Cell], n_years: int = 5) -> list[Cell]:
    """JMed48k-Eval: for each profession, the `n_years` most recent exam years present."""
    by_spec: dict[str, list[Cell]] = {}
    for c in all_cells:
        by_spec.setdefault(c.specialty, []).append(c)
    out = []
    for cs in by_spec.values():
        years = sorted({c.year for c in cs})[-n_years:]
        out.extend(c for c in cs if c.year in years)
    return out

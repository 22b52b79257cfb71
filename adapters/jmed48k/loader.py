"""Reading the JMed48k release layout.

`<root>/JMed48k/{specialty}/{specialty}_{year}/{year}_CORRECTED.json` holds
`{"questions": [...]}`; images are referenced relative to the cell folder; an optional
`{year}_taxonomy.json` maps `"{section}{number}"` to `image_types`, `dominant_type` and
`image_as_options`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from medvqa import DataError, Gold, ImageRef, ImageRole, Item, Option, resolve_image
from medvqa.ja import select_count


BENCHMARK = "jmed48k"
UNKNOWN = "unknown"
OTHER = "Other/Unclear"
# The paper's eight primary image types; OTHER is kept in metadata but left out of
# type-stratified tables, and UNKNOWN marks image items with no taxonomy entry.
PRIMARY_TYPES = ("Clinical Photograph", "Radiology", "Pathology/Microscopy", "Endoscopy",
                 "Chart/Graph/Table", "Diagram", "Chemical/Molecular", "Waveform/Signal")
_CELL = re.compile(r"^(?P<specialty>.+)_(?P<year>\d{4})$")
# `img` fields and the role of the images they reference (`supplementary_img` is written by
# `medvqa extract` for questions whose printed text could not be read in full).
IMAGE_FIELDS = (("content_img", ImageRole.CONTENT), ("answer_img", ImageRole.ANSWER),
                ("supplementary_img", ImageRole.SUPPLEMENTARY))
REQUIRED = ("question_number", "section", "question_text", "options", "correct_answer")


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
        if candidate.is_dir() and any(_CELL.match(c.name) for s in candidate.iterdir() if s.is_dir()
                                      for c in s.iterdir() if c.is_dir()):
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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"not valid JSON ({exc})", file=path) from None
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list):
        raise DataError('expected {"questions": [...]}', file=path)
    return questions


def read_taxonomy(cell: Cell) -> dict[str, dict]:
    path = cell.taxonomy_file
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"not valid JSON ({exc})", file=path) from None
    if not isinstance(data, dict):
        raise DataError('expected {"A1": {"image_types": [...], ...}, ...}', file=path)
    return data


def image_refs(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    raise ValueError(f"image reference must be a string or a list of strings, not {value!r}")


def canonical_key(label: str, letters: bool) -> str:
    label = str(label).strip()
    return label.upper() if letters else label


def item_id(specialty: str, year: int, section: str, number: Any) -> str:
    return f"{specialty}_{year}_{section}_Q{number}"


def build_item(cell: Cell, q: dict, taxonomy: dict[str, dict], index: int) -> Item:
    """One release record → Item. Raises DataError naming the file and record."""
    file = cell.questions_file
    where = f"#{index} (section {q.get('section')!r}, number {q.get('question_number')!r})"
    missing = [f for f in REQUIRED if f not in q]
    if missing:
        raise DataError(f"missing field(s) {', '.join(missing)}", file=file, record=where)
    section, number = str(q["section"]), q["question_number"]
    qid = item_id(cell.specialty, cell.year, section, number)
    raw_options = q["options"] or {}
    if not isinstance(raw_options, dict):
        raise DataError("options must be an object of label → text", file=file, record=qid)
    letters = bool(raw_options) and all(str(k).strip().isalpha() for k in raw_options)
    try:
        options = tuple(Option(key=canonical_key(k, letters), label=str(k).strip(), text=str(v))
                        for k, v in raw_options.items())
        gold = Gold.from_json(q["correct_answer"], file=file, record=qid)
    except ValueError as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(str(exc).splitlines()[0], file=file, record=qid) from None
    if gold is not None and letters:
        gold = Gold(alternatives=tuple(tuple(k.upper() for k in alt) for alt in gold.alternatives), raw=gold.raw)
    img = q.get("img") or {}
    try:
        refs = [(r, role) for field, role in IMAGE_FIELDS for r in image_refs(img.get(field))]
    except ValueError as exc:
        raise DataError(str(exc), file=file, record=qid) from None
    images = tuple(ImageRef(ref=r, role=role, path=resolve_image(cell.folder, r, file=file, record=qid))
                   for r, role in refs)
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
        "text_only_flag": q.get("text_only"),
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
        for i, q in enumerate(read_questions(cell)):
            if not isinstance(q, dict):
                raise DataError("question is not an object", file=cell.questions_file, record=f"#{i}")
            yield build_item(cell, q, taxonomy, i)


def eval_cells(all_cells: list[Cell], n_years: int = 5) -> list[Cell]:
    """JMed48k-Eval: for each profession, the `n_years` most recent exam years present."""
    by_spec: dict[str, list[Cell]] = {}
    for c in all_cells:
        by_spec.setdefault(c.specialty, []).append(c)
    out = []
    for spec, cs in by_spec.items():
        years = sorted({c.year for c in cs})[-n_years:]
        out.extend(c for c in cs if c.year in years)
    return out

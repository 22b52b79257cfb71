"""The authors' VLMEvalKit TSVs: `<task>.tsv` files anywhere under the data root (task = file
stem), columns `index, image_path, question, answer`, plus `options` (closed items: a JSON list,
or columns A–E), `dataset, modality, submodality, class_label, split` when present, and `bbox`
for detection (JSON `[x, y, w, h]` or a list of them). `image_path` holds paths on the authors'
machines: the file name is looked up in `images/` beside the TSV. A row without an answer is a
private item (answers withheld). Item id: `<task>-<index>`."""

from __future__ import annotations

import csv
import json
import string
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from medvqa import DataError, Gold, ImageRef, Item, Option, brief, resolve_image

from .detection import as_boxes

BENCHMARK = "mmbu_hard"
LETTERS = tuple(string.ascii_uppercase)
LETTER_COLUMNS = ("A", "B", "C", "D", "E")
# metadata the Full Context template shows, by the column names that may hold it
CONTEXT_FIELDS = {
    "specimen": ("specimen",),
    "modality": ("modality",),
    "stain_contrast": ("stain_contrast", "stain", "contrast"),
    "preparation": ("preparation",),
    "anatomical_site": ("anatomical_site", "anatomy", "site"),
}
PRIVATE_REASON = "private split: answers withheld (verified evaluation only: medvqa export)"
REQUIRED = ("index", "question")

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


@dataclass(frozen=True)
class Row:
    file: Path
    task: str
    data: dict[str, str]
    line: int

    @property
    def id(self) -> str:
        return f"{self.task}-{self.data.get('index', '').strip()}"


def tsv_files(root: Path) -> list[Path]:
    if not root.exists():
        raise DataError("data folder not found", file=root)
    if root.is_file():
        return [root] if root.suffix == ".tsv" else []
    return sorted(p for p in root.rglob("*.tsv") if p.is_file())


def read_rows(path: Path) -> list[Row]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    reader = csv.DictReader(text.splitlines(), delimiter="\t")
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise DataError(f"missing column(s) {', '.join(missing)}; the header is {brief(header)}", file=path)
    rows = []
    for n, raw in enumerate(reader, start=2):
        if None in raw:
            raise DataError(f"line {n} has more fields than the header", file=path, record=f"line {n}")
        rows.append(Row(path, path.stem, {k.strip(): (v or "").strip() for k, v in raw.items() if k}, n))
    return rows


def options_of(row: Row) -> tuple[Option, ...]:
    raw = row.data.get("options", "")
    if raw:
        try:
            texts = json.loads(raw)
        except json.JSONDecodeError:
            raise DataError(f"options {brief(raw)} are not a JSON list", file=row.file, record=row.id) from None
        if not isinstance(texts, list) or not all(isinstance(t, (str, int, float)) for t in texts):
            raise DataError(f"options {brief(raw)} are not a JSON list of texts", file=row.file, record=row.id)
        if len(texts) > len(LETTERS):
            raise DataError(f"{len(texts)} options: at most {len(LETTERS)}", file=row.file, record=row.id)
        return tuple(Option(key=LETTERS[i], label=LETTERS[i], text=str(t)) for i, t in enumerate(texts))
    return tuple(Option(key=c, label=c, text=row.data[c]) for c in LETTER_COLUMNS if row.data.get(c))


def image_name(ref: str) -> str:
    """The file name of an author's absolute path (POSIX or Windows)."""
    return PureWindowsPath(ref).name if "\\" in ref else PurePosixPath(ref).name


def gold_boxes(row: Row):
    raw = row.data.get("bbox", "")
    if not raw:
        return None
    try:
        boxes = as_boxes(json.loads(raw))
    except json.JSONDecodeError:
        boxes = None
    if boxes is None:
        raise DataError(
            f"bbox {brief(raw)} is not [x, y, w, h] or a list of them (pixels, w and h >= 0)",
            file=row.file,
            record=row.id,
        )
    return boxes


def label_sets(rows: list[Row]) -> dict[str, tuple[str, ...]]:
    """Every `class_label` / open `answer` value of each dataset across the TSVs."""
    found: dict[str, set[str]] = {}
    for row in rows:
        if row.data.get("bbox") or options_of(row):
            values = [row.data.get("class_label", "")]
        else:
            values = [row.data.get("class_label", ""), row.data.get("answer", "")]
        for v in values:
            if v:
                found.setdefault(dataset_of(row), set()).add(v)
    return {k: tuple(sorted(v, key=str.lower)) for k, v in found.items()}


def dataset_of(row: Row) -> str:
    return row.data.get("dataset") or row.task


def to_item(row: Row, labels: dict[str, tuple[str, ...]], context: str) -> Item:
    d = row.data
    if not d.get("index"):
        raise DataError("empty index", file=row.file, record=f"line {row.line}")
    if not d.get("question"):
        raise DataError("empty question", file=row.file, record=row.id)
    options = options_of(row)
    boxes = gold_boxes(row)
    answer = d.get("answer", "")
    split = (d.get("split") or ("public" if answer or boxes else "private")).lower()
    if split not in ("public", "private"):
        raise DataError(f"split {brief(d.get('split'))} is neither public nor private", file=row.file, record=row.id)
    if boxes is not None:
        kind, fmt, answer_format = "detection", "closed" if options else "open", "bbox"
    else:
        kind, fmt, answer_format = "classification", "closed" if options else "open", "choice" if options else "text"
    gold = None
    if split == "public":
        if boxes is not None:
            gold = Gold(boxes=boxes, raw=d.get("bbox"))
        elif not answer:
            raise DataError("public item without an answer", file=row.file, record=row.id)
        elif options:
            key = answer.upper()
            if key not in {o.key for o in options}:
                by_text = [o.key for o in options if o.text.strip().lower() == answer.lower()]
                if not by_text:
                    raise DataError(
                        f"answer {brief(answer)} is not one of the options {', '.join(o.key for o in options)}",
                        file=row.file,
                        record=row.id,
                    )
                key = by_text[0]
            gold = Gold.from_json(key, file=row.file, record=row.id)
        else:
            gold = Gold(text=answer, raw=answer)
    images = ()
    if d.get("image_path"):
        name = image_name(d["image_path"])
        path = resolve_image(row.file.parent, f"images/{name}", file=row.file, record=row.id)
        images = (ImageRef(ref=d["image_path"], path=path),)
    meta = {
        "task": row.task,
        "format": fmt,
        "kind": kind,
        "modality": d.get("modality") or None,
        "submodality": d.get("submodality") or None,
        "dataset": dataset_of(row),
        "split": split,
        "class_label": d.get("class_label") or None,
        "context": context,
        "label_set": list(labels.get(dataset_of(row), ())),
        "context_fields": {name: next((d[c] for c in cols if d.get(c)), None) for name, cols in CONTEXT_FIELDS.items()},
    }
    return Item(
        id=row.id,
        benchmark=BENCHMARK,
        question=d["question"],
        options=options,
        gold=gold,
        answer_format=answer_format,
        images=images,
        language="en",
        meta=meta,
        exclusion_reason=PRIVATE_REASON if split == "private" else None,
        held_out=split == "private",
    )


def load_items(root: Path, context: str) -> list[Item]:
    files = tsv_files(root)
    if not files:
        raise DataError("no <task>.tsv file under the data folder", file=root)
    rows = [row for f in files for row in read_rows(f)]
    labels = label_sets(rows)
    items, seen = [], {}
    for row in rows:
        item = to_item(row, labels, context)
        if item.id in seen:
            raise DataError(f"duplicate item id {item.id} (also in {seen[item.id]})", file=row.file, record=item.id)
        seen[item.id] = row.file
        items.append(item)
    return items

"""`medvqa validate mmbu_hard --data PATH`: every problem of every TSV row as a finding naming
the file, the record and the rule, instead of the first one stopping the load."""

from __future__ import annotations

from pathlib import Path

from medvqa import DataError, Finding

from . import loader

# rule → what a finding under it is (the summary `medvqa validate` prints, in this order)
RULES = {
    "data-folder": "the data folder is missing or not a folder",
    "no-tsv": "no <task>.tsv file under the data folder",
    "tsv": "a TSV file that is not UTF-8 text, lacks a column, or has a line longer than its header",
    "options": "options that are not a JSON list of texts: the task's label sets cannot be built",
    "row": "a row that makes no item: an empty question, an unknown split, an answer or box that cannot be read, ...",
    "duplicate-id": "an item id that another row already has",
    "image-missing": "an image not found beside its TSV: the item is asked without it (a warning)",
}


def _finding(file, record, rule: str, message: str, level: str = "error") -> Finding:
    return Finding(file=str(file), section=None, number=record, rule=rule, level=level, message=message)


def validate(path: Path) -> list[Finding]:
    path = Path(path)
    findings: list[Finding] = []
    try:
        files = loader.tsv_files(path)
    except DataError as exc:
        return [_finding(path, None, "data-folder", exc.reason)]
    if not files:
        return [_finding(path, None, "no-tsv", "no <task>.tsv file under the data folder")]
    rows = []
    for f in files:
        try:
            rows.extend(loader.read_rows(f))
        except DataError as exc:
            findings.append(_finding(f, exc.record, "tsv", exc.reason))
    labels = {}
    try:
        labels = loader.label_sets(rows)
    except DataError as exc:
        findings.append(_finding(exc.file, exc.record, "options", exc.reason))
    seen: dict[str, str] = {}
    for row in rows:
        try:
            item = loader.to_item(row, labels, "none")
        except DataError as exc:
            findings.append(_finding(row.file, exc.record or row.id, "row", exc.reason))
            continue
        except ValueError as exc:  # an Item the model refuses (e.g. duplicate option keys)
            findings.append(_finding(row.file, row.id, "row", str(exc).splitlines()[0]))
            continue
        if item.id in seen:
            findings.append(_finding(row.file, item.id, "duplicate-id", f"item id also in {seen[item.id]}"))
        seen[item.id] = str(row.file)
        if item.images and not item.image_available:
            findings.append(
                _finding(
                    row.file,
                    item.id,
                    "image-missing",
                    f"image {loader.image_name(row.data['image_path'])} not found in "
                    f"{row.file.parent / 'images'}; the item is asked without it",
                    "warning",
                )
            )
    return findings

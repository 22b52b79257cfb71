"""The local PES VQA layout: `<root>/vqa.jsonl`, `<root>/qa.jsonl` and `<root>/images/`.

No release of the PES VQA set exists, so this adapter defines the layout
(docs/benchmarks/polish_pes.md). One JSON object per line:

- every item: `id` (string, unique across both files), `year`, `quarter` (`Spring` /
  `Autumn`), `specialty` (the Polish name as CEM writes it), `sheet` (exam sheet id),
  `question`, `options` (`{"A": ..., "E": ...}`), `answer` (one of A-E), `invalid` (null, or
  CEM's reason for annulling the question), `human_answers` (null, or examinee answer counts
  per option);
- VQA items only: `images` (paths relative to the root), `image_importance` (0, 1 or 2),
  `visual_domains` (a list of IMAGE, WAVEFORM, PLOT, GRAPHIC, TABLE, COMPOSITE).

`check_file` applies every rule and returns findings (`medvqa validate`); `read_items` turns the
lines into items and raises DataError, naming the file and the record, at the first error.
Items with `invalid` set are kept as excluded items (never scored, counted per sheet).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medvqa import DataError, Finding, Gold, ImageRef, Item, Option, brief, lone_surrogate, resolve_image

from .prompts import LETTERS

BENCHMARK = "polish_pes"
FILES = {"vqa": "vqa.jsonl", "qa": "qa.jsonl"}
QUARTERS = ("Spring", "Autumn")
IMPORTANCE = (0, 1, 2)
DOMAINS = ("IMAGE", "WAVEFORM", "PLOT", "GRAPHIC", "TABLE", "COMPOSITE")
COMMON = ("id", "year", "quarter", "specialty", "sheet", "question", "options", "answer", "invalid", "human_answers")
VQA_ONLY = ("images", "image_importance", "visual_domains")
# rule → what a finding under it is (the summary `medvqa validate` prints, in this order)
RULES = {
    "layout": "the data folder, or vqa.jsonl in it, is missing (a warning for qa.jsonl: VQA items only)",
    "utf8": "a file that is not UTF-8 text",
    "json": "a line that is not a JSON object",
    "id": "an id that is not a non-empty string",
    "duplicate-id": "an id used twice, in one file or across both",
    "surrogate": "a string holding a lone surrogate (\\ud800), which UTF-8 cannot encode",
    "missing-field": "a required field is missing",
    "unknown-field": "a field the layout does not define: ignored (a warning)",
    "qa-image-field": "a QA control item carrying images, importance or visual domains",
    "year": "a year that is not a year such as 2024",
    "quarter": "a quarter that is not Spring or Autumn",
    "specialty": "a specialty that is not a non-empty string",
    "sheet": "a sheet that is neither a non-empty string nor a whole number",
    "question": "a question that is not a non-empty string",
    "options": "options that do not map exactly A-E to non-empty texts",
    "invalid": "an invalid that is neither null nor CEM's reason",
    "answer": "an answer that is not one of A-E (null only for an annulled question)",
    "human-answers": "human_answers that are not null or counts per option A-E, or add up to zero",
    "images": "images that are not a non-empty list of paths",
    "image-path": "an image path that is empty, absolute or leaves the data folder",
    "image-missing": "an image file that is not there",
    "image-importance": "an image_importance that is not 0, 1 or 2",
    "visual-domains": "visual_domains that are not a non-empty list of distinct known domains",
}


@dataclass
class Checked:
    """The findings about one file and the items of its usable lines."""

    findings: list[Finding] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)


def check_file(root: Path, kind: str, seen: dict[str, str] | None = None) -> Checked:
    """Every finding about `<root>/<FILES[kind]>` and the items of its lines without errors.
    `seen` maps ids already read (from the other file) to where they were."""
    path = root / FILES[kind]
    out = Checked()
    seen = {} if seen is None else seen
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        out.findings.append(_finding(path, None, "utf8", f"not UTF-8 text ({exc.reason} at byte {exc.start})"))
        return out
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"line {lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            out.findings.append(_finding(path, where, "json", f"not a JSON object ({exc.msg})"))
            continue
        if not isinstance(row, dict):
            out.findings.append(_finding(path, where, "json", f"not a JSON object but {type(row).__name__}"))
            continue
        found = _check_row(root, path, kind, row, where, seen)
        out.findings += found
        if not [f for f in found if f.level == "error"]:
            out.items.append(_item(root, path, kind, row))
    return out


def read_items(root: Path, kinds: tuple[str, ...]) -> list[Item]:
    """The items of `kinds` ("vqa", "qa") in file order; DataError at the first error."""
    root = Path(root)
    if not root.is_dir():
        raise DataError("PES data folder not found (expected vqa.jsonl, qa.jsonl and images/)", file=root)
    seen: dict[str, str] = {}
    items: list[Item] = []
    for kind in ("vqa", "qa"):  # ids are unique across both files, so both are always read for ids
        path = root / FILES[kind]
        if not path.is_file():
            if kind in kinds:
                raise DataError(f"{FILES[kind]} not found in the PES data folder", file=path)
            continue
        checked = check_file(root, kind, seen)
        if bad := [f for f in checked.findings if f.level == "error"]:
            first = bad[0]
            raise DataError(f"[{first.rule}] {first.message}", file=first.file, record=first.record)
        if kind in kinds:
            items += checked.items
    return items


def _finding(path: Path, record: str | None, rule: str, message: str, level: str = "error") -> Finding:
    return Finding(file=str(path), section=None, number=record, rule=rule, level=level, message=message)


def _check_row(root: Path, path: Path, kind: str, row: dict, where: str, seen: dict[str, str]) -> list[Finding]:
    out: list[Finding] = []
    rid = row.get("id")
    if not isinstance(rid, str) or not rid.strip():
        return [_finding(path, where, "id", f"`id` must be a non-empty string, not {brief(rid)}")]
    record = rid

    def bad(rule: str, message: str, level: str = "error") -> None:
        out.append(_finding(path, record, rule, message, level))

    if rid in seen:
        bad("duplicate-id", f"id {rid!r} is used twice (first at {seen[rid]}); ids are unique across both files")
    else:
        seen[rid] = f"{path.name} {where}"
    if (where_bad := lone_surrogate(row)) is not None:
        bad("surrogate", f"{where_bad} holds a lone surrogate, which UTF-8 cannot encode")
        return out
    allowed = COMMON + (VQA_ONLY if kind == "vqa" else ())
    for name in COMMON + (VQA_ONLY if kind == "vqa" else ()):
        if name not in row and name not in ("invalid", "human_answers"):
            bad("missing-field", f"field `{name}` is missing")
    if kind == "qa":
        for name in VQA_ONLY:
            if row.get(name) not in (None, [], ""):
                bad(
                    "qa-image-field",
                    f"`{name}` is set, but QA control items carry no images ({FILES['vqa']} holds VQA items)",
                )
    for name in sorted(set(row) - set(allowed) - set(VQA_ONLY)):
        bad("unknown-field", f"unknown field `{name}` (ignored)", "warning")
    year = row.get("year")
    if "year" in row and not (_year(year) is not None):
        bad("year", f"`year` must be a year such as 2024, not {brief(year)}")
    if "quarter" in row and row.get("quarter") not in QUARTERS:
        bad("quarter", f"`quarter` must be Spring or Autumn, not {brief(row.get('quarter'))}")
    for name in ("specialty", "sheet", "question"):
        value = row.get(name)
        if name in row and not (isinstance(value, str) and value.strip()) and not (name == "sheet" and _is_int(value)):
            bad(name, f"`{name}` must be a non-empty string, not {brief(value)}")
    options = row.get("options")
    if "options" in row:
        if not isinstance(options, dict) or sorted(options) != list(LETTERS):
            keys = sorted(options) if isinstance(options, dict) else type(options).__name__
            bad("options", f"`options` must map exactly A, B, C, D, E to their texts, not {brief(keys)}")
        elif empty := [k for k, v in options.items() if not (isinstance(v, str) and v.strip())]:
            bad("options", f"option(s) {', '.join(sorted(empty))} have no text")
    invalid = row.get("invalid")
    if invalid is not None and not (isinstance(invalid, str) and invalid.strip()):
        bad("invalid", f"`invalid` must be null or CEM's reason (a non-empty string), not {brief(invalid)}")
    answer = row.get("answer")
    if "answer" in row and answer not in LETTERS and not (answer is None and invalid):
        bad("answer", f"`answer` must be one of A-E, not {brief(answer)}")
    human = row.get("human_answers")
    if human is not None:
        if (
            not isinstance(human, dict)
            or not human
            or set(human) - set(LETTERS)
            or not all(_is_int(v) and v >= 0 for v in human.values())
        ):
            bad("human-answers", f"`human_answers` must be null or counts per option A-E, not {brief(human)}")
        elif sum(human.values()) == 0:
            bad("human-answers", "`human_answers` counts add up to zero")
    if kind == "vqa":
        out += _check_vqa(root, path, row, record)
    return out


def _check_vqa(root: Path, path: Path, row: dict, record: str) -> list[Finding]:
    out: list[Finding] = []
    images = row.get("images")
    if "images" in row:
        if not isinstance(images, list) or not images or not all(isinstance(i, str) for i in images):
            out.append(
                _finding(path, record, "images", f"`images` must be a non-empty list of paths, not {brief(images)}")
            )
        else:
            for ref in images:
                try:
                    found = resolve_image(root, ref, file=path, record=record)
                except DataError as exc:
                    out.append(_finding(path, record, "image-path", exc.reason))
                    continue
                if found is None:
                    out.append(_finding(path, record, "image-missing", f"image {ref!r} not found under {root}"))
    importance = row.get("image_importance")
    if "image_importance" in row and (not _is_int(importance) or importance not in IMPORTANCE):
        out.append(
            _finding(path, record, "image-importance", f"`image_importance` must be 0, 1 or 2, not {brief(importance)}")
        )
    domains = row.get("visual_domains")
    if "visual_domains" in row:
        if not isinstance(domains, list) or not domains or not all(isinstance(d, str) for d in domains):
            out.append(
                _finding(
                    path,
                    record,
                    "visual-domains",
                    f"`visual_domains` must be a non-empty list of {', '.join(DOMAINS)}, not {brief(domains)}",
                )
            )
        elif unknown := [d for d in domains if d not in DOMAINS]:
            out.append(
                _finding(
                    path,
                    record,
                    "visual-domains",
                    f"unknown visual domain(s) {', '.join(map(repr, unknown))}; choose from {', '.join(DOMAINS)}",
                )
            )
        elif len(set(domains)) != len(domains):
            out.append(_finding(path, record, "visual-domains", f"`visual_domains` repeats a domain: {domains}"))
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _year(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if _is_int(value) and 1990 <= value <= 2100 else None


def _item(root: Path, path: Path, kind: str, row: dict) -> Item:
    """The item of a line that passed every rule."""
    rid = row["id"]
    human = row.get("human_answers")
    invalid = row.get("invalid")
    meta = {
        "set": kind,
        "year": _year(row["year"]),
        "quarter": row["quarter"],
        "specialty": row["specialty"].strip(),
        "sheet": str(row["sheet"]).strip(),
        "image_importance": row.get("image_importance") if kind == "vqa" else None,
        "visual_domain": list(row.get("visual_domains") or []) if kind == "vqa" else None,
        "human_n": sum(human.values()) if human else None,
        "human_correct": human.get(row["answer"], 0) if human and not invalid else None,
        "invalid": invalid,
    }
    images = tuple(
        ImageRef(ref=ref, path=resolve_image(root, ref, file=path, record=rid)) for ref in (row.get("images") or [])
    )
    return Item(
        id=rid,
        benchmark=BENCHMARK,
        question=row["question"].strip(),
        options=tuple(Option(key=k, label=k, text=row["options"][k].strip()) for k in LETTERS),
        gold=None if invalid else Gold.from_json(row["answer"], file=path, record=rid),
        images=images,
        language="pl",
        meta=meta,
        exclusion_reason=f"annulled by CEM: {invalid.strip()}" if invalid else None,
    )


def iter_findings(root: Path) -> Iterator[Finding]:
    """Every finding about the data folder `root` (`medvqa validate polish_pes`)."""
    root = Path(root)
    if root.is_file():  # the Hub text set's test.json (--split text-2018-2022): read, and checked, as it loads
        return
    if not root.is_dir():
        yield _finding(root, None, "layout", "PES data folder not found (expected vqa.jsonl, qa.jsonl and images/)")
        return
    seen: dict[str, str] = {}
    for kind in ("vqa", "qa"):
        path = root / FILES[kind]
        if not path.is_file():
            level = "error" if kind == "vqa" else "warning"
            yield _finding(
                path,
                None,
                "layout",
                f"{FILES[kind]} not found" + ("" if kind == "vqa" else ": no QA control set, only VQA items can run"),
                level,
            )
            continue
        yield from check_file(root, kind, seen).findings

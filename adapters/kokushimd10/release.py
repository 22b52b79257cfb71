"""KokushiMD-10 (Liu et al. 2025, arXiv 2506.11114; github.com/jamed-llm/KokushiMD-10, data
`humanalysis-square/KokushiMD-10` on the Hugging Face Hub, MIT): ten MHLW exams, 2020-2024.

The layout is the one the authors' scoring script (`calculate_scores.py`) reads: per profession
a folder named by its short Japanese name (医師, 歯科, 看護, 保健, 助産, 理学, 作業, 診療, 視能,
薬剤), holding one JSON list per block, `{profession}_{year}_{section}.json` (`医師_2020_a.json`;
pharmacist sections a1-b3). Fields the script reads: `index` ("12", or "12-1" for a part of a
question set), `text_only`, `kinki`, `points`, `human_accuracy`, `answer` ("C", "AC", "A,C" or
["A","C"]) and, for corrections, `corrected_question_index`; pharmacist items `answer_sub2`
(subject). The question, the options and the images, which the script does not read, are taken
from the first field present among:

- question: `question`, `problem_text`, `question_text`, `text`, `problem`
- options: `choices` or `options` (a list, or a mapping label → text), else top-level keys
  `a`, `b`, ... or `1`, `2`, ... (the shape of the authors' prompt, `prompt.py`)
- images: `images`, `image`, `image_path`, `image_paths`, `img`, `figure` (a path relative to
  the data folder, or a list of them); else `images/<item id>.<ext>` when such a file exists

Predictions: `{profession}_{year}_{section}_pred.json`, a list aligned with the block, `pred`
per entry (the script joins them by position).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medvqa import DataError, ImageRef, ImageRole, Item, brief, read_json, resolve_image

from .common import (
    digit_options,
    find_images,
    letter_options,
    make_item,
    no_surrogate,
    parse_answer,
    parse_human_accuracy,
    parse_kinki,
    parse_points,
    parse_text_only,
)
from .professions import SHORT_NAMES

BENCHMARK = "kokushimd10"
BLOCK_FILE = re.compile(r"(?P<prof>[^_\\/]+)_(?P<year>\d{4})_(?P<section>[A-Za-z0-9]+)\.json")
QUESTION_FIELDS = ("question", "problem_text", "question_text", "text", "problem")
OPTION_FIELDS = ("choices", "options")
IMAGE_FIELDS = ("images", "image", "image_path", "image_paths", "img", "figure")
_INDEX = re.compile(r"(?P<number>\d+)(?:-(?P<part>\d+))?")


def block_files(path: Path) -> list[tuple[str, int, str, Path]]:
    """(profession, year, section, file) of every block under `path` (searched recursively, so
    `exams/JA/...` of a snapshot is found too), in a stable order."""
    path = Path(path)
    if not path.is_dir():
        raise DataError("no such folder", file=path)
    found = []
    for f in sorted(path.rglob("*.json")):
        m = BLOCK_FILE.fullmatch(f.name)
        if m and m["prof"] in SHORT_NAMES:
            found.append((SHORT_NAMES[m["prof"]], int(m["year"]), m["section"].lower(), f))
    if not found:
        raise DataError(
            "no KokushiMD-10 block files (<profession>/<profession>_<year>_<section>.json, e.g. "
            "医師/医師_2020_a.json) found",
            file=path,
        )
    return found


def hisshu(profession: str, section: str, number: int) -> bool:
    """必修 (必須) questions as the authors' script splits them: physician blocks B and E, dentist
    questions 1-20 and nurse 1-25 of each block, pharmacist block a1."""
    return (
        (profession == "Physician" and section in ("b", "e"))
        or (profession == "Dentist" and number <= 20)
        or (profession == "Nurse" and number <= 25)
        or (profession == "Pharmacist" and section == "a1")
    )


def load(path: Path) -> list[Item]:
    root = Path(path)
    items = []
    for profession, year, section, f in block_files(root):
        rows = read_json(f)
        if not isinstance(rows, list):
            raise DataError("a block file must hold a JSON list of questions", file=f)
        for position, row in enumerate(rows):
            items.append(
                item_from_row(
                    row, profession=profession, year=year, section=section, file=f, root=root, position=position
                )
            )
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise DataError("index appears twice in its block", file=root, record=dup)
    return items


def _first(row: dict, names: tuple[str, ...]) -> Any:
    return next((row[n] for n in names if n in row and row[n] not in (None, "")), None)


def _options(row: dict, file: Path, record: str) -> tuple[list[str], list[str]]:
    """(labels, texts) of the options."""
    value = _first(row, OPTION_FIELDS)
    if value is None:
        labels = [k for k in row if re.fullmatch(r"[a-z]|[1-9][0-9]?", k)]
        value = {k: row[k] for k in labels}
    if isinstance(value, dict):
        if not all(isinstance(v, str) for v in value.values()):
            raise DataError("option texts must be strings", file=file, record=record)
        return [str(k) for k in value], list(value.values())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [], value
    raise DataError(f"unreadable options {brief(value)}", file=file, record=record)


def item_from_row(row: Any, *, profession: str, year: int, section: str, file: Path, root: Path, position: int) -> Item:
    if not isinstance(row, dict):
        raise DataError(f"question {position + 1} is not a JSON object", file=file)
    index = str(row.get("index", "")).strip()
    m = _INDEX.fullmatch(index)
    if not m:
        raise DataError(
            f'index {brief(row.get("index"))} is not a number or number-part ("12", "12-1")',
            file=file,
            record=f"position {position + 1}",
        )
    item_id = f"{profession}-{year}-{section.upper()}{index}"
    no_surrogate(row, file, item_id)
    question = _first(row, QUESTION_FIELDS)
    if not isinstance(question, str) or not question.strip():
        raise DataError(f"no question text (looked for {', '.join(QUESTION_FIELDS)})", file=file, record=item_id)
    labels, texts = _options(row, file, item_id)
    raw_answer = row.get("answer")
    answer_text = "".join(map(str, raw_answer)) if isinstance(raw_answer, list) else str(raw_answer or "")
    digits = (bool(labels) and all(lb.isdigit() for lb in labels)) or (
        not labels and bool(re.fullmatch(r"[\s,、，0-9]+", answer_text)) and bool(texts)
    )
    numeric = not texts
    options = digit_options(texts) if digits else letter_options(texts)
    gold, exclusion, notes = parse_answer(raw_answer, letters=not digits, numeric=numeric, file=file, record=item_id)
    if gold is not None and not numeric and not gold.keys <= {o.key for o in options}:
        raise DataError(f"answer {brief(raw_answer)} names no option of the {len(options)}", file=file, record=item_id)
    kinki = parse_kinki(row.get("kinki"), letters=not digits, file=file, record=item_id)
    points = parse_points(row.get("points", 1), file=file, record=item_id)
    text_only = parse_text_only(row, file=file, record=item_id)
    number = int(m["number"])
    corrected = "corrected_question_index" in row
    meta: dict[str, Any] = {
        "profession": profession,
        "year": year,
        "block": f"{profession}-{year}-{section.upper()}",
        "section": section.upper(),
        "number": number,
        "index": index,
        "position": position,
        "category": row.get("category") or row.get("answer_sub2"),
        "subject": row.get("answer_sub2"),
        "hisshu": hisshu(profession, section, number),
        "kinki": list(kinki),
        "kinki_item": bool(kinki),
        "kinki_raw": row.get("kinki"),
        "text_only": text_only,
        "points": points,
        "withdrawn": points == 0 or corrected,
        "corrected": corrected,
        "credited_to_all": False,
        "human_accuracy": parse_human_accuracy(row.get("human_accuracy"), file=file, record=item_id),
        "answer_raw": raw_answer,
        **notes,
    }
    refs = _first(row, IMAGE_FIELDS)
    refs = [refs] if isinstance(refs, str) else refs or []
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise DataError(f"unreadable image reference {brief(refs)}", file=file, record=item_id)
    images: tuple[ImageRef, ...] = ()
    if refs:
        images = tuple(
            ImageRef(ref=r, role=ImageRole.CONTENT, path=resolve_image(root, r, file=file, record=item_id))
            for r in refs
        )
    elif not text_only:
        images = find_images(root, [], item_id, file=file, record=item_id)
    return make_item(
        benchmark=BENCHMARK,
        item_id=item_id,
        question=question,
        options=options,
        gold=gold,
        exclusion=exclusion,
        numeric=numeric,
        images=images,
        image_as_options=False,
        meta=meta,
    )

"""YakugakuQA (github.com/EQUES-Inc/pharma-LLM-eval): the pharmacist exams, per block
`data/{year}/{round}-{block}.jsonl` with `data/{year}/metadata_{round}.jsonl`.

Item fields: `problem_id` ("107A001": round, block, number within the block), `problem_text`,
`choices` (labelled 1-n; 4, 5 or 6 options, or the string "IMAGES" when the options are
pictures the repository does not hold), `text_only`, `answer` (digits, `["解なし"]`, or a
digit with a note: "5（いずれか2つ選択で正解とする）"), `comment` (explanation), `points`.
Metadata rows are numbered through the whole exam ("107001"-"107345": blocks A-F in order) and
hold `category` (subject) and `note`. The combined `{round}.jsonl` repeats the blocks.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from medvqa import DataError, Item, Option, read_jsonl

from .common import (
    BLOCK_FILE,
    block_files,
    data_root,
    digit_options,
    find_images,
    image_root,
    make_item,
    parse_answer,
    parse_points,
    parse_text_only,
    problem_row,
)

BENCHMARK = "yakugakuqa"
PROFESSION = "Pharmacist"
HISSHU_BLOCKS = ("A",)  # 必須問題: questions 1-90, block A
_ID = re.compile(r"(?P<round>\d{3})(?P<block>[A-Z])(?P<number>\d{3})")
IMAGE_OPTIONS = "IMAGES"
# The pharmacist exam asks five-option questions (五肢択一, 五肢択二); the data does not say how
# many pictures an "IMAGES" item shows, so such items declare five, or as many as their answer
# names (a few combination items have six).
PICTURE_OPTIONS = 5


def load(path: Path) -> list[Item]:
    root = image_root(path, data_root(path, "YakugakuQA"))
    items: list[Item] = []
    by_exam = itertools.groupby(
        block_files(path, "YakugakuQA"), key=lambda yf: (yf[0], yf[1].parent, BLOCK_FILE.fullmatch(yf[1].name)["round"])
    )
    for (year, year_dir, exam_round), blocks in by_exam:
        items += _exam(root, year_dir, year, exam_round, [f for _, f in blocks])
    return items


def _metadata(path: Path) -> dict[int, dict]:
    """Exam-wide question number → metadata row (repeated rows: the first)."""
    out: dict[int, dict] = {}
    if not path.is_file():
        return out
    for row in read_jsonl(path):
        pid = str(row.get("problem_id", ""))
        if not pid.isdigit() or len(pid) < 4:
            raise DataError(f"metadata problem_id {pid!r} is not <round><number>", file=path)
        out.setdefault(int(pid[3:]), row)
    return out


def _exam(root: Path, year_dir: Path, year: int, exam_round: str, blocks: list[Path]) -> list[Item]:
    meta_file = year_dir / f"metadata_{exam_round}.jsonl"
    metadata = _metadata(meta_file)
    items, offset = [], 0
    for f in blocks:  # A-F: the exam's numbering runs on through the blocks
        rows = read_jsonl(f)
        for row in rows:
            items.append(_item(row, metadata, offset, year=year, file=f, meta_file=meta_file, root=root))
        offset += len(rows)
    return items


def picture_options(gold) -> tuple[Option, ...]:
    """The options of an item whose options are pictures: labels 1-5 (1-n when the answer names
    option n > 5) without text, so that the item's label set is known even where its pictures
    are missing; the picture is the option's text (shown as the item's image)."""
    named = [int(k) for k in (gold.keys if gold is not None else ()) if k.isdigit()]
    return tuple(Option(key=str(i), label=str(i), text="") for i in range(1, max([PICTURE_OPTIONS, *named]) + 1))


def _item(
    row: dict, metadata: dict[int, dict], offset: int, *, year: int, file: Path, meta_file: Path, root: Path
) -> Item:
    pid, m, text, choices = problem_row(row, _ID, "107A001", file)
    image_options = choices == IMAGE_OPTIONS
    if not image_options and (
        not isinstance(choices, list) or not all(isinstance(c, str) for c in choices) or not choices
    ):
        raise DataError(
            f"choices must be a list of texts or {IMAGE_OPTIONS!r}, got {choices!r:.60}", file=file, record=pid
        )
    gold, exclusion, notes = parse_answer(row.get("answer"), letters=False, numeric=False, file=file, record=pid)
    options = picture_options(gold) if image_options else digit_options(choices)
    if gold is not None and options and not gold.keys <= {o.key for o in options}:
        raise DataError(f"answer {row.get('answer')!r} names no option of the {len(options)}", file=file, record=pid)
    number = offset + int(m["number"])
    extra = metadata.get(number, {})
    note = extra.get("note") or ""
    text_only = parse_text_only(row, file=file, record=pid)
    points = parse_points(row.get("points", 1), file=file, record=pid)
    meta: dict[str, Any] = {
        "profession": PROFESSION,
        "year": year,
        "exam_round": int(m["round"]),
        "block": f"{m['round']}{m['block']}",
        "section": m["block"],
        "number": number,
        "category": extra.get("category"),
        "hisshu": m["block"] in HISSHU_BLOCKS,
        "kinki": [],
        "kinki_item": False,
        "text_only": text_only,
        "points": points,
        "withdrawn": points == 0,
        "credited_to_all": False,
        "human_accuracy": None,
        "n_options": len(options),
        "answer_raw": row.get("answer"),
        **notes,
        # the data writes 1 point per question; MHLW scores 2 each (690 points): its weights apply
        "weights_from_mhlw": True,
    }
    if note:
        meta["note"] = note
    images = () if text_only and not image_options else find_images(root, [], pid, file=file, record=pid)
    return make_item(
        benchmark=BENCHMARK,
        item_id=pid,
        question=text,
        options=options,
        gold=gold,
        exclusion=exclusion,
        numeric=False,
        images=images,
        image_as_options=image_options,
        meta=meta,
    )

"""IgakuQA (Kasai et al. 2023, github.com/jungokasai/IgakuQA): the physician exams 2018-2022
(112th-116th), `data/{year}/{round}-{block}.jsonl` with `{round}-{block}_metadata.jsonl`.

Item fields: `problem_id` ("116A71", the item id), `problem_text`, `choices` (labelled a-e; `[]`
for a numeric answer), `text_only`, `answer` (`["c"]`, `["b", "e"]`, `["a or d"]` for officially
accepted alternatives, `["1.2"]` for a number), `points` ("1", "3"; "0" for the 11 items MHLW
took out of scoring). Metadata: `category`, `kinki` (禁忌肢 options), `reason`,
`human_accuracy` (examinees' percent correct), `breakdown` (percent per option).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medvqa import DataError, Item, read_jsonl

from .common import (
    block_files,
    data_root,
    find_images,
    image_root,
    letter_options,
    make_item,
    no_surrogate,
    parse_answer,
    parse_human_accuracy,
    parse_kinki,
    parse_points,
    parse_text_only,
    problem_row,
)

BENCHMARK = "igakuqa"
PROFESSION = "Physician"
HISSHU_BLOCKS = ("B", "E")  # the physician exam's 必修 blocks
_ID = re.compile(r"(?P<round>\d{3})(?P<block>[A-Z])(?P<number>\d+)")
# Items MHLW scored as correct for every examinee (全員正解): the data keeps their printed answer
# and points; IgakuQA's own scorer counts them correct whatever the prediction, their examinee
# accuracy is blank, and the 116th exam's non-必修 maximum (297 = 300 minus the three items with
# points 0) leaves this item in the total.
CREDITED_TO_ALL = {"116A71": "scored correct for every examinee (MHLW 全員正解)"}


def load(path: Path, language: str = "ja") -> list[Item]:
    """Every item under `path`, in year, block and question order; with `language="en"` each
    item's stem and options from the release's English translation (`*_translate.jsonl`)."""
    items = []
    root = data_root(path, "IgakuQA")
    for year, f in block_files(path, "IgakuQA"):
        meta_file = f.with_name(f.stem + "_metadata.jsonl")
        metadata = {}
        if meta_file.is_file():
            for row in read_jsonl(meta_file):
                pid = row.get("problem_id")
                if not isinstance(pid, str):
                    raise DataError("metadata row without a problem_id", file=meta_file)
                no_surrogate(row, meta_file, pid)
                metadata[pid] = row
        block = [item_from_row(row, metadata, year=year, file=f, root=image_root(path, root)) for row in read_jsonl(f)]
        items += translated(block, f.with_name(f.stem + "_translate.jsonl")) if language == "en" else block
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise DataError("problem_id appears twice", file=root, record=dup)
    return items


def item_from_row(row: dict, metadata: dict[str, dict], *, year: int, file: Path, root: Path) -> Item:
    pid, m, text, choices = problem_row(row, _ID, "116A71", file)
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise DataError(f"choices must be a list of texts, got {type(choices).__name__}", file=file, record=pid)
    numeric = not choices
    gold, exclusion, notes = parse_answer(row.get("answer"), letters=True, numeric=numeric, file=file, record=pid)
    extra = metadata.get(pid, {})
    meta_file = file.with_name(file.stem + "_metadata.jsonl")
    kinki = parse_kinki(extra.get("kinki"), letters=True, file=meta_file, record=pid)
    points = parse_points(row.get("points"), file=file, record=pid)
    text_only = parse_text_only(row, file=file, record=pid)
    meta: dict[str, Any] = {
        "profession": PROFESSION,
        "year": year,
        "exam_round": int(m["round"]),
        "block": f"{m['round']}{m['block']}",
        "section": m["block"],
        "number": int(m["number"]),
        "category": extra.get("category"),
        "hisshu": m["block"] in HISSHU_BLOCKS,
        "kinki": list(kinki),
        "kinki_item": bool(kinki),
        "kinki_raw": extra.get("kinki"),
        "text_only": text_only,
        "points": points,
        "withdrawn": points == 0,
        "credited_to_all": pid in CREDITED_TO_ALL,
        "human_accuracy": parse_human_accuracy(extra.get("human_accuracy"), file=meta_file, record=pid),
        "answer_raw": row.get("answer"),
        **notes,
    }
    if pid in CREDITED_TO_ALL:
        meta["treatment"] = CREDITED_TO_ALL[pid]
    images = () if text_only else find_images(root, [], pid, file=file, record=pid)
    options = letter_options(choices)
    return make_item(
        benchmark=BENCHMARK,
        item_id=pid,
        question=text,
        options=options,
        gold=gold,
        exclusion=exclusion,
        numeric=numeric,
        images=images,
        image_as_options=False,
        meta=meta,
    )


def translated(items: list[Item], file: Path) -> list[Item]:
    """`items` with their stem and options in English from the block's `_translate.jsonl`
    (`problem_id`, `problem_text_en`, `choices_en`); everything else (gold, points, strata, how
    many options to choose) is the Japanese item's, so the two languages pair item by item."""
    if not file.is_file():
        raise DataError(
            "the English translation of this block is missing (IgakuQA ships it as "
            "<round>-<block>_translate.jsonl beside the block)",
            file=file,
        )
    rows = {}
    for line, row in enumerate(read_jsonl(file), start=1):
        pid = row.get("problem_id")
        if (
            not isinstance(pid, str)
            or not isinstance(row.get("problem_text_en"), str)
            or not isinstance(row.get("choices_en"), list)
        ):
            raise DataError(
                "each line needs problem_id, problem_text_en and choices_en",
                file=file,
                record=str(pid) if pid else f"line {line}",
            )
        rows[pid] = row
    out = []
    for item in items:
        row = rows.get(item.id)
        if row is None:
            raise DataError("the item has no English translation", file=file, record=item.id)
        choices = row["choices_en"]
        if len(choices) != len(item.options):
            raise DataError(
                f"{len(choices)} English options for {len(item.options)} Japanese ones", file=file, record=item.id
            )
        options = tuple(o.model_copy(update={"text": str(text)}) for o, text in zip(item.options, choices))
        out.append(item.model_copy(update={"question": row["problem_text_en"], "options": options, "language": "en"}))
    return out

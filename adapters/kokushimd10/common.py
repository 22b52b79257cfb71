"""What the three benchmarks of this adapter share: MHLW item shapes (letter or digit labels,
answer lists with alternatives and notes, 禁忌肢 options, points, human accuracy) turned into
items with the same strata."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from medvqa import DataError, Gold, ImageRef, ImageRole, Item, Option, brief, lone_surrogate, resolve_image
from medvqa.ja import normalize_width, select_count

LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Item.meta fields copied into every record (reports, audits and the pass report read them).
STRATA = (
    "profession",
    "year",
    "exam_round",
    "block",
    "section",
    "number",
    "category",
    "hisshu",
    "kinki_item",
    "kinki",
    "text_only",
    "without_image",
    "points",
    "withdrawn",
    "credited_to_all",
    "human_accuracy",
)
DEFAULT_STRATA = ("year", "block")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
_ALTERNATIVE = re.compile(r"\s+or\s+|\s*(?:または|又は|or)\s*", re.IGNORECASE)
_ANY_OF = re.compile(r"いずれか\s*([0-9０-９一二三四五六七八九])\s*つ")
_NO_ANSWER = "解なし"
_LEADING_KEY = re.compile(r"^\s*([0-9a-zA-Z])\s*(?:[（(].*)?$")


BLOCK_FILE = re.compile(r"(?P<round>\d{3})-(?P<block>[A-Z])\.jsonl")


def data_root(path: Path, dataset: str) -> Path:
    """The folder holding an IgakuQA-style dataset's year folders: `path/data` or `path` itself."""
    path = Path(path)
    for root in (path / "data", path):
        if root.is_dir() and any(BLOCK_FILE.fullmatch(f.name) for f in root.glob("*/*.jsonl")):
            return root
    raise DataError(f"no {dataset} block files (data/<year>/<round>-<block>.jsonl) found", file=path)


def block_files(path: Path, dataset: str) -> list[tuple[int, Path]]:
    """(year, block file) of an IgakuQA-style dataset, in year, round and block order."""
    found = []
    for f in sorted(data_root(path, dataset).glob("*/*.jsonl")):
        if BLOCK_FILE.fullmatch(f.name):
            if not f.parent.name.isdigit():
                raise DataError("the folder of a block file must be its exam year", file=f)
            found.append((int(f.parent.name), f))
    return found


def image_root(path: Path, root: Path) -> Path:
    """The folder images are resolved and confined under: the folder the user gave (`path`),
    whether the year folders lie in `path/data` or in `path` itself."""
    return root.parent if root == Path(path) / "data" else Path(path)


def problem_row(row: dict, id_pattern: re.Pattern, example: str, file: Path) -> tuple[str, re.Match, str, Any]:
    """(problem_id, its match, problem_text, choices) of an IgakuQA-style row, checked: the id is
    `<round><block><number>` of this block file and the text is not empty."""
    pid = row.get("problem_id")
    if not isinstance(pid, str) or not (m := id_pattern.fullmatch(pid)):
        raise DataError(f"problem_id {pid!r} is not <round><block><number> (e.g. {example})", file=file)
    if f"{m['round']}-{m['block']}.jsonl" != file.name:
        raise DataError(f"problem_id {pid} does not belong to block file {file.name}", file=file, record=pid)
    text = row.get("problem_text")
    if not isinstance(text, str) or not text.strip():
        raise DataError("empty or missing problem_text", file=file, record=pid)
    no_surrogate(row, file, pid)
    return pid, m, text, row.get("choices")


def no_surrogate(row: dict, file: Path, record: str) -> None:
    """A DataError naming the field of `row` that holds a lone surrogate (`\\ud800`), which
    UTF-8 cannot encode, so no request, record or file could carry it."""
    where = lone_surrogate(row)
    if where is not None:
        raise DataError(f"{where} holds a lone surrogate, which UTF-8 cannot encode", file=file, record=record)


def letter_options(choices: list[str]) -> tuple[Option, ...]:
    """Options labelled a, b, c, ... as MHLW prints them; keys are the upper-case letters."""
    return tuple(Option(key=LETTERS[i].upper(), label=LETTERS[i], text=str(text)) for i, text in enumerate(choices))


def digit_options(choices: list[str]) -> tuple[Option, ...]:
    """Options labelled 1, 2, 3, ...; keys are the digits."""
    return tuple(Option(key=str(i), label=str(i), text=str(text)) for i, text in enumerate(choices, start=1))


def answer_key(raw: str, letters: bool) -> str:
    """One answer label as an option key: letters upper-cased, full-width forms folded."""
    key = normalize_width(raw)
    return key.upper() if letters else key


def parse_answer(
    answer: Any, *, letters: bool, numeric: bool, file: Path, record: str
) -> tuple[Gold | None, str | None, dict]:
    """(gold, exclusion reason, notes) from an MHLW answer list as these datasets write it:

    - `["c"]`, `["b", "e"]`, `"AC"`, `"A,C"`: one answer (a set of keys);
    - `["a or d"]`: officially accepted alternatives (MHLW's 複数正解);
    - `["1", "3", "5（いずれか2つ選択で正解とする）"]`: any two of the listed keys;
    - `["解なし"]` or a note saying so: no correct answer (MHLW: 解なし), excluded;
    - numeric answers (`["1.2"]`) kept as written, for items without options.
    """
    notes: dict[str, Any] = {}
    if isinstance(answer, str):
        parts = [answer]
    elif isinstance(answer, list) and all(isinstance(a, (str, int)) and not isinstance(a, bool) for a in answer):
        parts = [str(a) for a in answer]
    else:
        raise DataError(f"unreadable answer {brief(answer)}", file=file, record=record)
    parts = [p for p in (normalize_width(p) for p in parts) if p]
    if not parts:
        return None, "no official answer in the data", notes
    text = " ".join(parts)
    if _NO_ANSWER in text:
        notes["answer_note"] = text
        return None, f"no correct answer (MHLW: 解なし): {text}", notes
    if numeric:
        return Gold(alternatives=(tuple(parts),), raw=answer), None, notes
    keys, any_of = [], None
    for part in parts:
        if m := _ANY_OF.search(part):
            count = normalize_width(m.group(1))
            any_of = int(count) if count.isdigit() else "一二三四五六七八九".index(count) + 1
            notes["answer_note"] = part
        if _ALTERNATIVE.search(part) and len(parts) == 1:
            alts = [answer_key(a, letters) for a in _ALTERNATIVE.split(part) if a.strip()]
            notes["multiply_accepted"] = part
            return Gold(alternatives=tuple((a,) for a in alts), raw=answer), None, notes
        m = _LEADING_KEY.match(part)
        if m:
            keys.append(answer_key(m.group(1), letters))
        elif re.fullmatch(r"[A-Za-z]+|[A-Za-z](?:\s*[,、，]\s*[A-Za-z])+", part) and letters:
            keys.extend(answer_key(k, letters) for k in re.findall(r"[A-Za-z]", part))
        elif re.fullmatch(r"[0-9](?:\s*[,、，]\s*[0-9])+", part):
            keys.extend(re.findall(r"[0-9]", part))
        else:
            raise DataError(f"unreadable answer {brief(answer)}", file=file, record=record)
    if any_of is not None:
        notes["multiply_accepted"] = notes.pop("answer_note")
        return Gold(alternatives=tuple(itertools.combinations(keys, any_of)), raw=answer), None, notes
    return Gold(alternatives=(tuple(keys),), raw=answer), None, notes


def parse_kinki(kinki: Any, *, letters: bool, file: Path, record: str) -> tuple[str, ...]:
    """The 禁忌肢 option keys: `[]`, `["e"]`, `["de"]`, `["ｃ"]`, `["d", " e"]`, `"AC"`, `"A,C"`."""
    if kinki in (None, "", []):
        return ()
    values = [kinki] if isinstance(kinki, str) else kinki
    if not isinstance(values, list) or not all(isinstance(v, (str, int)) for v in values):
        raise DataError(f"unreadable kinki {brief(kinki)}", file=file, record=record)
    keys: list[str] = []
    for value in values:
        for ch in normalize_width(str(value)):
            if ch.isalnum():
                key = ch.upper() if letters else ch
                if key not in keys:
                    keys.append(key)
            elif ch not in " ,、，":
                raise DataError(f"unreadable kinki {brief(kinki)}", file=file, record=record)
    return tuple(keys)


def parse_points(points: Any, *, file: Path, record: str) -> int:
    try:
        value = int(str(points).strip())
    except ValueError:
        raise DataError(f"points {brief(points)} is not a whole number", file=file, record=record) from None
    if value < 0:
        raise DataError(f"negative points {value}", file=file, record=record)
    return value


def parse_text_only(row: dict, *, file: Path, record: str) -> bool:
    """The row's `text_only` flag (true when absent)."""
    text_only = row.get("text_only", True)
    if not isinstance(text_only, bool):
        raise DataError(f"text_only must be true or false, got {brief(text_only)}", file=file, record=record)
    return text_only


def parse_human_accuracy(value: Any, *, file: Path, record: str) -> float | None:
    """Examinees' accuracy in percent as the data writes it ("87.8"); None when absent."""
    if value in (None, ""):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DataError(f"human_accuracy {brief(value)} is not a number", file=file, record=record) from None
    if not 0 <= number <= 100:
        raise DataError(f"human_accuracy {number} is outside 0-100", file=file, record=record)
    return number


def find_images(root: Path, refs: list[str], stem: str, *, file: Path, record: str) -> tuple[ImageRef, ...]:
    """The item's images: the references the data gives, else `images/<id>.<ext>` under `root`
    (where the data ships none, the reference names where the file would be). Files that are
    absent stay references without a path."""
    if not refs:
        found = [
            f"images/{stem}{suffix}" for suffix in IMAGE_SUFFIXES if (root / "images" / f"{stem}{suffix}").is_file()
        ]
        refs = found or [f"images/{stem}.png"]
    return tuple(
        ImageRef(ref=ref, role=ImageRole.CONTENT, path=resolve_image(root, ref, file=file, record=record))
        for ref in refs
    )


def make_item(
    *,
    benchmark: str,
    item_id: str,
    question: str,
    options: tuple[Option, ...],
    gold: Gold | None,
    exclusion: str | None,
    numeric: bool,
    images: tuple[ImageRef, ...],
    image_as_options: bool,
    meta: dict[str, Any],
) -> Item:
    """An item with the adapter's strata; `without_image` marks items that need images the data
    does not hold (they run as C+Q only)."""
    meta = {**meta, "without_image": bool(images) and not all(im.available for im in images)}
    return Item(
        id=item_id,
        benchmark=benchmark,
        question=question,
        options=options,
        gold=gold,
        answer_format="numeric" if numeric else "choice",
        n_select=None if numeric else select_count(question),
        images=images,
        image_as_options=image_as_options,
        language="ja",
        meta=meta,
        exclusion_reason=exclusion if gold is None else None,
    )

"""WorldMedQA-V tables → items.

The dataset is one table per country and language, `<country>_local.tsv` and
`<country>_english.tsv` (VLMEvalKit's layout: `index`, `question`, `A`-`D`, the gold letter,
`image` as base64), for Brazil, Israel, Japan and Spain. A table's name may carry a prefix
(`derived_GPT4o_japan_local.csv`: the questions as VLMEvalKit's output tables repeat them) and
be CSV. Quirks of the published tables: the gold letter is in `correct_option` where `answer`
is empty; the Japanese stems lost some numbers ("か月の男児", "体重 kg"), kept as published
(`medvqa validate` lists them); Israel's tables hold two different questions under index 84,
both kept. Item ids are `<country>-<index>`, and `<country>-<index>#2` for the second row of a
repeated index (numbered by gold letter, then order of appearance: `occurrences`), the same in
both languages and in every table, so runs in the two
languages pair item by item.

A VLMEvalKit output or result table carries its items too (question, options and gold letter
beside each reply): `load` given such a file reads the items from it (`load_table`). Every item
has one image: where the table holds none (the output tables, which the authors published
without images) the item says so and runs without it (C+Q only); no image is invented.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from pathlib import Path

from medvqa import DataError, Gold, ImageRef, Item, Option, cache_dir, read_table, resolve_image, write_atomic

BENCHMARK = "worldmedqa_v"
COUNTRIES = {"brazil": "pt", "israel": "he", "japan": "ja", "spain": "es"}  # country -> local language
LABELS = ("A", "B", "C", "D")
TABLE = re.compile(
    r"(?:.*_)?(?P<country>brazil|israel|japan|spain)_(?P<version>local|english)\.(?:tsv|csv)", re.IGNORECASE
)
NAMED = re.compile(r"(?:^|_)(?P<country>brazil|israel|japan|spain)_(?:local|english)(?:_|\.)", re.IGNORECASE)
VERSION = {"local": "local", "en": "english"}  # benchmark language -> table suffix


def tables(root: Path) -> dict[tuple[str, str], Path]:
    """{(country, "local" | "english"): table} under `root`; two tables for one is an error."""
    if not root.is_dir():
        raise DataError("not a folder of WorldMedQA-V tables", file=root)
    found: dict[tuple[str, str], Path] = {}
    for f in sorted(root.rglob("*")):
        m = TABLE.fullmatch(f.name)
        if not m or not f.is_file():
            continue
        key = (m["country"].lower(), m["version"].lower())
        if key in found:
            raise DataError(f"two tables for {key[0]} ({key[1]}): {found[key]} and {f}", file=f)
        found[key] = f
    if not found:
        raise DataError(
            "no WorldMedQA-V table here (<country>_local.tsv or <country>_english.tsv, "
            "CSV accepted; countries: brazil, israel, japan, spain)",
            file=root,
        )
    return found


def _image(row: dict[str, str], country: str, folder: Path, file: Path, record: str, number: str) -> ImageRef:
    encoded = row.get("image", "").strip()
    if encoded:
        try:
            data = base64.b64decode(encoded, validate=False)
        except (binascii.Error, ValueError):
            raise DataError("the image column is not base64", file=file, record=record) from None
        suffix = ".jpg" if data[:3] == b"\xff\xd8\xff" else ".png"
        target = cache_dir() / "worldmedqa_v" / "images" / f"{hashlib.sha256(data).hexdigest()}{suffix}"
        if not target.is_file():
            write_atomic(target, data, sync=False)  # named by its contents: made again if lost
        return ImageRef(ref=f"{file.name}#{record}", path=target)
    ref = row.get("image_path", "").strip()
    if ref:
        return ImageRef(ref=ref, path=resolve_image(folder, ref, file=file, record=record))
    return ImageRef(ref=f"images/{country}_{number}.png")  # not published with this table


def item_from_row(row: dict[str, str], country: str, language: str, file: Path, occurrence: int = 1) -> Item:
    """The item of one table row; `occurrence`, the row's number among the rows of its index
    (`occurrences`), > 1 for a repeated index (`israel-84#2`: the published Israel tables hold two
    questions under index 84)."""
    index = str(row["index"]).strip()
    if not index.isdigit():
        raise DataError(f"index must be a number, got {index!r}", file=file, record=index or "(no index)")
    item_id = item_id_of(country, int(index), occurrence)
    letter = gold_letter(row)
    options = tuple(Option(key=k, label=k, text=row[k].strip()) for k in LABELS if row[k].strip())
    if letter not in {o.key for o in options}:
        raise DataError(
            f"the gold answer {letter or '(none)'!r} is not one of the options {', '.join(o.key for o in options)}",
            file=file,
            record=item_id,
        )
    meta = {"country": country, "index": int(index), **({"occurrence": occurrence} if occurrence > 1 else {})}
    return Item(
        id=item_id,
        benchmark=BENCHMARK,
        question=row["question"].strip(),
        options=options,
        gold=Gold(alternatives=((letter,),), raw=letter),
        images=(_image(row, country, file.parent, file, item_id, item_id.split("-", 1)[1]),),
        language=language,
        meta=meta,
    )


def item_id_of(country: str, index: int, occurrence: int = 1) -> str:
    """`<country>-<index>`, and `<country>-<index>#<n>` for the n-th row of a repeated index."""
    return f"{country}-{index}" + (f"#{occurrence}" if occurrence > 1 else "")


def gold_letter(row: dict[str, str]) -> str:
    """The gold letter of a table row: `answer`, else `correct_option` (the published tables leave `answer` empty)."""
    return (str(row.get("answer", "")).strip() or str(row.get("correct_option", "")).strip()).upper()


def occurrences(rows: list[dict[str, str]]) -> list[int]:
    """Each row's number among the rows of its index: 1 for an index given once; for a repeated
    index, the rows numbered in the order of their gold letters, then of appearance. The
    published Israel tables list their two questions under index 84 in either order (gold A
    first in 31 of 42 tables, gold C first in 11): numbered by appearance, `israel-84` would be
    another question from table to table, and runs of one model with and without the image would
    pair different questions."""
    positions: dict[str, list[int]] = {}
    for pos, row in enumerate(rows):
        positions.setdefault(str(row.get("index", "")).strip(), []).append(pos)
    out = [1] * len(rows)
    for group in positions.values():
        if len(group) > 1:
            for n, pos in enumerate(sorted(group, key=lambda p: (gold_letter(rows[p]), p)), 1):
                out[pos] = n
    return out


def items_of_rows(rows: list[dict[str, str]], country: str, language: str, file: Path) -> list[Item]:
    """The items of a table's rows, in row order; a repeated index numbered by order of appearance."""
    code = COUNTRIES[country] if language == "local" else "en"
    return [item_from_row(row, country, code, file, n) for row, n in zip(rows, occurrences(rows))]


def by_index(items: list[Item]) -> list[Item]:
    """Items in index order; the questions of a repeated index in the order `occurrences` numbers them."""
    return sorted(items, key=lambda it: (it.meta["index"], it.meta.get("occurrence", 1)))


def country_of(file: Path) -> str | None:
    """The country a table's file name names (`GPT4o_israel_local_openai_result.xlsx` → israel)."""
    m = NAMED.search(file.name)
    return m["country"].lower() if m else None


def load_table(file: Path, language: str = "local", country: str | None = None, sheet: str | None = None) -> list[Item]:
    """The items of one table that carries them (a VLMEvalKit output or result table: `index`,
    `question`, `A`-`D`, `answer` or `correct_option`), in `language`; the country from the file
    name unless given."""
    country = country or country_of(file)
    if country not in COUNTRIES:
        raise DataError(
            "the file name does not say the country (<model>_<country>_<local|english>...): give --country", file=file
        )
    rows = read_table(file, ("index", "question", *LABELS), sheet=sheet, notice=lambda line: None)
    return by_index(items_of_rows(rows, country, language, file))


def load(
    root: Path, language: str = "local", countries: list[str] | None = None, *, sheet: str | None = None
) -> list[Item]:
    """The items of every country in `root` (or of `countries`) in `language` ("local" or
    "en"), in country and index order. `root` may be one table that carries its items (a
    VLMEvalKit output or result table), read as `load_table` reads it."""
    if root.is_file():
        return load_table(root, language, countries[0] if countries and len(countries) == 1 else None, sheet)
    found = tables(root)
    version = VERSION[language]
    items: list[Item] = []
    for (country, v), path in sorted(found.items()):
        if v != version or (countries and country not in countries):
            continue
        items += by_index(items_of_rows(read_table(path, ("index", "question", *LABELS)), country, language, path))
    if not items:
        have = ", ".join(f"{c} {v}" for c, v in sorted(found))
        raise DataError(f"no {version} table here (tables found: {have})", file=root)
    return items

"""WorldMedQA-V tables → items.

The dataset is one table per country and language, `<country>_local.tsv` and
`<country>_english.tsv` (VLMEvalKit's layout: `index`, `question`, `A`-`D`, the gold letter,
`image` as base64), for Brazil, Israel, Japan and Spain. A table's name may carry a prefix
(`derived_GPT4o_japan_local.csv`: the questions as VLMEvalKit's output tables repeat them) and
be CSV. Quirks of the published tables: the gold letter is in `correct_option` where `answer`
is empty; the Japanese stems lost some numbers ("か月の男児", "体重 kg"), kept as published
(`medvqa validate` lists them). Item ids are `<country>-<index>`, the same in both languages, so
runs in the two languages pair item by item. Every item has one image: where the table holds
none (the output tables, which the authors published without images) the item says so and runs
without it (C+Q only); no image is invented.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from pathlib import Path

from medvqa import DataError, Gold, ImageRef, Item, Option, cache_dir, read_table, resolve_image

BENCHMARK = "worldmedqa_v"
COUNTRIES = {"brazil": "pt", "israel": "he", "japan": "ja", "spain": "es"}  # country -> local language
LABELS = ("A", "B", "C", "D")
TABLE = re.compile(r"(?:.*_)?(?P<country>brazil|israel|japan|spain)_(?P<version>local|english)\.(?:tsv|csv)",
                   re.IGNORECASE)
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
        raise DataError("no WorldMedQA-V table here (<country>_local.tsv or <country>_english.tsv, "
                        "CSV accepted; countries: brazil, israel, japan, spain)", file=root)
    return found


def _image(row: dict[str, str], country: str, folder: Path, file: Path, record: str) -> ImageRef:
    encoded = row.get("image", "").strip()
    if encoded:
        try:
            data = base64.b64decode(encoded, validate=False)
        except (binascii.Error, ValueError):
            raise DataError("the image column is not base64", file=file, record=record) from None
        suffix = ".jpg" if data[:3] == b"\xff\xd8\xff" else ".png"
        target = cache_dir() / "worldmedqa_v" / "images" / f"{hashlib.sha256(data).hexdigest()}{suffix}"
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(target)
        return ImageRef(ref=f"{file.name}#{record}", path=target)
    ref = row.get("image_path", "").strip()
    if ref:
        return ImageRef(ref=ref, path=resolve_image(folder, ref, file=file, record=record))
    return ImageRef(ref=f"images/{country}_{record.split('-', 1)[1]}.png")  # not published with this table


def item_from_row(row: dict[str, str], country: str, language: str, file: Path) -> Item:
    index = row["index"].strip()
    if not index.isdigit():
        raise DataError(f"index must be a number, got {index!r}", file=file, record=index or "(no index)")
    item_id = f"{country}-{int(index)}"
    letter = (row.get("answer", "").strip() or row.get("correct_option", "").strip()).upper()
    options = tuple(Option(key=k, label=k, text=row[k].strip()) for k in LABELS if row[k].strip())
    if letter not in {o.key for o in options}:
        raise DataError(f"the gold answer {letter or '(none)'!r} is not one of the options "
                        f"{', '.join(o.key for o in options)}", file=file, record=item_id)
    return Item(id=item_id, benchmark=BENCHMARK, question=row["question"].strip(), options=options,
                gold=Gold(alternatives=((letter,),), raw=letter),
                images=(_image(row, country, file.parent, file, item_id),), language=language,
                meta={"country": country, "index": int(index)})


def load(root: Path, language: str = "local", countries: list[str] | None = None) -> list[Item]:
    """The items of every country in `root` (or of `countries`) in `language` ("local" or
    "en"), in country and index order."""
    found = tables(root)
    version = VERSION[language]
    items: list[Item] = []
    for (country, v), path in sorted(found.items()):
        if v != version or (countries and country not in countries):
            continue
        code = COUNTRIES[country] if language == "local" else "en"
        rows = [item_from_row(row, country, code, path) for row in read_table(path, ("index", "question", *LABELS))]
        ids = [it.id for it in rows]
        if len(set(ids)) != len(ids):
            raise DataError("an index appears twice", file=path, record=next(i for i in ids if ids.count(i) > 1))
        items += sorted(rows, key=lambda it: it.meta["index"])
    if not items:
        have = ", ".join(f"{c} {v}" for c, v in sorted(found))
        raise DataError(f"no {version} table here (tables found: {have})", file=root)
    return items

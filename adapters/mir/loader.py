"""The MIR workbooks of `../shared/data/mir` (foundation29org/MIR_AI_F29) → items.

Layout (the folder's SOURCE.txt): `2024/MIR24GPT_final.xlsx` (sheet "Preguntas 2024": Numero,
Pregunta with the options 1-4 inline, Especialidad, "Respuesta correcta Ministerio V0. ", the
Ministry's provisional key) with `2024/images/image_{1..25}.png`; `2026/MIR26.xlsx` (qnum,
Description with the options inline, image_refs, Solucion, the official key) with
`2026/images/image_{1..25}.jpeg` and `2026/Correcion_academia.xlsx` (an academy's block,
difficulty, "impugnable" and subjects per question).

Items are `mir-<year>-<number>`, the number being the row's position: 2024 prints 70 twice and
71 never, so its second 70 is `mir-2024-71` (the printed number stays in `printed_number`).
A question without a key (2026's Solucion is empty for the 7 annulled questions, SOURCE.txt "The
exam's rules") is excluded: annulled, in no denominator. Each item knows whether it is one of
the official 200 (`rules.official_numbers`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from medvqa import DataError, Finding, Gold, ImageRef, Item, Option, read_table

from . import rules

BENCHMARK = "mir"
LABELS = ("1", "2", "3", "4")
YEARS = (2024, 2026)
FILES = {2024: ("2024/MIR24GPT_final.xlsx", "Preguntas 2024"), 2026: ("2026/MIR26.xlsx", None)}
ACADEMY = "2026/Correcion_academia.xlsx"
IMAGES = {2024: "2024/images/image_{n}.png", 2026: "2026/images/image_{n}.jpeg"}
COLUMNS = {
    2024: ("Numero", "Pregunta", "Especialidad", "Respuesta correcta Ministerio V0. "),
    2026: ("qnum", "Description", "image_refs", "Solucion"),
}
IMAGE_ITEMS = 25  # questions 1-25 go with an image (SOURCE.txt: images/ of questions 1-25)
ANNULLED = "annulled by the Ministry (no key): in no denominator"
# an option's number, then a dot ("3 ." in 2024's item 165), at the start or after white space
_MARKER = re.compile(r"(?:^|(?<=\s))([1-4])\s?\.(?=\s|$)")

RULES = {
    "repeated-number": "a printed question number that repeats (numbered by position)",
    "missing-option-text": "an option whose text the source does not give (kept, empty)",
    "spaced-option-label": 'an option label printed with a space before its dot ("3 .")',
    "annulled": "a question without a key: annulled, left out of every denominator",
    "academy-key": "the academy's key differs from the official one",
}  # a stem whose options 1-4 cannot be read is no item: an error naming the file and the item


@dataclass
class Source:
    """One year's items, with what the loader noticed on the way (`medvqa validate mir`)."""

    items: list[Item] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def clean(text: str) -> str:
    """The cell's text without the workbook's escaped carriage returns (`_x000d_`)."""
    return text.replace("_x000d_", "").replace("\r\n", "\n").replace("\r", "\n").strip()


def split_options(text: str, *, file: Path, record: str) -> tuple[str, dict[str, str], list[str]]:
    """(stem, {label: text}, quirks) of a stem with its options 1-4 written inline: the options
    are the last run of markers 1, 2, (3), 4 in order; an option 3 without its text (2024's items
    141 and 157) is an empty text and a quirk."""
    marks = [(m.start(), m.end(), m.group(1), m.group(0)) for m in _MARKER.finditer(text)]
    ones = [i for i, m in enumerate(marks) if m[2] == "1"]
    for first in reversed(ones):
        chosen, want = [marks[first]], 2
        for m in marks[first + 1 :]:
            if int(m[2]) == want or (want == 3 and m[2] == "4"):
                chosen.append(m)
                want = int(m[2]) + 1
        if [m[2] for m in chosen][-1] == "4" and len(chosen) >= 3:
            break
    else:
        raise DataError("the options 1-4 cannot be read from the stem", file=file, record=record)
    quirks = [] if len(chosen) == 4 else ["missing-option-text"]
    if any(" " in m[3] for m in chosen):
        quirks.append("spaced-option-label")
    options = {}
    for m, nxt in zip(chosen, [*chosen[1:], None]):
        options[m[2]] = text[m[1] : nxt[0] if nxt else len(text)].strip()
    for label in LABELS:
        options.setdefault(label, "")
    return text[: chosen[0][0]].strip(), dict(sorted(options.items())), quirks


def _academy(root: Path) -> dict[int, dict]:
    """2026's academy table: {question number: block, difficulty, impugnable, subjects}."""
    path = root / ACADEMY
    if not path.is_file():
        return {}
    out = {}
    for row in read_table(path, ("PREGUNTA", "BLOQUE", "DIFICULTAD", "IMPUGNABLE"), notice=lambda _: None):
        number = row["PREGUNTA"].strip()
        if not number.isdigit():
            continue
        raw = row["IMPUGNABLE"].strip()
        verdict = {"no": "no", "si": "sí", "sí": "sí"}.get(raw.casefold(), "dudosa" if raw else None)
        subjects = [
            re.sub(r"\s+", "", row[c]).upper()
            for c in ("ASIGNATURA 1", "ASIGNATURA 2", "ASIGNATURA 3")
            if row.get(c, "").strip()
        ]
        difficulty = row["DIFICULTAD"].strip()
        out[int(number)] = {
            "block": row["BLOQUE"].strip() or None,
            "impugnable": verdict,
            "difficulty": int(float(difficulty)) if difficulty else None,
            "subjects": subjects,
            "academy_key": row.get("RESPUESTA", "").strip(),
        }
    return out


def _key(value: str) -> str | None:
    value = value.strip()
    if value.endswith(".0"):
        value = value[:-2]
    return value if value in LABELS else None


def load_year(root: Path, year: int) -> Source:
    name, sheet = FILES[year]
    path = root / name
    if not path.is_file():
        raise DataError(f"no MIR {year} workbook here (expected {name}; see docs/benchmarks/mir.md)", file=root)
    number_col, stem_col, third, key_col = COLUMNS[year]
    rows = [
        r
        for r in read_table(path, COLUMNS[year], sheet=sheet, notice=lambda _: None)
        if r[number_col].strip() or r[stem_col].strip()
    ]
    academy = _academy(root) if year == 2026 else {}
    out = Source()
    keys = {n: _key(r[key_col]) for n, r in enumerate(rows, 1)}
    official = set(rules.official_numbers(len(rows), {n for n, k in keys.items() if k is None}))
    for number, row in enumerate(rows, 1):
        item_id = f"{BENCHMARK}-{year}-{number}"
        printed = row[number_col].strip()
        stem, options, quirks = split_options(clean(row[stem_col]), file=path, record=item_id)
        if printed != str(number):
            quirks.append("repeated-number")
        key = keys[number]
        images = ()
        if number <= IMAGE_ITEMS and (year == 2024 or row[third].strip().isdigit()):
            ref = IMAGES[year].format(n=number)
            images = (ImageRef(ref=ref, path=(root / ref) if (root / ref).is_file() else None),)
        meta = {
            "year": year,
            "number": number,
            "printed_number": printed,
            "part": "scored" if number <= rules.SCORED else "reserve",
            "official": number in official,
            "image": bool(images),
            "specialty": row[third].strip() or None if year == 2024 else None,
            **{k: v for k, v in academy.get(number, {}).items() if k != "academy_key"},
        }
        item = Item(
            id=item_id,
            benchmark=BENCHMARK,
            question=stem,
            options=tuple(Option(key=k, label=k, text=t) for k, t in options.items()),
            gold=Gold(alternatives=((key,),), raw=key) if key else None,
            images=images,
            language="es",
            meta=meta,
            exclusion_reason=None if key else ANNULLED,
        )
        out.items.append(item)
        for rule in quirks:
            out.findings.append(_finding(path, item_id, rule, row, printed, number))
        if key is None:
            out.findings.append(
                Finding(
                    file=str(path), section=None, number=item_id, rule="annulled", level="warning", message=ANNULLED
                )
            )
        academy_key = academy.get(number, {}).get("academy_key")
        if key and academy_key and _key(academy_key) != key:
            out.findings.append(
                Finding(
                    file=str(root / ACADEMY),
                    section=None,
                    number=item_id,
                    rule="academy-key",
                    level="warning",
                    message=f"the academy's key is {academy_key}, the official one {key}",
                )
            )
    return out


def _finding(path: Path, item_id: str, rule: str, row: dict, printed: str, number: int) -> Finding:
    message = {
        "repeated-number": f"printed as question {printed}; numbered {number} by its position",
        "missing-option-text": "an option's text is not in the source: it is kept with no text",
        "spaced-option-label": "an option label is printed with a space before its dot",
    }[rule]
    return Finding(file=str(path), section=None, number=item_id, rule=rule, level="warning", message=message)


def load(root: Path, years: tuple[int, ...] = YEARS) -> Source:
    """Every year's items present under `root` (a year whose workbook is absent is skipped, but
    not all of them)."""
    if not root.is_dir():
        raise DataError("not a folder of MIR workbooks (2024/MIR24GPT_final.xlsx, 2026/MIR26.xlsx)", file=root)
    out = Source()
    found = [y for y in years if (root / FILES[y][0]).is_file()]
    if not found:
        raise DataError("no MIR workbook here (expected 2024/MIR24GPT_final.xlsx or 2026/MIR26.xlsx)", file=root)
    for year in found:
        part = load_year(root, year)
        out.items += part.items
        out.findings += part.findings
    return out

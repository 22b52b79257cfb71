"""The PES text sets from the Hugging Face Hub (`amu-cai/PES-2018-2022`, file `test.json`).

297 written PES sheets of 2018-2022 (arXiv 2405.01589), text only: they load as QA items
(conditions C and C+Q) with the split `text-2018-2022`. The file goes to the Hugging Face cache
(`HF_HOME`); a cached copy is used without touching the network. Offline and uncached, one
message names both ways to get the data.

The field names of `test.json` could not be checked offline: `text_items` accepts the usual
spellings (see `FIELDS`) and names the file, the record and the fields it found when a record
has none of them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from medvqa import DataError, Gold, Item, Option, brief, from_hub

from .loader import BENCHMARK
from .prompts import LETTERS

REPO_ID = "amu-cai/PES-2018-2022"
FILENAME = "test.json"
NO_DATA = (
    f"PES text set not found: the Hugging Face dataset {{repo}} ({FILENAME}) could not be downloaded "
    "({reason}). Either go online and run the command again so medvqa downloads it into the Hugging Face "
    f"cache (or fetch it yourself with `hf download {{repo}} {FILENAME} --repo-type dataset`), or pass --data PATH, "
    "a local folder in the PES layout (vqa.jsonl, qa.jsonl, images/; docs/benchmarks/polish_pes.md)."
)

_LABELLED = re.compile(r"([A-Ea-e])\s*[.)]\s")
# item field -> accepted spellings in the Hub file, first match wins
FIELDS = {
    "question": ("question", "question_text", "pytanie"),
    "options": ("answers", "options", "choices", "odpowiedzi"),
    "answer": ("correct_answer", "answer", "correct", "prawidlowa_odpowiedz"),
    "specialty": ("specialization", "specialty", "exam_name", "specjalizacja"),
    "year": ("year", "rok"),
    "quarter": ("season", "quarter", "sesja"),
    "id": ("id", "question_id", "number"),
}


def download() -> Path:
    """The local path of `test.json`: from the cache if present, else downloaded."""
    return from_hub(REPO_ID, NO_DATA, filename=FILENAME)


def text_items(path: Path) -> list[Item]:
    """QA items of the Hub's text set at `path` (a JSON list, or JSON lines)."""
    rows = _rows(Path(path))
    if isinstance(rows, dict):
        rows = next((v for v in rows.values() if isinstance(v, list)), [rows])
    items, seen = [], set()
    for n, row in enumerate(rows, 1):
        record = f"entry {n}"
        if not isinstance(row, dict):
            raise DataError(f"not a JSON object but {type(row).__name__}", file=path, record=record)
        got = {name: _pick(row, names) for name, names in FIELDS.items()}
        missing = [name for name in ("question", "options", "answer") if got[name] is None]
        if missing:
            raise DataError(
                f"no {', '.join(missing)} field (accepted: "
                + "; ".join(f"{m}: {', '.join(FIELDS[m])}" for m in missing)
                + f"); the record has {', '.join(sorted(row))}",
                file=path,
                record=record,
            )
        options = _options(got["options"], path, record)
        answer = _answer(got["answer"], options, path, record)
        specialty = str(got["specialty"] or "unknown").strip()
        rid = f"pes-text-{got['id']}" if got["id"] is not None else f"pes-text-{n}"
        if rid in seen:
            rid = f"{rid}-{n}"
        seen.add(rid)
        items.append(
            Item(
                id=rid,
                benchmark=BENCHMARK,
                question=str(got["question"]).strip(),
                options=tuple(Option(key=k, label=k, text=t) for k, t in options.items()),
                gold=Gold.from_json(answer, file=path, record=record),
                language="pl",
                meta={
                    "set": "qa",
                    "year": _int(got["year"]),
                    "quarter": got["quarter"],
                    "specialty": specialty,
                    "sheet": f"{specialty} {got['year']} {got['quarter'] or ''}".strip(),
                    "image_importance": None,
                    "visual_domain": None,
                    "human_n": None,
                    "human_correct": None,
                    "invalid": None,
                },
            )
        )
    return items


def _rows(path: Path) -> Any:
    """The JSON document at `path`, or the list of its JSON lines. A file that is neither, or is
    not UTF-8, raises DataError naming the file and the line."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path, record=f"line {line}"
        ) from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        whole = exc
    lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    rows = []
    for n, line in lines:
        try:
            rows.append(json.loads(line))
        except (ValueError, RecursionError) as exc:
            # a first line that is no JSON value: the file is one JSON document, broken where json says
            failed, lineno = (whole, getattr(whole, "lineno", n)) if not rows else (exc, n)
            why = (
                "nested too deeply"
                if isinstance(failed, RecursionError)
                else f"{failed.msg} at column {failed.colno}"
                if isinstance(failed, json.JSONDecodeError)
                else str(failed)
            )
            raise DataError(f"neither JSON nor JSON lines ({why})", file=path, record=f"line {lineno}") from None
    return rows


def _pick(row: dict, names: tuple[str, ...]) -> Any:
    return next((row[n] for n in names if row.get(n) not in (None, "")), None)


def _options(value: Any, path: Path, record: str) -> dict[str, str]:
    if isinstance(value, dict):
        pairs = [(str(k).strip().upper().rstrip(".)"), v) for k, v in value.items()]
    elif isinstance(value, list) and len(value) <= len(LETTERS):
        pairs = list(zip(LETTERS, value))
    else:
        raise DataError(f"unreadable options {brief(value)}", file=path, record=record)
    options = {k: str(v).strip() for k, v in pairs}
    if list(options) != list(LETTERS[: len(options)]) or len(options) < 2:
        raise DataError(f"options must be labelled A-E in order, not {brief(list(options))}", file=path, record=record)
    return options


def _answer(value: Any, options: dict[str, str], path: Path, record: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(options):
        return LETTERS[value]  # an index into the option list
    text = str(value).strip()
    key = text.upper().rstrip(".)")
    if key in options:
        return key
    if (m := _LABELLED.match(text)) and m[1].upper() in options:  # "D. text of option D"
        return m[1].upper()
    by_text = [k for k, t in options.items() if t == text]
    if len(by_text) == 1:
        return by_text[0]
    raise DataError(f"answer {brief(value)} names no option", file=path, record=record)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None

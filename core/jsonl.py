"""Reading JSON, JSON Lines and table (CSV, TSV, XLSX) files, as adapters and importers do:
whatever a file holds, a problem is a `DataError` naming the file (and the line), never a
traceback."""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from .errors import UsageError
from .items import DataError, brief


def loads(text: str | bytes) -> Any:
    """`json.loads(text)`, read by pydantic's JSON parser (jiter) where it can: two and a half
    times faster on a run's records. Wherever jiter gives a value it is json's (the same objects,
    key order and numbers); what it refuses and json may take (an escaped lone surrogate, a
    byte-order mark, nesting deeper than jiter goes) is read by json, so the value, or the error,
    is json's."""
    try:
        return from_json(text)
    except (ValueError, TypeError):  # (TypeError: text holding a lone surrogate, which is no UTF-8)
        return json.loads(text)


def read_jsonl(path: str | Path) -> list[dict]:
    """The objects of a JSON Lines file, in order; blank lines are skipped. A line that is not
    a JSON object raises DataError naming the file and the line."""
    return [row for _, row in numbered_jsonl(path)]


def numbered_jsonl(path: str | Path) -> list[tuple[int, dict]]:
    """`read_jsonl` with each object's line number, for readers whose own checks name the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError("file not found", file=path) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    rows = []
    # split on "\n" only: JSON strings may hold U+2028 and other characters splitlines() breaks at
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"not valid JSON ({exc.msg} at column {exc.colno})", file=path, record=f"line {lineno}"
            ) from None
        except (ValueError, RecursionError) as exc:  # an integer too long, nesting too deep
            raise DataError(f"not valid JSON ({_why(exc)})", file=path, record=f"line {lineno}") from None
        if not isinstance(row, dict):
            raise DataError(f"expected a JSON object, got {type(row).__name__}", file=path, record=f"line {lineno}")
        rows.append((lineno, row))
    return rows


def read_json(path: str | Path) -> Any:
    """The JSON document in a file (UTF-8, a byte-order mark allowed). A file that cannot be
    read (absent, not UTF-8, not JSON, an integer too long, nesting too deep for Python) raises
    DataError naming it."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    except (ValueError, RecursionError) as exc:
        raise DataError(f"not valid JSON ({_why(exc)})", file=path) from None
    except OSError as exc:
        raise DataError(f"cannot be read ({exc.strerror})", file=path) from None


def load_yaml(text: str, *, file: str | Path) -> Any:
    """The YAML document in `text` (of `file`), read with PyYAML's safe loader. Anchors and
    aliases (`&a`, `*a`) are refused first, as a DataError naming the file and the line: a config
    file has no need of them, and a kilobyte of nested aliases expands to gigabytes."""
    import yaml

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if getattr(event, "anchor", None) is not None:
            raise DataError(
                f"YAML anchors and aliases (&{brief_message(event.anchor, 40)}, *...) are not read in a "
                "config file: write each value out",
                file=file,
                record=f"line {event.start_mark.line + 1}",
            )
    return yaml.safe_load(text)


TABLE_SUFFIXES = (".csv", ".tsv", ".xlsx", ".xls")
# What a workbook may hold uncompressed, all its members together: published answer workbooks
# hold about 1 MB; a zip bomb of 1.5 MB holds gigabytes.
MAX_WORKBOOK_BYTES = 256 * 1024 * 1024
# A spreadsheet program never writes a document type; one that declares entities expands them.
_DOCTYPE = tuple("<!DOCTYPE".encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be"))


def read_table(
    path: str | Path,
    columns: Sequence[str] = (),
    *,
    sheet: str | None = None,
    notice: Callable[[str], None] | None = None,
) -> list[dict[str, str]]:
    """The rows of a CSV, TSV or XLSX table, every value as text ("" for an empty cell). A file
    that is not such a table, cannot be read as one, or lacks one of `columns` raises DataError
    naming it.

    A workbook is read at `sheet`, else at its first sheet; with several sheets and no `sheet`,
    `notice` (stderr when None) gets one line saying which sheet was read and which others there
    are, since a published workbook often keeps other experiments beside the answers. A `sheet`
    the workbook does not have is a DataError listing its sheets; a `sheet` for a CSV or TSV file,
    which has none, is a UsageError."""
    import pandas as pd

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise DataError("a table is read from a .csv, .tsv or .xlsx file", file=path)
    if sheet is not None and suffix not in (".xlsx", ".xls"):
        raise UsageError(
            f"--sheet {sheet!r}: {path} is a {suffix} table, which has no sheets "
            "(--sheet chooses a sheet of an .xlsx workbook)"
        )
    try:
        if suffix == ".xlsx":
            check_workbook(path)
        if suffix in (".xlsx", ".xls"):
            # the engine named, not inferred: pandas infers it from a module another thread may
            # still be importing (two runs of an eval set reading workbooks at once), and fails
            # on the half-made module; named, it is imported, which waits for that import to end
            with pd.ExcelFile(path, engine="openpyxl" if suffix == ".xlsx" else "xlrd") as book:
                names = [str(name) for name in book.sheet_names]
                if sheet is not None and sheet not in names:
                    raise DataError(f"no sheet {sheet!r} (--sheet); the sheets are {brief_list(names)}", file=path)
                if sheet is None and len(names) > 1:
                    (notice or _to_stderr)(
                        f"{path}: read the sheet {names[0]!r}, the first of {len(names)}; the others are "
                        f"{brief_list(names[1:])} (--sheet NAME chooses)"
                    )
                frame = pd.read_excel(
                    book, sheet_name=names.index(sheet) if sheet is not None else 0, dtype=str, keep_default_na=False
                )
        else:
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    except DataError:
        raise
    except ImportError as exc:
        raise DataError(f"reading {suffix} needs a package that is not installed ({exc})", file=path) from None
    except (ValueError, OSError, KeyError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        raise DataError(f"unreadable table ({type(exc).__name__}: {brief_message(exc)})", file=path) from None
    except Exception as exc:  # a workbook's XML is parsed by openpyxl, which raises what its parser met
        if suffix not in (".xlsx", ".xls"):
            raise
        raise DataError(f"unreadable workbook ({type(exc).__name__}: {brief_message(exc)})", file=path) from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(
            f"the table has no column {', '.join(missing)}; its columns are {brief_list(frame.columns)}",
            file=path,
            record="row 1 (the header)",
        )
    return frame.to_dict("records")


def check_workbook(path: Path) -> None:
    """Refuse a workbook before it is parsed when its members hold more than
    `MAX_WORKBOOK_BYTES` uncompressed (the sizes its zip directory declares, which Python's
    zipfile never reads past) or an XML member declares a document type (its entities could
    expand without bound): each is a DataError naming the file and the member."""
    with zipfile.ZipFile(path) as book:
        members = book.infolist()
        total = sum(m.file_size for m in members)
        if total > MAX_WORKBOOK_BYTES:
            raise DataError(
                f"the workbook holds {total:,} bytes uncompressed, more than a table is read from "
                f"({MAX_WORKBOOK_BYTES:,}): a zip bomb?",
                file=path,
            )
        for member in members:
            if member.filename.endswith((".xml", ".rels")) and _declares_doctype(book, member):
                raise DataError(
                    f"its member {brief_message(member.filename)} declares a document type (<!DOCTYPE), "
                    "which no spreadsheet program writes",
                    file=path,
                )


def _declares_doctype(book: zipfile.ZipFile, member: zipfile.ZipInfo) -> bool:
    tail = b""
    with book.open(member) as fh:
        while chunk := fh.read(1 << 20):
            window = tail + chunk
            if any(mark in window for mark in _DOCTYPE):
                return True
            tail = window[-32:]
    return False


def brief_message(value: Any, limit: int = 200) -> str:
    """The first line of an error's text (or of any value) cut to `limit` characters: a hostile
    file's content quoted by a parser cannot flood the one line a user reads."""
    first = (str(value).splitlines() or [""])[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def brief_list(values: Sequence[Any], most: int = 20) -> str:
    """Names from a file (a table's columns, a workbook's sheets) for a message: each cut
    (`items.brief`), at most `most` of them, then how many there are in all."""
    shown = ", ".join(brief(v) for v in list(values)[:most])
    return shown if len(values) <= most else f"{shown}, … ({len(values)} in all)"


def refuse_repeat(
    seen: dict[Hashable, tuple[str | None, str]],
    key: Hashable,
    where: str,
    *,
    file: str | Path | None = None,
    what: str,
) -> None:
    """Note in `seen` that `key` (an item id, an (id, condition) pair) is given at `where` ("row
    72", "line 3") of `file`. A key given before raises DataError(`what`) naming the file and both
    places ("row 71 and row 72"; the first place's file too when it was another): an import never
    lets a later row silently replace an earlier one, and the reader sees both rows to compare."""
    if key in seen:
        first_file, first = seen[key]
        if first_file != (None if file is None else str(file)):
            first = f"{first} of {first_file}"
        raise DataError(what, file=file, record=f"{first} and {where}")
    seen[key] = (None if file is None else str(file), where)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _why(exc: Exception) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)

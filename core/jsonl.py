"""Reading JSON, JSON Lines and table (CSV, TSV, XLSX) files, as adapters and importers do:
whatever a file holds, a problem is a `DataError` naming the file (and the line), never a
traceback."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, Sequence

from medvqa.core.items import DataError


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
            raise DataError(f"not valid JSON ({exc.msg} at column {exc.colno})", file=path,
                            record=f"line {lineno}") from None
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


TABLE_SUFFIXES = (".csv", ".tsv", ".xlsx", ".xls")


def read_table(path: str | Path, columns: Sequence[str] = ()) -> list[dict[str, str]]:
    """The rows of a CSV, TSV or XLSX table, every value as text ("" for an empty cell). A file
    that is not such a table, cannot be read as one, or lacks one of `columns` raises DataError
    naming it."""
    import pandas as pd

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise DataError("a table is read from a .csv, .tsv or .xlsx file", file=path)
    try:
        frame = (pd.read_excel(path, dtype=str, keep_default_na=False) if suffix in (".xlsx", ".xls") else
                 pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False))
    except ImportError as exc:
        raise DataError(f"reading {suffix} needs a package that is not installed ({exc})", file=path) from None
    except (ValueError, OSError, KeyError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise DataError(f"unreadable table ({type(exc).__name__}: {first})", file=path) from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"the table has no column {', '.join(missing)}; its columns are "
                        f"{', '.join(map(str, frame.columns))}", file=path, record="row 1 (the header)")
    return frame.to_dict("records")


def _why(exc: Exception) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)

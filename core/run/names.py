"""Run directories named after data: a model's name from a workbook's column, a table's file
name, an eval set's entry. Such a name is text someone else wrote (`answer_../../x`,
`answer_/tmp/x`, `.._japan_local.xlsx`), so it passes through `path_part`, the one function that
makes text a single safe folder name, and `run_dirs` places every such folder under its root and
refuses two sources whose names come out the same (`x/y` and `x_y`), naming both, before anything
is written: two runs never share, overwrite or resume each other's directory."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..items import DataError
from ..jsonl import brief_message

MAX_PART = 60  # characters of a folder name made from data
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def path_part(text: str, fallback: str = "model") -> str:
    """`text` as one folder name: every run of characters other than ASCII letters, digits, `.`,
    `_` and `-` becomes `_`; leading dots, dashes and underscores go (no `..`, no hidden folder,
    nothing read as an option), and so do trailing underscores; at most `MAX_PART` characters.
    Text left empty is `fallback`. The result never holds a separator, so it stays where it is put."""
    part = _UNSAFE.sub("_", str(text)).lstrip("._-").rstrip("_")[:MAX_PART].rstrip("_")
    return part or fallback


def run_dirs(
    root: str | Path, names: Mapping[str, str | Sequence[str]], *, file: str | Path | None = None
) -> dict[str, Path]:
    """The run directory under `root` of each source of `names` (a source, as a message names it,
    → its name, or the names of nested folders), each name made safe by `path_part`. Two sources
    whose directories come out the same, or differ only in case (one folder on macOS and
    Windows), are a DataError naming both (and `file`, where the sources come from)."""
    root = Path(root)
    out: dict[str, Path] = {}
    taken: dict[str, str] = {}
    for source, name in names.items():
        parts = [name] if isinstance(name, str) else list(name)
        target = root.joinpath(*(path_part(p) for p in parts))
        first = taken.setdefault(str(target).casefold(), source)
        if first != source:
            raise DataError(
                f"{brief_message(first)} and {brief_message(source)} both name the run directory {target}: "
                "rename one of them",
                file=file,
            )
        out[source] = target
    return out

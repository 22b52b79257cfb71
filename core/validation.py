"""Data validation findings, and the gate `medvqa run` passes data through.

A benchmark's `validate(path)` returns `Finding`s; any finding at level "error" stops a run
unless the user passes `--allow-invalid`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from .items import DataError

Level = Literal["error", "warning"]

# The rule `nothing_to_evaluate` checks for every benchmark, once its own rules found no error.
NO_ANSWERS = "no-answers"
NO_ANSWERS_RULE = {NO_ANSWERS: "the data loads but no item has a usable official answer"}


@dataclass(frozen=True)
class Finding:
    """One problem in the data: where it is (file, section, number) and which rule it breaks."""

    file: str
    section: str | None
    number: Any
    rule: str
    level: Level
    message: str

    @property
    def record(self) -> str:
        return "".join(str(part) for part in (self.section, self.number) if part is not None) or "-"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.level}: {self.file}: record {self.record}: [{self.rule}] {self.message}"


def nothing_to_evaluate(benchmark, path: str | Path) -> list[Finding]:
    """An error when data that loads holds no item with a usable official answer (a release
    extracted without its answer key): a run of it would have nothing to ask. Data that does not
    load is the benchmark's own findings' to explain."""
    try:
        items = benchmark.load(Path(path))
    except Exception:  # noqa: BLE001 (what stops loading is reported by the benchmark's validate)
        return []
    if not items or not all(it.excluded and not it.held_out for it in items):
        return []
    return [
        Finding(
            file=str(path),
            section=None,
            number=None,
            rule=NO_ANSWERS,
            level="error",
            message=f"none of the {len(items)} items has a usable official answer (missing or unusable "
            f"answer key): nothing to evaluate",
        )
    ]


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == "error"]


def rule_counts(findings: Iterable[Finding], rules: Mapping[str, str]) -> list[dict[str, Any]]:
    """Per rule checked, {"rule", "errors", "warnings", "description"}: every rule of `rules`
    (rule → what it checks) in its order, 0 findings included, so a clean rule shows it was
    checked; then any rule the findings name that `rules` does not, with no description."""
    rows: dict[str, dict[str, Any]] = {
        rule: {"rule": rule, "errors": 0, "warnings": 0, "description": text} for rule, text in rules.items()
    }
    for f in findings:
        row = rows.setdefault(f.rule, {"rule": f.rule, "errors": 0, "warnings": 0, "description": ""})
        row["errors" if f.level == "error" else "warnings"] += 1
    return list(rows.values())


def shown_path(file: str | Path, data: str | Path) -> str:
    """`file` in the one style of validate's output: the --data folder as the user gave it,
    then the path inside it (`data/2024/items.jsonl`, however the benchmark reached the file:
    relative, absolute or through `..`); a file outside the folder as it is. `./data/` and
    `data` both print `data`."""
    root, path = Path(data), Path(file)
    for inside in (_inside(path, root, os.path.abspath), _inside(path, root, os.path.realpath)):
        if inside is not None:
            return str(root / inside)
    return str(path)


def _inside(path: Path, root: Path, absolute) -> Path | None:
    try:
        return Path(absolute(path)).relative_to(absolute(root))
    except (ValueError, OSError):
        return None


def shown(findings: Iterable[Finding], data: str | Path) -> list[Finding]:
    """`findings` with each `file` in the one style of `shown_path`."""
    return [replace(f, file=shown_path(f.file, data)) if f.file else f for f in findings]


def require_valid(benchmark, path: str | Path | None, allow_invalid: bool) -> list[Finding]:
    """Validate the data at `path` with `benchmark.validate`; raise DataError listing every
    error-level finding unless `allow_invalid`. Returns the findings. Nothing to check when
    `path` is None (the benchmark's bundled sample or its own download)."""
    if path is None:
        return []
    findings = shown(benchmark.validate(Path(path)), path)
    bad = errors(findings)
    if bad and not allow_invalid:
        listing = "\n".join(f"  {f}" for f in bad)
        data = shown_path(path, path)
        raise DataError(
            f"{len(bad)} error(s) in the data (see `medvqa validate {benchmark.name} --data {data}`); "
            f"fix them or pass --allow-invalid:\n{listing}",
            file=data,
        )
    return findings


def lone_surrogate(value: Any) -> str | None:
    """Where in `value` (JSON data) a string holds a lone surrogate such as `\\ud800`, which
    UTF-8 cannot encode, so no request, record or file could carry it: a path such as
    `options.a`, or None when there is none."""
    try:  # the common case at C speed: every string encodes; the walk below finds where one does not
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return None
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError: walk to find where
        pass
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return where or "the value"
        elif isinstance(v, dict):
            for key, item in v.items():
                path = f"{where}.{key}" if where else str(key)
                stack += [(path, key), (path, item)]
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(v))
    return None

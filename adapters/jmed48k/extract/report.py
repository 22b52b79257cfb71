"""What an extraction produced and everything it could not do, per question and overall."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class QuestionReport:
    section: str
    number: int
    pages: list[int] = field(default_factory=list)  # 1-based pages of the question booklet
    boxes: list[dict] = field(default_factory=list)  # {"page", "box", "unit"} of every line read
    n_select: int = 1
    answer_slots: int = 0  # digits of a numeric-entry grid
    figure_refs: list[str] = field(default_factory=list)  # `（別冊No. X）` references in the stem
    images: list[dict] = field(default_factory=list)  # {"file", "role", "from"}
    image_as_options: bool = False
    answer: dict | None = None  # {"raw", "reason", "where"}
    warnings: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.section}{self.number}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ExtractionResult:
    """The written release cell and its extraction report. `errors` non-empty means the
    output must not be used as is (the CLI exits 1)."""

    path: Path | None  # the written `{year}_CORRECTED.json`
    records: list[dict]
    questions: list[QuestionReport]
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    report_path: Path | None = None
    booklets: list[dict] = field(default_factory=list)  # per booklet: file, section, engine, counts, seconds

    @property
    def ok(self) -> bool:
        return not self.errors

    def all_warnings(self) -> list[str]:
        """Booklet-level warnings, then every question's, prefixed with its section and number."""
        return self.warnings + [f"{q.key}: {w}" for q in self.questions for w in q.warnings]

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path else None,
            "report_path": str(self.report_path) if self.report_path else None,
            "ok": self.ok,
            "counts": {
                "questions": len(self.records),
                "warnings": len(self.all_warnings()),
                "errors": len(self.errors),
            },
            "booklets": self.booklets,
            "errors": self.errors,
            "warnings": self.all_warnings(),
            "questions": [q.to_json() for q in self.questions],
        }

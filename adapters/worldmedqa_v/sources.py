"""Where WorldMedQA-V's VLMEvalKit tables lie and what their paths say: `describe` reads a
table's model, country, language and condition from its name and folder, `tables_under` finds
every table of a folder, one per run (the benchmark's loader and the importer both use them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import medvqa
from medvqa import DataError

from .loader import COUNTRIES, VERSION

NAME = re.compile(
    r"(?:(?P<model>.+?)_)?(?P<country>brazil|israel|japan|spain)_(?P<version>local|english)"
    r"(?:_(?P<extractor>.+?)_result|_.*)?\.(?:xlsx|csv|tsv)",
    re.IGNORECASE,
)
SUFFIXES = (".xlsx", ".csv", ".tsv")
# the `source` of an assisted reading taken from VLMEvalKit's published result table
FOLDER_PART = {"C+Q+I": "image", "C+Q": "blind"}  # a run directory's name: <country>_<version>_<this>


def condition_of(path: Path) -> str:
    """C+Q for the authors' `outputs_blind` tables, C+Q+I otherwise (VLMEvalKit shows the image)."""
    return "C+Q" if any(part.lower() == "outputs_blind" for part in path.resolve().parts) else "C+Q+I"


@dataclass
class Source:
    """One VLMEvalKit table and what its path says: model, country, language ("local" or "en"),
    condition and, for a result table, the extractor model; each can be given instead."""

    file: Path
    model: str
    country: str
    language: str
    condition: str
    extractor: str | None = None
    rows: list[dict] = field(default_factory=list, repr=False)
    items: list = field(default_factory=list, repr=False)  # in row order

    @property
    def group(self) -> tuple[str, str]:
        """Tables of one group must hold the same items."""
        return self.country, self.language

    @property
    def run_parts(self) -> tuple[str, str]:
        """(`<model>`, `<country>_<local|english>_<image|blind>`): its run directory under a folder
        import's OUT, the model's part taken from the file's name (made safe by `medvqa.run_dirs`)."""
        return self.model, f"{self.country}_{VERSION[self.language]}_{FOLDER_PART[self.condition]}"


def language_of(value: str | None, country: str) -> str | None:
    """`local` or `en` from an option: `local`, `en`, `english`, or the country's language code."""
    if value is None:
        return None
    v = value.lower()
    if v in ("local", COUNTRIES.get(country)):
        return "local"
    if v in ("en", "english"):
        return "en"
    raise medvqa.UsageError(f"--language {value!r}: {country}'s tables are local ({COUNTRIES.get(country)}) or en")


def describe(
    file: Path,
    *,
    model: str | None = None,
    country: str | None = None,
    language: str | None = None,
    condition: str | None = None,
) -> Source:
    """The `Source` of `file` from its name and folder (`GPT4o_japan_english_gpt-4o-mini_result.xlsx`
    under `outputs_blind/`), each part overridden where given."""
    if file.suffix.lower() not in SUFFIXES:
        raise DataError("a prediction table is .xlsx, .csv or .tsv", file=file)
    m = NAME.fullmatch(file.name)
    country = (country or (m["country"] if m else "")).lower()
    if not country:
        raise DataError(
            "the file name does not say the country (<model>_<country>_<local|english>.xlsx): give --country", file=file
        )
    if country not in COUNTRIES:
        raise medvqa.UsageError(f"--country {country!r}: one of {', '.join(COUNTRIES)}")
    language = language_of(language, country) or (
        ("en" if m["version"].lower() == "english" else "local") if m else "local"
    )
    return Source(
        file=file,
        model=model or (m["model"] if m and m["model"] else file.stem),
        country=country,
        language=language,
        condition=condition or condition_of(file),
        extractor=m["extractor"] if m else None,
    )


def tables_under(root: Path) -> tuple[list[Source], list[dict]]:
    """Every WorldMedQA-V table under `root` (`<model>_<country>_<local|english>[...].xlsx|csv|tsv`,
    `_acc.csv` aside), one per (model, country, language, condition): where a result table and
    an output table of the same run lie together, the result table (it holds the published
    verdicts); the others are returned as passed over, naming the table imported instead."""
    chosen: dict[tuple[str, str], Source] = {}
    passed: list[dict] = []
    for f in sorted(root.rglob("*")):
        if f.suffix.lower() not in SUFFIXES or not f.is_file() or f.name.lower().endswith("_acc.csv"):
            continue
        if not NAME.fullmatch(f.name):
            continue
        s = describe(f)
        other = chosen.get(s.run_parts)
        if other is None:
            chosen[s.run_parts] = s
            continue
        keep, drop = (s, other) if (s.extractor and not other.extractor) else (other, s)
        chosen[s.run_parts] = keep
        passed.append({"file": str(drop.file), "reason": f"another table of the same run is imported: {keep.file}"})
    if not chosen:
        raise DataError(
            "no WorldMedQA-V table under this folder (<model>_<country>_<local|english>[_<extractor>_result].xlsx)",
            file=root,
        )
    return sorted(chosen.values(), key=lambda s: s.run_parts), passed

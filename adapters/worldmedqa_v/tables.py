"""`medvqa report RUN --table worldmedqa_v`: accuracy per country, language and condition, the
layout of the WorldMedQA-V paper's results (one run holds one language; `medvqa audit` pairs two
runs of different languages, `medvqa compare` puts them side by side)."""

from __future__ import annotations

from medvqa.metrics import table
from medvqa.tables import Table, Tables

from .loader import COUNTRIES


def tables(records: list[dict], manifest: dict, benchmark) -> Tables:
    base = [r for r in records if "/" not in r["condition"]]  # forced guesses are the audit's
    frame = table(base, ["country", "language"], benchmark, excluded=manifest.get("excluded") or [])
    notes = [
        f"Local languages: {', '.join(f'{c} {code}' for c, code in COUNTRIES.items())}. Items whose image is "
        "not in the data run as C and C+Q only."
    ]
    return Tables([Table("by_country", "Accuracy by country, language and condition", frame, notes)])

"""`medvqa validate igakuqa|yakugakuqa|kokushimd10 --data DIR`: every finding with its file and
record. Reading stops at the first unreadable record (the loader's error, as a finding); a
readable release is then checked item by item."""

from __future__ import annotations

from pathlib import Path

from medvqa import DataError, Finding

# rule → what a finding under it is (the summary `medvqa validate` prints, in this order)
RULES = {
    "readable": "the release does not load: a file missing or unreadable, or a record the loader refuses "
    "(reading stops there)",
    "answer": "an item without a usable official answer: excluded from scoring (a warning)",
    "withdrawn": "an item with points 0 or corrected: taken out of MHLW scoring (a warning)",
    "images": "an item whose images the data does not hold: it runs as C+Q only (a warning)",
    "kinki": "禁忌肢 (contraindicated choices) that are not among the item's options",
}


def validate(benchmark, path: Path) -> list[Finding]:
    try:
        items = benchmark.load(path)
    except DataError as exc:
        return [
            Finding(
                file=exc.file or str(path),
                section=None,
                number=exc.record,
                rule="readable",
                level="error",
                message=exc.reason,
            )
        ]
    findings = []
    for it in items:
        where = dict(file=str(path), section=str(it.meta.get("block")), number=it.meta.get("number"))
        if it.excluded:
            findings.append(
                Finding(**where, rule="answer", level="warning", message=f"{it.id} excluded: {it.exclusion_reason}")
            )
        if it.meta.get("withdrawn"):
            findings.append(
                Finding(
                    **where,
                    rule="withdrawn",
                    level="warning",
                    message=f"{it.id} has points 0 or is corrected: taken out of MHLW scoring",
                )
            )
        if it.meta.get("without_image"):
            findings.append(
                Finding(
                    **where,
                    rule="images",
                    level="warning",
                    message=f"{it.id} needs images the data does not hold: runs as C+Q only",
                )
            )
        bad_kinki = set(it.meta.get("kinki") or ()) - {o.key for o in it.options}
        if it.options and bad_kinki:
            findings.append(
                Finding(
                    **where, rule="kinki", level="error", message=f"{it.id}: 禁忌肢 {sorted(bad_kinki)} are not options"
                )
            )
    return findings

"""A comparison's pass verdicts: the benchmark's own pass report (`Benchmark.pass_report`) on each
entry's records, one row per model × exam × criterion, judged on whole exams as `report --pass`
judges each run.
"""

from __future__ import annotations

from ..passlines import PassLines
from ..run.saved import whole_exam_items
from .entries import Entry


def pass_rows(entry: Entry, notes: list[str], loaded: dict | None = None) -> list[dict]:
    """The benchmark's pass verdicts on this entry's records, one row per exam × criterion; a
    verdict needs whole exams: each run's data without its selection (see whole_exam_items,
    which `loaded` lets load each data once across entries), so a run's verdicts are those of
    `report --pass`, and runs joined into one entry are judged on their exams together."""
    if entry.benchmark.pass_on_whole_exams:  # as `report --pass` judges each run: joined runs, their exams together
        items = list({it.id: it for run in entry.runs for it in whole_exam_items(run, loaded)}.values())
    else:
        items = list(entry.items.values())
    result = entry.benchmark.pass_report(items, entry.records)
    if result is None:
        return []
    if not isinstance(result, PassLines):
        notes.append(
            f"{entry.source}: {entry.benchmark.name}'s pass report is not verdict rows (medvqa.PassLines): "
            "not shown; see medvqa report --pass"
        )
        return []
    notes += [f"pass lines of {entry.model} on {entry.benchmark.name}: {n}" for n in result.notes]
    return [
        {"model": entry.model, "benchmark": entry.benchmark.name, **row.model_dump(mode="json")} for row in result.rows
    ]

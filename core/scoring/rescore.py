"""Re-scoring a run from its saved responses: no model is called."""

from __future__ import annotations

from pathlib import Path

from medvqa.core import plugins
from medvqa.core.items import DataError
from medvqa.core.run.runner import rescore_record
from medvqa.core.run.saved import load_run
from medvqa.core.run.store import read_all_records, rewrite_records


def rescore(run_dir: Path) -> tuple[int, int]:
    """Re-score every record line in place (atomically), superseded ones included, so the file
    keeps its whole history and readers still take the newest record of each pair. Returns
    (record lines, lines changed)."""
    _, _, benchmark, items = load_run(run_dir)
    records = read_all_records(run_dir)
    patterns = plugins.answer_patterns()
    out = []
    for rec in records:
        if rec["item_id"] not in items:
            raise DataError("record names an item that is not in the data", file=Path(run_dir) / "records.jsonl",
                            record=rec["item_id"])
        out.append(rescore_record(benchmark, items[rec["item_id"]], rec, patterns))
    changed = sum(new != old for new, old in zip(out, records))
    if changed:  # a run directory is written only when something changes
        rewrite_records(run_dir, out)
    return len(out), changed

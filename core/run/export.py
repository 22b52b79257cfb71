"""Predictions of a saved run, written for evaluation elsewhere (a benchmark whose answers are
held out is scored by its owners): one JSON line per (item, condition) with the raw response
and what the reader took from it. No model is called and nothing is scored."""

from __future__ import annotations

import json
from pathlib import Path

from ..files import write_atomic
from .store import read_manifest, read_records


def export_predictions(run_dir: str | Path, out: str | Path) -> dict:
    """Write the newest record of each pair of `run_dir` to `out`, atomically (a failed write
    leaves no partial file and any earlier `out` as it was); return what was written."""
    run_dir, out = Path(run_dir), Path(out)
    manifest = read_manifest(run_dir)
    records = read_records(run_dir, held_out=True)
    strata = manifest.get("strata") or []
    lines = []
    for r in records:
        # `response`: the field every medvqa reader of answers takes (`import`, `--model replay:`)
        lines.append(
            {
                "item_id": r["item_id"],
                "condition": r["condition"],
                "response": r.get("response"),
                "predicted": r.get("predicted"),
                "status": r.get("status"),
                "error": r.get("error"),
                **{name: r.get(name) for name in strata},
            }
        )
    text = "".join(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n" for line in lines)
    write_atomic(out, text)  # a temporary file beside `out`, renamed over it: never half a predictions file
    return {
        "run_dir": str(run_dir),
        "benchmark": manifest.get("benchmark"),
        "model": manifest.get("model"),
        "out": str(out),
        "n_predictions": len(lines),
        "n_without_response": sum(line["response"] is None for line in lines),
    }

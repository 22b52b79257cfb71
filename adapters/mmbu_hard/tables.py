"""`medvqa report RUN --table mmbu_hard`: micro-F1 (a fraction, 0-1) with its 95 % CI and its
method per condition, task and format (n counts the scored datapoints; free-text answers not
judged yet are counted apart, and a cell with none judged is "not judged", without a score);
closed − open (Δ) per task family; the random baseline's expected score on closed items; and
how many free-text answers are still unjudged. A closed row whose parse failures an
extractor read (`medvqa score --extractor`) adds the assisted accuracy beside the strict score (the
metrics layer's `ASSISTED_COLUMNS`; on closed items micro-F1 is the accuracy)."""

from __future__ import annotations

import re

import pandas as pd

from medvqa.metrics import assisted_columns, cell, group, with_assisted
from medvqa.tables import Table, Tables

from .metrics import counts, micro_f1

_FORMAT_WORD = re.compile(r"(?:^|[_-])(open|closed)(?=$|[_-])", re.I)


def task_family(task: str) -> str:
    """A task's name without its open / closed word (`cls_open` and `cls_closed` → `cls`)."""
    return _FORMAT_WORD.sub("", task).strip("_-") or task


TITLES = {
    "micro_f1": "Micro-F1 by task and format (closed: accuracy; boxes: IoU matches)",
    "closed_minus_open": "Closed − open micro-F1 per task family",
    "random_baseline": "Expected micro-F1 of a uniform random guess (closed items)",
}


class MMBUTables:
    def __init__(self, records: list[dict], iou_threshold: float):
        self.records = records
        self.iou_threshold = iou_threshold
        self.reading: str | None = None  # the reading of the records (set by the command that reads them)

    def frames(self) -> dict[str, pd.DataFrame]:
        rows = []
        for (cond, task, fmt), recs in group(self.records, ["task", "format"]).items():
            m = micro_f1([counts(r, self.iou_threshold) for r in recs])
            rows.append(
                {
                    "condition": cond,
                    "task": task,
                    "format": fmt,
                    "n": m["n"],
                    "tp": m["tp"],
                    "fp": m["fp"],
                    "fn": m["fn"],
                    "micro_f1": m["value"],
                    "f1_ci_low": m["ci"][0] if m["ci"] else None,
                    "f1_ci_high": m["ci"][1] if m["ci"] else None,
                    "ci_method": m["ci_method"],
                    "status": m["status"],
                    "unjudged": m["n_unjudged"],
                    "judge_errors": sum(r.get("rule") == "judge-error" for r in recs),
                    **(assisted_columns(cell(recs)) if fmt == "closed" else {}),
                }
            )
        by_task = pd.DataFrame(
            rows,
            columns=with_assisted(
                [
                    "condition",
                    "task",
                    "format",
                    "n",
                    "tp",
                    "fp",
                    "fn",
                    "micro_f1",
                    "f1_ci_low",
                    "f1_ci_high",
                    "ci_method",
                    "status",
                    "unjudged",
                    "judge_errors",
                ],
                rows,
            ),
        )
        deltas = []
        families = group([{**r, "family": task_family(str(r.get("task")))} for r in self.records], ["family", "format"])
        for (cond, family, fmt), closed_recs in families.items():
            if fmt == "closed" and (open_recs := families.get((cond, family, "open"))):
                closed = micro_f1([counts(r, self.iou_threshold) for r in closed_recs])["value"]
                opened = micro_f1([counts(r, self.iou_threshold) for r in open_recs])["value"]
                deltas.append(
                    {
                        "condition": cond,
                        "task_family": family,
                        "closed_f1": closed,
                        "open_f1": opened,
                        "delta": None if closed is None or opened is None else closed - opened,
                    }
                )
        delta = pd.DataFrame(deltas, columns=["condition", "task_family", "closed_f1", "open_f1", "delta"])
        return {"micro_f1": by_task, "closed_minus_open": delta, "random_baseline": self._random_baseline()}

    def _random_baseline(self) -> pd.DataFrame:
        """The expected micro-F1 of a uniform random guess over the options: with every item
        answered, micro-F1 is accuracy, so its expectation is the mean of 1/k. Open answers and
        boxes have no such baseline."""
        rows = []
        closed = [r for r in self.records if r.get("format") == "closed" and r.get("n_options")]
        for (cond, task), recs in group(closed, ["task"]).items():
            rows.append(
                {
                    "condition": cond,
                    "task": task,
                    "format": "closed",
                    "n": len(recs),
                    "expected_micro_f1": sum(1 / r["n_options"] for r in recs) / len(recs),
                }
            )
        return pd.DataFrame(rows, columns=["condition", "task", "format", "n", "expected_micro_f1"])

    def tables(self) -> Tables:
        """The three tables, titled, for the one renderer (and as DataFrames for `medvqa.report`)."""
        return Tables([Table(name, TITLES[name], frame) for name, frame in self.frames().items()], reading=self.reading)

    def render(self, fmt: str) -> str:
        """Through the one renderer (`medvqa.tables.Tables`): JSON {name: {title, rows, notes, reading}}."""
        return self.tables().render(fmt)

"""The benchmark's own tables (`medvqa report RUN --table igakuqa|yakugakuqa|kokushimd10`): per
block and per exam-year, the model's accuracy, points and maximum beside the examinees' mean
accuracy, the items without their images, the withdrawn ones, the exclusions; and how well the
model's per-item correctness follows item difficulty (its correlation with examinees' accuracy).

Under the `mhlw` convention withdrawn items (採点除外) leave accuracy, points and maxima; under
`igakuqa` and `kokushimd10` they stay in, with their data points (0), as the scripts count them.
"""

from __future__ import annotations

import math

import pandas as pd

from medvqa.tables import Table, Tables, add_ci

from .conventions import MHLW

COLUMNS = ["condition", "n", "correct", "accuracy", "score", "total", "human_mean", "without_image", "withdrawn",
           "excluded"]


def tables(records: list[dict], manifest: dict) -> Tables:
    convention = manifest.get("convention") or MHLW
    excluded = manifest.get("excluded") or []
    by_block = _grouped(records, excluded, "block", convention)
    by_year = _grouped(records, excluded, "year", convention)
    corr = _difficulty(records, convention)
    notes = [f"convention: {convention}" + ("; withdrawn items (採点除外) are out of accuracy, score and total"
                                            if convention == MHLW else "; withdrawn items are counted as the "
                                            "script counts them (0 points)"),
             "human_mean: the examinees' mean accuracy over the same items (percent correct, as a fraction)"]
    return Tables([
        Table("by_block", "Accuracy, points and examinees by block", by_block, notes),
        Table("by_year", "Accuracy, points and examinees by exam year", by_year, notes),
        Table("difficulty", "Model correctness against item difficulty (examinees' accuracy)", corr,
               ["r: Pearson correlation of per-item correctness (0/1) with examinees' accuracy (point-biserial)"]),
    ])


def _counted(records: list[dict], convention: str) -> list[dict]:
    return [r for r in records if "/" not in r["condition"] and (convention != MHLW or not r.get("withdrawn"))]


def _grouped(records: list[dict], excluded: list[dict], field: str, convention: str) -> pd.DataFrame:
    rows: dict[tuple, dict] = {}
    for r in _counted(records, convention):
        row = rows.setdefault((r.get(field), r["condition"]), {field: r.get(field), **{c: 0 for c in COLUMNS},
                                                                "condition": r["condition"], "_human": []})
        row["n"] += 1
        row["correct"] += bool(r.get("correct"))
        points = int(r.get("points") or 0)
        row["total"] += points
        row["score"] += points if r.get("correct") else 0
        row["without_image"] += bool(r.get("without_image"))
        if r.get("human_accuracy") is not None:
            row["_human"].append(float(r["human_accuracy"]) / 100)
    for r in records:
        if r.get("withdrawn") and convention == MHLW and "/" not in r["condition"]:
            key = (r.get(field), r["condition"])
            if key in rows:
                rows[key]["withdrawn"] += 1
    for e in excluded:
        for key, row in rows.items():
            if key[0] == e.get(field):
                row["excluded"] += 1
    out = []
    for key in sorted(rows, key=lambda k: (str(k[0]), k[1])):
        row = rows[key]
        human = row.pop("_human")
        row["accuracy"] = row["correct"] / row["n"] if row["n"] else None
        row["human_mean"] = round(sum(human) / len(human), 4) if human else None
        out.append(row)
    frame = pd.DataFrame(out, columns=[field, *COLUMNS])
    if len(frame):
        add_ci(frame)
    return frame


def _difficulty(records: list[dict], convention: str) -> pd.DataFrame:
    rows = []
    by_condition: dict[str, list[tuple[float, float]]] = {}
    for r in _counted(records, convention):
        if r.get("human_accuracy") is not None:
            by_condition.setdefault(r["condition"], []).append((float(bool(r.get("correct"))),
                                                                float(r["human_accuracy"]) / 100))
    for condition, pairs in sorted(by_condition.items()):
        rows.append({"condition": condition, "n": len(pairs), "r": pearson(pairs)})
    return pd.DataFrame(rows, columns=["condition", "n", "r"])


def pearson(pairs: list[tuple[float, float]]) -> float | None:
    """Pearson's r of (x, y) pairs; None when either side does not vary."""
    n = len(pairs)
    if n < 2:
        return None
    mx, my = sum(x for x, _ in pairs) / n, sum(y for _, y in pairs) / n
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx, syy = sum((x - mx) ** 2 for x, _ in pairs), sum((y - my) ** 2 for _, y in pairs)
    if sxx == 0 or syy == 0:
        return None
    return round(sxy / math.sqrt(sxx * syy), 4)

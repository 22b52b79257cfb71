"""Polish PES report tables (`medvqa report RUN --table polish_pes`), as the paper reports them.

- `configurations` (Figure 2): accuracy per input configuration, VQA and QA control side by
  side (QA runs in C and C+Q only). C on both sets is the "answer choices alone" result.
- `specialty_counts` and `specialty` (Table 1): scored items per specialty, and accuracy per
  specialty, set and configuration. Specialties with fewer than `other_below` scored VQA items
  (default 10) are pooled as "Other specialties".
- `image_importance` (Table 4): VQA items in C+Q and C+Q+I, importance 0 and 1 pooled against 2.
- `visual_domain` (Table 5): VQA items per visual domain in every configuration; an item with
  several domains counts once under each.
- `human` : on the items with examinee answers, human accuracy (the share of examinee answers
  that match the key) beside the model's accuracy on the same items.
- `exclusions`: per exam sheet, items, items annulled by CEM (excluded, never scored), scored.

n counts items; non-answers (refusal, parse failure, error, missing) stay in n as incorrect.
Every accuracy carries its 95 % CI (Wilson's score interval). Where an extractor read parse
failures (`medvqa score --extractor`), each model row adds the assisted accuracy beside the
strict one (the metrics layer's `ASSISTED_COLUMNS`). Pure functions of the records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pandas as pd

from medvqa.metrics import NON_ANSWERS, accuracy_ci, cell, group, is_derived, with_assisted
from medvqa.stats import WILSON
from medvqa.tables import Table, Tables

from .loader import DOMAINS

CONDITIONS = ("C", "C+Q", "C+I", "C+Q+I")
SETS = {"vqa": "VQA", "qa": "QA"}
OTHER = "Other specialties"
ACCURACY = ("n", "correct", "accuracy", "ci_low", "ci_high", "ci_method", *NON_ANSWERS)
POOLED = {0: "0-1", 1: "0-1", 2: "2"}
CHANCE_NOTE = "Chance is 20 % (five options, one correct)."


def pes_tables(records: list[dict], excluded: Iterable[dict] = (), *, other_below: int = 10) -> Tables:
    """The tables above from a run's records and its manifest's `excluded` list."""
    records = [r for r in records if not is_derived(r["condition"])]  # forced guesses are the audit's
    excluded = list(excluded)
    group = specialty_groups(records, other_below)
    vqa = [r for r in records if r.get("set") == "vqa"]
    pooled = f'Specialties with fewer than {other_below} scored VQA items are pooled as "{OTHER}".'
    return Tables(
        [
            Table(
                "configurations",
                "Accuracy per input configuration: VQA and QA control",
                configuration_frame(records),
                [CHANCE_NOTE, "QA control items run in C and C+Q only."],
            ),
            Table("specialty_counts", "Items per specialty", specialty_counts(records, excluded, group), [pooled]),
            Table(
                "specialty",
                "Accuracy by specialty, set and configuration",
                grouped_frame(
                    records,
                    "specialty",
                    lambda r: (group(r.get("specialty")),),
                    by_set=True,
                    order=_specialty_order(group, records),
                ),
                [pooled],
            ),
            Table(
                "image_importance",
                "VQA items, C+Q and C+Q+I: accuracy by image importance (0 and 1 pooled)",
                grouped_frame(
                    [r for r in vqa if r["condition"] in ("C+Q", "C+Q+I")],
                    "image_importance",
                    lambda r: (POOLED.get(r.get("image_importance"), "unknown"),),
                    order=("0-1", "2"),
                ),
                [
                    "Image importance as annotated (0, 1, 2; 2 the highest): 0 and 1 pooled against 2, "
                    "as the paper reports it."
                ],
            ),
            Table(
                "visual_domain",
                "VQA items: accuracy by visual domain",
                grouped_frame(
                    vqa,
                    "visual_domain",
                    lambda r: tuple(dict.fromkeys(r.get("visual_domain") or ["unknown"])),
                    order=DOMAINS,
                ),
                ["An item with several visual domains counts once under each."],
            ),
            Table(
                "human",
                "Items with examinee answers: human and model accuracy",
                human_frame(records),
                [
                    "examinees: the share of examinee answers that match the key (n: items, answers: examinee "
                    "answers); model rows: accuracy on the same items."
                ],
            ),
            Table(
                "exclusions",
                "Items per exam sheet: annulled by CEM (excluded) and scored",
                exclusion_frame(records, excluded),
            ),
        ]
    )


def specialty_groups(records: list[dict], other_below: int) -> Callable[[str | None], str]:
    """specialty -> itself, or OTHER when it has fewer than `other_below` scored VQA items."""
    counts: dict[str, set] = {}
    for r in records:
        if r.get("set") == "vqa":
            counts.setdefault(r.get("specialty"), set()).add(r["item_id"])
    kept = {s for s, ids in counts.items() if len(ids) >= other_below}
    return lambda specialty: specialty if specialty in kept else OTHER


def _specialty_order(group, records: list[dict]) -> tuple[str, ...]:
    names = sorted({group(r.get("specialty")) for r in records} - {OTHER})
    return (*names, OTHER)


def configuration_frame(records: list[dict]) -> pd.DataFrame:
    rows = []
    for cond in CONDITIONS:
        for key, label in SETS.items():
            rs = [r for r in records if r["condition"] == cond and r.get("set") == key]
            if rs:
                rows.append({"condition": cond, "set": label, **cell(rs).accuracy_columns()})
    return pd.DataFrame(rows, columns=with_assisted(["condition", "set", *ACCURACY], rows))


def grouped_frame(
    records: list[dict], label: str, keys: Callable[[dict], tuple], *, by_set: bool = False, order: Iterable[str] = ()
) -> pd.DataFrame:
    """One row per (label value[, set], condition) with the accuracy columns (the metrics
    layer's `group`); a record counts once under each of its keys."""
    tagged = [{**r, label: list(keys(r)), "set": SETS.get(r.get("set"), r.get("set"))} for r in records]
    groups = group(tagged, [label, "set"] if by_set else [label])  # (condition, label value[, set]): records
    rank = {name: i for i, name in enumerate(order)}
    sets = list(SETS.values())

    def position(k: tuple) -> tuple:
        return (
            rank.get(k[1], len(rank)),
            str(k[1]),
            sets.index(k[2]) if by_set and k[2] in sets else 0,
            CONDITIONS.index(k[0]),
        )

    rows = [
        {label: k[1], **({"set": k[2]} if by_set else {}), "condition": k[0], **cell(groups[k]).accuracy_columns()}
        for k in sorted(groups, key=position)
    ]
    return pd.DataFrame(
        rows, columns=with_assisted([label, *(["set"] if by_set else []), "condition", *ACCURACY], rows)
    )


def specialty_counts(records: list[dict], excluded: list[dict], group) -> pd.DataFrame:
    cells: dict[str, dict[str, set]] = {}

    def cell(specialty):
        return cells.setdefault(group(specialty), {"sheets": set(), "vqa": set(), "qa": set(), "excluded": set()})

    for r in records:
        c = cell(r.get("specialty"))
        c["sheets"].add(r.get("sheet"))
        c[r.get("set") if r.get("set") in SETS else "qa"].add(r["item_id"])
    for r in excluded:
        c = cell(r.get("specialty"))
        c["sheets"].add(r.get("sheet"))
        c["excluded"].add(r["item_id"])
    order = {name: i for i, name in enumerate(_specialty_order(group, records))}
    rows = [
        {
            "specialty": s,
            "sheets": len(c["sheets"]),
            "vqa_items": len(c["vqa"]),
            "qa_items": len(c["qa"]),
            "excluded": len(c["excluded"]),
        }
        for s, c in sorted(cells.items(), key=lambda kv: (order.get(kv[0], -1), kv[0]))
    ]
    columns = ["specialty", "sheets", "vqa_items", "qa_items", "excluded"]
    if rows:
        rows.append({"specialty": "Total", **{c: sum(row[c] for row in rows) for c in columns[1:]}})
    return pd.DataFrame(rows, columns=columns)


def human_frame(records: list[dict]) -> pd.DataFrame:
    rows = []
    for key, label in SETS.items():
        rs = [r for r in records if r.get("set") == key and r.get("human_n")]
        if not rs:
            continue
        per_item = {r["item_id"]: (int(r["human_n"]), int(r.get("human_correct") or 0)) for r in rs}
        answers, correct = sum(n for n, _ in per_item.values()), sum(c for _, c in per_item.values())
        ci = accuracy_ci(correct, answers) or (None, None)
        rows.append(
            {
                "set": label,
                "who": "examinees",
                "condition": "",
                "n": len(per_item),
                "answers": answers,
                "correct": correct,
                "accuracy": correct / answers,
                "ci_low": ci[0],
                "ci_high": ci[1],
                "ci_method": WILSON,
            }
        )
        for cond in CONDITIONS:
            if cs := [r for r in rs if r["condition"] == cond]:  # (the frame keeps only its columns)
                rows.append(
                    {"set": label, "who": "model", "condition": cond, "answers": None, **cell(cs).accuracy_columns()}
                )
    frame = pd.DataFrame(
        rows,
        columns=with_assisted(
            ["set", "who", "condition", "n", "answers", "correct", "accuracy", "ci_low", "ci_high", "ci_method"], rows
        ),
    )
    frame["answers"] = pd.Series([r["answers"] for r in rows], dtype=object)  # whole numbers, empty on model rows
    return frame


def exclusion_frame(records: list[dict], excluded: list[dict]) -> pd.DataFrame:
    sheets: dict[tuple, dict] = {}

    def cell(r: dict) -> dict:
        key = (SETS.get(r.get("set"), r.get("set")), str(r.get("sheet")))
        return sheets.setdefault(
            key,
            {
                "specialty": r.get("specialty"),
                "year": r.get("year"),
                "quarter": r.get("quarter"),
                "invalid": set(),
                "scored": set(),
            },
        )

    for r in excluded:
        cell(r)["invalid"].add(r["item_id"])
    for r in records:
        cell(r)["scored"].add(r["item_id"])
    rows = [
        {
            "set": k[0],
            "sheet": k[1],
            "specialty": c["specialty"],
            "year": c["year"],
            "quarter": c["quarter"],
            "items": len(c["invalid"]) + len(c["scored"]),
            "invalid": len(c["invalid"]),
            "scored": len(c["scored"]),
        }
        for k, c in sorted(sheets.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))
    ]
    columns = ["set", "sheet", "specialty", "year", "quarter", "items", "invalid", "scored"]
    if rows:
        rows.append(
            {
                "set": "Total",
                "sheet": "",
                "specialty": "",
                "year": "",
                "quarter": "",
                **{c: sum(row[c] for row in rows) for c in ("items", "invalid", "scored")},
            }
        )
    return pd.DataFrame(rows, columns=columns)

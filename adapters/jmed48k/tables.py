"""JMed48k report tables (`medvqa report RUN --table jmed48k`).

- Text-only accuracy by profession (the paper's Table 1): the C+Q records of items that
  reference no image.
- With-images accuracy by profession (Table 2), on image items only: each item's C+Q+I record;
  an image item with no usable image (its files are not in the data) is counted with its C+Q
  record instead, and a footnote line says how many.
- With-images accuracy by dominant image type and by any image type (an item counts once under
  each of its types), on the same records; `Other/Unclear` is left out, items without a
  taxonomy entry appear as `unknown`.
- Exclusions per profession-year: items, items excluded for a null `correct_answer`, and the
  scored items split into text-only and with-images.

Every accuracy carries its 95 % CI and names its method (`ci_method`): Wilson's
score interval for a row; for the unweighted macro average that ends each accuracy table,
MOVER from the rows' Wilson limits, centred on the macro average itself. n counts items;
non-answers (refusal, parse failure, error, missing) stay in n as incorrect. Where an extractor
read parse failures (`medvqa score --extractor`), each accuracy row adds the assisted accuracy
beside the strict one (the metrics layer's `ASSISTED_COLUMNS`), and the macro average its own.
Pure functions of a run's records and manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pandas as pd

from medvqa.metrics import CI_COLUMNS, NON_ANSWERS, READINGS, cell, with_assisted
from medvqa.stats import macro_method, mean_of_proportions_ci
from medvqa.tables import Table, Tables

from .loader import OTHER, PRIMARY_TYPES, UNKNOWN
from .professions import PROFESSIONS

MACRO = "Macro average"
ACCURACY_COLUMNS = ("n", "correct", "accuracy", *CI_COLUMNS, "ci_method", *NON_ANSWERS)


def jmed48k_tables(records: list[dict], excluded: list[dict] = ()) -> Tables:
    """The tables above from a run's records and its manifest's `excluded` list."""
    text_only = [r for r in records if r["condition"] == "C+Q" and not r.get("has_image")]
    with_images, fallback = image_records(records)
    macro_note = (
        f"{MACRO}: the unweighted mean of the accuracies above (its CI: MOVER from the rows' Wilson "
        "limits; rows: Wilson); its n and correct are sums."
    )
    if fallback:
        fallback_note = (
            f"{len(fallback)} of {len(with_images)} image items have no usable image in the data "
            "and are counted under C+Q (without their images)."
        )
    else:
        fallback_note = (
            f"All {len(with_images)} image items are counted under C+Q+I." if with_images else "No image items."
        )
    typed = [r for r in with_images if r.get("dominant_type") != OTHER]
    return Tables(
        [
            Table(
                "text_only",
                "Text-only items, C+Q: accuracy by profession",
                accuracy_frame(text_only, "profession", _profession),
                [macro_note],
            ),
            Table(
                "with_images",
                "Image items, C+Q+I (C+Q without a usable image): accuracy by profession",
                accuracy_frame(with_images, "profession", _profession, fallback),
                [fallback_note, macro_note],
            ),
            Table(
                "dominant_type",
                "Image items, C+Q+I (C+Q without a usable image): accuracy by dominant image type",
                accuracy_frame(typed, "dominant_type", _dominant_type, fallback),
                [fallback_note, f"Items labelled {OTHER} are left out; `{UNKNOWN}`: no taxonomy entry.", macro_note],
            ),
            Table(
                "any_type",
                "Image items, C+Q+I (C+Q without a usable image): accuracy by any image type",
                accuracy_frame(with_images, "image_type", _image_types, fallback),
                [
                    fallback_note,
                    f"An item counts once under each of its types; {OTHER} is left out; "
                    f"`{UNKNOWN}`: no taxonomy entry.",
                    macro_note,
                ],
            ),
            Table(
                "exclusions",
                "Items per profession-year: excluded (null correct_answer) and scored",
                exclusion_frame(records, excluded),
            ),
        ]
    )


def image_records(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """(one record per image item: C+Q+I when present, else C+Q; the C+Q fallbacks)."""
    by_item: dict[str, dict[str, dict]] = {}
    for r in records:
        if r.get("has_image") and r["condition"] in ("C+Q", "C+Q+I"):
            by_item.setdefault(r["item_id"], {})[r["condition"]] = r
    chosen, fallback = [], []
    for conds in by_item.values():
        record = conds.get("C+Q+I") or conds["C+Q"]
        chosen.append(record)
        if record["condition"] == "C+Q":
            fallback.append(record)
    return chosen, fallback


def accuracy_frame(
    records: list[dict], label: str, keys: Callable[[dict], Iterable[str]], fallback: list[dict] | None = None
) -> pd.DataFrame:
    """One row per label (professions in release order, image types in the paper's order)
    with n, correct, accuracy and non-answer counts, then the macro-average row. With
    `fallback`, a column counts the items scored without their images."""
    groups: dict[str, list[dict]] = {}
    for r in records:
        for key in keys(r):
            groups.setdefault(key, []).append(r)
    fallback_ids = {r["item_id"] for r in fallback or ()}
    rows = []
    for key in sorted(groups, key=_rank):
        rs = groups[key]
        c = cell(rs)
        row = {label: key, **c.accuracy_columns()}
        if fallback is not None:
            row["without_image"] = sum(r["item_id"] in fallback_ids for r in rs)
        rows.append(row)
    columns = with_assisted([label, *ACCURACY_COLUMNS, *(["without_image"] if fallback is not None else [])], rows)
    if rows:
        macro = {
            c: sum(row[c] for row in rows) for c in columns[1:] if c in ("n", "correct", *NON_ANSWERS, "without_image")
        }
        macro.update({label: MACRO, "accuracy": sum(row["accuracy"] for row in rows) / len(rows)})
        macro["ci_low"], macro["ci_high"] = mean_of_proportions_ci([r["correct"] for r in rows], [r["n"] for r in rows])
        macro["ci_method"] = macro_method(len(rows))  # a macro of one row is that row, with its own interval
        other = next((r for r in READINGS if f"{r}_accuracy" in columns), None)  # the reading beside the headline
        if other:  # a row without an extraction: its other reading is the headline's
            assisted = [row.get(f"{other}_correct", row["correct"]) for row in rows]
            macro.update(
                {
                    f"{other}_correct": sum(assisted),
                    "extracted": sum(row.get("extracted", 0) for row in rows),
                    f"{other}_accuracy": sum(a / row["n"] for a, row in zip(assisted, rows)) / len(rows),
                }
            )
            macro[f"{other}_ci_low"], macro[f"{other}_ci_high"] = mean_of_proportions_ci(
                assisted, [r["n"] for r in rows]
            )
        rows.append(macro)
    return pd.DataFrame(rows, columns=columns)


def exclusion_frame(records: list[dict], excluded: Iterable[dict]) -> pd.DataFrame:
    """Per profession-year: items, excluded, scored, text-only scored, with-images scored."""
    cells: dict[tuple[str, int], dict[str, set]] = {}

    def cell(r: dict) -> dict[str, set]:
        key = (next(iter(_profession(r))), r.get("year"))
        return cells.setdefault(key, {"excluded": set(), "text_only": set(), "with_images": set()})

    for r in excluded:
        cell(r)["excluded"].add(r["item_id"])
    for r in records:
        cell(r)["with_images" if r.get("has_image") else "text_only"].add(r["item_id"])
    rows = []
    for (profession, year), ids in sorted(cells.items(), key=lambda kv: (_rank(kv[0][0]), kv[0][1] or 0)):
        scored = len(ids["text_only"]) + len(ids["with_images"])
        rows.append(
            {
                "profession": profession,
                "year": year,
                "items": scored + len(ids["excluded"]),
                "excluded": len(ids["excluded"]),
                "scored": scored,
                "text_only": len(ids["text_only"]),
                "with_images": len(ids["with_images"]),
            }
        )
    columns = ["profession", "year", "items", "excluded", "scored", "text_only", "with_images"]
    if rows:
        total = {c: sum(row[c] for row in rows) for c in columns[2:]}
        rows.append({"profession": "Total", "year": "", **total})
    return pd.DataFrame(rows, columns=columns)


def _profession(r: dict) -> tuple[str]:
    name = r.get("profession")
    return (PROFESSIONS.get(name, name or UNKNOWN),)


def _dominant_type(r: dict) -> tuple[str]:
    return (r.get("dominant_type") or UNKNOWN,)


def _image_types(r: dict) -> tuple[str, ...]:
    types = r.get("image_types") or [UNKNOWN]
    return tuple(dict.fromkeys(t for t in types if t != OTHER))


_ORDER = {name: i for i, name in enumerate((*PROFESSIONS.values(), *PRIMARY_TYPES, UNKNOWN))}


def _rank(label: str) -> tuple[int, str]:
    return (_ORDER.get(label, len(_ORDER)), str(label))

"""A comparison document (`Comparison.as_json`) as the tables every output shows: the headline
table of models × (benchmark, condition), the Δ, tests, strata and cluster tables by their column
specs, the pass verdicts and the panel views, each as a pandas frame; the Markdown and LaTeX
(`render`) and the HTML page (`page`) lay the same frames out.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..metrics import READINGS
from ..passlines import COLUMNS as PASS_COLUMNS
from ..passlines import PassVerdict
from ..render import interval as _ci
from ..render import percent as _pct
from ..results import condition_order
from .table import OVERALL


def pass_frame(doc: dict) -> pd.DataFrame:
    """The pass verdicts of a comparison document as shown: model, benchmark, then the row."""
    rows = [
        {
            "model": r["model"],
            "benchmark": r["benchmark"],
            **PassVerdict(**{k: v for k, v in r.items() if k not in ("model", "benchmark")}).shown(),
        }
        for r in doc["pass_lines"]
    ]
    return pd.DataFrame(rows, columns=["model", "benchmark", *PASS_COLUMNS])


def columns(doc: dict) -> list[tuple[str, str]]:
    """(benchmark, condition) columns of the headline table, benchmarks in the order given."""
    out = []
    for row in doc["table"]:
        key = (row["benchmark"], row["condition"])
        if row["stratum"] == OVERALL and key not in out:
            out.append(key)
    benches = list(dict.fromkeys(b for b, _ in out))
    return sorted(out, key=lambda k: (benches.index(k[0]), condition_order(k[1])))


def models(doc: dict) -> list[str]:
    return list(dict.fromkeys(row["model"] for row in doc["table"]))


def overall_index(doc: dict) -> dict[tuple[str, str, str], int]:
    return {
        (r["model"], r["benchmark"], r["condition"]): i for i, r in enumerate(doc["table"]) if r["stratum"] == OVERALL
    }


def metric_label(doc: dict, bench: str) -> str:
    """The headline metric of `bench` in the table (accuracy when no row names it)."""
    return next((r["metric"] for r in doc["table"] if r["benchmark"] == bench), "accuracy")


def other_reading(row: dict) -> tuple[str, float] | None:
    """(the other reading's name, its accuracy) of a table row, where an extraction makes it differ."""
    return next(((name, row[f"{name}_accuracy"]) for name in READINGS if row.get(f"{name}_accuracy") is not None), None)


def cell_text(row: dict) -> str:
    other = other_reading(row)
    beside = f" {other[0]}={_pct(other[1])}%" if other else ""
    return (
        f"{_pct(row['value'])} {_ci(row['ci_low'], row['ci_high'])} n={row['n']}"
        f" na={_pct(row['non_answer_rate'])}%{beside}"
    )


def reading_line(doc: dict) -> str:
    """Which reading the headline numbers use, per benchmark where they differ."""
    readings = doc.get("readings") or {}
    each = ", ".join(f"{b} {r}" for b, r in readings.items())
    said = doc.get("reading", "strict") if doc.get("reading") != "mixed" else f"each benchmark's protocol's ({each})"
    return (
        f"Reading: {said}. Headline values, Δs and tests read replies so; the other reading's accuracy stands "
        "beside a cell where an extractor read some replies (--reading strict|assisted switches)."
    )


def headline_frame(doc: dict) -> pd.DataFrame:
    """Models × (benchmark, condition): each cell the headline metric, its CI, n and non-answers."""
    cols, names, index = columns(doc), models(doc), overall_index(doc)
    return pd.DataFrame(
        {
            "model": names,
            **{
                f"{b} {c} ({metric_label(doc, b)})": [
                    cell_text(doc["table"][index[(m, b, c)]]) if (m, b, c) in index else "no run" for m in names
                ]
                for b, c in cols
            },
        }
    )


# Each table's columns: (heading, the key of its value in the document's rows (a pair of keys for an
# interval, a function of the row for a text composed from several), number format). A number column
# of the HTML page carries the JSON path of its value.
CI = ("ci_low", "ci_high")
DELTA = [
    ("model", "model", "text"),
    ("benchmark", "benchmark", "text"),
    ("items", "scope", "text"),
    ("n", "n", "int"),
    ("C+Q+I %", "a_with", "pct"),
    ("C+Q %", "a_removed", "pct"),
    ("Δimg (points)", "delta_img", "pp"),
    ("95 % CI", CI, "ci_pp"),
    ("McNemar mid-p", "mcnemar_p", "p"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]
# a variant's Δ beside Δimg: the base condition against the same condition under the variant
VARIANT = [
    ("model", "model", "text"),
    ("benchmark", "benchmark", "text"),
    ("variant", "variant", "text"),
    ("base", "base", "text"),
    ("items", "scope", "text"),
    ("n", "n", "int"),
    ("base %", "a_base", "pct"),
    ("variant %", "a_variant", "pct"),
    ("Δ (points)", "delta_variant", "pp"),
    ("95 % CI", CI, "ci_pp"),
    ("right only base", "n10", "int"),
    ("right only variant", "n01", "int"),
    ("McNemar mid-p", "mcnemar_p", "p"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]
TESTS = [
    *((h, h, "text") for h in ("benchmark", "condition", "a", "b")),
    (
        "pairing",
        lambda t: t["status"] + (f" (only a {t['only_a']}, only b {t['only_b']})" if t["status"] != "paired" else ""),
        "text",
    ),
    ("n", "n", "int"),
    ("a %", "a_value", "pct"),
    ("b %", "b_value", "pct"),
    ("difference (points)", "difference", "pp"),
    ("95 % CI", CI, "ci_pp"),
    ("test", lambda t: t["test"] or "not compared", "text"),
    ("p", "p", "p"),
    ("Holm p", "p_holm", "p"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]
STRATUM = [
    *((h, h, "text") for h in ("model", "benchmark", "condition", "level")),
    ("%", "value", "pct"),
    ("95 % CI", CI, "ci"),
    ("n", "n", "int"),
    ("non-answers %", "non_answer_rate", "pct"),
]
LANGUAGE = [
    *((h, h, "text") for h in ("model", "benchmark", "condition", "languages")),
    ("items", "scope", "text"),
    ("n", "n", "int"),
    ("first %", "a_local", "pct"),
    ("second %", "a_other", "pct"),
    ("Δlang (points)", "delta_lang", "pp"),
    ("95 % CI", CI, "ci_pp"),
    ("McNemar mid-p", "mcnemar_p", "p"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]

CALIBRATION_TITLE = "Calibration (records that carry a confidence; ECE over 10 equal-width bins)"
ABSTENTION_TITLE = "Abstention under each exam's rule for blanks"
ABSTENTION_TEXT = (
    "Blank below a confidence threshold chosen on the other half of the items (seeded halves, both "
    "directions), beside answering everything; the gain's interval is a paired bootstrap of per-item "
    "points. The in-sample gain is chosen on the items it is scored on: biased upwards."
)
# calibration per model × benchmark × condition (records that carry a confidence): the audit's numbers
CALIBRATION = [
    *((h, h, "text") for h in ("model", "benchmark", "condition")),
    ("n", "n", "int"),
    ("accuracy %", "accuracy", "pct"),
    ("mean confidence %", "mean_confidence", "pct"),
    ("ECE %", "ece", "pct"),
    ("ECE 95 % CI", ("ece_ci_low", "ece_ci_high"), "ci"),
    ("Brier", "brier", "decimal"),
    ("AUROC", "auroc", "decimal"),
    ("AURC", "aurc", "decimal"),
    ("AURC low", "aurc_ci_low", "decimal"),
    ("AURC high", "aurc_ci_high", "decimal"),
    ("method", lambda r: ", ".join(f"{m} {k}" for m, k in r["methods"].items()), "text"),
    ("note", "note", "text"),
]


def _verdict(passed: bool | None, exam: str | None) -> str:
    """A sheet's verdict in words: the rule's pass mark (where it has one) and the exam's own pass
    lines (where the benchmark has them); "–" where neither."""
    said = [*([] if passed is None else ["pass" if passed else "fail"]), *([exam] if exam else [])]
    return "; ".join(said) or "–"


# the exam's score answering everything beside blank below a cross-fitted confidence threshold
ABSTENTION = [
    *((h, h, "text") for h in ("model", "benchmark", "condition", "rule")),
    ("n", "n", "int"),
    ("all: points", "answer_all_points", "decimal"),
    ("all: verdict", lambda r: _verdict(r["answer_all_passed"], r["answer_all_verdict"]), "text"),
    ("cross-fitted: points", "points", "decimal"),
    ("cross-fitted: verdict", lambda r: _verdict(r["passed"], r["verdict"]), "text"),
    ("gain", "gain", "decimal"),
    ("gain low", "gain_ci_low", "decimal"),
    ("gain high", "gain_ci_high", "decimal"),
    ("in-sample gain (biased)", "in_sample_gain", "decimal"),
]

CLUSTER_CI = ("cluster_ci_low", "cluster_ci_high")
# with --cluster: each overall cell's item-level and cluster-bootstrap intervals side by side
CLUSTERED = [
    *((h, h, "text") for h in ("model", "benchmark", "condition")),
    ("%", "value", "pct"),
    ("item-level 95 % CI", CI, "ci"),
    ("cluster 95 % CI", CLUSTER_CI, "ci"),
    ("clusters", "n_clusters", "int"),
]


def formats(spec: list) -> dict[str, str]:
    return {heading: kind for heading, _, kind in spec}


def frame(doc: dict, section: str, spec: list, stratum: str | None = None) -> pd.DataFrame:
    """The rows of `doc[section]` (those of one `stratum` of the table) as `spec`'s columns,
    indexed by their position in the section."""
    rows = {i: r for i, r in enumerate(doc[section]) if stratum is None or r["stratum"] == stratum}

    def value(row: dict, key: Any) -> Any:
        return key(row) if callable(key) else tuple(row[k] for k in key) if isinstance(key, tuple) else row.get(key)

    table = pd.DataFrame(
        [[value(r, key) for _, key, _ in spec] for r in rows.values()],
        columns=[heading for heading, _, _ in spec],
        index=list(rows),
    )
    for said in ("warning", "note"):  # a warning (a note) column only where a row has one
        if said in table and table[said].isna().all():
            table = table.drop(columns=said)
    if "items" in table and table["items"].fillna("").nunique() <= 1:  # only where it tells rows apart (parts)
        table = table.drop(columns="items")
    return table


def published_text(row: dict) -> str:
    """ " · published 0.0 (artifact: empty-answer-column)": a row's published accuracy, and the
    importer's flag where it named the published number an artifact; "" without one."""
    said = row.get("published_accuracy")
    if said is None:
        return ""
    flag = row.get("published_artifact")
    return f" · published {_pct(said)}" + (f" (artifact: {flag})" if flag else "")


def panel_frame(doc: dict, panel: dict) -> tuple[pd.DataFrame, dict[tuple[int, str], list]]:
    """A panel view (`doc["panels"]`) as a table: one row per model, one column per level and
    language, each cell the headline value and n of the table row it points at, and a last row
    with each level's pass line; with the JSON path of each shown value."""
    cells = {(c["model"], c["level"], c["language"]): c for c in panel["cells"]}
    columns = [(level, lang) for level in panel["levels"] for lang in panel["languages"]]
    heads = [f"{level} {lang}" for level, lang in columns]
    rows, paths = [], {}
    for i, model in enumerate(panel["models"]):
        row = {"model": model}
        for head, (level, lang) in zip(heads, columns):
            c = cells.get((model, level, lang))
            r = doc["table"][c["row"]] if c else None
            said = doc["table"][c["overall_row"]] if c and "overall_row" in c else {}
            row[head] = f"{_pct(r['value'])} (n={r['n']})" + published_text(said) if r else "no run"
            if c and r:
                paths[(i, head)] = ["table", c["row"], "value"]
        rows.append(row)
    lines = panel["pass_lines"]
    if lines:
        rows.append(
            {
                "model": "pass line",
                **{
                    head: f"{_pct(lines[level])}" if level in lines else "–" for head, (level, _) in zip(heads, columns)
                },
            }
        )
    return pd.DataFrame(rows, columns=["model", *heads]), paths


def panel_title(panel: dict) -> str:
    return f"{panel['benchmark']}: {panel['condition']} accuracy % by {panel['stratum']} and language" + (
        ", with each level's pass line" if panel["pass_lines"] else ""
    )

"""The Polish PES paper's Table 2 (§5, "Data Contamination Analysis"): per model, the Data
Contamination Quiz's contamination level on each dataset, "provided in the format (min
contamination, max contamination)": the lower bound, bias-corrected through Cohen's kappa, and
the upper, the best Bias Compensator Quiz's raw accuracy.

The levels are those `medvqa.contamination(dcq_results=FILE)` estimates from a results file in
the DCQ authors' layout (medvqa's own `--answers`, or theirs), computed as the authors compute
them; here they are only laid out. One row per model, one column per dataset (the paper's are
the QA and the VQA datasets, their text), in the order given. A bound is printed as the DCQ
report prints it, a percentage with two decimals (`78.79%`): the paper's text as medvqa holds
it keeps the table's caption but not its body, so its own precision is not known here."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from medvqa.tables import Table, Tables

TITLE = "Contamination level ranges (DCQ), in the format (min contamination, max contamination)"


def bound(share: float) -> str:
    """A bound as the DCQ report prints it: `78.79%`."""
    return f"{share * 100:.2f}%"


def table2(levels: Mapping[tuple[str, str], Mapping[str, float]]) -> Tables:
    """Table 2 from the levels (`{"lower", "upper"}`, fractions) of each (model, dataset); a
    model without a level on a dataset has an empty cell."""
    models = list(dict.fromkeys(model for model, _ in levels))
    datasets = list(dict.fromkeys(dataset for _, dataset in levels))
    rows = []
    for model in models:
        row = {"model": model}
        for dataset in datasets:
            level = levels.get((model, dataset))
            row[dataset] = f"({bound(level['lower'])}, {bound(level['upper'])})" if level else ""
        rows.append(row)
    notes = [
        "min: the lower bound, max(Cohen's kappa of the best Bias Compensator Quiz against the Bias Detector "
        "Quiz, the second-best BCQ's accuracy); max: the best BCQ's accuracy (Golchin & Surdeanu 2025).",
    ]
    return Tables([Table("dcq", TITLE, pd.DataFrame(rows, columns=["model", *datasets]), notes)])


def labelled(value: str) -> tuple[str, str, str]:
    """(model, dataset, file) of a `--dcq-results` value `MODEL[@DATASET]=FILE`: the first `=`
    ends the label, the last `@` in it begins the dataset (a model's name may hold `@`); a
    dataset left out is "DCQ", one column."""
    label, sep, path = value.partition("=")
    model, at, dataset = label.rpartition("@")
    if not at:
        model, dataset = label, "DCQ"
    if not sep or not model.strip() or not dataset.strip() or not path:
        raise ValueError(f"--dcq-results {value!r}: write it MODEL=FILE or MODEL@DATASET=FILE")
    return model.strip(), dataset.strip(), path

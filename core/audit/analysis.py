"""The visual-reliance audit: pure functions of a run's records and items.

Image removal pairs each image item's `C+Q+I` record with its `C+Q` record. The four
transition states are p11 (correct in both), p10 (correct only with the image), p01 (correct
only without it) and p00 (wrong in both); a_with = p11 + p10, a_removed = p11 + p01 and
Δimg = p10 − p01. Variants of a condition (`C+Q+I~swap`) are paired with it the same way
(`variants`). Alongside: the input-ablation decomposition (C, C+Q, C+I, C+Q+I on the same
items), three refusal conventions, the image-as-options positive control, the
selection-bias diagnostic and examples of each state. No model is called.

The steps live in their own modules: `pairs` (inputs and pairing), `transitions` (the paired
table), `sections` (the other sections), `between_models`, `cohorts`, `names`, `clusters`, `variants`,
`confidence` (calibration and abstention, where records carry a confidence) and `summary` (the
document in words); this module puts one run's and several runs' documents together.
"""

from __future__ import annotations

from dataclasses import asdict

from ..metrics import resolve_fields
from .between_models import compare_models
from .clusters import cluster_map, intervals_statement
from .cohorts import cohort_rows
from .confidence import confidence_section
from .names import model_names
from .pairs import IndexedRun, RunInput, Settings, counted_input, index_records, pair_image_removal
from .sections import ablation, examples, forced_guess, io_control, marginals, refusal_section, selection_bias
from .transitions import paired_section
from .variants import variant_sections

DEFAULT_SETTINGS = Settings()  # (frozen: one default shared by every call)


def audit_run(run: RunInput, settings: Settings = DEFAULT_SETTINGS) -> dict:
    """The audit document of one model's run: on the records that count under the benchmark's
    rules (`Benchmark.counts`), with every condition's marginal numbers beside."""
    fields = resolve_fields(settings.by, run.records, run.source, run.stratum_aliases)
    margins = marginals(run, fields)
    run = counted_input(run)
    by_key = index_records(run)
    prepared = IndexedRun(run, by_key, fields, *pair_image_removal(run, by_key), forced_guess(run.records)["accuracy"])
    clusters = cluster_map(run.benchmark, run.items.values(), settings.cluster)
    variants = variant_sections(prepared, settings)
    confidence = confidence_section(prepared, settings, clusters)
    return {
        "model": run.model,
        "source": run.source,
        "n_records": len(run.records),
        "marginals": margins,
        "paired": paired_section(
            prepared.pairs,
            prepared.unpaired,
            fields,
            settings,
            prepared.forced_accuracy,
            run.source or run.model,
            clusters,
        ),
        "ablation": ablation(prepared, settings),
        "refusals": refusal_section(prepared, settings),
        "io_control": io_control(prepared, settings),
        "selection_bias": selection_bias(prepared),
        "examples": examples(prepared, settings),
        **({"variants": variants} if variants else {}),  # (only where the records hold variants)
        **({"confidence": confidence} if confidence else {}),  # (only where the records carry a confidence)
    }


def audit(runs: list[RunInput], settings: Settings = DEFAULT_SETTINGS, cohorts: dict[str, str] | None = None) -> dict:
    """The audit document: one run's sections at the top level; several runs' under
    `models` (keyed by model name), with `comparisons` and, given cohorts, `cohorts`."""
    if not runs:
        raise ValueError("no runs to audit")
    meta = {
        "settings": {**asdict(settings), "by": list(settings.by)},
        "intervals": intervals_statement(settings.cluster),
    }
    names = model_names(runs)
    models = {name: audit_run(run, settings) for name, run in zip(names, runs)}
    if len(runs) == 1:
        doc = {**models[names[0]], **meta}
    else:
        doc = {"models": models, "comparisons": compare_models(runs, names, settings), **meta}
    if cohorts is not None:
        doc["cohorts"] = cohort_rows(models, cohorts)
        doc["unassigned_models"] = [n for n, d in models.items() if d["model"] not in cohorts and n not in cohorts]
    return doc

"""The Δ columns of a comparison: Δimg per model × benchmark (`C+Q+I` vs `C+Q` on the same items),
computed exactly as the audit's image-removal section computes it, or pooled over the repeats of a
run asked --repeats K times; the Δ of each image variant per model × benchmark (`C+Q+I` vs
`C+Q+I~hflip`), paired as the audit's variant sections pair it; and the columns of Δlang (the
audit's `language_delta_rows`), all with McNemar's test beside the difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean

from .. import bootstrap
from ..audit.pairing import IMAGE, Factor, factor_section, scope_line
from ..audit.pairs import RunInput, Settings, index_records, pair_image_removal
from ..audit.transitions import flat_row, paired_section
from ..audit.variants import held_variants, variant_pairs, variant_sides
from ..conditions import IMAGE_REMOVAL, variant_label
from ..repeats import item_mean_pairs, paired_means_test, paired_repeats
from .entries import Entry, counted_records

# the conditions Δimg pairs: with the image, and with it removed
WITH, REMOVED = (c.value for c in IMAGE_REMOVAL)
# a paired row's test: McNemar's mid-p (`mcnemar_p`, its bound) with the exact conditional p beside it
PAIRED_TEST = ["test", "mcnemar_p", "mcnemar_p_bound", "mcnemar_exact_p"]
# what every paired row ends with: its interval and test, then its unpaired items and remarks
INTERVAL_AND_TEST = ["ci_low", "ci_high", "ci_method", *PAIRED_TEST]
PAIR_NOTES = ["n_unpaired", "unreadable_pairs", "warning", "note"]
DELTA_COLUMNS = [
    "model",
    "benchmark",
    "scope",
    "n",
    "a_with",
    "a_removed",
    "delta_img",
    *INTERVAL_AND_TEST,
    *PAIR_NOTES,
]
# a variant's row: Δimg's columns with the sides named `a_base` (the base condition) and
# `a_variant`, `delta_variant` = a_base − a_variant (positive: worse under the variant), and the
# four transition counts (n10: right only under the base condition, n01: only under the variant)
VARIANT_SIDES = Factor("variant", "a_base", "a_variant", "delta_variant")
TRANSITIONS = ["n11", "n10", "n01", "n00"]
DELTA_VARIANT_COLUMNS = [
    "model",
    "benchmark",
    "variant",
    "base",
    "label",
    "scope",
    "n",
    "a_base",
    "a_variant",
    "delta_variant",
    *INTERVAL_AND_TEST,
    *TRANSITIONS,
    *PAIR_NOTES,
]
DELTA_LANG_COLUMNS = [
    "model",
    "benchmark",
    "condition",
    "languages",
    "scope",
    "n",
    "a_local",
    "a_other",
    "delta_lang",
    *INTERVAL_AND_TEST,
    *PAIR_NOTES,
]


def entry_input(entry: Entry) -> RunInput:
    """An entry as the audit's pairing reads it: its counted records and its items."""
    return RunInput(
        model=entry.model,
        records=counted_records(entry.records, entry.benchmark),
        items=entry.items,
        source=entry.source,
    )


def delta_row(entry: Entry, s: Settings) -> dict:
    """An entry's Δimg, as the audit's image-removal section computes it (strict: a refusal is wrong)."""
    run = entry_input(entry)
    clusters = entry.clusters(s.cluster)
    section = paired_section(*pair_image_removal(run), {}, s, clusters=clusters)
    row = {
        "model": entry.model,
        "benchmark": entry.benchmark.name,
        "scope": scope_line(entry.scope),
        **flat_row(section, ("a_with", "a_removed", "delta_img")),
    }
    if (k := entry.repeats) > 1:
        sides = [[r for r in run.records if r["condition"] == c] for c in (WITH, REMOVED)]
        row.update(pooled_delta(sides[0], sides[1], k, clusters, s, IMAGE))
    return row


def variant_delta_rows(entry: Entry, s: Settings) -> list[dict]:
    """An entry's Δ of each variant its records hold against the variant's base condition (`C+Q+I`
    vs `C+Q+I~hflip`), one row per variant and base in the audit's order (`held_variants`), the
    items paired as the audit's variant sections pair them (`variant_pairs`; strict: a refusal is
    wrong). Over repeats, pooled as Δimg is (`pooled_delta`). None without variant records."""
    run = entry_input(entry)
    by_key = index_records(run)
    held = held_variants(by_key)
    if not held:
        return []
    clusters = entry.clusters(s.cluster)
    rows = []
    for variant, base in held:
        label = variant_label(base, variant)
        pairs, unpaired = variant_pairs(entry.items, by_key, variant, base)
        section = factor_section(paired_section(pairs, unpaired, {}, s, clusters=clusters), VARIANT_SIDES)
        counts = section["overall"].get("counts") or {}
        row = {
            "model": entry.model,
            "benchmark": entry.benchmark.name,
            "variant": variant,
            "base": base,
            "label": label,
            "scope": scope_line(entry.scope),
            **flat_row(section, (VARIANT_SIDES.first, VARIANT_SIDES.second, VARIANT_SIDES.delta)),
            **{k: counts.get(k) for k in TRANSITIONS},
        }
        if (k := entry.repeats) > 1:  # pooled over the repeats, as Δimg is: no one repeat's transition counts
            row.update(
                pooled_delta(*variant_sides(entry.items, run.records, variant, base), k, clusters, s, VARIANT_SIDES),
                **dict.fromkeys(TRANSITIONS),
            )
        rows.append(row)
    return rows


def pooled_delta(
    first: Sequence[Mapping],
    second: Sequence[Mapping],
    k: int,
    clusters: dict[str, str] | None,
    s: Settings,
    sides: Factor,
) -> dict:
    """The Δ columns (named by `sides`: Δimg's, a variant's) of a run asked --repeats K times, from
    every repeat's records on the factor's two sides: pooled over the repeats (each item's mean
    difference, `repeats.paired_repeats`; the summary's and the section over repeats' number) with
    the item-level t test (`paired_means_test`), in place of one repeat's transition table."""
    pooled = paired_repeats(first, second)["pooled"]
    shared, a, b = item_mean_pairs(first, second)
    test = paired_means_test(a, b)
    ci = pooled["ci"] or (None, None)
    out = {
        "n": pooled["n_items"],
        sides.first: fmean(a) if a else None,
        sides.second: fmean(b) if b else None,
        sides.delta: pooled["delta"],
        "ci_low": ci[0],
        "ci_high": ci[1],
        "ci_method": pooled["ci_method"],
        "test": test["test"],
        "mcnemar_p": None,
        "mcnemar_p_bound": None,
        "mcnemar_exact_p": None,
        "note": f"pooled over {k} repeats (each item's mean): paired t over items, "
        + (f"p {test['p']:.3g}" if test["p"] is not None else test["note"]),
    }
    if clusters is not None:
        boot = bootstrap.cluster_bootstrap(
            [x - y for x, y in zip(a, b)],
            [1.0] * len(a),
            [clusters.get(i, i) for i in shared],
            resamples=s.resamples,
            seed=s.seed,
        )
        low, high = boot["ci"] or (None, None)
        out.update(
            cluster_ci_low=low,
            cluster_ci_high=high,
            cluster_ci_method=boot["ci_method"] if boot["ci"] else None,
            n_clusters=boot["n_clusters"],
        )
    return out

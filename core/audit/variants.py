"""The variant factors: an item's record under a condition paired with its record under a variant
of that condition (`C+Q+I` with `C+Q+I~swap`), as image removal pairs `C+Q+I` with `C+Q`.

A variant asks the same item under the same condition and template with one thing changed: the
image swapped for another item's of the same type (`swap`), the item's own image blurred,
JPEG-compressed, downscaled, cropped or flipped left to right (`blur`, `jpeg`, `downscale`,
`crop`, `hflip`), or the options reordered (`order`). Each variant held by a run's records gets
the image-removal section's table (`transitions.paired_section`: the four states, Tango's
interval, McNemar's mid-p, strata with Holm's adjustment, clusters, the items left unpaired by
reason) with its fields named after the variant: `a_base` (accuracy under the base condition),
`a_<variant>` and `delta_<variant>` = a_base − a_<variant> = p10 − p01 (p10: right only under
the base condition), positive when the model does worse under the variant.

Beside the swap: the swap against removal on the same items (`C+Q+I~swap` vs `C+Q`, `a_swap`,
`a_removed`, `delta_swap_removal` = a_swap − a_removed), which answers whether a wrong image is
worse than none. On items holding all three records, Δimg = Δswap + Δswap_removal: what the
right image adds over any image, and what any image adds over none.

The order variant's records are one per rotation of the options (`C+Q+I~order:1`, ...); its
paired side is CircularEval's verdict over them, with its own measures beside the table
(`order.order_pairs`, `order.order_measures`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..conditions import ORDER, VARIANTS, Condition, variant_label
from ..repeats import by_repeat, n_repeats, paired_repeats
from ..results import base_condition, condition_order, variant_of
from .clusters import cluster_map
from .order import kept_in_order, order_measures, order_pairs
from .pairing import Factor, factor_section
from .pairs import IndexedRun, Pair, Settings
from .transitions import paired_section

SWAP = "swap"
SWAP_REMOVAL = Factor("swap vs removal", "a_swap", "a_removed", "delta_swap_removal")
# a condition with its image and the same condition with the image removed
REMOVAL_OF = {Condition.CQI: Condition.CQ, Condition.CI: Condition.C}


def variant_factor(variant: str) -> Factor:
    """The factor of `variant`: the base condition first (`a_base`), the variant second."""
    return Factor(variant, "a_base", f"a_{variant}", f"delta_{variant}")


def held_variants(by_key: Mapping[tuple[str, str], Mapping]) -> list[tuple[str, str]]:
    """(variant, base condition) of every variant label the records hold, in the order of
    `VARIANTS`, each variant's bases in the order of conditions."""
    held = {(v, base_condition(c).value) for _, c in by_key if (v := variant_of(c)) is not None}
    rank = {v: i for i, v in enumerate(VARIANTS)}
    return sorted(held, key=lambda vb: (rank.get(vb[0], len(rank)), vb[0], condition_order(vb[1])))


def factor_names(held: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(name, variant, base) of each held (variant, base): the variant's name, or `<variant>
    (<base>)` where it is held under several base conditions; the audit's `variants` keys and
    the item browser's factor names."""
    several = {v for v, _ in held if sum(w == v for w, _ in held) > 1}
    return [(f"{v} ({b})" if v in several else v, v, b) for v, b in held]


def pair_labels(
    items: Mapping[str, Any], by_key: Mapping[tuple[str, str], Mapping], first: str, second: str
) -> tuple[list[Pair], dict[str, list[str]]]:
    """Pairs (record under `first`, record under `second`) of every item holding both, and the
    items holding one of them only, by reason ("no C+Q+I~swap record"). An item holding neither
    was not asked under the variant: it is in neither list. Excluded items are left out, as image
    removal leaves them out."""
    pairs: list[Pair] = []
    unpaired: dict[str, list[str]] = {}
    for item in items.values():
        if item.excluded:
            continue
        a, b = by_key.get((item.id, first)), by_key.get((item.id, second))
        if a is not None and b is not None:
            pairs.append(Pair(item, a, b))
        elif a is not None or b is not None:
            unpaired.setdefault(f"no {first if a is None else second} record", []).append(item.id)
    return pairs, unpaired


def variant_pairs(
    items: Mapping[str, Any], by_key: Mapping[tuple[str, str], Mapping], variant: str, base: str
) -> tuple[list[Pair], dict[str, list[str]]]:
    """The pairs of `variant`'s factor under `base` and the items left unpaired, by reason: the
    base record with the variant's (`pair_labels`), or with CircularEval's verdict over the
    rotations for `order` (`order.order_pairs`)."""
    if variant == ORDER:
        return order_pairs(items, by_key, base)
    return pair_labels(items, by_key, base, variant_label(base, variant))


def variant_sides(
    items: Mapping[str, Any], records: Sequence[Mapping], variant: str, base: str
) -> tuple[list[Mapping], list[Mapping]]:
    """Every repeat's records on the two sides of `variant`'s factor under `base`: (the base
    condition's, the variant's), CircularEval's verdict per item and repeat for `order`; what
    `repeats.paired_repeats` pools over a run's repeats."""
    if variant != ORDER:
        label = variant_label(base, variant)
        return [r for r in records if r["condition"] == base], [r for r in records if r["condition"] == label]
    first: list[Mapping] = []
    second: list[Mapping] = []
    for repeat in by_repeat(records).values():
        pairs, _ = order_pairs(items, {(r["item_id"], r["condition"]): r for r in repeat}, base)
        first += [p.with_image for p in pairs]
        second += [p.removed for p in pairs]
    return first, second


def variant_sections(run: IndexedRun, s: Settings) -> dict[str, dict]:
    """{variant: section} of every variant the run's records hold (empty without any): the
    variant's paired table against its base condition, naming both (`base`, `label`), and for
    the swap the swap against removal (`vs_removal`) where the run holds records of the
    condition with the image removed. A variant held under several base conditions is keyed
    `<variant> (<base>)` under each. A run asked --repeats K times pairs each item's last records
    in the table, and gives the Δ pooled over its repeats beside it (`over_repeats`)."""
    held = held_variants(run.by_key)
    if not held:
        return {}
    items = run.input.items
    clusters = cluster_map(run.input.benchmark, items.values(), s.cluster)
    source = run.input.source or run.input.model
    conditions = {c for _, c in run.by_key}
    repeated = n_repeats(run.input.records) > 1

    def section(paired: tuple[list[Pair], dict[str, list[str]]], factor: Factor) -> dict:
        table = paired_section(*paired, run.fields, s, run.forced_accuracy, source, clusters)
        return factor_section(table, factor)

    out: dict[str, dict] = {}
    for name, variant, base in factor_names(held):
        label = variant_label(base, variant)
        paired = variant_pairs(items, run.by_key, variant, base)
        entry = {"variant": variant, "base": base, "label": label, **section(paired, variant_factor(variant))}
        if repeated:  # the Δ pooled over the repeats (each item's mean), as the image's over repeats
            entry["over_repeats"] = paired_repeats(*variant_sides(items, run.input.records, variant, base))
        if variant == ORDER:
            asked = {i for i, c in run.by_key if c == base}
            entry |= order_measures(items, run.by_key, base)
            entry["kept_in_order"] = kept_in_order(run.input.benchmark, items, asked)
        removed = REMOVAL_OF.get(Condition(base))
        if variant == SWAP and removed is not None and removed.value in conditions:
            entry["vs_removal"] = {
                "first": label,
                "second": removed.value,
                **section(pair_labels(items, run.by_key, label, removed.value), SWAP_REMOVAL),
            }
        out[name] = entry
    return out

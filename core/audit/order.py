"""The option-order factor: an item's record under a condition (its options as printed) beside
its records under every rotation of its options (`C+Q+I~order:1`, ..., `order.rotated`).

The paired side of the factor is CircularEval's verdict (MMBench; VLMEvalKit's circular
evaluation): an item is right under `order` when it is right in the original order and in every
rotation. Its pair with the base record goes through the image-removal section's table like
every variant's (`delta_order` = a_base − a_order, the accuracy lost when an answer must survive
every order; it cannot be negative, since an item right in every order is right in the first).
Beside it, on the items holding all their rotations:

- `circular_accuracy`: the share right in every order, with its Wilson interval (the factor's
  `a_order` on the same items);
- `flip_rate`: the share of items, among those answered in every order, whose chosen option
  *text* is not the same in all of them: a model that reads the content keeps its answer when
  the options move, one that answers a slot does not;
- `accuracy_by_gold_slot`: accuracy over every order's record, by the slot (1-based) that
  holds the gold text, over items with one gold key (a model drawn to a position is right
  where the gold sits there);
- `kept_in_order`: the items the benchmark keeps in their order, by reason
  (`Benchmark.reorder_refusal`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import order, stats
from ..conditions import ORDER, rotation_label, variant_label
from ..items import Item
from .pairs import Pair

# The combined status of an item's records in every order: the first of these any of them holds
# (an unreadable reply anywhere makes the verdict unreadable, a refusal a refusal).
STATUS_RANK = ("parse_failure", "refusal", "error", "missing")


def circular_record(base: Mapping, rotations: list[Mapping], label: str) -> dict[str, Any]:
    """The record CircularEval's verdict stands for: the base record's strata, `correct` when
    every record (`base` and `rotations`) is, the worst status among them (`STATUS_RANK`)."""
    records = [base, *rotations]
    statuses = {str(r.get("status")) for r in records}
    status = next((s for s in STATUS_RANK if s in statuses), "answered")
    return {
        **{k: v for k, v in base.items() if k not in ("key", "response", "predicted", "usage", "reasoning")},
        "condition": label,
        "status": status,
        "correct": all(bool(r.get("correct")) for r in records),
        "rotations": [bool(r.get("correct")) for r in records],
    }


def rotation_sets(
    items: Mapping[str, Item], by_key: Mapping[tuple[str, str], Mapping], base: str
) -> tuple[dict[str, list[Mapping]], dict[str, list[str]]]:
    """({item id: its records in every order, the base record first} of each item holding all
    of them, {reason: item ids} of the items holding the base record or a rotation but not all):
    the items asked under `order` (those holding a rotation). Excluded items are left out."""
    complete: dict[str, list[Mapping]] = {}
    unpaired: dict[str, list[str]] = {}
    for item in items.values():
        if item.excluded or len(item.options) < 2:
            continue
        labels = [base, *(rotation_label(base, r) for r in range(1, len(item.options)))]
        records = [by_key.get((item.id, label)) for label in labels]
        if all(r is None for r in records[1:]):
            continue  # not asked under order
        missing = [label for label, r in zip(labels, records) if r is None]
        if missing:
            unpaired.setdefault(f"no {missing[0]} record", []).append(item.id)
        else:
            complete[item.id] = [r for r in records if r is not None]
    return complete, unpaired


def order_pairs(
    items: Mapping[str, Item], by_key: Mapping[tuple[str, str], Mapping], base: str
) -> tuple[list[Pair], dict[str, list[str]]]:
    """Pairs (base record, CircularEval's verdict as a record) of every item holding its records
    in every order, and the items holding only some of them, by reason: the `order` factor's
    pairs, as `variants.pair_labels` gives another variant's."""
    complete, unpaired = rotation_sets(items, by_key, base)
    label = variant_label(base, ORDER)
    pairs = [Pair(items[i], recs[0], circular_record(recs[0], recs[1:], label)) for i, recs in complete.items()]
    return pairs, unpaired


def rate(k: int, n: int) -> dict[str, Any]:
    """{n, k, value, ci} of a share `k` of `n`, with its Wilson interval."""
    ci = stats.wilson_ci(k, n) if n else None
    return {"n": n, "k": k, "value": k / n if n else None, "ci": list(ci) if ci is not None else None}


def order_measures(items: Mapping[str, Item], by_key: Mapping[tuple[str, str], Mapping], base: str) -> dict[str, Any]:
    """CircularEval's accuracy, the flip rate and accuracy by the gold's slot under `base` (see the
    module's docstring)."""
    complete, _ = rotation_sets(items, by_key, base)
    right = sum(all(bool(r.get("correct")) for r in recs) for recs in complete.values())
    answered = flips = 0
    slots: dict[int, list[int]] = {}
    for item_id, recs in complete.items():
        item = items[item_id]
        predicted = [r.get("predicted") for r in recs]
        if all(r.get("status") == "answered" and p is not None for r, p in zip(recs, predicted)):
            answered += 1
            chosen = {frozenset(order.original_keys(item, p or [], r)) for r, p in enumerate(predicted)}
            flips += len(chosen) > 1
        for r, rec in enumerate(recs):
            if (slot := order.gold_slot(item, r)) is not None:
                tally = slots.setdefault(slot, [0, 0])
                tally[0] += 1
                tally[1] += bool(rec.get("correct"))
    return {
        "circular_accuracy": {**rate(right, len(complete)), "ci_method": "wilson"},
        "flip_rate": {**rate(flips, answered), "ci_method": "wilson"},
        "accuracy_by_gold_slot": {str(s): rate(c, n) for s, (n, c) in sorted(slots.items())},
    }


def kept_in_order(benchmark: Any, items: Mapping[str, Item], asked: set[str]) -> dict[str, dict]:
    """{reason: {n, items}} of the items `benchmark` keeps in their order, among those with a
    record (`asked`), in the shape of a section's `unpaired`."""
    out: dict[str, list[str]] = {}
    if benchmark is None:
        return {}
    for item_id in sorted(asked):
        item = items.get(item_id)
        if item is None or item.excluded:
            continue
        why = benchmark.reorder_refusal(item)
        if why is not None:
            out.setdefault(why, []).append(item_id)
    return {why: {"n": len(ids), "items": ids} for why, ids in out.items()}


def share_text(rate_: Mapping[str, Any]) -> str:
    """`k of n (value %, 95 % CI low–high %)` of a `rate`."""
    if not rate_["n"]:
        return "no items"
    ci = rate_.get("ci")
    interval = f", 95 % CI {100 * ci[0]:.1f}–{100 * ci[1]:.1f} %" if ci else ""
    return f"{rate_['k']} of {rate_['n']} ({100 * rate_['value']:.1f} %{interval})"


def order_lines(entry: Mapping[str, Any]) -> list[str]:
    """The order factor's measures beside its table (an `order` entry of the audit's `variants`),
    as sentences the Markdown summary and the page print alike."""
    slots = ", ".join(f"slot {s}: {v['k']}/{v['n']}" for s, v in (entry.get("accuracy_by_gold_slot") or {}).items())
    kept = ", ".join(f"{v['n']} {why}" for why, v in (entry.get("kept_in_order") or {}).items())
    return [
        f"CircularEval (right in the printed order and in every rotation): {share_text(entry['circular_accuracy'])}.",
        f"Flip rate (items answered in every order whose chosen text changes): {share_text(entry['flip_rate'])}.",
        *([f"Accuracy by the slot holding the gold (one-key items, every order): {slots}."] if slots else []),
        *([f"Kept in their order: {kept}."] if kept else []),
    ]

"""The audit's sections of one run beside its image-removal table: the input-ablation
decomposition (C, C+Q, C+I, C+Q+I on the same items), refusal rates and Δimg under the three
refusal conventions with the forced-guess probe, the image-as-options positive control, the
selection-bias diagnostic, examples of each transition state and every condition's marginal
numbers.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from .. import metrics, stats
from ..conditions import ALL
from ..items import Item
from ..metrics import level_keys
from ..run.forced import FORCED_CONDITION
from ..scoring.normalize import read_json
from ..scoring.patterns import compile_patterns
from .pairs import (
    CONVENTIONS,
    REMOVED,
    STATES,
    WITH,
    IndexedRun,
    Pair,
    RunInput,
    Settings,
    group_by_level,
    has_paired_refusal,
    mean_or_none,
    state_of,
    wilson_interval,
)
from .transitions import paired_section

_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"


# ---------------------------------------------------------------- ablation


def _ablation_group(items: list[Item], conditions: Sequence[str], run: IndexedRun, s: Settings) -> dict:
    same = [it for it in items if all((it.id, c) in run.by_key for c in conditions)]
    chances = [c for it in same if (c := run.chance(it)) is not None]
    return {
        "n": len(same),
        "n_incomplete": len(items) - len(same),
        "baseline": mean_or_none(chances),
        "baseline_n": len(chances),
        "conditions": {c: _accuracy([run.by_key[(it.id, c)] for it in same]) for c in conditions},
    }


def _accuracy(records: list[Mapping]) -> dict:
    """{n, accuracy, ci, ci_method} of the records (already counted), from the metrics layer."""
    c = metrics.cell(records)
    return {"n": c.n, "accuracy": c.accuracy, "ci": list(c.ci) if c.ci else None, "ci_method": c.ci_method}


def ablation(run: IndexedRun, s: Settings) -> dict:
    """Accuracy under each condition on the same items: image items (every condition the run
    has), text-only control items and image items without their files (text conditions)."""
    present = {c for (_, c) in run.by_key}
    image_conditions = [c.value for c in ALL if c.value in present]
    text_conditions = [c.value for c in ALL if c.value in present and not c.with_image]
    live = [it for it in run.input.items.values() if not it.excluded]
    # an image item was shown its image where its files are here, or where it has a record of a
    # condition with the image (predictions imported from a source that showed it): the items
    # image removal pairs, counted alike here
    with_image = [c.value for c in ALL if c.with_image]
    seen = {
        it.id
        for it in live
        if it.has_images and (it.image_available or any((it.id, c) in run.by_key for c in with_image))
    }
    groups = {
        "image": ([it for it in live if it.id in seen], image_conditions),
        "text_only": ([it for it in live if not it.has_images], text_conditions),
        "image_unavailable": ([it for it in live if it.has_images and it.id not in seen], text_conditions),
    }
    out = {name: _ablation_group(items, conds, run, s) for name, (items, conds) in groups.items()}
    by: dict[str, dict] = {}
    for name, rec_field in run.fields.items():
        by[name] = {}
        for group, (items, conds) in groups.items():
            records = ((r, it) for it in items if (r := _any_record(run, it)) is not None)
            for key, members in group_by_level(records, rec_field).items():
                by[name].setdefault(key, {})[group] = _ablation_group(members, conds, run, s)
        by[name] = dict(sorted(by[name].items()))
    return {**out, "by": by}


def _any_record(run: IndexedRun, item: Item) -> Mapping | None:
    """The item's first record in the order of conditions: the one its strata are read from."""
    return next((rec for cond in ALL if (rec := run.by_key.get((item.id, cond.value))) is not None), None)


# ---------------------------------------------------------------- refusals


def refusal_rates(records: Sequence[Mapping]) -> dict:
    """Per condition label (forced guesses included, after their base): records, refusals and
    their rate."""
    refused = {
        key[0]: (len(rs), sum(r.get("status") == "refusal" for r in rs)) for key, rs in metrics.group(records).items()
    }
    return {c: {"n": n, "refusals": k, "rate": k / n} for c, (n, k) in refused.items()}


def forced_guess(records: Sequence[Mapping]) -> dict:
    """The forced-guess probe (JMed48k Appendix H, Table 15): accuracy "on the items that
    received a prediction after the forced-guess prompt" — forced guesses that gave no
    prediction (a refusal again, an unreadable reply, a failed request) are counted apart,
    outside the denominator. {"n", "n_predicted", "n_no_prediction", "correct", "accuracy"}."""
    forced = [r for r in records if r["condition"] == FORCED_CONDITION]
    predicted = [r for r in forced if r.get("status") == "answered"]
    correct = sum(bool(r.get("correct")) for r in predicted)
    return {
        "n": len(forced),
        "n_predicted": len(predicted),
        "n_no_prediction": len(forced) - len(predicted),
        "correct": correct,
        "accuracy": correct / len(predicted) if predicted else None,
    }


def refusal_section(run: IndexedRun, s: Settings) -> dict:
    """Refusal rates and Δimg under the three conventions: strict (a refusal is wrong),
    conditional (pairs with a refusal leave both denominators) and imputed (each refusal is
    credited with the model's forced-guess accuracy)."""
    fg = forced_guess(run.input.records)
    needs_forced = has_paired_refusal(run.pairs)
    rows: dict[str, dict | None] = {}
    notes: dict[str, str] = {}
    for conv in CONVENTIONS:
        if conv == "imputed" and needs_forced and run.forced_accuracy is None:
            rows[conv] = None
            notes[conv] = (
                f"refusals present but none of the {fg['n']} {FORCED_CONDITION} records received a prediction"
                if fg["n"]
                else f"refusals present but no {FORCED_CONDITION} records (run with --forced-guess)"
            )
            continue
        rows[conv] = paired_section(run.pairs, {}, {}, replace(s, refusals=conv), run.forced_accuracy)["overall"]
    paired_refusals = {
        c: sum(getattr(p, side).get("status") == "refusal" for p in run.pairs)
        for c, side in ((WITH, "with_image"), (REMOVED, "removed"))
    }
    # the rates sit under the image-removal table: over its items (every record of a paired item,
    # forced guesses included); a run without pairs has no such table, and its rates cover every record
    paired = {p.item.id for p in run.pairs}
    over = [r for r in run.input.records if r["item_id"] in paired] if paired else run.input.records
    return {
        "rates": refusal_rates(over),
        "rates_over": {
            "items": len(paired) if paired else len({r["item_id"] for r in over}),
            "scope": "paired" if paired else "all",
        },
        "paired_refusals": paired_refusals,
        "forced_guess": fg,
        "delta_img": rows,
        "notes": notes,
    }


# ---------------------------------------------------------------- image-as-options control


def stem_leaks(item: Item, patterns: Sequence = ()) -> bool:
    """Does the stem describe individual options? A label followed by a colon or by one of the
    languages' option cues (`LanguagePatterns.option_cues`: "A is…", "B shows…"), or a circled
    label followed directly by a word."""
    tokens = {o.label for o in item.options} | {o.key for o in item.options}
    tokens |= {o.text.strip() for o in item.options if 0 < len(o.text.strip()) <= 2}
    tokens = {t for t in tokens if t}
    if not tokens:
        return False
    alternation = "|".join(sorted((re.escape(t) for t in tokens), key=len, reverse=True))
    label = rf"(?<![A-Za-z0-9０-９Ａ-Ｚａ-ｚ])(?:{alternation})(?![A-Za-z0-9])"
    cue = compile_patterns(patterns).option_cue.pattern
    if re.search(rf"{label}(?:\s*[:：]|(?i:{cue}))", item.question):
        return True
    circled = "".join(t for t in tokens if t in _CIRCLED)
    return bool(circled) and re.search(rf"[{circled}][^\W\d_]", item.question) is not None


def io_control(run: IndexedRun, s: Settings) -> dict:
    """Image-as-options items: accuracy with and without the image against mean(1/k), with the
    score test their Wilson intervals invert; numeric items apart; the stem-leakage check."""
    by_key, patterns = run.by_key, run.input.patterns
    io_items = [it for it in run.input.items.values() if it.image_as_options and not it.excluded]
    fixed = [it for it in io_items if run.chance(it) is not None]
    numeric = [it for it in io_items if run.chance(it) is None]
    paired = [it for it in fixed if it.image_available and (it.id, WITH) in by_key and (it.id, REMOVED) in by_key]
    unavailable = [it for it in fixed if not it.image_available and (it.id, REMOVED) in by_key]
    baseline, unavailable_baseline = (  # (every one of these items has a chance: `fixed`)
        mean_or_none([c for it in its if (c := run.chance(it)) is not None]) for its in (paired, unavailable)
    )

    def correct(items: list[Item], cond: str) -> list[bool]:
        return [bool(by_key[(it.id, cond)].get("correct")) for it in items if (it.id, cond) in by_key]

    def binomial(got: list[bool], chance: float | None) -> float | None:
        return None if chance is None else stats.score_test(sum(got), len(got), chance)

    with_correct, removed_correct = correct(paired, WITH), correct(paired, REMOVED)
    unavailable_correct = correct(unavailable, REMOVED)
    leaks = [it.id for it in io_items if stem_leaks(it, patterns)]
    return {
        "n": len(paired),
        "k": {str(k): n for k, n in sorted(Counter(len(it.options) for it in paired).items())},
        "baseline": baseline,
        "a_with": mean_or_none(with_correct),
        "a_removed": mean_or_none(removed_correct),
        "ci_a_with": wilson_interval(with_correct),
        "ci_a_removed": wilson_interval(removed_correct),
        "ci_method": stats.WILSON,
        "test": stats.SCORE_TEST,
        "binomial_p": binomial(removed_correct, baseline),
        "binomial_p_with": binomial(with_correct, baseline),
        "image_unavailable": {
            "n": len(unavailable),
            "baseline": unavailable_baseline,
            "a_removed": mean_or_none(unavailable_correct),
            "ci_a_removed": wilson_interval(unavailable_correct),
            "ci_method": stats.WILSON,
            "test": stats.SCORE_TEST,
            "binomial_p": binomial(unavailable_correct, unavailable_baseline),
        },
        "numeric": {
            "n": len(numeric),
            **{
                cond: {"n": len(got), "accuracy": mean_or_none(got)}
                for cond, got in ((c, correct(numeric, c)) for c in (WITH, REMOVED))
            },
        },
        "leakage_hits": len(leaks),
        "leakage_items": leaks,
    }


# ---------------------------------------------------------------- selection bias


def claimed_labels(response: str | None, key: str = "answer") -> list[str] | None:
    """The labels a response's JSON answer (under `key`, the benchmark's answer key) names,
    whether valid or not, read by the scoring chain's own JSON reader."""
    if not response:
        return None
    found, value = read_json(response, key)
    if not found or value is None or isinstance(value, dict):
        return None
    values = value if isinstance(value, list) else [value]
    return [str(v).strip() for v in values if not isinstance(v, (list, dict)) and str(v).strip()]


def _outside(record: Mapping, item: Item, key: str = "answer") -> bool:
    if record.get("predicted") is not None or record.get("status") != "parse_failure":
        return False
    claimed = claimed_labels(record.get("response"), key)
    if not claimed:
        return False
    valid = {t.casefold() for o in item.options for t in (o.key, o.label, o.text.strip())}
    return any(c.casefold() not in valid for c in claimed)


def selection_bias(run: IndexedRun) -> dict:
    """Per condition: predicted vs gold label shares over single-key answers to single-key
    items, labels over-selected (predicted minus gold share, a fraction), and the share of
    responses that name labels outside the item's list."""
    out: dict[str, dict] = {}
    bench = run.input.benchmark
    key = bench.answer_conventions().answer_key if bench is not None else "answer"
    for (cond,), records in metrics.group(run.by_key.values()).items():
        choice = [(r, it) for r in records if (it := run.input.items[r["item_id"]]).options and it.gold is not None]
        single = [  # (record, its item's gold)
            (r, g)
            for r, it in choice
            if (g := it.gold) is not None
            and g.format == "single"
            and (p := r.get("predicted")) is not None
            and len(p) == 1
        ]
        n = len(single)
        predicted = Counter((r.get("predicted") or [""])[0] for r, _ in single)
        gold = Counter(g.alternatives[0][0] for _, g in single)
        labels = sorted(set(predicted) | set(gold))
        diff = {lab: (predicted[lab] - gold[lab]) / n for lab in labels} if n else {}
        n_outside = sum(_outside(r, it, key) for r, it in choice)
        out[cond] = {
            "n": n,
            "predicted": {lab: predicted[lab] / n for lab in labels} if n else {},
            "gold": {lab: gold[lab] / n for lab in labels} if n else {},
            "difference": diff,
            "over_selected": [
                {"label": lab, "difference": d} for lab, d in sorted(diff.items(), key=lambda kv: -kv[1]) if d > 0
            ],
            "n_records": len(choice),
            "n_outside": n_outside,
            "outside_share": n_outside / len(choice) if choice else None,
        }
    return out


# ---------------------------------------------------------------- examples


def examples(run: IndexedRun, s: Settings) -> dict[str, list[dict]]:
    """Up to `s.examples` seeded picks per state (strict scoring), in item order."""
    rng = random.Random(s.seed)
    by_state = {state: [p for p in run.pairs if state_of(p) == state] for state in STATES}
    order = {item_id: i for i, item_id in enumerate(run.input.items)}
    out = {}
    for state, pairs in by_state.items():
        picked = rng.sample(pairs, min(s.examples, len(pairs)))
        out[state] = [_example(p, run) for p in sorted(picked, key=lambda p: order[p.item.id])]
    return out


def _example(pair: Pair, run: IndexedRun) -> dict:
    item = pair.item

    def side(rec: Mapping) -> dict:
        return {
            "response": rec.get("response"),
            "predicted": rec.get("predicted"),
            "status": rec.get("status"),
            "correct": bool(rec.get("correct")),
        }

    return {
        "item_id": item.id,
        "question": item.question,
        "options": [{"label": o.label, "text": o.text} for o in item.options],
        "gold": [list(alt) for alt in (item.gold.alternatives if item.gold is not None else ())],
        "images": [str(im.path) for im in item.usable_images],
        "strata": {name: level_keys(pair.with_image.get(f)) for name, f in run.fields.items()},
        "with_image": side(pair.with_image),
        "removed": side(pair.removed),
    }


# ---------------------------------------------------------------- marginals


def marginals(run: RunInput, fields: Mapping[str, str]) -> dict:
    """Each condition's numbers over all of the run's records, overall and by each stratum, as
    the metrics layer computes them for `report` and `compare`."""
    by: dict[str, dict] = {}
    for name, rec_field in fields.items():
        levels: dict[str, dict] = {}
        for (cond, level), rs in metrics.group(run.records, [rec_field]).items():
            levels.setdefault(level, {})[cond] = metrics.cell(rs, run.benchmark).as_dict()
        by[name] = dict(sorted(levels.items()))
    return {"overall": metrics.by_condition(run.records, run.benchmark), "by": by}

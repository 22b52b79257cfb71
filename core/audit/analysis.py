"""The visual-reliance audit: pure functions of a run's records and items.

Image removal pairs each image item's `C+Q+I` record with its `C+Q` record. The four
transition states are p11 (correct in both), p10 (correct only with the image), p01 (correct
only without it) and p00 (wrong in both); a_with = p11 + p10, a_removed = p11 + p01 and
Δimg = p10 − p01. Alongside: the input-ablation decomposition (C, C+Q, C+I, C+Q+I on the same
items), three refusal conventions, the image-as-options positive control, the
selection-bias diagnostic and examples of each state. No model is called.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from .. import bootstrap, contrasts, metrics, stats
from ..conditions import ALL, IMAGE_REMOVAL
from ..items import DataError, Item
from ..metrics import level_keys, resolve_fields
from ..repeats import item_mean_pairs, n_repeats, paired_means_test
from ..run.forced import FORCED_CONDITION
from ..scoring.normalize import read_json
from ..scoring.patterns import compile_patterns
from ..scoring.score import chance_of_correct

WITH, REMOVED = (c.value for c in IMAGE_REMOVAL)
STATES = ("p11", "p10", "p01", "p00")
CONVENTIONS = ("strict", "conditional", "imputed")
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"


@dataclass(frozen=True)
class RunInput:
    """One model's run: its records, the items they name, the language patterns used to
    score them (they decide ordering items' chance and which stems describe options) and the
    stratum aliases its benchmark declares."""

    model: str
    records: list[dict]
    items: dict[str, Item]
    source: str = ""
    patterns: tuple = ()
    stratum_aliases: Mapping[str, str] = field(default_factory=dict)
    # whose rules decide which records count (`Benchmark.counts`) and how answers are keyed
    benchmark: Any = None


@dataclass(frozen=True)
class Settings:
    by: tuple[str, ...] = ()
    refusals: str = "strict"
    resamples: int = bootstrap.RESAMPLES
    seed: int = 0
    examples: int = 3
    cluster: str | None = None  # a cluster level the benchmark declares: cluster-bootstrap intervals beside

    def __post_init__(self) -> None:
        if self.refusals not in CONVENTIONS:
            raise ValueError(f"unknown refusal convention {self.refusals!r}; choose {', '.join(CONVENTIONS)}")


@dataclass(frozen=True)
class Pair:
    item: Item
    with_image: dict
    removed: dict


@dataclass
class _Run:
    """A run indexed for the audit."""

    input: RunInput
    by_key: dict[tuple[str, str], dict]
    fields: dict[str, str]  # requested --by name -> record field
    pairs: list[Pair] = field(default_factory=list)
    unpaired: dict[str, list[str]] = field(default_factory=dict)
    forced_accuracy: float | None = None
    chances: dict[str, float | None] = field(default_factory=dict)  # by item id, computed once

    def chance(self, item: Item) -> float | None:
        """The chance of a random answer being correct on `item` under the run's language patterns
        (they decide ordering items' chance); None without a gold answer or for gold formats outside
        choice scoring, which have no fixed chance."""
        if item.id not in self.chances:
            try:
                self.chances[item.id] = chance_of_correct(item, self.input.patterns) if item.gold is not None else None
            except ValueError:
                self.chances[item.id] = None
        return self.chances[item.id]


# ---------------------------------------------------------------- indexing and strata


def _index(run: RunInput) -> dict[tuple[str, str], dict]:
    out = {}
    for rec in run.records:
        if rec.get("item_id") not in run.items:
            raise DataError(
                "record names an item that is not in the data",
                file=Path(run.source) / "records.jsonl" if run.source else None,
                record=str(rec.get("item_id")),
            )
        out[(rec["item_id"], rec["condition"])] = rec
    return out


def _group(entries: Iterable[tuple[dict, Any]], field_name: str) -> dict[str, list]:
    """{stratum key: [payload, ...]} in sorted key order."""
    out: dict[str, list] = {}
    for record, payload in entries:
        for key in dict.fromkeys(level_keys(record.get(field_name))):
            out.setdefault(key, []).append(payload)
    return dict(sorted(out.items()))


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _ci(values: Sequence[float], s: Settings):
    """The Wilson interval of a proportion of per-item credits (expected
    counts where refusals are imputed)."""
    ci = stats.binomial_ci(float(np.sum(values)), len(values))
    return list(ci) if ci is not None else None


# ---------------------------------------------------------------- image-removal pairs


def pair_image_removal(run: RunInput, by_key: dict | None = None) -> tuple[list[Pair], dict[str, list[str]]]:
    """Pairs (`C+Q+I`, `C+Q`) for every image item, and the image items left unpaired, by
    reason. An item whose images are not available here is paired only when it has both records
    (predictions imported from a source that showed the image)."""
    by_key = _index(run) if by_key is None else by_key
    pairs, unpaired = [], {}
    for item in run.items.values():
        if item.excluded or not item.has_images:
            continue
        with_rec, removed_rec = by_key.get((item.id, WITH)), by_key.get((item.id, REMOVED))
        if with_rec is not None and removed_rec is not None:  # (an imported run's source saw the image)
            pairs.append(Pair(item, with_rec, removed_rec))
            continue
        if not item.image_available:
            reason = "image not available"
        elif with_rec is None:
            reason = f"no {WITH} record"
        else:
            reason = f"no {REMOVED} record"
        unpaired.setdefault(reason, []).append(item.id)
    return pairs, unpaired


def _correctness(record: dict, convention: str, forced_accuracy: float | None) -> float | None:
    """A record's credit under a refusal convention; None drops it (conditional)."""
    if record.get("status") == "refusal":
        if convention == "conditional":
            return None
        if convention == "imputed":
            return forced_accuracy
    return 1.0 if record.get("correct") else 0.0


def pair_values(
    pairs: list[Pair], convention: str = "strict", forced_accuracy: float | None = None
) -> list[tuple[Pair, float, float]]:
    """(pair, credit with image, credit image removed); conditional drops a pair whenever
    either side was refused."""
    credits = [
        (
            p,
            _correctness(p.with_image, convention, forced_accuracy),
            _correctness(p.removed, convention, forced_accuracy),
        )
        for p in pairs
    ]
    return [(p, cw, cr) for p, cw, cr in credits if cw is not None and cr is not None]


def agreement_note(ci: Sequence[float] | None, p: float | None, level: float = stats.LEVEL) -> str | None:
    """A note where an interval and its row's test fall on either side of 1 − level: Tango's
    interval inverts the asymptotic score test (McNemar's z at Δ = 0), the row's test is the
    mid-p one, and the two differ in a few tables near p = 0.05 (docs/audit.md, "Statistics")."""
    if ci is None or p is None:
        return None
    excludes, rejects = ci[0] > 0 or ci[1] < 0, p < 1 - level
    if excludes == rejects:
        return None
    return (
        f"the interval {'excludes' if excludes else 'includes'} 0 while the mid-p test gives p = {p:.3g}: "
        "Tango's interval inverts the asymptotic McNemar test, which differs from the mid-p one near 0.05 "
        "(docs/audit.md)"
    )


def mcnemar_fields(n10: int, n01: int, ci: Sequence[float] | None) -> dict:
    """A paired row's test: McNemar's mid-p (`mcnemar_p`, the test, with its bound and log10),
    the exact conditional p beside it (`mcnemar_exact_p`) and a note where the interval and the
    test disagree (`agreement_note`)."""
    t = stats.mcnemar(n10, n01)
    return {
        "test": t["test"],
        "mcnemar_p": t["p"],
        "mcnemar_p_bound": t["p_bound"],
        "mcnemar_log10_p": t["log10_p"],
        "mcnemar_exact_p": t["exact_p"],
        "mcnemar_exact_p_bound": t["exact_p_bound"],
        "note": agreement_note(ci, t["p"]),
    }


DESCRIPTIVE = "descriptive"


def transition_row(
    values: Sequence[tuple[float, float]], s: Settings, *, tested: bool = True, clusters: Sequence[str] | None = None
) -> dict:
    """The four states as fractions of the pool, accuracies, Δimg, CIs and McNemar's p.
    Δimg's interval is Tango's score interval for paired proportions; the accuracies' are
    Wilson's; the test is McNemar's mid-p, with the exact conditional p beside it.
    Credits may be fractional (imputed refusals): states are then expected fractions, the
    intervals use expected counts and McNemar's test, which needs whole pairs, is omitted. A row
    not `tested` (a stratum of fewer than `stats.MIN_TESTED` pairs) is descriptive: no test, and
    a note says so. Given `clusters` (one id per pair), Δimg also gets a cluster-bootstrap
    interval (`ci_cluster`) beside the item-level one."""
    n = len(values)
    if n == 0:
        return {
            "n": 0,
            **{
                k: None
                for k in (
                    *STATES,
                    "a_with",
                    "a_removed",
                    "delta_img",
                    "ci",
                    "ci_a_with",
                    "ci_a_removed",
                    "mcnemar_p",
                    "mcnemar_exact_p",
                    "test",
                    "note",
                )
            },
            "ci_method": stats.TANGO,
            "ci_a_method": stats.WILSON,
        }
    cw, cr = np.array(values, dtype=float).T
    states = {"p11": cw * cr, "p10": cw * (1 - cr), "p01": (1 - cw) * cr, "p00": (1 - cw) * (1 - cr)}
    binary = bool(np.all(np.isin(cw, (0.0, 1.0))) and np.all(np.isin(cr, (0.0, 1.0))))
    counts = {k: float(v.sum()) for k, v in states.items()}
    ci = list(stats.paired_difference_ci(counts["p10"], counts["p01"], n))
    row = {
        "n": n,
        **{k: counts[k] / n for k in STATES},
        "a_with": float(cw.mean()),
        "a_removed": float(cr.mean()),
        "delta_img": counts["p10"] / n - counts["p01"] / n,
        "ci": ci,
        "ci_method": stats.TANGO,
        "ci_a_method": stats.WILSON,
        "ci_a_with": _ci(cw, s),
        "ci_a_removed": _ci(cr, s),
        "mcnemar_p": None,
        "mcnemar_exact_p": None,
        "test": None,
        "note": None,
    }
    if binary and tested:
        row.update(mcnemar_fields(int(counts["p10"]), int(counts["p01"]), ci))
    elif binary:
        row["note"] = f"{DESCRIPTIVE}: {n} of the {stats.MIN_TESTED} pairs a test needs here: no test"
    if binary:
        row["counts"] = {k.replace("p", "n", 1): int(counts[k]) for k in STATES}
    if clusters is not None:
        boot = bootstrap.cluster_bootstrap(cw - cr, np.ones(n), clusters, resamples=s.resamples, seed=s.seed)
        row.update(
            ci_cluster=boot["ci"],
            ci_cluster_method=boot["ci_method"],
            n_clusters=boot["n_clusters"],
            cluster_level=s.cluster,
            cluster_note=boot["note"],
        )
    return row


def paired_section(
    pairs: list[Pair],
    unpaired: Mapping[str, list[str]],
    fields: Mapping[str, str],
    s: Settings,
    forced_accuracy: float | None = None,
    source: str = "",
    clusters: Mapping[str, str] | None = None,
) -> dict:
    """The transition table of `pairs` under `s.refusals`, overall and by each stratum of `fields`
    (the first record's level), with the items left `unpaired` by reason: the image-removal
    section of the audit, the language pairing's and `compare`'s Δimg. The overall row is the
    pre-specified primary Δ (`role` primary, tested at any n); the strata are secondary, and a
    stratum of fewer than `stats.MIN_TESTED` pairs is descriptive (no test). Given `clusters`
    ({item id: cluster id}, `cluster_map`), each row gains its cluster-bootstrap interval."""
    if s.refusals == "imputed" and forced_accuracy is None and _has_paired_refusal(pairs):
        raise ValueError(
            f"{source}: --refusals imputed needs forced-guess records ({FORCED_CONDITION}); "
            "run with --forced-guess first"
        )
    values = pair_values(pairs, s.refusals, forced_accuracy)

    def row(entries: Sequence[tuple[tuple[float, float], bool, str]], role: str) -> dict:  # (credits, unreadable, id)
        tested = role == PRIMARY or len(entries) >= stats.MIN_TESTED
        ids = [clusters.get(i, i) for _, _, i in entries] if clusters is not None else None
        return {
            "role": role,
            **transition_row([v for v, _, _ in entries], s, tested=tested, clusters=ids),
            **metrics.delta_warning([f for _, f, _ in entries]),
        }

    entries = [
        (p.with_image, ((cw, cr), metrics.unreadable(p.with_image, p.removed), p.item.id)) for p, cw, cr in values
    ]
    return {
        "convention": s.refusals,
        "overall": row([e for _, e in entries], PRIMARY),
        "by": {
            name: with_holm({key: row(rows, SECONDARY) for key, rows in _group(entries, rec_field).items()})
            for name, rec_field in fields.items()
        },
        "unpaired": {reason: {"n": len(ids), "items": ids} for reason, ids in unpaired.items()},
    }


PRIMARY, SECONDARY = "primary", "secondary"


def _levels(benchmark: Any) -> tuple[str, ...]:
    return tuple(getattr(benchmark, "cluster_levels", ()) or ())


NO_CLUSTER = "none"  # `--cluster none`: item-level intervals only, whatever the benchmarks declare


def default_cluster(benchmarks: Iterable[Any], cluster: str | None) -> str | None:
    """The cluster level of a document's cluster intervals: `cluster` as given, None for
    `NO_CLUSTER`, and when not given the first level (the finest) of the first benchmark that
    declares any. Linked questions and exam blocks are not independent draws (item-level
    intervals cover 0.87–0.89 where linked questions share a case: docs/audit.md), so a benchmark
    that says which items are linked gets the cluster interval unless it is switched off."""
    if cluster == NO_CLUSTER:
        return None
    if cluster is not None:
        return cluster
    return next((levels[0] for b in benchmarks if (levels := _levels(b))), None)


def cluster_notes(benchmarks: Iterable[Any], level: str | None) -> list[str]:
    """Notes for the benchmarks that do not declare cluster `level` (their outputs keep
    item-level intervals only); a ValueError naming the levels there are when none declares it."""
    if level is None:
        return []
    benchmarks = list({getattr(b, "name", str(i)): b for i, b in enumerate(benchmarks)}.values())
    missing = [b for b in benchmarks if level not in _levels(b)]
    if len(missing) == len(benchmarks):
        declared = sorted({lv for b in benchmarks for lv in _levels(b)})
        raise ValueError(
            f"no benchmark of these runs declares the cluster level {level!r}; "
            + (f"levels: {', '.join(declared)}" if declared else "they declare no clusters")
        )
    return [
        f"{getattr(b, 'name', 'a benchmark')} declares no cluster level {level!r}: item-level intervals only"
        for b in missing
    ]


def cluster_map(benchmark: Any, items: Iterable[Item], level: str | None) -> dict[str, str] | None:
    """{item id: its cluster at `level`} under the benchmark's declared clusters
    (`Benchmark.clusters`); an item outside every cluster of that level is a cluster of its own.
    None without a level, or for a benchmark that does not declare it (`cluster_notes` says so)."""
    if level is None or level not in _levels(benchmark):
        return None
    items = list(items)
    declared = benchmark.clusters(items)
    return {it.id: str(declared.get(it.id, {}).get(level) or it.id) for it in items}


def flat_row(section: dict, keys: Sequence[str]) -> dict:
    """A paired section's overall row as one table row (`compare`'s Δimg and Δlang): n, `keys`,
    the interval's bounds and method, McNemar's p and the count of items left unpaired."""
    row = section["overall"]
    ci = row.get("ci") or (None, None)
    cluster = row.get("ci_cluster") or (None, None)
    return {
        "n": row["n"],
        **{k: row[k] for k in keys},
        "ci_low": ci[0],
        "ci_high": ci[1],
        "ci_method": row["ci_method"],
        "test": row.get("test"),
        "mcnemar_p": row["mcnemar_p"],
        "mcnemar_p_bound": row.get("mcnemar_p_bound"),
        "mcnemar_exact_p": row.get("mcnemar_exact_p"),
        **(
            {
                "cluster_ci_low": cluster[0],
                "cluster_ci_high": cluster[1],
                "cluster_ci_method": row["ci_cluster_method"],
                "cluster_level": row["cluster_level"],
                "n_clusters": row["n_clusters"],
            }
            if "ci_cluster" in row
            else {}
        ),
        "n_unpaired": sum(u["n"] for u in section["unpaired"].values()),
        "unreadable_pairs": row["unreadable_pairs"],
        "warning": row["warning"],
        "note": row.get("note"),
    }


BETWEEN_MODELS_TEXT = (
    "p: each pair's own test; Holm p: adjusted by Holm's method over the model pairs that compare "
    "the same quantity (one benchmark's accuracy in one condition, or its Δimg), one family of tests "
    "(docs/audit.md)."
)


def between_models_holm(rows: list[dict], families: Sequence[Any]) -> list[dict]:
    """Tests between models are one family per quantity compared (`families`, one per row: the
    benchmark and the measure): with many models, some pairs cross p < 0.05 by chance alone. Each
    row gains `p_holm`, its `p` after Holm's step-down adjustment over its family (Holm 1979); a
    row without a test stays None and is not counted."""
    groups: dict[Any, list[dict]] = {}
    for row, family in zip(rows, families):
        groups.setdefault(family, []).append(row)
    for group in groups.values():
        for row, p in zip(group, stats.holm([r.get("p") for r in group])):
            row["p_holm"] = p
    return rows


def with_holm(rows: dict[str, dict]) -> dict[str, dict]:
    """The levels of one stratum are one family of tests: each row gains `mcnemar_p_holm`,
    its McNemar p-value after Holm's step-down adjustment over that family."""
    for row, p in zip(rows.values(), stats.holm([r["mcnemar_p"] for r in rows.values()])):
        row["mcnemar_p_holm"] = p
    return rows


def _has_paired_refusal(pairs: list[Pair]) -> bool:
    return any(r.get("status") == "refusal" for p in pairs for r in (p.with_image, p.removed))


# ---------------------------------------------------------------- ablation


def _ablation_group(items: list[Item], conditions: list[str], run: _Run, s: Settings) -> dict:
    same = [it for it in items if all((it.id, c) in run.by_key for c in conditions)]
    chances = [c for it in same if (c := run.chance(it)) is not None]
    return {
        "n": len(same),
        "n_incomplete": len(items) - len(same),
        "baseline": _mean(chances),
        "baseline_n": len(chances),
        "conditions": {c: _accuracy([run.by_key[(it.id, c)] for it in same]) for c in conditions},
    }


def _accuracy(records: list[dict]) -> dict:
    """{n, accuracy, ci, ci_method} of the records (already counted), from the metrics layer."""
    c = metrics.cell(records)
    return {"n": c.n, "accuracy": c.accuracy, "ci": list(c.ci) if c.ci else None, "ci_method": c.ci_method}


def ablation(run: _Run, s: Settings) -> dict:
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
            for key, members in _group(records, rec_field).items():
                by[name].setdefault(key, {})[group] = _ablation_group(members, conds, run, s)
        by[name] = dict(sorted(by[name].items()))
    return {**out, "by": by}


def _any_record(run: _Run, item: Item) -> dict | None:
    """The item's first record in the order of conditions: the one its strata are read from."""
    return next((rec for cond in ALL if (rec := run.by_key.get((item.id, cond.value))) is not None), None)


# ---------------------------------------------------------------- refusals


def refusal_rates(records: list[dict]) -> dict:
    """Per condition label (forced guesses included, after their base): records, refusals and
    their rate."""
    refused = {
        key[0]: (len(rs), sum(r.get("status") == "refusal" for r in rs)) for key, rs in metrics.group(records).items()
    }
    return {c: {"n": n, "refusals": k, "rate": k / n} for c, (n, k) in refused.items()}


def forced_guess(records: list[dict]) -> dict:
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


def refusal_section(run: _Run, s: Settings) -> dict:
    """Refusal rates and Δimg under the three conventions: strict (a refusal is wrong),
    conditional (pairs with a refusal leave both denominators) and imputed (each refusal is
    credited with the model's forced-guess accuracy)."""
    fg = forced_guess(run.input.records)
    needs_forced = _has_paired_refusal(run.pairs)
    rows, notes = {}, {}
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


def io_control(run: _Run, s: Settings) -> dict:
    """Image-as-options items: accuracy with and without the image against mean(1/k), with the
    score test their Wilson intervals invert; numeric items apart; the stem-leakage check."""
    by_key, patterns = run.by_key, run.input.patterns
    io_items = [it for it in run.input.items.values() if it.image_as_options and not it.excluded]
    fixed = [it for it in io_items if run.chance(it) is not None]
    numeric = [it for it in io_items if run.chance(it) is None]
    paired = [it for it in fixed if it.image_available and (it.id, WITH) in by_key and (it.id, REMOVED) in by_key]
    unavailable = [it for it in fixed if not it.image_available and (it.id, REMOVED) in by_key]
    baseline, unavailable_baseline = (_mean([run.chance(it) for it in its]) for its in (paired, unavailable))

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
        "a_with": _mean(with_correct),
        "a_removed": _mean(removed_correct),
        "ci_a_with": _ci(with_correct, s),
        "ci_a_removed": _ci(removed_correct, s),
        "ci_method": stats.WILSON,
        "test": stats.SCORE_TEST,
        "binomial_p": binomial(removed_correct, baseline),
        "binomial_p_with": binomial(with_correct, baseline),
        "image_unavailable": {
            "n": len(unavailable),
            "baseline": unavailable_baseline,
            "a_removed": _mean(unavailable_correct),
            "ci_a_removed": _ci(unavailable_correct, s),
            "ci_method": stats.WILSON,
            "test": stats.SCORE_TEST,
            "binomial_p": binomial(unavailable_correct, unavailable_baseline),
        },
        "numeric": {
            "n": len(numeric),
            **{
                cond: {"n": len(got), "accuracy": _mean(got)}
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


def _outside(record: dict, item: Item, key: str = "answer") -> bool:
    if record.get("predicted") is not None or record.get("status") != "parse_failure":
        return False
    claimed = claimed_labels(record.get("response"), key)
    if not claimed:
        return False
    valid = {t.casefold() for o in item.options for t in (o.key, o.label, o.text.strip())}
    return any(c.casefold() not in valid for c in claimed)


def selection_bias(run: _Run) -> dict:
    """Per condition: predicted vs gold label shares over single-key answers to single-key
    items, labels over-selected (predicted minus gold share, a fraction), and the share of
    responses that name labels outside the item's list."""
    out = {}
    bench = run.input.benchmark
    key = bench.answer_conventions().answer_key if bench is not None else "answer"
    for (cond,), records in metrics.group(run.by_key.values()).items():
        choice = [(r, it) for r in records if (it := run.input.items[r["item_id"]]).options and it.gold is not None]
        single = [
            (r, it)
            for r, it in choice
            if it.gold.format == "single" and r.get("predicted") is not None and len(r["predicted"]) == 1
        ]
        n = len(single)
        predicted = Counter(r["predicted"][0] for r, _ in single)
        gold = Counter(it.gold.alternatives[0][0] for _, it in single)
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


def state_of(pair: Pair) -> str:
    w, r = bool(pair.with_image.get("correct")), bool(pair.removed.get("correct"))
    return f"p{int(w)}{int(r)}"


def examples(run: _Run, s: Settings) -> dict[str, list[dict]]:
    """Up to `s.examples` seeded picks per state (strict scoring), in item order."""
    rng = random.Random(s.seed)
    by_state = {state: [p for p in run.pairs if state_of(p) == state] for state in STATES}
    order = {item_id: i for i, item_id in enumerate(run.input.items)}
    out = {}
    for state, pairs in by_state.items():
        picked = rng.sample(pairs, min(s.examples, len(pairs)))
        out[state] = [_example(p, run) for p in sorted(picked, key=lambda p: order[p.item.id])]
    return out


def _example(pair: Pair, run: _Run) -> dict:
    item = pair.item

    def side(rec: dict) -> dict:
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
        "gold": [list(alt) for alt in item.gold.alternatives],
        "images": [str(im.path) for im in item.usable_images],
        "strata": {name: level_keys(pair.with_image.get(f)) for name, f in run.fields.items()},
        "with_image": side(pair.with_image),
        "removed": side(pair.removed),
    }


# ---------------------------------------------------------------- one run, several runs


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


def audit_run(run: RunInput, settings: Settings = Settings()) -> dict:
    """The audit document of one model's run: on the records that count under the benchmark's
    rules (`Benchmark.counts`), with every condition's marginal numbers beside."""
    counted, _ = metrics.counted(run.records, run.benchmark)
    fields = resolve_fields(settings.by, run.records, run.source, run.stratum_aliases)
    margins = marginals(run, fields)
    run = replace(run, records=counted)
    by_key = _index(run)
    prepared = _Run(run, by_key, fields, *pair_image_removal(run, by_key), forced_guess(run.records)["accuracy"])
    clusters = cluster_map(run.benchmark, run.items.values(), settings.cluster)
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
    }


def parse_cohorts(data: Any, source: str | Path = "cohort file") -> dict[str, str]:
    """Model → cohort from `{cohort: [model, ...]}` or `{model: cohort}`."""
    if not isinstance(data, dict) or not data:
        raise DataError("expected a mapping {cohort: [model, ...]} or {model: cohort}", file=source)
    out: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, list) and all(isinstance(m, str) for m in value):
            for model in value:
                if model in out and out[model] != str(key):
                    raise DataError(
                        f"model {model!r} is in two cohorts ({out[model]}, {key})", file=source, record=str(key)
                    )
                out[model] = str(key)
        elif isinstance(value, str):
            out[str(key)] = value
        else:
            raise DataError(
                f"cohort entry {key!r} must be a list of model names or a cohort name", file=source, record=str(key)
            )
    return out


_MEANED = (*STATES, "a_with", "a_removed", "delta_img")


def _mean_row(rows: list[dict]) -> dict:
    rows = [r for r in rows if r and r.get("n")]
    return {"n_models": len(rows), **{k: _mean([r[k] for r in rows]) for k in _MEANED}}


def cohort_rows(models: dict[str, dict], cohorts: dict[str, str]) -> dict:
    """Each cohort's rows are the means of its member models' rows, with the member count."""
    members: dict[str, list[str]] = {}
    for name, doc in models.items():
        cohort = cohorts.get(doc["model"], cohorts.get(name))
        if cohort is not None:
            members.setdefault(cohort, []).append(name)
    out = {}
    for cohort, names in sorted(members.items()):
        docs = [models[n]["paired"] for n in names]
        # each stratum any member has, each of its levels any member has (sorted)
        levels = {f: sorted({k for d in docs for k in d["by"].get(f, {})}) for d in docs for f in d["by"]}
        by = {f: {k: _mean_row([d["by"].get(f, {}).get(k) for d in docs]) for k in keys} for f, keys in levels.items()}
        out[cohort] = {
            "models": names,
            "n_models": len(names),
            "paired": {"overall": _mean_row([d["overall"] for d in docs]), "by": by},
        }
    return out


def experiment_labels(
    experiments: Sequence[tuple[str, str, str, str]], parts: Sequence[str] | None = None
) -> list[str]:
    """The one label of each experiment (benchmark, model name, language of its items, its run's
    path) in every output that names experiments (audit, compare, the item browser): among the
    experiments of one benchmark, the model's name where no other has it; else the model's name
    with what tells its experiments apart in brackets, the part of the benchmark they hold
    (`parts`, one per experiment: "brazil" for a run of Brazil's questions) and their language:
    `model [brazil, pt]`, `model [brazil, en]`, `model [ja]`; `model@folder` (`model@path` where
    even the folder names repeat) only where these do not tell them apart."""
    parts = list(parts) if parts is not None else [""] * len(experiments)
    of_model: dict[tuple[str, str], list[int]] = {}
    for i, (bench, model, _, _) in enumerate(experiments):
        of_model.setdefault((bench, model), []).append(i)

    def qualified(i: int) -> str:
        bench, model, _, _ = experiments[i]
        group = of_model[(bench, model)]
        if len(group) == 1:
            return model
        differ = [
            values
            for values in ([parts[j] for j in group], [experiments[j][2] for j in group])
            if len(set(values)) > 1 and all(values)
        ]
        return f"{model} [{', '.join(values[group.index(i)] for values in differ)}]" if differ else folder(i)

    def folder(i: int) -> str:
        return f"{experiments[i][1]}@{Path(experiments[i][3]).name or i}"

    def path(i: int) -> str:
        return f"{experiments[i][1]}@{experiments[i][3] or i}"

    labels = [qualified(i) for i in range(len(experiments))]
    for fallback in (folder, path):  # a label two experiments of a benchmark share: its folder, then its path
        seen = Counter((e[0], label) for e, label in zip(experiments, labels))
        labels = [fallback(i) if seen[(experiments[i][0], label)] > 1 else label for i, label in enumerate(labels)]
    return labels


def scope(runs: Sequence[Any]) -> dict[str, str]:
    """The benchmark's default strata on which every record of the experiment (saved runs, or
    `RunInput`s) has one and the same level ({"country": "japan"} for a run of Japan's
    questions): what tells two experiments of one model and language on different parts of a
    benchmark apart."""
    bench = runs[0].benchmark
    if bench is None:
        return {}
    records = [r for run in runs for r in run.records]
    fields, _ = metrics.held_fields(bench.default_strata, records, bench.stratum_aliases)
    out = {}
    for name, field in fields.items():
        level = str(records[0].get(field)) if records else None
        if records and all(str(r.get(field)) == level for r in records):  # (stops at the first other level)
            out[name] = level
    return out


def model_names(runs: list[RunInput]) -> list[str]:
    """The audited runs' labels (`experiment_labels`); one model audited on two benchmarks is
    `model (benchmark)` on each, as the audit lists models without a benchmark column."""
    labels = experiment_labels(
        [(getattr(r.benchmark, "name", ""), r.model, items_language(r.items.values()), r.source) for r in runs],
        [", ".join(scope([r]).values()) for r in runs],
    )
    seen = Counter(labels)
    return [
        label if seen[label] == 1 else f"{label} ({getattr(r.benchmark, 'name', i)})"
        for i, (label, r) in enumerate(zip(labels, runs))
    ]


def items_language(items) -> str:
    """The one language `items` are written in ("" where they mix languages)."""
    held = {it.language for it in items}
    return next(iter(held)) if len(held) == 1 else ""


def paired_accuracy_test(a: Sequence[bool], b: Sequence[bool]) -> dict:
    """Two models' accuracies on the same items: the difference, Tango's score interval and
    McNemar's mid-p test on the discordant items (the exact conditional p beside it, `exact_p`)."""
    n10 = sum(bool(x) and not bool(y) for x, y in zip(a, b))
    n01 = sum(not bool(x) and bool(y) for x, y in zip(a, b))
    n = len(a)
    if n == 0:
        return {
            "n": 0,
            "difference": None,
            "ci": None,
            "ci_method": stats.TANGO,
            "test": stats.MIDP,
            "p": None,
            "exact_p": None,
            "note": None,
        }
    ci = list(stats.paired_difference_ci(n10, n01, n))
    t = stats.mcnemar(n10, n01)
    return {
        "n": n,
        "difference": (n10 - n01) / n,
        "ci": ci,
        "ci_method": stats.TANGO,
        "test": t["test"],
        "p": t["p"],
        "p_bound": t["p_bound"],
        "log10_p": t["log10_p"],
        "exact_p": t["exact_p"],
        "exact_p_bound": t["exact_p_bound"],
        "discordant": {"a_only": n10, "b_only": n01},
        "note": agreement_note(ci, t["p"]),
    }


def delta_difference_test(
    a: Sequence[tuple[bool, bool]], b: Sequence[tuple[bool, bool]], s: Settings, clusters: Sequence[str] | None = None
) -> dict:
    """Δimg of model a − Δimg of model b on the items both paired ((with, removed) per item),
    from the per-item contrasts (`contrasts.paired_contrast_test`): the exact sign-flip test and the
    interval that inverts it where few contrasts are non-zero, the z where many are; `test` and
    `ci_method` say which. Given `clusters` (one id per item), a cluster bootstrap (whole
    clusters resampled; its interval and p from the same resamples) stands beside it
    (`ci_cluster`, `p_cluster`)."""
    t = contrasts.paired_contrast_test([float(w) - float(r) for w, r in a], [float(w) - float(r) for w, r in b])
    out = {
        k: t[k]
        for k in (
            "n",
            "n_nonzero",
            "difference",
            "ci",
            "ci_method",
            "test",
            "p",
            "p_bound",
            "log10_p",
            "exact_p",
            "note",
        )
    }
    if clusters is not None:
        c = bootstrap.bootstrap_difference(
            [float(w) - float(r) for w, r in a],
            [float(w) - float(r) for w, r in b],
            clusters=clusters,
            resamples=s.resamples,
            seed=s.seed,
        )
        out.update(
            ci_cluster=c["ci"],
            ci_cluster_method=c["ci_method"],
            p_cluster=c["p"],
            p_cluster_bound=c["p_bound"],
            n_clusters=c["n_units"],
            cluster_level=s.cluster,
            cluster_note=c["note"],
        )
    return out


def compare_models(runs: list[RunInput], names: list[str], s: Settings) -> list[dict]:
    """Every two models on their shared items, on the records that count under each benchmark's
    rules (`Benchmark.counts`, as `compare` and every table count them): accuracy with the image
    and without it (McNemar mid-p, Tango's interval), and Δimg (see `delta_difference_test`);
    each p with its Holm-adjusted value over the model pairs of its benchmark and measure
    (`between_models_holm`)."""
    runs = [replace(r, records=metrics.counted(r.records, r.benchmark)[0]) for r in runs]
    # per run: whether each (item, condition) is correct, and each image-removal pair's (with, removed)
    prepared = [(_index(r), {p.item.id: p for p in pair_image_removal(r)[0]}) for r in runs]
    out, families = [], []
    for (i, (ka, da)), (j, (kb, db)) in combinations(enumerate(prepared), 2):
        if not {it.benchmark for it in runs[i].items.values()} & {it.benchmark for it in runs[j].items.values()}:
            continue
        clusters = cluster_map(runs[i].benchmark, runs[i].items.values(), s.cluster)
        repeated = max(n_repeats(runs[i].records), n_repeats(runs[j].records)) > 1
        for cond in (WITH, REMOVED):
            shared = sorted({item for (item, c) in ka if c == cond} & {item for (item, c) in kb if c == cond})
            a, b = [ka[(x, cond)] for x in shared], [kb[(x, cond)] for x in shared]
            if repeated:  # each item's mean over its repeats, as compare's tests pair them
                sides = ([r for r in run.records if r["condition"] == cond] for run in (runs[i], runs[j]))
                _, ma, mb = item_mean_pairs(*sides)
                test = paired_means_test(ma, mb)
            else:
                test = paired_accuracy_test([bool(r.get("correct")) for r in a], [bool(r.get("correct")) for r in b])
            row = {
                "a": names[i],
                "b": names[j],
                "measure": f"accuracy {cond}",
                **test,
                **metrics.delta_warning([metrics.unreadable(x, y) for x, y in zip(a, b)]),
            }
            if clusters is not None:
                ca, cb = [float(bool(r.get("correct"))) for r in a], [float(bool(r.get("correct"))) for r in b]
                c = bootstrap.bootstrap_difference(
                    ca, cb, clusters=[clusters.get(x, x) for x in shared], resamples=s.resamples, seed=s.seed
                )
                row.update(
                    ci_cluster=c["ci"],
                    ci_cluster_method=c["ci_method"],
                    n_clusters=c["n_units"],
                    cluster_level=s.cluster,
                    cluster_note=c["note"],
                )
            out.append(row)
        shared = sorted(set(da) & set(db))
        pa, pb = [da[x] for x in shared], [db[x] for x in shared]
        ids = [clusters.get(x, x) for x in shared] if clusters is not None else None
        out.append(
            {
                "a": names[i],
                "b": names[j],
                "measure": "delta_img",
                **delta_difference_test([_credits(p) for p in pa], [_credits(p) for p in pb], s, ids),
                **metrics.delta_warning(
                    [metrics.unreadable(x.with_image, x.removed, y.with_image, y.removed) for x, y in zip(pa, pb)]
                ),
            }
        )
        families += [(getattr(runs[i].benchmark, "name", ""), row["measure"]) for row in out[len(families) :]]
    return between_models_holm(out, families)


def _credits(pair: Pair) -> tuple[bool, bool]:
    return bool(pair.with_image.get("correct")), bool(pair.removed.get("correct"))


def audit(runs: list[RunInput], settings: Settings = Settings(), cohorts: dict[str, str] | None = None) -> dict:
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


def model_docs(doc: dict) -> dict[str, dict]:
    """{model name: per-model section} of an audit document, one run or several."""
    return doc["models"] if "models" in doc else {doc["model"]: doc}


# the paired table's number columns, in Markdown and on the page: (heading, key, number format)
PAIRED_COLUMNS = [
    ("n", "n", "int"),
    *((s, s, "pct") for s in (*STATES, "a_with", "a_removed")),
    ("Δimg", "delta_img", "pp"),
    ("95 % CI", "ci", "ci_pp"),
    ("cluster 95 % CI", "ci_cluster", "ci_pp"),
    ("McNemar mid-p", "mcnemar_p", "p"),
    ("Holm p", "mcnemar_p_holm", "p"),
    ("role", "role", "text"),
    ("warning", "warning", "text"),
    ("note", "note", "text"),
]
# columns a table shows only where some row has a value
OPTIONAL_COLUMNS = ("warning", "note", "cluster 95 % CI")


def strata_rows(section: dict) -> list[tuple[str, list, dict]]:
    """A paired section's rows as (label, path in the section, row): overall, then one per level
    of each stratum."""
    return [("overall", ["overall"], section["overall"])] + [
        (f"{name} = {level}", ["by", name, level], row)
        for name, levels in section["by"].items()
        for level, row in levels.items()
    ]


def paired_markdown(section: dict, columns: list[tuple[str, str, str]], unpaired: str = "Unpaired items") -> list[str]:
    """A paired section's table (`strata_rows` × `columns`) in Markdown, through the one renderer,
    then the items it left `unpaired` by reason, as lines."""
    import pandas as pd

    from ..render import to_markdown

    frame = pd.DataFrame(
        [[label, *(row.get(key) for _, key, _ in columns)] for label, _, row in strata_rows(section)],
        columns=["stratum", *(heading for heading, _, _ in columns)],
    )
    for name in OPTIONAL_COLUMNS:  # a warning (note, cluster interval) column only where a row has one
        if name in frame and frame[name].isna().all():
            frame = frame.drop(columns=name)
    reasons = ", ".join(f"{v['n']} {reason}" for reason, v in section["unpaired"].items())
    return [
        to_markdown(frame, {heading: kind for heading, _, kind in columns}).rstrip("\n"),
        *(["", f"{unpaired}: {reasons}."] if reasons else []),
    ]


ITEM_LEVEL = (
    "item-level: items treated as independent draws, so the intervals generalise to a population "
    "of items like these (for the fixed exam itself, its accuracy is a count, not an estimate)"
)


def intervals_statement(cluster: str | None) -> dict:
    """What a document's intervals are: {"item": the item-level statement, "cluster": the cluster
    level of the cluster-bootstrap intervals beside them (`default_cluster`; None with --cluster
    none or where no benchmark declares clusters)}. Every
    document that prints intervals carries it."""
    return {
        "item": ITEM_LEVEL,
        "cluster": cluster,
        **(
            {
                "cluster_statement": f"cluster bootstrap over {cluster} (whole {cluster}s resampled): the intervals "
                f"generalise to a population of {cluster}s like these (--cluster none: item-level only)"
            }
            if cluster
            else {}
        ),
    }


def intervals_text(doc: dict) -> str:
    said = doc.get("intervals") or intervals_statement(None)
    return said["item"] + (f"; beside them, {said['cluster_statement']}" if said.get("cluster") else "") + "."


def reading_text(doc: dict) -> str:
    """Which reading an audit document's records were read under (per benchmark where they differ)."""
    readings = doc.get("readings") or {}
    said = (
        (doc.get("reading") or "strict")
        if doc.get("reading") != "mixed"
        else "each benchmark's protocol's (" + ", ".join(f"{b} {r}" for b, r in readings.items()) + ")"
    )
    return (
        f"Reading: {said}: every count, Δ and test reads replies so (--reading strict|assisted "
        "switches; docs/scoring.md)."
    )


def refusal_scope(refusals: dict) -> str:
    """Which items a refusal-rate table counts: "over the 75 paired items" (those of the
    image-removal table above it), or every item of a run without pairs."""
    over = refusals.get("rates_over") or {}
    if over.get("scope") == "paired":
        return f"over the {over['items']} paired items of the table above"
    return f"over all {over.get('items', 0)} items" if over else "over all records"


def summary_markdown(doc: dict) -> str:
    """A short human-readable summary: which reading, how runs were paired, per model the paired
    rows (overall and by stratum) with the image items left unpaired, refusal rates and the
    image-as-options control, as Markdown."""
    from ..render import percent as pct

    lines = [reading_text(doc), ""]
    lines += [f"Note: {note}" for note in doc.get("notes", [])] + ([""] if doc.get("notes") else [])
    for name, m in model_docs(doc).items():
        p = m["paired"]
        lines += [f"## {name}", ""]
        if p["overall"]["n"] or p["unpaired"]:
            table, *unpaired = paired_markdown(p, PAIRED_COLUMNS, "Unpaired image items")
            lines += [
                f"Image removal (C+Q+I vs C+Q), refusals {p['convention']}:",
                "",
                table,
                "",
                "95 % CI of Δimg: Tango's score interval for paired proportions; McNemar mid-p "
                "(Fagerland, Lydersen & Laake 2013; the exact conditional p is in --json); Holm p: adjusted by "
                "Holm's method over the tested levels of each stratum. The overall row is the pre-specified "
                f"primary Δimg; strata are secondary, and one of fewer than {stats.MIN_TESTED} pairs is "
                "descriptive (no test).",
                f"Intervals: {intervals_text(doc)}",
                *unpaired,
            ]
        else:  # a text-only run: no table of nothing
            lines.append("Image removal: no image items in these records, so no pairs.")
        rates = ", ".join(f"{c} {pct(v['rate'])} %" for c, v in m["refusals"]["rates"].items())
        io = m["io_control"]
        lines += ["", f"Refusal rates ({refusal_scope(m['refusals'])}): {rates or 'no records'}."]
        if io["n"]:  # items whose options are in the image only
            lines.append(
                f"Image-as-options control: n {io['n']}, baseline {pct(io['baseline'])} %, with image "
                f"{pct(io['a_with'])} %, removed {pct(io['a_removed'])} %, stem leakage hits "
                f"{io['leakage_hits']}."
            )
        lines.append("")
    return "\n".join(lines)

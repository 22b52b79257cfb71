"""Tests between models on their shared items: accuracy in each condition (McNemar's mid-p,
Tango's interval; each item's mean over repeats where runs repeat) and Δimg (the per-item
contrasts' sign-flip or z test), each with a cluster-bootstrap interval beside where the
benchmark declares clusters, and Holm's adjustment over the model pairs that compare one
quantity (`between_models_holm`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from .. import bootstrap, contrasts, metrics, stats
from ..repeats import item_mean_pairs, n_repeats, paired_means_test
from .clusters import cluster_map
from .pairs import REMOVED, WITH, Pair, RunInput, Settings, counted_input, index_records, pair_image_removal
from .transitions import agreement_note

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
    interval = stats.paired_difference_ci(n10, n01, n)  # (a tuple: n > 0)
    ci = list(interval) if interval is not None else None
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
    runs = [counted_input(r) for r in runs]
    # per run: whether each (item, condition) is correct, and each image-removal pair's (with, removed)
    prepared = [(index_records(r), {p.item.id: p for p in pair_image_removal(r)[0]}) for r in runs]
    out: list[dict] = []
    families: list[tuple[str, str]] = []  # one per row of `out`: its benchmark and measure
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

"""The transition table of paired records: the four states, the accuracies on either side,
their difference with Tango's interval and McNemar's mid-p test (`transition_row`), overall and
by stratum with Holm's adjustment over each stratum's levels (`paired_section`), and the overall
row as one flat table row (`flat_row`). The image-removal section of the audit, the language
pairing (`pairing`) and `compare`'s Δimg and Δlang are all built here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import bootstrap, metrics, stats
from ..run.forced import FORCED_CONDITION
from .pairs import STATES, Pair, Settings, group_by_level, has_paired_refusal, pair_values, wilson_interval


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
PRIMARY, SECONDARY = "primary", "secondary"  # a row's role: the pre-specified Δ, or a stratum's


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
    interval = stats.paired_difference_ci(counts["p10"], counts["p01"], n)  # (a tuple: n > 0)
    ci = list(interval) if interval is not None else None
    row: dict[str, Any] = {
        "n": n,
        **{k: counts[k] / n for k in STATES},
        "a_with": float(cw.mean()),
        "a_removed": float(cr.mean()),
        "delta_img": counts["p10"] / n - counts["p01"] / n,
        "ci": ci,
        "ci_method": stats.TANGO,
        "ci_a_method": stats.WILSON,
        "ci_a_with": wilson_interval(cw),
        "ci_a_removed": wilson_interval(cr),
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
        boot = bootstrap.cluster_bootstrap(cw - cr, [1.0] * n, clusters, resamples=s.resamples, seed=s.seed)
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
    if s.refusals == "imputed" and forced_accuracy is None and has_paired_refusal(pairs):
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
            name: with_holm({key: row(rows, SECONDARY) for key, rows in group_by_level(entries, rec_field).items()})
            for name, rec_field in fields.items()
        },
        "unpaired": {reason: {"n": len(ids), "items": ids} for reason, ids in unpaired.items()},
    }


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


def with_holm(rows: dict[str, dict]) -> dict[str, dict]:
    """The levels of one stratum are one family of tests: each row gains `mcnemar_p_holm`,
    its McNemar p-value after Holm's step-down adjustment over that family."""
    for row, p in zip(rows.values(), stats.holm([r["mcnemar_p"] for r in rows.values()])):
        row["mcnemar_p_holm"] = p
    return rows

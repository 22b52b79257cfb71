"""The audit's confidence section, present only where the run's records carry a confidence: per
condition, the calibration metrics and the exam's score answering only above a confidence
threshold under the benchmark's rule for blanks (each overall and by each stratum), both from
`confidence_metrics`; across image removal, whether removing the image lowers the model's
confidence as much as its accuracy; and the section in words (`confidence_markdown`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import calibration, metrics
from ..bootstrap import bootstrap_difference
from ..confidence_metrics import abstention_of, calibration_of, has_confidence
from .pairs import IndexedRun, Settings

if TYPE_CHECKING:
    from ..benchmark import Benchmark
    from ..items import Item


def confidence_section(run: IndexedRun, s: Settings, clusters: Mapping[str, str] | None) -> dict[str, Any] | None:
    """{"conditions": {condition: {"overall", "by": {stratum: {level: ...}}, "abstention",
    "abstention_by": {stratum: {level: ...}}}}, "image_removal"} of the run's counted records; None
    where no record carries a confidence. A stratum level's abstention is that part's points
    (`abstention_of(part=True)`: its own cross-fitted threshold, no verdict: a pass mark is the
    whole exam's).
    The bootstrap takes at most `calibration.RESAMPLES` resamples (each recomputes every
    metric) with the audit's seed."""
    records = run.input.records
    if not has_confidence(records):
        return None
    benchmark = run.input.benchmark
    resamples = min(s.resamples, calibration.RESAMPLES)
    items = list(run.input.items.values())
    conditions: dict[str, dict] = {}
    for (condition,), rows in metrics.group(records).items():
        held = condition_confidence(rows, benchmark, clusters, items, s)
        if held is None:
            continue
        by: dict[str, dict] = {}
        abstention_by: dict[str, dict] = {}
        for name, field in run.fields.items():
            levels, blanks = {}, {}
            for (_, level), group in metrics.group(rows, [field]).items():
                if (
                    numbers := calibration_of(group, benchmark, clusters, resamples=resamples, seed=s.seed)
                ) is not None:
                    levels[level] = numbers
                    blanks[level] = abstention_of(group, benchmark, clusters, items=items, seed=s.seed, part=True)
            by[name], abstention_by[name] = levels, blanks
        conditions[condition] = {
            "overall": held["overall"],
            "by": by,
            "abstention": held["abstention"],
            "abstention_by": abstention_by,
        }
    return {"conditions": conditions, "image_removal": image_removal(run, clusters)}


def condition_confidence(
    rows: Sequence[Mapping[str, Any]],
    benchmark: Benchmark | None,
    clusters: Mapping[str, str] | None,
    items: Sequence[Item],
    s: Settings,
) -> dict[str, Any] | None:
    """{"overall": the calibration numbers, "abstention": the exam's score under a confidence
    threshold} of one condition's counted records; None where none carries a confidence. The one
    place the audit's confidence section and `compare` compute a condition's numbers: at most
    `calibration.RESAMPLES` resamples (each recomputes every metric) with the settings' seed."""
    resamples = min(s.resamples, calibration.RESAMPLES)
    overall = calibration_of(rows, benchmark, clusters, resamples=resamples, seed=s.seed)
    if overall is None:
        return None
    return {"overall": overall, "abstention": abstention_of(rows, benchmark, clusters, items=items, seed=s.seed)}


def image_removal(run: IndexedRun, clusters: Mapping[str, str] | None) -> dict[str, Any] | None:
    """On the image-removal pairs whose two records both carry a confidence: mean confidence and
    accuracy with the image and without, Δconfidence and Δaccuracy (with − removed), and
    `difference` = Δconfidence − Δaccuracy with its paired bootstrap interval and p (clusters
    honoured): below 0, removing the image lowers confidence more than accuracy; above 0, less
    (a model that keeps its confidence when it loses the image). None without such pairs."""
    pairs = [
        p for p in run.pairs if p.with_image.get("confidence") is not None and p.removed.get("confidence") is not None
    ]
    if not pairs:
        return None
    conf_with = np.array([float(p.with_image["confidence"]) for p in pairs])
    conf_removed = np.array([float(p.removed["confidence"]) for p in pairs])
    right_with = np.array([bool(p.with_image.get("correct")) for p in pairs], dtype=float)
    right_removed = np.array([bool(p.removed.get("correct")) for p in pairs], dtype=float)
    ids = [clusters.get(p.item.id, p.item.id) for p in pairs] if clusters is not None else None
    test = bootstrap_difference(
        (conf_with - conf_removed).tolist(), (right_with - right_removed).tolist(), clusters=ids
    )
    return {
        "n": len(pairs),
        "confidence_with": float(conf_with.mean()),
        "confidence_removed": float(conf_removed.mean()),
        "delta_confidence": float((conf_with - conf_removed).mean()),
        "accuracy_with": float(right_with.mean()),
        "accuracy_removed": float(right_removed.mean()),
        "delta_accuracy": float((right_with - right_removed).mean()),
        **{k: test[k] for k in ("difference", "ci", "ci_method", "p", "p_bound", "note")},
    }


def _ci(ci: list[float] | None, digits: int = 3) -> str:
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "(no interval)"


def verdict_text(sheet: Mapping[str, Any]) -> str:
    """A sheet's pass lines in words: each exam's overall row, or every row where none is overall
    ("" where the sheet has none)."""
    rows = sheet.get("verdict") or []
    shown = [r for r in rows if r["criterion"] == "overall"] or rows
    named = [
        (r["exam"] if r["criterion"] == "overall" else f"{r['exam']} ({r['criterion']})", r["status"]) for r in shown
    ]
    return ", ".join(f"{name} {status}" for name, status in named)


def confidence_markdown(section: Mapping[str, Any] | None) -> list[str]:
    """The confidence section in words: per condition a line of calibration numbers and the
    abstention's cross-fitted gain with its interval; the image-removal comparison."""
    if not section:
        return []
    lines = ["", "Confidence (records that carry one; docs/audit.md, Confidence and abstention):", ""]
    lines += ["| condition | n | accuracy | mean confidence | ECE | ECE equal-mass | Brier | AUROC | AURC |"]
    lines += ["|---|---|---|---|---|---|---|---|---|"]
    for condition, entry in section["conditions"].items():
        o = entry["overall"]
        auroc = "–" if o["auroc"]["value"] is None else f"{o['auroc']['value']:.3f} {_ci(o['auroc']['ci'])}"
        lines.append(
            f"| {condition} | {o['n']} | {o['accuracy']:.3f} | {o['mean_confidence']:.3f} | "
            f"{o['ece']['value']:.3f} {_ci(o['ece']['ci'])} | {o['ece']['equal_mass']['value']:.3f} | "
            f"{o['brier']['value']:.3f} {_ci(o['brier']['ci'])} | {auroc} | {o['aurc']['value']:.3f} |"
        )
    lines.append("")
    for condition, entry in section["conditions"].items():
        a = entry["abstention"]
        if not a or not a["cross_fitted"]:
            continue
        cf = a["cross_fitted"]
        thresholds = ", ".join("–" if h["threshold"] is None else f"{h['threshold']:.3g}" for h in cf["halves"])
        lines.append(
            f"Abstention, {condition} ({a['rule']['name']}): answering everything {a['answer_all']['points']:.2f} "
            f"points; blank below a threshold chosen on the other half (seeded halves, thresholds {thresholds}) "
            f"{cf['points']:.2f}: gain {cf['gain']:+.2f} {_ci(cf['ci'], 2)}"
            + ("" if cf["passed"] is None else f", verdict {'pass' if cf['passed'] else 'fail'}")
            + f"; in-sample best (biased upwards) {a['in_sample']['gain']:+.2f}."
            + (
                f" Exam verdict: answering everything {verdict_text(a['answer_all'])}; cross-fitted {verdict_text(cf)}."
                if a["answer_all"].get("verdict")
                else ""
            )
        )
    parts = [
        (condition, name, level, a)
        for condition, entry in section["conditions"].items()
        for name, levels in (entry.get("abstention_by") or {}).items()
        for level, a in levels.items()
        if a and a["cross_fitted"]
    ]
    if parts:
        lines += ["", "Abstention by stratum (each level's own points and cross-fitted threshold; no verdict):", ""]
        lines += ["| condition | stratum | level | n | answering all | cross-fitted | gain [95 % CI] |"]
        lines += ["|---|---|---|---|---|---|---|"]
        lines += [
            f"| {condition} | {name} | {level} | {a['n']} | {a['answer_all']['points']:.2f} | "
            f"{a['cross_fitted']['points']:.2f} | {a['cross_fitted']['gain']:+.2f} {_ci(a['cross_fitted']['ci'], 2)} |"
            for condition, name, level, a in parts
        ]
        lines.append("")
    removal = section.get("image_removal")
    if removal:
        lines.append(
            f"Image removal on {removal['n']} pairs: Δconfidence {removal['delta_confidence']:+.3f}, Δaccuracy "
            f"{removal['delta_accuracy']:+.3f}; Δconfidence − Δaccuracy {removal['difference']:+.3f} "
            f"{_ci(removal['ci'])}."
        )
    return lines

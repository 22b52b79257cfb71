"""Exam-date curves: a saved run's accuracy by the year of the exam, split at the model's
declared knowledge cutoff. A model that learnt the exams rather than medicine does better on
the exams published before its training data ended than on those after; one that learnt
medicine does about as well on both (harder or easier years aside: the curve shows them).

Every cell comes from the one metrics layer (`metrics.group`, `metrics.cell`): the same n,
accuracy and interval (Wilson's score interval with the boundary correction, `stats.binomial_ci`)
as `report --by year` shows. A year is *before* the cutoff when the whole year is (December of
it at the latest: `2021-12` puts 2021 before), *after* when the whole year is, and left out of
both when the cutoff falls inside it, since an exam's year does not say whether it was sat and
published before the model's data ended; `straddles` names such years. The difference before −
after has the MOVER interval of Newcombe (1998, method 10) built from the two sides' own
intervals, so it agrees with the cells shown beside it: L = d − √((p₁ − l₁)² + (u₂ − p₂)²),
U = d + √((u₁ − p₁)² + (p₂ − l₂)²). The two sides hold different items (no pairing), which
differ in difficulty as well as in date: a drop is a sign, not a proof, of contamination.

Per run (one benchmark and model each), by condition; and pooled over the runs of one model
(every benchmark's records together, plain accuracy). Without a cutoff the curve has no split."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import metrics
from ..cutoffs import cutoff_text, parse_cutoff, side
from ..errors import UsageError

__all__ = [
    "YEAR_FIELD",
    "curve",
    "difference_ci",
    "exam_date_curves",
    "has_years",
    "markdown",
    "parse_cutoff",
    "read_cutoffs",
    "run_title",
    "side",
]

YEAR_FIELD = "year"


def difference_ci(a: metrics.Cell, b: metrics.Cell) -> tuple[float, float] | None:
    """Newcombe's MOVER interval of a − b from the cells' own intervals (see the module's docstring)."""
    if a.accuracy is None or b.accuracy is None or a.ci is None or b.ci is None:
        return None
    p1, (l1, u1), p2, (l2, u2) = a.accuracy, a.ci, b.accuracy, b.ci
    d = p1 - p2
    return d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def year_of(value: Any) -> int | None:
    try:
        return int(str(value)[:4])
    except (TypeError, ValueError):
        return None


def cell_json(c: metrics.Cell) -> dict[str, Any]:
    return {"n": c.n, "correct": c.correct, "accuracy": c.accuracy, "ci": list(c.ci) if c.ci else None}


def curve(records: Sequence[Mapping[str, Any]], benchmark: Any, cutoff: tuple[int, int] | None) -> dict[str, Any]:
    """The curve of one condition's records: accuracy by year, and with a cutoff the two sides and
    their difference."""
    by_year: dict[int, list[Mapping[str, Any]]] = {}
    unknown = 0
    for r in records:
        year = year_of(r.get(YEAR_FIELD))
        if year is None:
            unknown += 1
        else:
            by_year.setdefault(year, []).append(r)
    out: dict[str, Any] = {
        "years": {str(y): cell_json(metrics.cell(rs, benchmark)) for y, rs in sorted(by_year.items())},
        "no_year": unknown,
    }
    if cutoff is None:
        return out
    sides: dict[str, list[Mapping[str, Any]]] = {"before": [], "after": [], "straddles": []}
    for y, rs in by_year.items():
        sides[side(y, cutoff)].extend(rs)
    before, after = metrics.cell(sides["before"], benchmark), metrics.cell(sides["after"], benchmark)
    out["straddles"] = sorted(str(y) for y in by_year if side(y, cutoff) == "straddles")
    out["before"], out["after"] = cell_json(before), cell_json(after)
    if before.accuracy is not None and after.accuracy is not None:
        out["difference"] = before.accuracy - after.accuracy
        out["difference_ci"] = list(difference_ci(before, after) or ()) or None
    else:
        out["difference"], out["difference_ci"] = None, None
    return out


def exam_date_curves(
    runs: Iterable[Any],
    cutoff: str | int | Mapping[str, str | int | None] | None = None,
    reading: str | None = None,
) -> dict[str, Any]:
    """The curves of saved runs (`SavedRun`s, read as their benchmark's protocol reads them):
    `runs` per run (its model, benchmark, curve per condition), `pooled` per model and condition
    over its runs. `cutoff` (`YYYY-MM`) splits every model's curves; a mapping of model names to
    cutoffs splits each model's at its own (a model it leaves out, or maps to None, keeps its
    curves whole; the document then holds `cutoffs`, each model's); None leaves them all whole.
    `reading` reads the records ("strict", "assisted"; None: each benchmark's protocol's)."""
    from ..results import model_name

    per_model = isinstance(cutoff, Mapping)
    given: Mapping[str, str | int | None] = cutoff if isinstance(cutoff, Mapping) else {}
    common = parse_cutoff(cutoff) if cutoff is not None and not isinstance(cutoff, Mapping) else None
    declared = {m: parse_cutoff(c) for m, c in given.items() if c is not None}

    def when(model: str) -> tuple[int, int] | None:
        return declared.get(model) if per_model else common

    per_run: list[dict[str, Any]] = []
    pooled: dict[str, dict[str, list[Any]]] = {}
    for run in runs:
        run = run.read_as(reading)
        model = model_name(run.manifest)
        conditions = {}
        for (condition,), rs in metrics.group(run.records).items():
            conditions[condition] = curve(rs, run.benchmark, when(model))
            pooled.setdefault(model, {}).setdefault(condition, []).extend(rs)
        per_run.append(
            {
                "run_dir": str(run.path),
                "model": model,
                "benchmark": run.benchmark.name,
                "language": run.manifest.get("language"),
                "conditions": conditions,
            }
        )
    out: dict[str, Any] = {"cutoff": cutoff_text(common) if common else None}
    if per_model:
        out["cutoffs"] = {m: cutoff_text(c) if (c := when(m)) else None for m in pooled}
    return {
        **out,
        "ci_method": "wilson-score-bcd per cell; MOVER (Newcombe) for the difference",
        "runs": per_run,
        "pooled": {m: {c: curve(rs, None, when(m)) for c, rs in conds.items()} for m, conds in pooled.items()},
    }


def read_cutoffs(values: Sequence[str]) -> str | dict[str, str] | None:
    """The cutoffs of a command line (`medvqa audit --cutoff`, repeatable): one `YYYY-MM` for every
    model, or `MODEL=YYYY-MM` for each model that declares one (the model's name as the runs name
    it; the last `=` splits, so a name may hold one). None when none is given."""
    if not values:
        return None
    named = [v for v in values if "=" in v]
    if not named:
        if len(values) > 1:
            raise UsageError(f"--cutoff: {len(values)} cutoffs for every model; give one, or MODEL=YYYY-MM each")
        parse_cutoff(values[0])
        return values[0]
    if len(named) < len(values):
        raise UsageError("--cutoff: give one YYYY-MM for every model, or MODEL=YYYY-MM for each, not both")
    out: dict[str, str] = {}
    for value in values:
        model, _, when = value.rpartition("=")
        if not model or model in out:
            raise UsageError(f"--cutoff {value!r}: " + ("a model's name first" if not model else "given twice"))
        parse_cutoff(when)
        out[model] = when
    return out


def run_title(run: Mapping[str, Any]) -> str:
    """A run of the curves as its pages and tables name it: "model on benchmark (language)"."""
    language = f" ({run['language']})" if run.get("language") else ""
    return f"{run['model']} on {run['benchmark']}{language}"


def has_years(records: Iterable[Mapping[str, Any]]) -> bool:
    """Whether any record carries an exam year: a run without one has no curve to draw."""
    return any(year_of(r.get(YEAR_FIELD)) is not None for r in records)


def markdown(dates: Mapping[str, Any]) -> str:
    """The curves of `exam_date_curves` as Markdown: per run, then per model pooled over its runs
    (where it has several), a table of each condition's accuracy by exam year with its interval,
    and with a cutoff the two sides and their difference."""

    def pct(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.1f}"

    def ci(pair: Sequence[float] | None, sign: str = "") -> str:
        return "–" if not pair else f"[{100 * pair[0]:{sign}.1f}, {100 * pair[1]:{sign}.1f}]"

    cutoffs = dates.get("cutoffs") or {}

    def cutoff_of(model: str) -> str | None:
        return cutoffs.get(model) if "cutoffs" in dates else dates.get("cutoff")

    lines = [
        "# Exam-date curves",
        "",
        "Accuracy (%) by exam year with its 95 % CI (Wilson's score interval); with a model's declared "
        "knowledge cutoff, the exams before and after it and their difference in percentage points (Newcombe's "
        "MOVER interval). A year the cutoff falls inside is left out of both sides.",
    ]
    runs = [(run_title(r), r["model"], r["conditions"]) for r in dates["runs"]]
    models = [r["model"] for r in dates["runs"]]
    runs += [(f"{m}, pooled over its runs", m, conds) for m, conds in dates["pooled"].items() if models.count(m) > 1]
    for title, model, conditions in runs:
        lines += ["", f"## {title}", "", f"Knowledge cutoff: {cutoff_of(model) or 'not declared'}."]
        for condition, c in conditions.items():
            lines += ["", f"{condition}:", "", "| exam year | n | accuracy | 95 % CI |", "|---|---:|---:|---|"]
            lines += [f"| {y} | {v['n']} | {pct(v['accuracy'])} | {ci(v['ci'])} |" for y, v in c["years"].items()]
            for name in ("before", "after"):
                if name in c:
                    v = c[name]
                    lines.append(f"| {name} the cutoff | {v['n']} | {pct(v['accuracy'])} | {ci(v['ci'])} |")
            if "difference" in c:
                diff = "–" if c["difference"] is None else f"{100 * c['difference']:+.1f} pp"
                lines += ["", f"before − after: {diff} {ci(c['difference_ci'], '+')}"]
                if c["straddles"]:
                    lines.append(f"left out (the cutoff falls inside): {', '.join(c['straddles'])}")
            if c["no_year"]:
                lines.append(f"records without an exam year: {c['no_year']}")
    return "\n".join(lines) + "\n"

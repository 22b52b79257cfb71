"""The audit page's section of exam-date curves (`contamination.curves`, in the audit document
under `exam_dates` where the runs' records carry exam years): a chart and a table per run and
condition, and per model pooled over its runs, every number tagged with its JSON path."""

from __future__ import annotations

from ..contamination.curves import run_title
from .charts import exam_date_chart
from .page import Page, TableRow, esc


def exam_date_section(page: Page, dates: dict) -> None:
    """The exam-date curves (`contamination.curves`): per run, then per model pooled over its runs
    where it has several, each condition's accuracy by exam year drawn and tabled, and with the
    model's declared cutoff the two sides and their difference."""
    cutoffs = dates.get("cutoffs")

    def cutoff_of(model: str) -> str | None:
        return cutoffs.get(model) if cutoffs is not None else dates.get("cutoff")

    declared = sorted({f"{m}: {cutoff_of(m)}" for m in dates["pooled"] if cutoff_of(m)})
    page.add(
        "<h2>Exam-date curves</h2><p>Accuracy by exam year with its 95 % CI (Wilson's score interval). "
        "Where a model declares a knowledge cutoff, the exams before it are set against those after, the "
        "difference with Newcombe's interval; a year the cutoff falls inside is on neither side. A drop after "
        "the cutoff is a sign of contamination, not a proof: the years differ in difficulty too. Knowledge "
        f"cutoffs: {esc('; '.join(declared) or 'none declared (medvqa audit --cutoff YYYY-MM)')}.</p>"
    )
    models = [r["model"] for r in dates["runs"]]
    parts = [
        (run_title(r), r["model"], ["exam_dates", "runs", i, "conditions"], r["conditions"])
        for i, r in enumerate(dates["runs"])
    ]
    parts += [
        (f"{m}, pooled over its runs", m, ["exam_dates", "pooled", m], conds)
        for m, conds in dates["pooled"].items()
        if models.count(m) > 1
    ]
    for title, model, base, conditions in parts:
        for condition, c in conditions.items():
            heading = f"{title}, {condition}"
            page.add(f"<h3>{esc(heading)}</h3>")
            page.add(f"<figure>{exam_date_chart(c, heading, cutoff_of(model))}</figure>")
            rows: list[TableRow] = [([year], [*base, condition, "years", year], {}) for year in c["years"]]
            rows += [
                ([f"{name} the cutoff"], [*base, condition, name], {}) for name in ("before", "after") if name in c
            ]
            page.table(
                ["exam year"], [("n", "n", "int"), ("accuracy", "accuracy", "pct"), ("95 % CI", "ci", "ci")], rows
            )
            if "difference" in c:
                left_out = f" ({', '.join(c['straddles'])} on neither side)" if c["straddles"] else ""
                page.add(
                    "<p>before − after: "
                    + page.cell([*base, condition, "difference"], "pp", tag="span")
                    + " "
                    + page.cell([*base, condition, "difference_ci"], "ci_pp", tag="span")
                    + f"{esc(left_out)}</p>"
                )

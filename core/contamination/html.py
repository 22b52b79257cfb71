"""`medvqa contamination --html OUT`: the contamination document as one self-contained page (no
script needed, no network), built with the audit page's blocks (`audit.page.Page`): every number
is a cell of the `--json` document, tagged with its JSON path (`data-path`) and format
(`data-format`), so the page shows exactly what `--json` prints. Its sections: the Data
Contamination Quiz (the quiz, each examined model's level overall and by stratum, each results
file's level), slot guessing (each model's exact and normalised rates), and the exam-date curves
(each run's accuracy by year, then before, after and their difference)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..audit.page import STYLE, Page, TableRow, esc
from .curves import run_title

LEVEL = [("n", "n", "int"), ("lower", ("level", "lower"), "pct"), ("upper", ("level", "upper"), "pct")]
RATES = [
    ("n", "n", "int"),
    ("exact", ("exact", "rate"), "pct"),
    ("exact CI", ("exact", "ci"), "ci"),
    ("normalised", ("normalised", "rate"), "pct"),
    ("normalised CI", ("normalised", "ci"), "ci"),
]
CELL = [("n", "n", "int"), ("accuracy", "accuracy", "pct"), ("95% CI", "ci", "ci")]


def render(doc: dict[str, Any]) -> str:
    """The page of a `contamination` document (see the module's docstring)."""
    page = Page(doc, thumbnail_px=0)
    if "dcq" in doc:
        page.add(f"<h2>Data Contamination Quiz: {esc(doc['dcq']['file'])}</h2>")
        page.table(["quiz"], LEVEL, [(["all instances"], ["dcq"], {})])
    if "quiz" in doc:
        q = doc["quiz"]
        page.add(
            f"<h2>Data Contamination Quiz</h2><p>{esc(q['file'])}: {q['n_items']} items of {esc(q['benchmark'])} "
            f"({esc(q['split'])}), paraphrased by {esc(q['generator'].get('model'))}; {q['n_dropped']} dropped.</p>"
        )
        for model, ex in (doc.get("examinations") or {}).items():
            rows: list[TableRow] = [(["all", ""], ["examinations", model, "overall"], {})]
            for field, levels in ex["by"].items():
                rows += [([field, level], ["examinations", model, "by", field, level], {}) for level in levels]
            page.add(f"<h3>{esc(model)}</h3>")
            page.table(["stratum", "level"], LEVEL, rows)
            page.parts += [f'<p class="note">{esc(note)}</p>' for note in ex["notes"]]
    if "slot_guessing" in doc:
        page.add("<h2>Slot guessing</h2>")
        page.table(["model"], RATES, [([m], ["slot_guessing", m], {}) for m in doc["slot_guessing"]])
    if "exam_dates" in doc:
        dates = doc["exam_dates"]
        page.add(f"<h2>Exam-date curves</h2><p>Knowledge cutoff: {esc(dates['cutoff'] or 'not declared')}.</p>")
        for i, run in enumerate(dates["runs"]):
            for condition, c in run["conditions"].items():
                base = ["exam_dates", "runs", i, "conditions", condition]
                page.add(f"<h3>{esc(run_title(run))}, {esc(condition)}</h3>")
                rows = [([year], [*base, "years", year], {}) for year in c["years"]]
                rows += [([name], [*base, name], {}) for name in ("before", "after") if name in c]
                page.table(["exam year"], CELL, rows)
                if "difference" in c:
                    page.add(
                        "<p>before − after: "
                        + page.cell([*base, "difference"], "pp", tag="span")
                        + " "
                        + page.cell([*base, "difference_ci"], "ci_pp", tag="span")
                        + "</p>"
                    )
    head = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>medvqa contamination</title>'
        f"<style>{STYLE}</style></head><body><h1>Contamination</h1>"
    )
    return head + "\n".join(page.parts) + "</body></html>\n"


def write(doc: dict[str, Any], path: str | Path) -> Path:
    from ..files import write_atomic

    return write_atomic(Path(path), render(doc))

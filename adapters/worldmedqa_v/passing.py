"""Each country's passing threshold, as the WorldMedQA-V paper's Figure 2 draws it beside the
models' accuracies: Japan 70 %, Spain 66 %, Israel 60 %, Brazil 65 % of the questions (the
authors' `visuals/data_visualization.ipynb`, github.com/WorldMedQA/V, which draws Figure 2:
`passing_threshold = [.7, .66, .6, .65]` for Japan, Spain, Israel and Brazil).

The paper compares a model's accuracy on the country's image questions with the share a
candidate needs to pass that country's whole exam; the items here are a part of each exam (its
image questions), so a verdict says whether the model clears the line on these items, not that
it would pass the exam. One verdict per country, language and condition of the records, its
accuracy the headline cell's (`medvqa.metrics.cell`), under the reading the records were read in.
"""

from __future__ import annotations

from medvqa import PassLines, PassVerdict
from medvqa.metrics import cell, is_derived

from .loader import COUNTRIES

PASS_LINES = {"japan": 0.70, "spain": 0.66, "israel": 0.60, "brazil": 0.65}
NOTE = (
    "passing thresholds as the WorldMedQA-V paper's Figure 2 draws them (Japan 70 %, Spain 66 %, Israel 60 %, "
    "Brazil 65 % of the questions); judged on the country's image questions only, not a whole exam"
)


def pass_lines(records: list[dict], benchmark=None) -> PassLines:
    """A `PassVerdict` per country × language × condition of `records` (forced guesses, derived
    conditions such as `C+Q/forced`, are the audit's and left out)."""
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for r in records:
        if is_derived(str(r.get("condition"))) or r.get("country") not in PASS_LINES:
            continue
        groups.setdefault((r["country"], str(r.get("language") or ""), r["condition"]), []).append(r)
    order = list(COUNTRIES)
    rows = []
    for (country, language, condition), rs in sorted(
        groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1], kv[0][2])
    ):
        line = PASS_LINES[country]
        c = cell(rs, benchmark)
        share = c.value
        exam = f"{country.capitalize()} {language} {condition}".replace("  ", " ")
        scope = {"country": country, "condition": condition, **({"language": language} if language else {})}
        if share is None:
            rows.append(
                PassVerdict(
                    exam=exam,
                    criterion="passing threshold",
                    status="not evaluable",
                    required=line,
                    unit="share",
                    note="no items counted",
                    scope=scope,
                )
            )
            continue
        rows.append(
            PassVerdict(
                exam=exam,
                criterion="passing threshold",
                status="pass" if share >= line else "fail",
                points=share,
                required=line,
                maximum=1.0,
                margin=share - line,
                unit="share",
                note=f"{c.n} image questions",
                scope=scope,
            )
        )
    return PassLines(rows=rows, notes=[NOTE], title="Passing thresholds (WorldMedQA-V Figure 2)")

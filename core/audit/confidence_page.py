"""The audit page's confidence section (only where the audit document has one): the calibration
table per condition and stratum, the abstention table under the exam's rule for blanks, the
image-removal comparison of confidence with accuracy, and two charts drawn as the page draws
its others (`svg`): the reliability diagram (each equal-width bin's accuracy against its mean
confidence, the diagonal being perfect calibration) and the risk-coverage curve. Every number
is read from the document (`confidence_metrics` computed it), none is computed here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .charts import SERIES_COLOURS
from .page import Page, TableRow
from .svg import Svg, x_axis

CALIBRATION_COLUMNS = [
    ("n", "n", "int"),
    ("accuracy", "accuracy", "pct"),
    ("mean confidence", "mean_confidence", "pct"),
    ("ECE", ("ece", "value"), "pct"),
    ("ECE 95 % CI", ("ece", "ci"), "ci"),
    ("ECE equal-mass", ("ece", "equal_mass", "value"), "pct"),
    ("Brier", ("brier", "value"), "decimal"),
    ("AUROC", ("auroc", "value"), "decimal"),
    ("AUROC low", ("auroc", "ci", 0), "decimal"),
    ("AUROC high", ("auroc", "ci", 1), "decimal"),
    ("AURC", ("aurc", "value"), "decimal"),
]
ABSTENTION_COLUMNS = [
    ("rule", ("rule", "name"), "text"),
    ("n", "n", "int"),
    ("answering all: points", ("answer_all", "points"), "decimal"),
    ("cross-fitted: points", ("cross_fitted", "points"), "decimal"),
    ("gain", ("cross_fitted", "gain"), "decimal"),
    ("gain low", ("cross_fitted", "ci", 0), "decimal"),
    ("gain high", ("cross_fitted", "ci", 1), "decimal"),
    ("verdict", ("cross_fitted", "passed"), "text"),
    ("in-sample gain (biased)", ("in_sample", "gain"), "decimal"),
]
REMOVAL_COLUMNS = [
    ("pairs", "n", "int"),
    ("Δconfidence", "delta_confidence", "pp"),
    ("Δaccuracy", "delta_accuracy", "pp"),
    ("Δconfidence − Δaccuracy", "difference", "pp"),
    ("95 % CI", "ci", "ci_pp"),
]


def confidence_tables(page: Page, base: list, section: dict | None) -> None:
    """The section's tables and charts on the page; nothing without a section."""
    if not section:
        return
    path = [*base, "confidence"]
    conditions = section["conditions"]
    page.add("<h3>Confidence and calibration (records that carry a confidence)</h3>")
    rows: list[TableRow] = []
    for condition, entry in conditions.items():
        rows.append(([condition], [*path, "conditions", condition, "overall"], {}))
        rows += [
            ([f"{condition}: {name} = {level}"], [*path, "conditions", condition, "by", name, level], {name: [level]})
            for name, levels in entry["by"].items()
            for level in levels
        ]
    page.table(["group"], CALIBRATION_COLUMNS, rows)
    held = [c for c, entry in conditions.items() if entry.get("abstention") and entry["abstention"]["cross_fitted"]]
    if held:
        page.add(
            "<h3>Abstention under the exam's rule for blanks</h3><p>Blank below a confidence threshold chosen on the "
            "other half of the items (seeded halves, both directions), beside answering everything; the gain's "
            "interval is a paired bootstrap. The in-sample gain is chosen on the items it is scored on: "
            "biased upwards.</p>"
        )
        rows = []
        for c in held:
            rows.append(([c], [*path, "conditions", c, "abstention"], {}))
            rows += [  # each stratum level's own points, under a threshold cross-fitted on it (no verdict)
                ([f"{c}: {name} = {level}"], [*path, "conditions", c, "abstention_by", name, level], {name: [level]})
                for name, levels in (conditions[c].get("abstention_by") or {}).items()
                for level, a in levels.items()
                if a and a["cross_fitted"]
            ]
        page.table(["condition"], ABSTENTION_COLUMNS, rows)
    if section.get("image_removal"):
        page.add("<h3>Confidence across image removal (C+Q+I vs C+Q)</h3>")
        page.table(["pairs"], REMOVAL_COLUMNS, [(["overall"], [*path, "image_removal"], {})])
    bins = {c: entry["overall"]["ece"]["reliability"] for c, entry in conditions.items()}
    curves = {c: entry["overall"]["risk_coverage"] for c, entry in conditions.items()}
    page.add(f'<figure id="fig-reliability">{reliability_chart(bins)}<figcaption>reliability</figcaption></figure>')
    page.add(
        f'<figure id="fig-risk-coverage">{risk_coverage_chart(curves)}<figcaption>risk-coverage</figcaption></figure>'
    )


LEFT, TOP, SIDE = 56, 34, 300  # px: the plot's left edge, top edge and side


def _frame(title: str, x_label: str, y_label: str, conditions: list[str]) -> Svg:
    """A square plot of 0-1 against 0-1 with its axes, and a legend of the conditions."""
    svg = Svg(LEFT + SIDE + 24, TOP + SIDE + 76, title)
    svg.text((LEFT + SIDE) / 2 + 12, 20, title, anchor="middle", size=13, bold=True)
    bottom = TOP + SIDE
    x_axis(svg, LEFT, LEFT + SIDE, bottom, 0, 1, [0, 0.25, 0.5, 0.75, 1], x_label)
    svg.line(LEFT, TOP, LEFT, bottom)
    for t in (0, 0.25, 0.5, 0.75, 1):
        y = bottom - t * SIDE
        svg.line(LEFT - 4, y, LEFT, y)
        svg.text(LEFT - 7, y + 4, f"{t:g}", anchor="end", size=10)
    svg.text(14, TOP + SIDE / 2, y_label, anchor="middle", size=10, rotate=-90)
    svg.legend([(c, SERIES_COLOURS[i % len(SERIES_COLOURS)]) for i, c in enumerate(conditions)], bottom + 56)
    return svg


def _xy(x: float, y: float) -> tuple[float, float]:
    return LEFT + x * SIDE, TOP + SIDE - y * SIDE


def reliability_chart(series: dict[str, list[dict]]) -> str:
    """Each series' bins ({name: `ece.reliability`}, a series a condition, or a benchmark's
    condition on the comparison's page): accuracy against mean confidence, joined in order; the
    dashed diagonal is perfect calibration."""
    svg = _frame("Reliability diagram (10 equal-width bins)", "mean confidence", "accuracy", list(series))
    svg.line(*_xy(0, 0), *_xy(1, 1), stroke="#999", dash="4 3")
    _polylines(
        svg,
        {name: [(b["confidence"], b["accuracy"], b["n"]) for b in bins] for name, bins in series.items()},
        lambda name, x, y, n: f"{name}: confidence {x:.3f}, accuracy {y:.3f}, n {n}",
    )
    return svg.render()


def risk_coverage_chart(series: dict[str, list[dict]]) -> str:
    """Each series' selective risk against coverage ({name: `risk_coverage`}), answering only the
    most confident first; its area is the AURC."""
    svg = _frame("Risk-coverage", "coverage", "risk (share wrong of those answered)", list(series))
    _polylines(
        svg,
        {name: [(p["coverage"], p["risk"], p["threshold"]) for p in curve] for name, curve in series.items()},
        lambda name, x, y, t: f"{name}: confidence ≥ {t:.3g}, coverage {x:.3f}, risk {y:.3f}",
    )
    return svg.render()


def _polylines(svg: Svg, series: dict[str, list[tuple]], title: Callable[[str, float, float, Any], str]) -> None:
    """Each series' points (x, y, what its marker's title adds) joined in order, in the series'
    colour, each point a marker titled `title(name, x, y, added)`."""
    for i, (name, points) in enumerate(series.items()):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        for (x1, y1, _), (x2, y2, _) in zip(points, points[1:]):
            svg.line(*_xy(x1, y1), *_xy(x2, y2), stroke=colour)
        for x, y, added in points:
            svg.marker(*_xy(x, y), colour, title(name, x, y, added))

"""SVG markup for the pages' charts, mark by mark (`Svg`): rectangles, lines, markers, text and
a legend in pixels, an x axis with round ticks (`round_ticks`), and how wide a label is drawn
(`text_width`, wide CJK characters one em).

A page draws a handful of bars, points and labels; matplotlib takes 0.1-0.2 s to lay out each
such figure, which made a page cost 2-5 times its JSON (bench/pages.py). Here each chart is a
few string joins. Labels are SVG text, drawn by the browser with the page's fonts: Japanese,
Hebrew (laid out right to left by the browser's bidirectional algorithm) and Latin labels are
real text, selectable and searchable, and every mark carries a `<title>` with its number.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable
from html import escape

FONT = 11  # px, labels
ROW = 22  # px, one bar or one stratum


def text_width(text: str, size: float = FONT) -> float:
    """About how wide `text` is drawn at `size` px: wide (CJK) characters one em, others 0.6 em."""
    return sum(size if unicodedata.east_asian_width(ch) in "WF" else 0.6 * size for ch in str(text))


class Svg:
    """An SVG document built mark by mark, in pixels."""

    def __init__(self, width: float, height: float, title: str):
        self.width, self.height, self.title = width, height, title
        self.parts: list[str] = []

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str, tip: str | None = None, stroke: str | None = None
    ) -> None:
        inner = f"<title>{escape(tip)}</title>" if tip else ""
        edge = f' stroke="{stroke}" stroke-width="0.5"' if stroke else ""
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{max(h, 0):.1f}" '
            f'fill="{fill}"{edge}>{inner}</rect>'
        )

    def line(
        self,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        stroke: str = "#222",
        width: float = 1,
        dash: str | None = None,
    ) -> None:
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
            f'stroke-width="{width}"{extra}/>'
        )

    def marker(self, x: float, y: float, colour: str, tip: str, shape: str = "circle") -> None:
        body = (
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}">'
            if shape == "circle"
            else f'<path d="M{x:.1f} {y - 5:.1f}L{x + 5:.1f} {y:.1f}L{x:.1f} {y + 5:.1f}L{x - 5:.1f} {y:.1f}Z" '
            f'fill="{colour}">'
        )
        self.parts.append(f"{body}<title>{escape(tip)}</title></{'circle' if shape == 'circle' else 'path'}>")

    def text(
        self,
        x: float,
        y: float,
        text: str,
        anchor: str = "start",
        size: float = FONT,
        fill: str = "#222",
        rotate: float | None = None,
        bold: bool = False,
    ) -> None:
        extra = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate else ""
        weight = ' font-weight="bold"' if bold else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
            f'fill="{fill}"{weight}{extra}>{escape(str(text))}</text>'
        )

    def legend(self, entries: list[tuple[str, str]], y: float) -> None:
        """One row of colour keys centred at height `y`."""
        widths = [18 + text_width(label, 10) + 14 for label, _ in entries]
        self.width = max(self.width, sum(widths) + 8)  # a wide legend widens the chart
        x = max(4.0, (self.width - sum(widths)) / 2)
        for (label, colour), w in zip(entries, widths):
            self.rect(x, y - 9, 12, 10, colour)
            self.text(x + 16, y, label, size=10)
            x += w

    def render(self) -> str:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width:.0f} {self.height:.0f}" '
            f'width="{self.width:.0f}" height="{self.height:.0f}" role="img" font-family="inherit">'
            f"<title>{escape(self.title)}</title>" + "".join(self.parts) + "</svg>"
        )


def round_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values within [low, high], zero among them where the range holds it and never
    written "-0" (a tick a rounding error from zero is zero)."""
    span = max(high - low, 1e-9)
    raw = span / count
    step = 10 ** math.floor(math.log10(raw))
    step = next(s * step for s in (1, 2, 2.5, 5, 10) if s * step >= raw)
    first = math.ceil(low / step) * step
    ticks = (first + i * step for i in range(int((high - first) / step + 1e-9) + 1))
    return [0.0 if abs(t) < 1e-9 * step else t for t in ticks]


def x_axis(
    svg: Svg,
    left: float,
    right: float,
    y: float,
    lo: float,
    hi: float,
    ticks: list[float],
    label: str,
    fmt: Callable[[float], str] = lambda v: f"{v:g}",
) -> None:
    """An x axis at height `y` from `left` to `right` px for values `lo` to `hi`: the line, a tick
    and its value (`fmt`) at each of `ticks`, and `label` under them."""
    scale = (right - left) / (hi - lo)
    svg.line(left, y, right, y)
    for t in ticks:
        x = left + (t - lo) * scale
        svg.line(x, y, x, y + 4)
        svg.text(x, y + 15, fmt(t), anchor="middle", size=10)
    svg.text((left + right) / 2, y + 30, label, anchor="middle", size=10)

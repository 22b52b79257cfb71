"""Every script readable: the compare, audit and item-browser pages mark every text element
`dir="auto"` (Hebrew right to left, Latin and Japanese left to right, each in its own element),
declare one font stack with fallbacks for Latin, Hebrew and Japanese (`render.FONT_STACK`), and
in headless Chromium Hebrew, Japanese, Portuguese and Spanish text renders as glyphs, never as
boxes (tofu).

How the screenshot test tells a glyph from a box. Where a font for a script is missing, Chromium
draws every character of it as the same missing-glyph box (the primary font's `.notdef`). The
page places each character in its own fixed cell, the first cell holding U+10FFFD, a
private-use code point no font draws (a known-missing glyph, so its cell is what a box looks
like on this machine), and takes one screenshot. A character renders as a glyph when its cell's
pixels differ from the box's cell; and since all boxes look alike, the characters of one script
must also differ from each other. The same page shows a Hebrew sentence in a wide `dir="auto"`
paragraph: its ink must sit at the right edge (right to left), a Latin one's at the left.
Headless Chromium and the fonts come from `.ci/run` (apt-get: chromium, fonts-noto-core,
fonts-ipaexfont-gothic); where Chromium is absent the test is skipped, saying so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from medvqa.core.render import FONT_STACK, TEXT_ELEMENTS, bidi_auto

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
]
MISSING = "\U0010fffd"  # a private-use code point: no font has a glyph for it
SCRIPTS = {
    "Hebrew": "אבגדהושלמ",
    "Japanese": "日本語のあア画像",
    "Portuguese": "ãçõêâ",
    "Spanish": "ñ¿¡áé",
}
CELL = 48


def glyph_page() -> str:
    """The test page: one cell per character (the known-missing one first), then a Hebrew and a
    Latin sentence, each in a wide paragraph whose direction follows its text."""
    chars = [MISSING, *"".join(SCRIPTS.values())]
    cells = "".join(f'<span class="c" style="left:{i * CELL}px">{ch}</span>' for i, ch in enumerate(chars))
    return bidi_auto(f"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body{{margin:0;font-family:{FONT_STACK};font-size:32px;background:#fff;color:#000}}
.c{{position:absolute;top:0;width:{CELL}px;height:{CELL}px;line-height:{CELL}px;text-align:center}}
p{{position:absolute;left:0;width:1200px;margin:0;font-size:24px}}
</style></head><body>{cells}<p style="top:{CELL + 10}px">שלום, זו שאלה מהבחינה בישראל</p>
<p style="top:{CELL + 60}px">Qual é o diagnóstico?</p></body></html>""")


def screenshot(chromium: str, page: Path, png: Path, width: int, height: int, profile: Path) -> np.ndarray:
    out = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={width},{height}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and png.is_file(), out.stderr[-2000:]
    from PIL import Image

    return np.asarray(Image.open(png).convert("L"), dtype=np.int16)


def ink(cell: np.ndarray) -> np.ndarray:
    return cell < 128


@pytest.mark.slow  # headless Chromium: a few seconds
def test_every_script_renders_as_glyphs_and_hebrew_runs_right_to_left(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip(
            "headless Chromium is not installed (apt-get install -y chromium fonts-noto-core "
            "fonts-ipaexfont-gothic); CI installs them and runs this check"
        )
    page = tmp_path / "scripts.html"
    page.write_text(glyph_page(), encoding="utf-8")
    chars = [MISSING, *"".join(SCRIPTS.values())]
    shot = screenshot(chromium, page, tmp_path / "scripts.png", CELL * len(chars), CELL + 110, tmp_path / "profile")
    cells = [ink(shot[:CELL, i * CELL : (i + 1) * CELL]) for i in range(len(chars))]
    box = cells[0]
    assert box.sum() > 20, "the missing glyph drew nothing: the screenshot is blank"
    k = 1
    for script, text in SCRIPTS.items():
        mine = cells[k : k + len(text)]
        k += len(text)
        tofu = [ch for ch, c in zip(text, mine) if c.sum() == 0 or np.array_equal(c, box)]
        assert not tofu, f"{script}: {''.join(tofu)} render as boxes (no font with these glyphs)"
        distinct = {c.tobytes() for c in mine}
        assert len(distinct) == len(text), f"{script}: characters render alike (boxes?)"
    hebrew, latin = (ink(shot[CELL + 10 + y0 : CELL + 10 + y0 + 40]) for y0 in (0, 50))
    cols_he, cols_la = np.flatnonzero(hebrew.any(axis=0)), np.flatnonzero(latin.any(axis=0))
    assert cols_he.size and cols_la.size
    assert cols_he.max() > 1100 and cols_he.min() > 600, "the Hebrew paragraph is not right to left"
    assert cols_la.min() < 20 and cols_la.max() < 600, "the Latin paragraph is not left to right"


def test_bidi_auto_marks_text_elements_and_leaves_scripts_styles_and_svg_alone():
    page = (
        "<html><head><title>t</title><style>p{color:red}</style></head><body><h1>כותרת</h1>"
        '<p class="x">a</p><td dir="rtl">b</td><span>c</span><br/><img src="x"/>'
        '<svg><text>d</text><title>tip</title></svg><script>var s = "<p>";</script><b>e</b></body></html>'
    )
    out = bidi_auto(page)
    assert '<h1 dir="auto">כותרת</h1>' in out and '<p dir="auto" class="x">a</p>' in out
    assert '<td dir="rtl">b</td>' in out and '<span dir="auto">c</span>' in out and '<b dir="auto">e</b>' in out
    assert "<svg><text>d</text><title>tip</title></svg>" in out and '<script>var s = "<p>";</script>' in out
    assert "<br/>" in out and '<img src="x"/>' in out and "<style>p{color:red}</style>" in out
    assert bidi_auto(out) == out  # once is enough


def unmarked(page: str) -> list[str]:
    """Opening tags of text elements without `dir`, outside scripts, styles and SVG."""
    body = re.sub(r"<(script|style|svg)\b.*?</\1>", "", page, flags=re.S | re.I)
    tags = re.findall(r"<(?:{})(?=[\s>/])[^>]*>".format("|".join(TEXT_ELEMENTS)), body, flags=re.I)
    return [t for t in tags if " dir=" not in t]


@pytest.fixture(scope="module")
def hebrew_runs(tmp_path_factory):
    """WorldMedQA-V runs in Hebrew and Portuguese, and in English (tests/adapters/worldmedqa_v/synthetic.py)."""
    from tests.adapters.worldmedqa_v.synthetic import build

    return build(tmp_path_factory.mktemp("hebrew"))


def test_compare_audit_and_view_pages_mark_every_text_and_share_the_font_stack(hebrew_runs, tmp_path):
    from click.testing import CliRunner

    from medvqa.cli.main import cli
    from medvqa.core import view

    runs = [d for (model, country, _, _), d in hebrew_runs.items() if model == "Alpha" and country == "israel"]
    result = CliRunner().invoke(
        cli, ["compare", *map(str, runs), "--resamples", "20", "--html", str(tmp_path / "cmp.html")]
    )
    assert result.exit_code == 0, result.output
    pages = {
        "compare": tmp_path / "cmp.html",
        "view": tmp_path / "cmp-items.html",
        "audit": next((tmp_path / "cmp-audits").glob("*.html")),
    }
    for name, path in pages.items():
        text = path.read_text(encoding="utf-8")
        assert FONT_STACK in text, name
        assert not unmarked(text), (name, unmarked(text)[:5])
    assert "מה האבחנה" in pages["view"].read_text(encoding="utf-8")  # the items, in Hebrew, in the browser's data
    script = (Path(view.__file__).with_name("view_assets") / "view.js").read_text(encoding="utf-8")
    assert 'node.setAttribute("dir", "auto")' in script  # the browser's elements, built in the page, too


def test_figures_draw_hebrew_japanese_portuguese_and_spanish_labels_with_real_glyphs():
    """matplotlib warns "Glyph ... missing from font(s)" where it would draw a box: as an error
    here, for a figure whose panels and models are named in every script."""
    import io
    import warnings

    from medvqa.core.audit.figures import figure_style
    from medvqa.core.compare.figure import panel_figure

    levels = ["ישראל", "日本", "España", "Brasil"]
    table = [{"value": 0.5 + 0.03 * i, "ci_low": 0.4, "ci_high": 0.8, "n": 10} for i in range(8)]
    cells = [
        {"level": level, "model": model, "language": "local", "row": 2 * i + j}
        for i, level in enumerate(levels)
        for j, model in enumerate(["Modelo ñandú", "モデル"])
    ]
    panel = {
        "benchmark": "demo",
        "stratum": "país",
        "condition": "C+Q+I",
        "levels": levels,
        "models": ["Modelo ñandú", "モデル"],
        "languages": ["local"],
        "cells": cells,
        "pass_lines": {"日本": 0.7, "ישראל": 0.6},
    }
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*missing.*")
        with figure_style():
            panel_figure({"table": table}, panel).savefig(io.BytesIO(), format="png", dpi=50)


def test_hebrew_labels_are_laid_out_right_to_left_in_figures():
    from medvqa.core.compare.figure import visual

    assert visual("ישראל") == "לארשי" and visual("שלום עולם") == "םלוע םולש"
    assert visual("ישראל (pass line 60.0 %)") == "לארשי (pass line 60.0 %)"
    assert visual("日本 España") == "日本 España"


@pytest.mark.slow  # headless Chromium: a few seconds
def test_the_item_browser_of_hebrew_runs_marks_what_its_script_builds(hebrew_runs, tmp_path):
    """The item browser builds its items in the page (view.js): in Chromium, after its script ran,
    every text element it built has `dir="auto"`, and the Hebrew question is there."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium is not installed (apt-get install -y chromium); CI installs it")
    import medvqa

    runs = [d for (model, country, _, cond), d in hebrew_runs.items() if country == "israel" and cond == "C+Q+I"]
    page = medvqa.view(*runs, html=tmp_path / "view.html")
    out = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", Path(page).as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    dom = out.stdout
    items = dom[dom.index('id="items"') :]
    assert "מה האבחנה הסבירה ביותר" in items  # the Hebrew stem, built by the script
    assert items.count('class="item"') >= 10
    assert not unmarked(dom), unmarked(dom)[:5]

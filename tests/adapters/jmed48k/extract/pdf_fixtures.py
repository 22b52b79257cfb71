"""Small MHLW-like PDFs drawn with reportlab for the extraction tests.

The question booklet prints 13 questions with the layouts the extractor must handle (hanging
question numbers, two-column options, letter options, a shared case text, table options, a
numeric-entry grid, vector and raster figures, sub/superscripts, justified spreading, running
header/footer, page numbers, doubled printer's marks and crop marks outside the TrimBox).
`EXPECTED` is what each question says, written by hand from what is drawn here.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

FONT = "IPAexGothic"
W, H = 595.0, 842.0
TRIM = (40.0, 40.0, 555.0, 802.0)
SIZE = 10.0


def __getattr__(name: str):
    """`FONT_PATH`, found on first use: the module that finds it imports matplotlib (seconds),
    which collecting the tests should not pay for."""
    if name == "FONT_PATH":
        from medvqa.core.audit.figures import japanese_font_path

        globals()["FONT_PATH"] = japanese_font_path() or Path("matplotlib_fontja/fonts/ipaexg.ttf")
        return globals()["FONT_PATH"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register_font() -> None:
    font_path = globals().get("FONT_PATH") or __getattr__("FONT_PATH")
    if not font_path.is_file():
        pytest.fail(
            f"Japanese test PDFs need the IPAex Gothic font at {font_path}, which the "
            "matplotlib-fontja dependency ships: pip install -e '.[dev]'",
            pytrace=False,
        )
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    if FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont(FONT, str(font_path)))


def picture(seed: int, size=(160, 110)) -> Image.Image:
    """A non-blank raster picture, different for each seed."""
    image = Image.new("RGB", size, (20 + seed * 30 % 200, 60, 90))
    draw = ImageDraw.Draw(image)
    draw.ellipse((10 + seed * 7 % 40, 10, 90, 90), fill=(230, 230, 230))
    draw.rectangle((100, 20 + seed * 5 % 40, 150, 100), fill=(250, 160, 20))
    return image


class Page:
    """Draws in the upright reading frame whatever the page's /Rotate. With `rotate=90` the
    page shows portrait (reportlab makes the MediaBox landscape) and the content is drawn
    turned so that the viewer's rotation sets it upright; `sideways=True` prints a
    landscape reading frame turned on a portrait page without /Rotate."""

    def __init__(self, c, rotate: int = 0, sideways: bool = False):
        assert rotate in (0, 90)
        self.c, self.rotate, self.sideways = c, rotate, sideways
        c.setPageRotation(rotate)  # reportlab keeps the last rotation for later pages
        if rotate:
            c.saveState()
            c.transform(0, 1, -1, 0, H, 0)
        elif sideways:
            c.saveState()
            c.transform(0, 1, -1, 0, W, 0)
        self.turned = bool(rotate) or sideways
        self.width, self.height = (H, W) if sideways else (W, H)

    def text(self, x: float, y_top: float, s: str, size: float = SIZE, rise: float = 0.0) -> float:
        """Draw `s` with its top at `y_top` from the top; returns the x after it."""
        self.c.setFont(FONT, size)
        self.c.drawString(x, self.height - y_top - SIZE + rise, s)
        from reportlab.pdfbase.pdfmetrics import stringWidth

        return x + stringWidth(s, FONT, size)

    def runs(self, x: float, y_top: float, runs: list[tuple[str, str]]) -> float:
        """Text runs: ("", text), ("sup", text), ("sub", text)."""
        for kind, s in runs:
            if kind == "sup":
                x = self.text(x, y_top, s, SIZE * 0.6, rise=SIZE * 0.5)
            elif kind == "sub":
                x = self.text(x, y_top, s, SIZE * 0.6, rise=-SIZE * 0.25)
            else:
                x = self.text(x, y_top, s)
        return x

    def image(self, img: Image.Image, x: float, y_top: float, w: float, h: float) -> None:
        from reportlab.lib.utils import ImageReader

        buf = io.BytesIO()
        img.save(buf, format="PNG")
        buf.seek(0)
        self.c.drawImage(ImageReader(buf), x, self.height - y_top - h, w, h)

    def finish(self) -> None:
        if self.turned:
            self.c.restoreState()
        self.c.showPage()


def _furniture(page: Page, number: int) -> None:
    """Running header, footer code, page number; printer's marks outside the TrimBox."""
    c = page.c
    c.setTrimBox((TRIM[1], TRIM[0], TRIM[3], TRIM[2]) if page.rotate else TRIM)
    page.text(230, 60, "第 1 回 模擬試験 午前")
    page.text(270, page.height - 70, f"― {number} ―")
    page.text(430, page.height - 68, f"MOCK-01-前H-{number}", size=7.8)
    if not page.turned:
        for _ in range(2):  # overprinted: every character doubled in the text layer
            page.text(45, 820, f"MOCK01午前H.indd {number}", size=6)
        c.setLineWidth(0.3)
        for x, y in ((20, 40), (575, 40), (20, 802), (575, 802)):
            c.line(x - 10, y, x + 10, y)
            c.line(x, y - 10, x, y + 10)


def _question(page: Page, y: float, number: int, stem: list, options: list, columns: int = 1) -> float:
    """Question number hanging at x=60, stem at x=80, options at x=90 (or two columns)."""
    page.text(64 if number < 10 else 58, y, str(number))
    for line in stem:
        page.runs(80, y, line) if isinstance(line, list) else page.text(80, y, line)
        y += 18
    for i in range(0, len(options), columns):
        for k, opt in enumerate(options[i : i + columns]):
            x = 90 + k * 210
            page.runs(x, y, opt) if isinstance(opt, list) else page.text(x, y, opt)
        y += 18
    return y + 24


EXPECTED = {
    1: {
        "text": "¹⁸F-FDG PETとSpO₂で正しいのはどれか。",
        "options": {"1": "補体", "2": "functional MRI", "3": "T₁強調像", "4": "⁹⁹ᵐTc", "5": "ＣＴ値"},
    },
    2: {
        "text": "膵炎で正しいのはどれか。２つ選べ。",
        "options": {
            "a": "膵の萎縮を認める。",
            "b": "高齢男性に好発する。",
            "c": "病理で線維化を認める。",
            "d": "IgG4関連疾患に含まれる。",
            "e": "治療は手術である。",
        },
    },
    3: {
        "text": "この患者の診断はどれか。2つ選べ。",
        "options": {"1": "肺炎", "2": "心不全", "3": "肺塞栓症", "4": "気胸", "5": "喘息"},
    },
    4: {
        "text": "胸部X線写真（別冊No. 1Ａ）と胸部CT（別冊No. 1Ｂ）を別に示す。矢印で示すのはどれか。",
        "options": {"1": "気管", "2": "食道", "3": "大動脈", "4": "肺動脈", "5": "上大静脈"},
    },
    5: {"text": "体重50 kgの患者の水分出納を求めよ。解答：①②③mL", "options": {}},
    6: {
        "text": "装置の構成を図に示す。正しいのはどれか。",
        "options": {
            "1": "均一性",
            "2": "空間分解能",
            "3": "スライス厚",
            "4": "幾何学的ひずみ",
            "5": "画像コントラスト",
        },
    },
    7: {
        "text": "組合せで正しいのはどれか。",
        "options": {
            "1": "ア | 腓腹筋",
            "2": "イ | 外側広筋",
            "3": "ウ | 内側半月板",
            "4": "エ | 前十字靱帯",
            "5": "オ | 膝蓋靱帯",
        },
    },
    8: {
        "text": "別に示すオージオグラム（別冊No. 2 1～5）のうちこの患者のものはどれか。",
        "options": {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"},
    },
    9: {
        "text": "写真を図に示す。正しいのはどれか。",
        "options": {"1": "肝臓", "2": "脾臓", "3": "腎臓", "4": "膵臓", "5": "胆囊"},
    },
}
EXPECTED.update(
    {
        n: {"text": f"第{n}問で正しいのはどれか。", "options": {str(k): f"選択肢{n}-{k}" for k in range(1, 6)}}
        for n in range(10, 14)
    }
)
CASE_TEXT = "65歳の男性。呼吸困難を主訴に来院した。SpO₂は90％である。"
CASE_QUESTIONS = (3, 4)


def question_booklet(path: Path, rotate: int = 0) -> Path:
    """Ten pages: a cover, then the 13 questions of EXPECTED. `rotate` gives every page that
    /Rotate (content drawn so that it reads upright in a viewer)."""
    register_font()
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=(W, H))
    pages = [
        _cover,
        _page_q1_q2,
        _page_q3_q4,
        _page_q5,
        _page_q6,
        _page_q7_q8,
        _page_q9,
        lambda p: _plain(p, (10, 11)),
        lambda p: _plain(p, (12, 13)),
    ]
    for number, draw in enumerate(pages, start=1):
        p = Page(c, rotate)
        draw(p)
        _furniture(p, number)
        p.finish()
    c.save()
    return path


def _cover(p: Page) -> None:
    """Instructions that look like options must be ignored."""
    p.text(200, 120, "第 1 回 模擬試験 午前　問題冊子")
    p.text(90, 180, "1．試験問題の数は 13 問である。")
    p.text(90, 198, "2．解答方法は次のとおりである。")


def _page_q1_q2(p: Page) -> None:
    stem = [[("sup", "18"), ("", "F-FDG PET と Sp"), ("", "O"), ("sub", "2"), ("", " で正しいのはどれか。")]]
    options = [
        [("", "1．補")],
        [("", "2．functional MRI")],
        [("", "3．T"), ("sub", "1"), ("", " 強調像")],
        [("", "4．"), ("sup", "99m"), ("", "Tc")],
        [("", "5．ＣＴ値")],
    ]
    y = _question(p, 100, 1, stem, options, columns=2)
    p.text(120, 118, "体")  # `補 体`: a two-character word spread over three ems
    y = _question(
        p,
        y,
        2,
        ["膵炎で正しいのはどれか。 ２つ選べ。"],
        [
            "a　膵の萎縮を認める。",
            "b　高齢男性に好発する。",
            "c　病理で線維化を認める。",
            "d　IgG4 関連疾患に含まれる。",
            "e　治療は手術である。",
        ],
    )
    p.text(80, y, "次の文を読み、 3、 4 の問いに答えよ。")
    p.text(80, y + 18, "65 歳の男性。呼吸困難を主訴に来院した。")
    p.runs(80, y + 36, [("", "Sp"), ("", "O"), ("sub", "2"), ("", " は 90％である。")])


def _page_q3_q4(p: Page) -> None:
    y = _question(
        p,
        100,
        3,
        ["この患者の診断はどれか。 2 つ選べ。"],
        ["1．肺炎", "2．心不全", "3．肺塞栓症", "4．気胸", "5．喘息"],
    )
    y = _question(
        p,
        y,
        4,
        ["胸部 X 線写真（別冊No. 1Ａ）と胸部 CT（別冊No. 1Ｂ）を別に示", "す。", "矢印で示すのはどれか。"],
        ["1．気管", "2．食道", "3．大動脈", "4．肺動脈", "5．上大静脈"],
    )
    p.c.rect(300, p.height - y + 2, 60, 34, stroke=1, fill=0)  # the 別冊 box beside the options
    p.text(312, y - 30, "別 冊")
    p.text(312, y - 17, "No. 1")


def _page_q5(p: Page) -> None:
    _question(
        p,
        100,
        5,
        ["体重 50 kg の患者の水分出納を求めよ。", "解答：①②③ mL"],
        ["①　②　③", "0　0　0", "1　1　1", "2　2　2"],
    )


def _page_q6(p: Page) -> None:
    p.text(64, 100, "6")
    p.text(80, 100, "装置の構成を図に示す。")
    p.text(80, 118, "正しいのはどれか。")
    p.c.setLineWidth(1)
    p.c.rect(120, p.height - 230, 200, 90, stroke=1, fill=0)
    p.c.circle(220, p.height - 185, 30, stroke=1, fill=0)
    p.c.line(120, p.height - 140, 320, p.height - 230)
    p.text(325, 180, "z")
    for k, opt in enumerate(EXPECTED[6]["options"].values()):
        p.text(90, 250 + 18 * k, f"{k + 1}．{opt}")


def _page_q7_q8(p: Page) -> None:
    y = _question(
        p,
        100,
        7,
        ["組合せで正しいのはどれか。"],
        [
            "1．ア　　　　　　腓腹筋",
            "2．イ　　　　　　外側広筋",
            "3．ウ　　　　　　内側半月板",
            "4．エ　　　　　　前十字靱帯",
            "5．オ　　　　　　膝蓋靱帯",
        ],
    )
    _question(
        p,
        y,
        8,
        ["別に示すオージオグラム（別冊No. 2 1～5）のうちこの患者のものは", "どれか。"],
        ["a　1", "b　2", "c　3", "d　4", "e　5"],
    )


def _page_q9(p: Page) -> None:
    p.text(64, 100, "9")
    p.text(80, 100, "写真を図に示す。正しいのはどれか。")
    p.image(picture(9), 120, 124, 160, 110)
    for k, opt in enumerate(EXPECTED[9]["options"].values()):
        p.text(90, 250 + 18 * k, f"{k + 1}．{opt}")


def _plain(p: Page, numbers: tuple[int, ...]) -> None:
    y = 100
    for n in numbers:
        y = _question(p, y, n, [f"第 {n} 問で正しいのはどれか。"], [f"{k}．選択肢{n}-{k}" for k in range(1, 6)])


def figure_booklet(path: Path) -> Path:
    """A figure booklet with a text layer: a cover; No. 1Ａ on a page with /Rotate 90; No. 1Ｂ
    printed sideways on an unrotated page; No. 2 with five panels (the options of question 8)."""
    register_font()
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=(W, H))
    p = Page(c)
    p.text(260, 300, "別　冊")
    p.text(250, 330, "午　前")
    p.finish()
    for n, (kwargs, caption) in enumerate(
        (({"rotate": 90}, "No. 1Ａ （問題 4）"), ({"sideways": True}, "No. 1Ｂ （問題 4）"))
    ):
        p = Page(c, **kwargs)
        p.text(300, 70, caption, size=12)
        p.image(picture(n + 1, (240, 160)), 260, 100, 300, 200)
        p.finish()
    p = Page(c)
    p.text(240, 70, "No. 2 （問題 8）", size=12)
    for k in range(5):
        p.image(picture(10 + k, (100, 100)), 60 + k * 98, 110, 90, 90)
        p.text(100 + k * 98, 205, str(k + 1))
    p.finish()
    c.save()
    return path


ANSWER_FORMS = {  # question → key as an MHLW table prints it, and the record it must give
    1: ("1 or 4", [["1"], ["4"]]),
    2: ("ce", ["C", "E"]),
    3: ("2, 4", ["2", "4"]),
    4: ("1又は4", [["1"], ["4"]]),
    5: ("600", ["6", "0", "0"]),
    6: ("3", ["3"]),
    7: ("2及び4又は3及び4", [["2", "4"], ["3", "4"]]),
    8: ("b", ["B"]),
    9: ("採点除外", None),
    10: ("解なし", None),
    11: ("全員正解", None),
    12: ("", None),
    13: ("2,4", ["2", "4"]),
}


def answer_pdf(path: Path, forms: dict = ANSWER_FORMS, section: str = "午前") -> Path:
    """An MHLW-style 正答 table: a heading, then `問題番号 | 正答` pairs in two column blocks."""
    register_font()
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    items = list(forms.items())
    half = (len(items) + 1) // 2
    rows = [["問題番号", "正答", "問題番号", "正答"]]
    for i in range(half):
        left = items[i]
        right = items[i + half] if i + half < len(items) else None
        rows.append([str(left[0]), left[1][0], str(right[0]) if right else "", right[1][0] if right else ""])
    table = Table(rows, colWidths=[70, 120, 70, 120])
    table.setStyle(TableStyle([("FONT", (0, 0), (-1, -1), FONT, 10), ("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    style = ParagraphStyle("h", fontName=FONT, fontSize=14)
    SimpleDocTemplate(str(path), pagesize=A4).build(
        [Paragraph(f"第 1 回 模擬試験 正答 {section}", style), Spacer(1, 12), table]
    )
    return path


def answer_csv(path: Path, forms: dict = ANSWER_FORMS, section: str = "A", extra: dict | None = None) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["問題番号", "解答"])
        for number, (raw, _) in {**forms, **(extra or {})}.items():
            writer.writerow([f"119{section}{number}", raw])
    return path

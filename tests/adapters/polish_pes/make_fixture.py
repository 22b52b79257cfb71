"""Writes the small Polish PES fixture in `data/`: vqa.jsonl, qa.jsonl and six PNGs (an ECG-like
waveform, a lab table, a glucose curve, a chest-radiograph-like image, a schematic and a
two-panel composite). Run `python -m tests.adapters.polish_pes.make_fixture` after changing it.

Three specialties, every image importance (0, 1, 2), every visual domain, one multi-domain item
(WAVEFORM + TABLE), two items annulled by CEM (one VQA, one QA), examinee answers on four items.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

DATA = Path(__file__).parent / "data"
W, H = 320, 180


def ecg() -> Image.Image:
    im = Image.new("RGB", (W, H), (255, 245, 245))
    d = ImageDraw.Draw(im)
    for x in range(0, W, 8):
        d.line([(x, 0), (x, H)], fill=(250, 200, 200) if x % 40 else (240, 150, 150))
    for y in range(0, H, 8):
        d.line([(0, y), (W, y)], fill=(250, 200, 200) if y % 40 else (240, 150, 150))
    pts = []
    for x in range(W):
        t = (x % 64) / 64
        y = 0.08 * math.exp(-(((t - 0.15) / 0.03) ** 2))  # P
        y += -0.1 * math.exp(-(((t - 0.33) / 0.008) ** 2)) + 0.9 * math.exp(-(((t - 0.36) / 0.01) ** 2))  # QRS
        y += -0.2 * math.exp(-(((t - 0.39) / 0.01) ** 2)) + 0.18 * math.exp(-(((t - 0.6) / 0.05) ** 2))  # S, T
        pts.append((x, H * 0.65 - 90 * y))
    d.line(pts, fill=(20, 20, 20), width=2)
    d.text((6, 4), "II  25 mm/s  10 mm/mV", fill=(0, 0, 0))
    return im


def table() -> Image.Image:
    im = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(im)
    rows = [
        ("Parametr", "Wynik", "Norma"),
        ("Hb", "8.9 g/dl", "12-16"),
        ("MCV", "68 fl", "80-96"),
        ("Ferrytyna", "6 ng/ml", "15-150"),
        ("TIBC", "480 ug/dl", "250-400"),
    ]
    for i, row in enumerate(rows):
        y = 10 + i * 32
        for j, cell in enumerate(row):
            d.rectangle([10 + j * 100, y, 110 + j * 100, y + 32], outline="black")
            d.text((16 + j * 100, y + 10), cell, fill="black")
    return im


def plot() -> Image.Image:
    im = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(im)
    d.line([(30, 10), (30, H - 25), (W - 10, H - 25)], fill="black", width=2)
    xs = [0, 30, 60, 90, 120]
    ys = [92, 210, 245, 230, 205]  # mg/dl after a 75 g glucose load
    pts = [(30 + x * 2.2, H - 25 - (y - 60) * 0.6) for x, y in zip(xs, ys)]
    d.line(pts, fill=(30, 60, 200), width=2)
    for p in pts:
        d.ellipse([p[0] - 3, p[1] - 3, p[0] + 3, p[1] + 3], fill=(30, 60, 200))
    d.text((36, 4), "glukoza [mg/dl]", fill="black")
    d.text((W - 70, H - 18), "czas [min]", fill="black")
    return im


def radiograph() -> Image.Image:
    rng = random.Random(7)
    im = Image.new("L", (W, H), 20)
    d = ImageDraw.Draw(im)
    d.ellipse([60, 20, 150, 170], fill=90)
    d.ellipse([170, 20, 260, 170], fill=90)
    d.rectangle([150, 10, 170, 175], fill=160)  # spine
    d.ellipse([190, 110, 245, 160], fill=150)  # an opacity in the right lower field
    for _ in range(1500):
        x, y = rng.randrange(W), rng.randrange(H)
        d.point((x, y), fill=rng.randrange(40, 120))
    return im.filter(ImageFilter.GaussianBlur(1.5)).convert("RGB")


def graphic() -> Image.Image:
    im = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(im)
    boxes = [(20, 70, "A"), (130, 20, "B"), (130, 120, "C"), (240, 70, "D")]
    for x, y, name in boxes:
        d.rectangle([x, y, x + 60, y + 40], outline="black", width=2)
        d.text((x + 26, y + 14), name, fill="black")
    for (x1, y1), (x2, y2) in [
        ((80, 90), (130, 40)),
        ((80, 90), (130, 140)),
        ((190, 40), (240, 90)),
        ((190, 140), (240, 90)),
    ]:
        d.line([(x1, y1), (x2, y2)], fill="black", width=2)
        d.polygon([(x2, y2), (x2 - 8, y2 - 4), (x2 - 6, y2 + 6)], fill="black")
    return im


def composite() -> Image.Image:
    im = Image.new("RGB", (W, H), "white")
    left, right = radiograph().resize((W // 2 - 6, H - 20)), plot().resize((W // 2 - 6, H - 20))
    im.paste(left, (2, 18))
    im.paste(right, (W // 2 + 4, 18))
    d = ImageDraw.Draw(im)
    d.text((6, 2), "a)", fill="black")
    d.text((W // 2 + 8, 2), "b)", fill="black")
    return im


IMAGES = {
    "ekg.png": ecg,
    "tabela.png": table,
    "krzywa.png": plot,
    "rtg.png": radiograph,
    "schemat.png": graphic,
    "panel.png": composite,
}

KARD, INT, RAD = "Kardiologia", "Choroby wewnętrzne", "Radiologia i diagnostyka obrazowa"


def vqa_items() -> list[dict]:
    def item(
        id,
        specialty,
        sheet,
        year,
        quarter,
        question,
        options,
        answer,
        images,
        importance,
        domains,
        invalid=None,
        human=None,
    ):
        return {
            "id": id,
            "year": year,
            "quarter": quarter,
            "specialty": specialty,
            "sheet": sheet,
            "question": question,
            "options": dict(zip("ABCDE", options)),
            "answer": answer,
            "images": [f"images/{i}" for i in images],
            "image_importance": importance,
            "visual_domains": domains,
            "invalid": invalid,
            "human_answers": human,
        }

    return [
        item(
            "pes-v-kar-01",
            KARD,
            "KAR-2024-Spring",
            2024,
            "Spring",
            "Na podstawie przedstawionego zapisu EKG wskaż najbardziej prawdopodobne rozpoznanie.",
            [
                "Migotanie przedsionków",
                "Blok przedsionkowo-komorowy III stopnia",
                "Rytm zatokowy miarowy",
                "Częstoskurcz komorowy",
                "Trzepotanie przedsionków",
            ],
            "C",
            ["ekg.png"],
            2,
            ["WAVEFORM"],
            human={"A": 2, "B": 3, "C": 12, "D": 1, "E": 2},
        ),
        item(
            "pes-v-kar-02",
            KARD,
            "KAR-2024-Spring",
            2024,
            "Spring",
            "U 68-letniego pacjenta wykonano EKG i badania laboratoryjne (tabela). Jakie postępowanie jest właściwe?",
            [
                "Pilna koronarografia",
                "Suplementacja żelaza i diagnostyka przyczyny niedokrwistości",
                "Wszczepienie stymulatora",
                "Kardiowersja elektryczna",
                "Leczenie trombolityczne",
            ],
            "B",
            ["ekg.png", "tabela.png"],
            2,
            ["WAVEFORM", "TABLE"],
        ),
        item(
            "pes-v-kar-03",
            KARD,
            "KAR-2025-Autumn",
            2025,
            "Autumn",
            "Wykres przedstawia wyniki próby wysiłkowej. Które stwierdzenie jest prawdziwe?",
            [
                "Próba dodatnia",
                "Próba ujemna",
                "Próba niediagnostyczna",
                "Wskazana koronarografia",
                "Wskazana scyntygrafia",
            ],
            "C",
            ["krzywa.png"],
            1,
            ["PLOT"],
            invalid="Pytanie unieważnione: błąd merytoryczny w treści pytania",
        ),
        item(
            "pes-v-int-01",
            INT,
            "INT-2023-Autumn",
            2023,
            "Autumn",
            "Wyniki badań laboratoryjnych 34-letniej kobiety przedstawiono w tabeli. Rozpoznanie to:",
            [
                "Niedokrwistość z niedoboru witaminy B12",
                "Talasemia beta",
                "Niedokrwistość chorób przewlekłych",
                "Niedokrwistość z niedoboru żelaza",
                "Niedokrwistość hemolityczna",
            ],
            "D",
            ["tabela.png"],
            1,
            ["TABLE"],
            human={"A": 1, "C": 4, "D": 15},
        ),
        item(
            "pes-v-int-02",
            INT,
            "INT-2023-Autumn",
            2023,
            "Autumn",
            "Wykonano doustny test obciążenia 75 g glukozy (wykres). Stężenie glukozy w 120. minucie wskazuje na:",
            [
                "Cukrzycę",
                "Prawidłową tolerancję glukozy",
                "Nieprawidłową glikemię na czczo",
                "Hipoglikemię reaktywną",
                "Insulinooporność bez zaburzeń glikemii",
            ],
            "A",
            ["krzywa.png"],
            0,
            ["PLOT"],
        ),
        item(
            "pes-v-rad-01",
            RAD,
            "RAD-2026-Spring",
            2026,
            "Spring",
            "Na zdjęciu RTG klatki piersiowej w projekcji PA widoczne jest zacienienie. Jego lokalizacja to:",
            [
                "Górne pole płuca lewego",
                "Śródpiersie przednie",
                "Górne pole płuca prawego",
                "Wnęka lewa",
                "Dolne pole płuca prawego",
            ],
            "E",
            ["rtg.png"],
            2,
            ["IMAGE"],
        ),
        item(
            "pes-v-rad-02",
            RAD,
            "RAD-2026-Spring",
            2026,
            "Spring",
            "Schemat przedstawia drogę przepływu kontrastu. Który element odpowiada żyle głównej górnej?",
            ["Element A", "Element B", "Element C", "Element D", "Żaden z elementów"],
            "B",
            ["schemat.png"],
            1,
            ["GRAPHIC"],
        ),
        item(
            "pes-v-rad-03",
            RAD,
            "RAD-2025-Autumn",
            2025,
            "Autumn",
            "Panel przedstawia zdjęcie RTG (a) i krzywą wzmocnienia (b). Najbardziej prawdopodobne rozpoznanie to:",
            ["Hamartoma", "Zapalenie płuc", "Ropień płuca", "Rak płuca", "Gruźliczak"],
            "A",
            ["panel.png"],
            2,
            ["COMPOSITE"],
            human={"A": 6, "B": 2, "C": 1, "D": 9, "E": 2},
        ),
    ]


def qa_items() -> list[dict]:
    def item(id, specialty, sheet, year, quarter, question, options, answer, invalid=None, human=None):
        return {
            "id": id,
            "year": year,
            "quarter": quarter,
            "specialty": specialty,
            "sheet": sheet,
            "question": question,
            "options": dict(zip("ABCDE", options)),
            "answer": answer,
            "invalid": invalid,
            "human_answers": human,
        }

    return [
        item(
            "pes-q-kar-01",
            KARD,
            "KAR-2024-Spring",
            2024,
            "Spring",
            "Lekiem pierwszego wyboru w przerwaniu napadu częstoskurczu nawrotnego węzłowego jest:",
            ["Adenozyna", "Amiodaron", "Digoksyna", "Werapamil doustnie", "Propafenon doustnie"],
            "A",
            human={"A": 14, "B": 4, "E": 2},
        ),
        item(
            "pes-q-kar-02",
            KARD,
            "KAR-2025-Autumn",
            2025,
            "Autumn",
            "Docelowe stężenie cholesterolu LDL u chorego bardzo wysokiego ryzyka wynosi:",
            ["< 100 mg/dl", "< 55 mg/dl", "< 70 mg/dl", "< 116 mg/dl", "< 40 mg/dl"],
            "B",
        ),
        item(
            "pes-q-int-01",
            INT,
            "INT-2023-Autumn",
            2023,
            "Autumn",
            "Najczęstszą przyczyną zespołu Cushinga jest:",
            [
                "Gruczolak kory nadnerczy",
                "Ektopowe wydzielanie ACTH",
                "Jatrogenna podaż glikokortykosteroidów",
                "Gruczolak przysadki",
                "Rak kory nadnerczy",
            ],
            "C",
        ),
        item(
            "pes-q-int-02",
            INT,
            "INT-2023-Autumn",
            2023,
            "Autumn",
            "Które z badań jest najczulsze w diagnostyce celiakii?",
            [
                "Przeciwciała przeciw transglutaminazie tkankowej IgA",
                "Przeciwciała przeciwgliadynowe",
                "Biopsja jelita cienkiego",
                "Test oddechowy",
                "Kalprotektyna w kale",
            ],
            "A",
            invalid="Pytanie unieważnione: dwie prawidłowe odpowiedzi",
        ),
        item(
            "pes-q-rad-01",
            RAD,
            "RAD-2026-Spring",
            2026,
            "Spring",
            "Badaniem z wyboru w podejrzeniu rozwarstwienia aorty u stabilnego pacjenta jest:",
            [
                "RTG klatki piersiowej",
                "USG jamy brzusznej",
                "Rezonans magnetyczny bez kontrastu",
                "Angio-TK aorty",
                "Scyntygrafia perfuzyjna",
            ],
            "D",
        ),
        item(
            "pes-q-rad-02",
            RAD,
            "RAD-2025-Autumn",
            2025,
            "Autumn",
            "Jednostka Hounsfielda wody wynosi:",
            ["-1000 HU", "100 HU", "-100 HU", "1000 HU", "0 HU"],
            "E",
        ),
    ]


def main() -> None:
    (DATA / "images").mkdir(parents=True, exist_ok=True)
    for name, draw in IMAGES.items():
        draw().save(DATA / "images" / name, optimize=True)
    for name, rows in (("vqa.jsonl", vqa_items()), ("qa.jsonl", qa_items())):
        with open(DATA / name, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

"""The three-item fixture a new adapter ships (`fixture/items.jsonl` and its one image): the
items in English with up to ten options each, written under the exam's option labels, so that
the scaffolded tests and the conformance kit have an item with one answer, one with two and one
with an image.
"""

from __future__ import annotations

import io
from typing import Any, TypedDict


class FixtureItem(TypedDict, total=False):
    """A fixture item before labelling: options as a list, answers as positions in it."""

    id: str
    question: str
    options: list[str]
    answer: int | list[int]
    subject: str
    images: list[str]


# The items: as many options as the exam has labels (the first ones of each list), the
# answers given by position (the second option; the first and third; the third).
FIXTURE_ITEMS: list[FixtureItem] = [
    {
        "id": "q1",
        "question": "Which organ secretes insulin?",
        "options": [
            "Liver",
            "Pancreas",
            "Kidney",
            "Spleen",
            "Gallbladder",
            "Stomach",
            "Thyroid gland",
            "Adrenal gland",
            "Lung",
            "Heart",
        ],
        "answer": 1,
        "subject": "endocrinology",
    },
    {
        "id": "q2",
        "question": "Which two vessels carry oxygenated blood in an adult?",
        "options": [
            "Pulmonary vein",
            "Pulmonary artery",
            "Aorta",
            "Superior vena cava",
            "Inferior vena cava",
            "Portal vein",
            "Internal jugular vein",
            "Femoral vein",
            "Coronary sinus",
            "Great saphenous vein",
        ],
        "answer": [0, 2],
        "subject": "cardiology",
    },
    {
        "id": "q3",
        "question": "The image shows one round cell on a plain background. What shape is the cell?",
        "options": [
            "Square",
            "Triangle",
            "Round",
            "Star-shaped",
            "Hexagonal",
            "Crescent-shaped",
            "Rectangular",
            "Diamond-shaped",
            "Spindle-shaped",
            "Heart-shaped",
        ],
        "answer": 2,
        "subject": "haematology",
        "images": ["images/q3.png"],
    },
]


def fixture_rows(labels: tuple[str, ...]) -> list[dict[str, Any]]:
    """The fixture's lines of `items.jsonl`, their options and answers under `labels`."""
    rows = []
    for item in FIXTURE_ITEMS:
        answer = item["answer"]
        rows.append(
            {
                **item,
                "options": dict(zip(labels, item["options"])),
                "answer": [labels[i] for i in answer] if isinstance(answer, list) else labels[answer],
            }
        )
    return rows


def image_png() -> bytes:
    """The PNG of q3: one round red cell on a white background."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (96, 96), "white")
    ImageDraw.Draw(image).ellipse((24, 24, 72, 72), fill=(200, 40, 60), outline="black")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()

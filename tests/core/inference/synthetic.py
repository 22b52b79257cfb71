"""Synthetic exams in the JMed48k release layout, of any size, for runs against the test server.

`write_exam(root, n_items, image_every=k)` writes `root/JMed48k/Physician/Physician_2099/`
with `n_items` five-option questions (distinct stems, so distinct request keys) and, on every
k-th item, a content image drawn with Pillow (a handful of distinct PNGs, reused). The
benchmark scripts import it too.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

YEAR = 2099
LABELS = "abcde"


def draw_image(path: Path, seed: int, side: int = 384) -> None:
    """A PNG of random shapes and speckle (about 30 kB at 384 px, 150 kB at 768 px)."""
    rng = random.Random(seed)
    im = Image.new("RGB", (side, side), (255, 255, 255))
    draw = ImageDraw.Draw(im)
    for _ in range(60):
        x, y = rng.randrange(side), rng.randrange(side)
        r = rng.randrange(4, side // 6)
        draw.ellipse((x - r, y - r, x + r, y + r), outline=tuple(rng.randrange(256) for _ in range(3)), width=3)
    for _ in range(800 * (side // 384) ** 2):
        draw.point((rng.randrange(side), rng.randrange(side)), fill=tuple(rng.randrange(256) for _ in range(3)))
    im.save(path, format="PNG")


def write_exam(
    root: Path, n_items: int, *, image_every: int = 0, n_images: int = 8, side: int = 384, seed: int = 0
) -> Path:
    """Write the exam and return `root` (pass it as --data)."""
    cell = Path(root) / "JMed48k" / "Physician" / f"Physician_{YEAR}"
    images = cell / f"{YEAR}_images"
    images.mkdir(parents=True, exist_ok=True)
    names = []
    if image_every:
        for i in range(n_images):
            names.append(f"{YEAR}_images/figure_{i}.png")
            draw_image(cell / names[-1], seed * 1000 + i, side)
    rng = random.Random(seed)
    questions = []
    for i in range(n_items):
        with_image = bool(image_every) and i % image_every == 0
        questions.append(
            {
                "question_number": i + 1,
                "section": "A",
                "question_text": f"合成問題 {i + 1}: 症例 {rng.randrange(10**6)} について正しいのはどれか。",
                "options": {k: f"選択肢 {k.upper()}-{rng.randrange(1000)}" for k in LABELS},
                "correct_answer": [rng.choice(LABELS).upper()],
                "text_only": not with_image,
                "img": {"content_img": names[i % len(names)] if with_image else "", "answer_img": ""},
                "text_reference": None,
            }
        )
    (cell / f"{YEAR}_CORRECTED.json").write_text(
        json.dumps({"questions": questions}, ensure_ascii=False), encoding="utf-8"
    )
    return Path(root)


def demo_item(i: int, *, image: Path | None = None, stem: str = "Which one?"):
    """A small English multiple-choice item (labels B, C, D; gold C), optionally with an image."""
    from medvqa.core.items import Gold, ImageRef, Item, Option

    options = tuple(Option(key=k, label=k, text=f"{k} text {i}") for k in "BCD")
    images = (ImageRef(ref=Path(image).name, path=Path(image)),) if image else ()
    return Item(
        id=f"q{i}",
        benchmark="demo",
        question=f"{stem} #{i}",
        options=options,
        gold=Gold(alternatives=(("C",),)),
        images=images,
    )


def requests_for(backend, items, condition: str = "C+Q") -> list:
    """Requests as the runner builds them (C+Q+I for items with images)."""
    from medvqa.core.conditions import Condition
    from medvqa.core.inference.base import Request, backend_request_key
    from medvqa.core.messages import Template

    out = []
    for it in items:
        cond = Condition.CQI if it.images else Condition(condition)
        messages = Template(name="demo").render(it, cond)
        out.append(
            Request(item=it, condition=cond.value, messages=messages, key=backend_request_key(backend, messages))
        )
    return out


def litellm_backend(url, model="hosted_vllm/test", **options):
    """The litellm backend against the server at `url`, with short waits for tests."""
    from medvqa.core.inference.litellm_backend import LiteLLMBackend

    return LiteLLMBackend(model, api_base=url, **{"retry_wait": 0.01, "timeout": 5, **options})

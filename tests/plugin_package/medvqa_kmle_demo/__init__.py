"""A minimal medvqa adapter, packaged and discovered like any third-party plugin."""

import json
from pathlib import Path

from medvqa import Benchmark, Gold, ImageRef, Item, LanguagePatterns, Option, Template, hookimpl, resolve_image

HERE = Path(__file__).parent
KOREAN = LanguagePatterns(language="ko", answer=(r"정답은\s*(?P<ans>[1-5])",), refusal=(r"답할 수 없습니다",))


class KmleDemo(Benchmark):
    name = "kmle_demo"
    title = "KMLE demo: five Korean items (third-party plugin example)"
    language = "ko"
    splits = ("full",)
    strata = ("subject", "has_image")

    def load(self, path=None, split=None, *, select=None):
        root = Path(path) if path else HERE
        rows = json.loads((root / "items.json").read_text(encoding="utf-8"))
        items = []
        for row in rows:
            images = tuple(
                ImageRef(ref=r, path=resolve_image(root, r, file=root / "items.json", record=row["id"]))
                for r in row.get("images", [])
            )
            items.append(
                Item(
                    id=row["id"],
                    benchmark=self.name,
                    question=row["question"],
                    language="ko",
                    options=tuple(Option(key=k, label=k, text=t) for k, t in row["options"].items()),
                    gold=Gold.from_json(row["answer"]),
                    images=images,
                    meta={"subject": row["subject"], "has_image": bool(images)},
                )
            )
        return self.select_items(items, select)

    def template(self, item):
        return Template(
            name="kmle-ko",
            question_header="문제: ",
            options_header="보기:",
            instruction='보기 번호만 JSON으로 답하시오: {{"answer": ["번호"]}}. 번호: {labels}',
        )


@hookimpl
def register_benchmarks(register):
    register(KmleDemo())


@hookimpl
def register_answer_patterns(register):
    register(KOREAN)

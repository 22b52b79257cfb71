"""Small data folders written by the tests: a KokushiMD-10 release (two physician blocks, one with
an image), a YakugakuQA exam with 4-8 options."""

from __future__ import annotations

import json
from pathlib import Path


def _png() -> bytes:
    """A real 8 x 8 grey PNG, written by Pillow."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (8, 8), 128).save(out, format="PNG")
    return out.getvalue()


PNG = _png()


def kokushi_release(root: Path) -> Path:
    """医師/医師_2020_a.json and 医師/医師_2020_b.json in the layout calculate_scores.py reads."""
    (root / "医師").mkdir(parents=True)
    (root / "images").mkdir()
    (root / "images" / "q2.png").write_bytes(PNG)
    a = [
        {
            "index": "1",
            "question": "正しいのはどれか。",
            "choices": ["甲", "乙", "丙", "丁", "戊"],
            "answer": "C",
            "text_only": True,
            "kinki": [],
            "points": "1",
            "human_accuracy": "80.0",
        },
        {
            "index": "2",
            "question": "画像を見て答えよ。2つ選べ。",
            "a": "甲",
            "b": "乙",
            "c": "丙",
            "d": "丁",
            "e": "戊",
            "answer": "A,C",
            "text_only": False,
            "image": "images/q2.png",
            "kinki": ["E"],
            "points": "1",
            "human_accuracy": "40.0",
        },
        {
            "index": "3-1",
            "problem_text": "誤っているのはどれか。",
            "options": {"a": "甲", "b": "乙", "c": "丙", "d": "丁", "e": "戊"},
            "answer": ["B"],
            "text_only": False,
            "kinki": "D",
            "points": "1",
            "human_accuracy": "60.0",
        },
    ]
    b = [
        {
            "index": "1",
            "question": "必修の問題。",
            "choices": ["甲", "乙", "丙", "丁", "戊"],
            "answer": "AC",
            "text_only": True,
            "kinki": ["B"],
            "points": "1",
            "human_accuracy": "90.0",
        },
        {
            "index": "26",
            "question": "必修の臨床問題。",
            "choices": ["甲", "乙", "丙", "丁", "戊"],
            "answer": "D",
            "text_only": True,
            "kinki": [],
            "points": "3",
            "human_accuracy": "70.0",
        },
    ]
    (root / "医師" / "医師_2020_a.json").write_text(json.dumps(a, ensure_ascii=False), encoding="utf-8")
    (root / "医師" / "医師_2020_b.json").write_text(json.dumps(b, ensure_ascii=False), encoding="utf-8")
    return root


def yakugaku_exam(root: Path, option_counts: list[int]) -> Path:
    """data/2024/109-A.jsonl with one item per option count; the last option is the answer."""
    (root / "data" / "2024").mkdir(parents=True)
    rows = [
        {
            "problem_id": f"109A{i:03d}",
            "problem_text": "正しいのはどれか。1つ選べ。",
            "choices": [f"選択肢{j}" for j in range(1, k + 1)],
            "text_only": True,
            "answer": [str(k)],
            "comment": "",
            "points": "1",
        }
        for i, k in enumerate(option_counts, start=1)
    ]
    (root / "data" / "2024" / "109-A.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8"
    )
    return root

"""IgakuQA and YakugakuQA images are resolved and confined under the folder given as --data,
whether the year folders lie in `<data>/data` or in `<data>` itself: never its parent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import medvqa
from tests.adapters.kokushimd10.fixtures import PNG

ROWS = {
    "igakuqa": (
        "2022/116-A.jsonl",
        {
            "problem_id": "116A1",
            "problem_text": "画像を見て正しいのはどれか。",
            "choices": ["a. 甲", "b. 乙", "c. 丙", "d. 丁", "e. 戊"],
            "text_only": False,
            "answer": ["c"],
            "points": "1",
        },
    ),
    "yakugakuqa": (
        "2024/109-A.jsonl",
        {
            "problem_id": "109A001",
            "problem_text": "画像を見て正しいのはどれか。1つ選べ。",
            "choices": ["甲", "乙", "丙", "丁", "戊"],
            "text_only": False,
            "answer": ["3"],
            "comment": "",
            "points": "1",
        },
    ),
}


def layout(years: Path, benchmark: str) -> str:
    """One image item of `benchmark` under `years` (the folder holding the year folders); its id."""
    name, row = ROWS[benchmark]
    (years / name).parent.mkdir(parents=True)
    (years / name).write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    return row["problem_id"]


def image(folder: Path, pid: str) -> Path:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "images" / f"{pid}.png").write_bytes(PNG)
    return folder / "images" / f"{pid}.png"


@pytest.mark.parametrize("name", ["igakuqa", "yakugakuqa"])
def test_images_stay_inside_the_folder_given_when_it_holds_the_year_folders(tmp_path, name):
    given = tmp_path / "outer" / "given"
    pid = layout(given, name)
    image(tmp_path / "outer", pid)  # beside --data, not in it: never used
    (item,) = medvqa.load(name, given)
    assert item.images[0].ref == f"images/{pid}.png" and item.images[0].path is None and not item.image_available
    inside = image(given, pid)
    (item,) = medvqa.load(name, given)
    assert item.images[0].path == inside.resolve() and item.image_available


@pytest.mark.parametrize("name", ["igakuqa", "yakugakuqa"])
def test_with_a_data_folder_images_lie_beside_it(tmp_path, name):
    given = tmp_path / "repo"
    pid = layout(given / "data", name)
    inside = image(given, pid)
    (item,) = medvqa.load(name, given)
    assert item.images[0].path == inside.resolve()
    report = medvqa.testing.check_benchmark(name, given, work_dir=tmp_path / "kit", raise_on_problems=False)
    assert not [p for p in report.problems if p.check == "images"]

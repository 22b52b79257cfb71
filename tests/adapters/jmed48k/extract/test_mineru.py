"""The MinerU engine: both real output schemas, a hand-written Japanese content list, and the
command line we run (a fake `mineru` / `magic-pdf` on PATH)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from medvqa.adapters.jmed48k.extract import extract, mineru
from medvqa.core.items import DataError
from tests.conftest import shared_data

FIXTURE = Path(__file__).parent / "data" / "mineru_77am"
PRINTED = {  # questions 1, 3, 4, 5 of 77AM.pdf as printed (see data/mineru_77am/README.md)
    1: (
        "JIS規格診断用MR装置用ファントムの構成部品を図に示す。zに直交する面（xy面）の撮影で点検する項目はどれか。",
        ["均一性", "空間分解能", "スライス厚", "幾何学的ひずみ", "画像コントラスト"],
    ),
    3: (
        "超音波検査用造影剤（ペルフルブタン）で正しいのはどれか。",
        [
            "主に呼気中に排泄される。",
            "気泡径は10 nm程度である。",
            "クッパー細胞には取り込まれない。",
            "腎機能障害のある患者には禁忌である。",
            "体重50 kgの患者には100 mL程度を静注する。",
        ],
    ),
    4: (
        "無散瞳眼底写真撮影で正しいのはどれか。",
        [
            "明室では撮影できない。",
            "観察光には赤外線を用いる。",
            "黄斑部と視神経乳頭を重ねて撮影する。",
            "画角を大きくすると撮影範囲は狭くなる。",
            "瞳孔径が5 mm以上なければ撮影できない。",
        ],
    ),
    5: (
        "乳房のMR像（別冊No. 1）を別に示す。この画像で正しいのはどれか。",
        [
            "T₁強調像である。",
            "位相方向は前後方向である。",
            "脂肪抑制法が併用されている。",
            "右乳房腫瘤は骨格筋と比較し低信号である。",
            "大動脈の内腔は高信号として描出されている。",
        ],
    ),
}


@pytest.mark.parametrize(
    "folder, name, schema, caption_key",
    [
        ("magic-pdf_0.10_demo1", "demo1_content_list.json", "magic-pdf", "img_caption"),
        ("mineru_2.7.6_pipeline_AAAI26", "aaai26_content_list.json", "mineru", "image_caption"),
    ],
)
def test_real_outputs_of_both_schema_generations(folder, name, schema, caption_key):
    path = shared_data("mineru-output", folder, name)
    raw = json.loads(path.read_text(encoding="utf-8"))
    blocks, found = mineru.read_content_list(path)
    assert found == schema
    assert Counter(b.kind for b in blocks) == Counter(b["type"] for b in raw)
    images = [b for b in blocks if b.kind == "image"]
    assert [b.captions for b in images] == [[c for c in r[caption_key] if c] for r in raw if r["type"] == "image"]
    assert all(c for b in images for c in b.captions)
    if schema == "mineru":
        assert all(b.bbox and all(0 <= v <= 1000 for v in b.bbox) for b in blocks)
        assert all(b.image.is_file() for b in blocks if b.image)
    else:
        assert all(b.bbox is None for b in blocks)


def _fixture_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "mineru_out"
    shutil.copytree(FIXTURE, folder)
    (folder / "images").mkdir()
    image = Image.new("RGB", (600, 250), "white")
    image.paste((90, 90, 90), (40, 40, 560, 210))
    image.save(folder / "images" / "77am_q1_phantom.png")
    return folder


def _check_printed(result):
    records = {r["question_number"]: r for r in result.records}
    assert sorted(records) == [1, 2, 3, 4, 5]
    for number, (text, options) in PRINTED.items():
        assert records[number]["question_text"] == text
        assert list(records[number]["options"].values()) == options
    assert records[2]["options"]["3"] == "非造影灌流MRI ASL〈arterial spin labeling〉"
    assert records[1]["img"]["content_img"].endswith("_AM_Q1_content.png") and not records[1]["text_only"]
    with Image.open(result.path.parent / records[1]["img"]["content_img"]) as im:
        assert im.size == (600, 250)
    reports = {q.number: q for q in result.questions}
    assert reports[5].figure_refs == ["No. 1"]
    assert all(b["unit"] == "1/1000 page" for b in reports[1].boxes)


def test_records_from_a_japanese_content_list(tmp_path):
    pdf = shared_data("mhlw-pdf", "rt77", "pdfs", "77AM.pdf")
    result = extract(
        questions=[pdf],
        profession="Radiological_Technologist",
        year=2025,
        engine="mineru",
        mineru_output=_fixture_copy(tmp_path),
        section_names=["AM"],
        out=tmp_path / "out",
    )
    assert result.errors == []
    _check_printed(result)
    texts = [t for r in result.records for t in [r["question_text"], *r["options"].values()]]
    assert not any("DKIX" in t or "―" in t or "別冊 No" in t for t in texts)


def _fake(bin_dir: Path, name: str, log: Path) -> None:
    """An executable that records its command line and environment, then writes the fixture
    where MinerU writes its output (`OUT/{stem}/auto/{stem}_content_list.json`)."""
    script = bin_dir / name
    script.write_text(
        f"""#!{sys.executable}
import json, os, shutil, sys
args = sys.argv[1:]
out, pdf = args[args.index("-o") + 1], args[args.index("-p") + 1]
stem = os.path.splitext(os.path.basename(pdf))[0]
json.dump({{"argv": sys.argv, "config": os.environ.get("MINERU_TOOLS_CONFIG_JSON")}}, open({str(log)!r}, "w"))
shutil.copytree(os.environ["FAKE_MINERU_FIXTURE"], os.path.join(out, stem, "auto"))
""",
        encoding="utf-8",
    )
    script.chmod(0o755)


@pytest.mark.parametrize("name", ["mineru", "magic-pdf"])
def test_the_command_line_we_run(tmp_path, monkeypatch, name):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "argv.json"
    _fake(bin_dir, name, log)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MINERU_FIXTURE", str(_fixture_copy(tmp_path)))
    monkeypatch.setenv("HOME", str(tmp_path))  # no user magic-pdf.json
    monkeypatch.delenv("MINERU_TOOLS_CONFIG_JSON", raising=False)
    if name == "magic-pdf":
        monkeypatch.setattr(mineru.shutil, "which", lambda cmd: str(bin_dir / cmd) if cmd == "magic-pdf" else None)
    pdf = shared_data("mhlw-pdf", "rt77", "pdfs", "77AM.pdf")
    result = extract(
        questions=[pdf],
        profession="radiological technologist",
        year=2025,
        engine="mineru",
        section_names=["AM"],
        out=tmp_path / "out",
    )
    _check_printed(result)
    seen = json.loads(log.read_text(encoding="utf-8"))
    argv = seen["argv"]
    assert Path(argv[0]).name == name
    assert argv[argv.index("-p") + 1] == str(pdf)
    assert argv[argv.index("-l") + 1] == "japan" and argv[argv.index("-m") + 1] == "auto"
    if name == "mineru":
        assert argv[argv.index("-b") + 1] == "pipeline" and argv[argv.index("-t") + 1] == "false"
        assert seen["config"] is None
    else:
        assert "-t" not in argv
        config = json.loads(Path(seen["config"]).read_text(encoding="utf-8"))
        assert config["table-config"]["enable"] is False


def test_missing_command_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(mineru.shutil, "which", lambda cmd: None)
    pdf = shared_data("mhlw-pdf", "rt77", "pdfs", "77AM.pdf")
    with pytest.raises(DataError, match="`mineru` or `magic-pdf` command on PATH"):
        extract(questions=[pdf], profession="radiological technologist", year=2025, engine="mineru", out=tmp_path)

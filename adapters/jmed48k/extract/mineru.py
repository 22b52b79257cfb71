"""The MinerU engine: run `mineru` (or the older `magic-pdf`) as an external command in its own
environment, or read a folder it already wrote, and turn `content_list.json` into the same
flow of lines and figures the PDF reader produces. Never imported as a Python library.

Schemas: magic-pdf ≤1.x blocks `{type, text, text_level?, img_path, img_caption[],
img_footnote[], page_idx}` without positions; mineru 2.x–4.x adds `bbox` (0–1000 of the page),
renames `image_caption`/`image_footnote`, and adds block types (`chart`, `list`, `code`,
`discarded`, ...).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from medvqa import DataError, read_json, write_atomic
from medvqa.ja import fold

from .booklet import MARKER, PAGE_NUMBER, Figure, Flow
from .pdfpage import Line
from .text import subscript, superscript

SKIPPED = {"discarded", "header", "footer", "page_number", "page_footnote", "aside_text"}
PICTURES = {"image", "chart", "table"}
QUESTION_START = re.compile(r"^(\d{1,3})[ \u3000]+(?![．.])(?=\S)")
OPTION_BREAK = re.compile(r"[ \u3000]+(?=[1-9１-９](?:．|\.(?!\d)))")
TAG = re.compile(r"<[^>]+>")
INLINE_MATH = re.compile(r"\$([^$]{1,80})\$")


@dataclass
class Block:
    kind: str
    page: int
    text: str = ""
    bbox: tuple[int, int, int, int] | None = None  # 0–1000 of the page (mineru ≥2)
    image: Path | None = None
    captions: list[str] = field(default_factory=list)


def find_command() -> tuple[str, str] | None:
    """(`mineru`|`magic-pdf`, path) for the first one on PATH."""
    for name in ("mineru", "magic-pdf"):
        path = shutil.which(name)
        if path:
            return name, path
    return None


def command_line(name: str, exe: str, pdf: Path, out: Path) -> list[str]:
    """The command we run. Table detection is off: option tables must stay text rows."""
    if name == "mineru":
        return [exe, "-p", str(pdf), "-o", str(out), "-b", "pipeline", "-m", "auto", "-l", "japan", "-t", "false"]
    return [exe, "-p", str(pdf), "-o", str(out), "-m", "auto", "-l", "japan"]


def _magic_pdf_env(workdir: Path) -> dict[str, str]:
    """magic-pdf reads table detection from its JSON config only: copy the user's config
    (if any) with `table-config.enable` false and point MINERU_TOOLS_CONFIG_JSON at it."""
    source = Path(os.environ.get("MINERU_TOOLS_CONFIG_JSON", Path.home() / "magic-pdf.json"))
    config = json.loads(source.read_text(encoding="utf-8")) if source.is_file() else {}
    config.setdefault("table-config", {})["enable"] = False
    path = write_atomic(workdir / "magic-pdf.json", json.dumps(config, ensure_ascii=False, indent=2))
    return {**os.environ, "MINERU_TOOLS_CONFIG_JSON": str(path)}


def run(pdf: Path, out: Path) -> Path:
    """Run MinerU on `pdf` into `out`; returns its content_list.json."""
    found = find_command()
    if found is None:
        raise DataError(
            "engine 'mineru' needs the `mineru` or `magic-pdf` command on PATH "
            "(installed in its own environment), or an existing output folder",
            file=pdf,
        )
    name, exe = found
    out.mkdir(parents=True, exist_ok=True)
    env = _magic_pdf_env(out) if name == "magic-pdf" else None
    done = subprocess.run(command_line(name, exe, pdf, out), env=env, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise DataError(f"{name} failed (exit {done.returncode}): {' / '.join(tail)}", file=pdf)
    return find_content_list(out, pdf.stem)


def find_content_list(folder: Path, stem: str) -> Path:
    """`{stem}_content_list.json` under `folder`, or the only content list there."""
    folder = Path(folder)
    found = sorted(folder.rglob(f"{stem}_content_list.json"), key=lambda p: len(p.parts))
    if not found:
        found = list(folder.rglob("*_content_list.json"))
        found = found if len(found) == 1 else []
    if not found:
        raise DataError(f"no {stem}_content_list.json under the MinerU output folder", file=folder)
    return found[0]


def read_content_list(path: Path) -> tuple[list[Block], str]:
    """Blocks of either schema generation, and which one it was (`magic-pdf` / `mineru`)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError("a content_list is a JSON list of blocks", file=path)
    schema = "mineru" if any("bbox" in b or "image_caption" in b for b in data if isinstance(b, dict)) else "magic-pdf"
    blocks = []
    for i, b in enumerate(data):
        if not isinstance(b, dict) or "type" not in b or "page_idx" not in b:
            raise DataError("block without type or page_idx", file=path, record=f"#{i}")
        kind = b["type"]
        text = b.get("text") or ""
        if kind == "list":
            text = "\n".join(b.get("list_items") or []) or text
        if kind == "table" and b.get("table_body"):
            text = _table_text(b["table_body"])
        captions = b.get("image_caption") or b.get("img_caption") or b.get("table_caption") or []
        image = (Path(path).parent / b["img_path"]) if b.get("img_path") else None
        bbox = tuple(b["bbox"]) if isinstance(b.get("bbox"), list) and len(b["bbox"]) == 4 else None
        blocks.append(Block(kind, int(b["page_idx"]), text, bbox, image, [c for c in captions if c]))
    return blocks, schema


def _table_text(html: str) -> str:
    rows = re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)
    return "\n".join(
        "\t".join(TAG.sub("", c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, flags=re.S)) for r in rows
    )


def read_flow(pdf: Path, output: Path | None, workdir: Path | None = None) -> Flow:
    """The flow of a question booklet from MinerU: from `output` when given, else by running
    MinerU into `workdir` (a temporary folder when None)."""
    if output is not None:
        path = find_content_list(output, Path(pdf).stem)
    else:
        workdir = workdir or Path(tempfile.mkdtemp(prefix="mineru-"))
        path = run(Path(pdf), workdir)
    blocks, schema = read_content_list(path)
    flow = Flow(Path(pdf), pages=max((b.page for b in blocks), default=-1) + 1)
    flow.notes.append(f"read from MinerU output {path} ({schema} schema)")
    for block in _without_furniture(blocks, len({b.page for b in blocks})):
        if block.kind in PICTURES and block.image is not None and not (block.kind == "table" and block.text):
            if block.image.is_file():
                flow.entries.append(Figure(block.page, None, block.image))
            else:
                flow.warnings.append(f"page {block.page + 1}: picture {block.image.name} is listed but missing")
            continue
        for piece in _pieces(block.text):
            m = QUESTION_START.match(piece)
            if m:
                flow.entries.append(Line(piece[m.end() :], block.page, block.bbox, number=int(m.group(1))))
            else:
                flow.entries.append(Line(piece, block.page, block.bbox))
    return flow


def _inline_math(text: str) -> str:
    """MinerU writes sub/superscripts as inline LaTeX (`$\\mathrm { T } _ { 1 }$`): put them back
    as printed (`T₁`). A formula with anything else is left as MinerU wrote it."""

    def plain(m: re.Match) -> str:
        body = re.sub(r"\\mathrm\s*\{([^}]*)\}", r"\1", m.group(1)).replace(" ", "")
        body = re.sub(
            r"\^\{([^}]*)\}|\^(\w)", lambda g: "".join(superscript(c) for c in (g.group(1) or g.group(2))), body
        )
        body = re.sub(r"_\{([^}]*)\}|_(\w)", lambda g: "".join(subscript(c) for c in (g.group(1) or g.group(2))), body)
        return m.group(0) if re.search(r"[\\{}^_]", body) else body

    return INLINE_MATH.sub(plain, text)


def _pieces(text: str) -> list[str]:
    """Split a paragraph block where a new option starts (`… 1．均一性 2．空間分解能`)."""
    out = []
    for line in _inline_math(text).splitlines():
        out.extend(p for p in OPTION_BREAK.split(line.strip()) if p.strip())
    return out


def _without_furniture(blocks: list[Block], pages: int) -> list[Block]:
    """Drop blocks MinerU marks as page furniture, page numbers, text repeated on most pages
    once digits are ignored (footer codes), and the `別冊 No. X` boxes."""
    kept = [b for b in blocks if b.kind not in SKIPPED and not (b.text and MARKER.match(fold(b.text)))]
    key = {id(b): re.sub(r"\d+", "#", fold(b.text)) for b in kept if b.text}
    per_text = Counter(k for _, k in {(b.page, key[id(b)]) for b in kept if id(b) in key})
    floor = max(2, pages // 2)
    return [b for b in kept if not (id(b) in key and (per_text[key[id(b)]] >= floor or PAGE_NUMBER.match(b.text)))]

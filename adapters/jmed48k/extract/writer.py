"""Writing the release layout: `ROOT/JMed48k/{specialty}/{specialty}_{year}/{year}_CORRECTED.json`,
images in `{year}_images/` referenced relative to the cell folder, and the extraction report
beside them; then checking what was written loads."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from medvqa import write_atomic


def cell_folder(root: Path, specialty: str, year: int) -> Path:
    return Path(root) / "JMed48k" / specialty / f"{specialty}_{year}"


def image_ref(specialty: str, year: int, section: str, number: int, role: str, index: int | None) -> str:
    """`{year}_images/{specialty}_{year}_{section}_Q{number}_{role}[_{i}].png`."""
    suffix = f"_{index}" if index is not None else ""
    return f"{year}_images/{specialty}_{year}_{section}_Q{number}_{role}{suffix}.png"


def write_cell(folder: Path, year: int, records: list[dict], images: dict[str, Image.Image]) -> Path:
    """Write the questions file and every image (by reference). Images of an earlier run of
    the same cell are replaced."""
    folder.mkdir(parents=True, exist_ok=True)
    image_dir = folder / f"{year}_images"
    if image_dir.is_dir():
        for old in image_dir.glob(f"{folder.name}_*.png"):
            old.unlink()
    for ref, image in images.items():
        write_atomic(folder / ref, lambda fh, image=image: image.save(fh, format="PNG"))
    return write_atomic(
        folder / f"{year}_CORRECTED.json", json.dumps({"questions": records}, ensure_ascii=False, indent=1) + "\n"
    )


def write_report(folder: Path, year: int, report: dict) -> Path:
    return write_atomic(
        folder / f"{year}_extraction_report.json", json.dumps(report, ensure_ascii=False, indent=1) + "\n"
    )

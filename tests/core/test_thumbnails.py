"""Thumbnails of a page's images are made once and kept in the cache folder: the same data URL
from the kept file, a changed image made again, a damaged kept file replaced, an unreadable
image none."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from medvqa.cli.main import cli
from medvqa.core.audit import thumbnails
from tests.conftest import shared_data


def test_a_thumbnail_is_kept_and_made_again_when_the_image_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    image = tmp_path / "x.png"
    Image.new("RGB", (400, 200), (200, 10, 10)).save(image)
    thumbnails.thumbnail.cache_clear()
    first = thumbnails.thumbnail(str(image), 100)
    assert first.startswith("data:image/png;base64,")
    [kept] = [p for p in (tmp_path / "cache" / thumbnails.THUMBNAILS).rglob("*") if p.is_file()]
    assert kept.read_text(encoding="ascii") == first and not kept.name.startswith(".")

    thumbnails.thumbnail.cache_clear()
    kept.write_text("data:image/png;base64,KEPT", encoding="ascii")
    assert thumbnails.thumbnail(str(image), 100) == "data:image/png;base64,KEPT"  # read back, not made again

    thumbnails.thumbnail.cache_clear()
    kept.write_text("garbage", encoding="ascii")  # damaged: made again and replaced
    assert thumbnails.thumbnail(str(image), 100) == first and kept.read_text(encoding="ascii") == first

    thumbnails.thumbnail.cache_clear()
    Image.new("RGB", (400, 200), (10, 10, 200)).save(image)
    os.utime(image, ns=(1, 10**18))  # another modification time: another key
    changed = thumbnails.thumbnail(str(image), 100)
    assert changed != first and changed.startswith("data:image/png;base64,")
    assert thumbnails.thumbnail(str(image), 50) != changed  # another size, another thumbnail


def test_an_unreadable_image_has_no_thumbnail_and_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    thumbnails.thumbnail.cache_clear()
    assert thumbnails.thumbnail(str(bad), 100) is None and thumbnails.thumbnail(str(tmp_path / "gone.png"), 100) is None
    assert not (tmp_path / "cache" / thumbnails.THUMBNAILS).exists()


# ---------------------------------------------------------------- kept thumbnails are untrusted


HOSTILE = 'data:image/png;base64,AAAA" onerror="alert(1)" x="'
IMAGE = Path("JMed48k/Physician/Physician_2025/2025_images/A11_content.png")


def invoke(*args):
    thumbnails.thumbnail.cache_clear()  # each command as a fresh process sees it: from the kept files
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """The JMed48k sample copied into a folder of our own (800 items, 17 with images) and a
    random run of it under C+Q and C+Q+I."""
    tmp = tmp_path_factory.mktemp("thumbs")
    shutil.copytree(shared_data("jmed48k-sample"), tmp / "data")
    invoke(
        "run",
        "jmed48k",
        "--data",
        tmp / "data",
        "--split",
        "full",
        "--model",
        "random",
        "--conditions",
        "C+Q,C+Q+I",
        "--no-cache",
        "--run-dir",
        tmp / "run",
        "--json",
    )
    return tmp


def kept_files(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / thumbnails.THUMBNAILS).rglob("*") if p.is_file())


def test_a_kept_thumbnail_that_is_no_image_data_url_is_made_again_never_pasted(sample_run, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    invoke("audit", sample_run / "run", "--html", tmp_path / "first.html", "--resamples", "20")
    first = (tmp_path / "first.html").read_text(encoding="utf-8")
    made = {p: p.read_text(encoding="ascii") for p in kept_files(tmp_path / "cache")}
    images = len(re.findall(r'<img alt="[^"]*" src="data:image/png;base64,[A-Za-z0-9+/=]+">', first))
    assert images > 0 and len(made) > 0
    for path in made:
        path.write_text(HOSTILE, encoding="ascii")  # every kept thumbnail replaced by an attribute injection

    invoke("audit", sample_run / "run", "--html", tmp_path / "again.html", "--resamples", "20")
    again = (tmp_path / "again.html").read_text(encoding="utf-8")
    assert "onerror" not in again and "alert(1)" not in again
    same = again.replace("again-items.html", "first-items.html") == first  # (a page is too long to diff)
    assert same  # every thumbnail made again from its image, as before
    assert {p: p.read_text(encoding="ascii") for p in kept_files(tmp_path / "cache")} == made  # and kept again


def kept_thumbnail(tmp_path, monkeypatch):
    """(a small image, its thumbnail, the one file that keeps it) in a cache folder of the test's."""
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    image = tmp_path / "x.png"
    Image.new("RGB", (40, 20), (200, 10, 10)).save(image)
    thumbnails.thumbnail.cache_clear()
    made = thumbnails.thumbnail(str(image), 100)
    [path] = kept_files(tmp_path / "cache")
    return image, made, path


def test_a_kept_thumbnail_that_is_no_regular_file_is_never_read(tmp_path, monkeypatch):
    image, made, path = kept_thumbnail(tmp_path, monkeypatch)
    path.unlink()
    os.mkfifo(path)  # reading it would wait for a writer for ever
    thumbnails.thumbnail.cache_clear()
    assert thumbnails.thumbnail(str(image), 100) == made and path.read_text(encoding="ascii") == made


@pytest.mark.parametrize(
    "kept,accepted",
    [
        ("data:image/png;base64,iVBORw0KGgo=", True),
        ("data:image/jpeg;base64,/9j/4AAQ", True),
        ("data:image/webp;base64,UklGRg==", True),
        (HOSTILE, False),
        ("data:image/svg+xml;base64,PHN2Zz4=", False),  # an SVG may carry script
        ("data:image/png;base64,AAAA\n<script>", False),
        ("javascript:alert(1)", False),
    ],
)
def test_only_an_image_data_url_is_taken_from_a_kept_thumbnail(tmp_path, monkeypatch, kept, accepted):
    image, made, path = kept_thumbnail(tmp_path, monkeypatch)
    path.write_text(kept, encoding="utf-8")
    thumbnails.thumbnail.cache_clear()
    assert thumbnails.thumbnail(str(image), 100) == (kept if accepted else made)


def view_images(page: Path) -> int:
    doc = re.search(r'<script type="application/json" id="view-data">(.*?)</script>', page.read_text(encoding="utf-8"))
    return len(json.loads(doc.group(1))["images"])


def test_an_image_changed_into_one_pillow_cannot_open_is_a_missing_image_not_a_failed_view(
    sample_run, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "data"
    shutil.copytree(sample_run / "data", data)
    run_dir = tmp_path / "run"
    shutil.copytree(sample_run / "run", run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    manifest["load"]["data"] = manifest["data"] = str(data)
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    invoke("view", run_dir, "--html", tmp_path / "before.html")
    before = view_images(tmp_path / "before.html")

    image = data / IMAGE
    st = image.stat()
    image.write_bytes(b"\0" * st.st_size)  # the same size and, below, the same modification time
    os.utime(image, ns=(st.st_atime_ns, st.st_mtime_ns))
    invoke("view", run_dir, "--html", tmp_path / "after.html")
    assert view_images(tmp_path / "after.html") == before - 1  # shown without it

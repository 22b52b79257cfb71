"""Thumbnails of a page's images are made once and kept in the cache folder: the same data URL
from the kept file, a changed image made again, a damaged kept file replaced, an unreadable
image none."""

import os

from PIL import Image

from medvqa.core.audit import html


def test_a_thumbnail_is_kept_and_made_again_when_the_image_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    image = tmp_path / "x.png"
    Image.new("RGB", (400, 200), (200, 10, 10)).save(image)
    html.thumbnail.cache_clear()
    first = html.thumbnail(str(image), 100)
    assert first.startswith("data:image/png;base64,")
    [kept] = [p for p in (tmp_path / "cache" / html.THUMBNAILS).rglob("*") if p.is_file()]
    assert kept.read_text(encoding="ascii") == first and not kept.name.startswith(".")

    html.thumbnail.cache_clear()
    kept.write_text("data:image/png;base64,KEPT", encoding="ascii")
    assert html.thumbnail(str(image), 100) == "data:image/png;base64,KEPT"  # read back, not made again

    html.thumbnail.cache_clear()
    kept.write_text("garbage", encoding="ascii")  # damaged: made again and replaced
    assert html.thumbnail(str(image), 100) == first and kept.read_text(encoding="ascii") == first

    html.thumbnail.cache_clear()
    Image.new("RGB", (400, 200), (10, 10, 200)).save(image)
    os.utime(image, ns=(1, 10**18))  # another modification time: another key
    changed = html.thumbnail(str(image), 100)
    assert changed != first and changed.startswith("data:image/png;base64,")
    assert html.thumbnail(str(image), 50) != changed  # another size, another thumbnail


def test_an_unreadable_image_has_no_thumbnail_and_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    html.thumbnail.cache_clear()
    assert html.thumbnail(str(bad), 100) is None and html.thumbnail(str(tmp_path / "gone.png"), 100) is None
    assert not (tmp_path / "cache" / html.THUMBNAILS).exists()

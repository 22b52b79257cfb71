"""Thumbnails of item images as data URLs, for the pages (the audit's examples, the item
browser): made once and kept in medvqa's cache folder, read back as untrusted.
"""

from __future__ import annotations

import base64
import io
import re
from functools import lru_cache

THUMBNAILS = "thumbnails"  # the folder of kept thumbnails in medvqa's cache folder
# What a kept thumbnail may hold: a data URL of an image and nothing else (it is pasted into pages).
DATA_URL = re.compile(r"data:image/(png|jpeg|webp);base64,[A-Za-z0-9+/=]*")


@lru_cache(maxsize=512)
def thumbnail(path: str, px: int, image_format: str = "PNG") -> str | None:
    """A small image (at most `px` on its longer side) of the file at `path` as a data URL, PNG
    or JPEG; None for a file Pillow cannot read or would not decode (a decompression bomb: more
    pixels than Pillow's limit). A thumbnail made once is kept in `<cache>/thumbnails/`, keyed by
    the file's path, size, modification and change times and inode and the thumbnail's size and
    format: decoding a large PNG took most of a page's extra time over its JSON, every time a
    page was written. A kept file is read as untrusted: anything but an image's data URL
    (`DATA_URL`) is made again and replaced."""
    import hashlib
    import os

    from ..files import cache_dir, read_kept, write_atomic
    from ..items import DataError

    try:
        st = os.stat(path)
    except OSError:
        return None
    key = hashlib.sha256(
        f"2|{os.path.abspath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}|"
        f"{px}|{image_format}".encode("utf-8", "surrogateescape")
    ).hexdigest()
    kept = cache_dir() / THUMBNAILS / key[:2] / key
    text = (read_kept(kept) or b"").decode("ascii", "replace")
    if DATA_URL.fullmatch(text):
        return text
    made = _make_thumbnail(path, px, image_format)
    if made is not None:
        try:  # written whole (a temporary file renamed); a cache folder that cannot be written keeps nothing
            write_atomic(kept, made, sync=False)
        except DataError:
            pass
    return made


def _make_thumbnail(path: str, px: int, image_format: str) -> str | None:
    import warnings

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                im.thumbnail((px, px))
                buf = io.BytesIO()
                im.convert("RGB").save(buf, format=image_format, **({"quality": 80} if image_format == "JPEG" else {}))
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        return None
    mime = "jpeg" if image_format == "JPEG" else image_format.lower()
    return f"data:image/{mime};base64," + base64.b64encode(buf.getvalue()).decode("ascii")

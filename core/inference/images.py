"""Image parts as backends send them: `image_url` data URLs, built once per image.

Messages keep images as references (`{"type": "image", "path", "sha256"}`); only here, just
before a request leaves, are the bytes read and encoded. An optional `max_side` downscales
larger images with Pillow (aspect kept). Pillow's decompression-bomb guard stays on: an image
past its warning limit is refused unless `max_side` asks for it to be downscaled. An image
that cannot be read or decoded raises `ImageError`, which a backend turns into an `error`
record for that one request.
"""

from __future__ import annotations

import base64
import io
import warnings
from functools import lru_cache

from PIL import Image, UnidentifiedImageError

from ..messages import Message

_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class ImageError(ValueError):
    """An image that cannot be sent; the message names the file."""


def _encode(path: str, max_side: int | None) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        with warnings.catch_warnings():
            # past Pillow's warning limit an image is decoded only to be downscaled
            warnings.simplefilter("ignore" if max_side else "error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                im.load()  # a truncated or corrupt file fails here, not at the server
                fmt = im.format
                if (max_side and max(im.size) > max_side) or fmt not in _MIME:
                    if max_side:
                        im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
                    fmt = "JPEG" if fmt == "JPEG" else "PNG"
                    out = io.BytesIO()
                    (im.convert("RGB") if im.mode == "CMYK" and fmt == "PNG" else im).save(
                        out, format=fmt, **({"quality": 95} if fmt == "JPEG" else {})
                    )
                    data = out.getvalue()
    except Image.DecompressionBombWarning as exc:
        raise ImageError(f"image {path}: {exc}; pass --max-image-side to send it downscaled") from None
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError, SyntaxError, ValueError) as exc:
        raise ImageError(f"image {path}: {exc}") from None
    return f"data:{_MIME[fmt]};base64,{base64.b64encode(data).decode('ascii')}"


@lru_cache(maxsize=64)
def _cached_data_url(sha256: str, path: str, max_side: int | None) -> str:
    return _encode(path, max_side)


def data_url(path: str, sha256: str, max_side: int | None = None) -> str:
    """`data:<mime>;base64,...` for an image, cached by content hash and size limit."""
    return _cached_data_url(sha256, path, max_side)


def to_openai(messages: list[Message], max_side: int | None = None) -> list[dict]:
    """OpenAI chat messages: image references become `image_url` parts with data URLs."""
    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            out.append({"role": m["role"], "content": content})
            continue
        parts = []
        for p in content:
            if p.get("type") == "image":
                parts.append({"type": "image_url", "image_url": {"url": data_url(p["path"], p["sha256"], max_side)}})
            else:
                parts.append(p)
        out.append({"role": m["role"], "content": parts})
    return out

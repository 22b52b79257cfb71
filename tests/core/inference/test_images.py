import base64
import hashlib
import io
import struct
import zlib

import pytest
from PIL import Image

from medvqa.core.inference.images import ImageError, data_url, to_openai
from medvqa.core.messages import file_sha256


def decode(url: str) -> tuple[str, bytes]:
    head, _, data = url.partition(",")
    return head, base64.b64decode(data)


def png(path, size=(300, 120), color=(10, 200, 30)):
    Image.new("RGB", size, color).save(path, format="PNG")
    return path


def test_data_url_carries_the_file_bytes_unchanged(tmp_path):
    path = png(tmp_path / "a.png")
    head, raw = decode(data_url(str(path), file_sha256(path)))
    assert head == "data:image/png;base64"
    assert raw == path.read_bytes()


def test_jpeg_keeps_its_mime_type(tmp_path):
    path = tmp_path / "a.jpg"
    Image.new("RGB", (64, 32), (1, 2, 3)).save(path, format="JPEG")
    head, raw = decode(data_url(str(path), file_sha256(path)))
    assert head == "data:image/jpeg;base64" and raw == path.read_bytes()


def test_max_side_downscales_keeping_the_aspect_ratio(tmp_path):
    path = png(tmp_path / "wide.png", size=(1000, 400))
    _, raw = decode(data_url(str(path), file_sha256(path), max_side=250))
    with Image.open(io.BytesIO(raw)) as im:
        assert im.size == (250, 100)


def test_small_images_are_not_upscaled_or_reencoded(tmp_path):
    path = png(tmp_path / "small.png", size=(40, 20))
    _, raw = decode(data_url(str(path), file_sha256(path), max_side=250))
    assert raw == path.read_bytes()


def test_other_formats_are_sent_as_png(tmp_path):
    path = tmp_path / "scan.bmp"
    Image.new("L", (30, 30), 128).save(path, format="BMP")
    head, raw = decode(data_url(str(path), file_sha256(path)))
    assert head == "data:image/png;base64"
    with Image.open(io.BytesIO(raw)) as im:
        assert im.size == (30, 30) and im.getpixel((5, 5)) == 128


def test_a_truncated_image_is_a_clear_error_naming_the_file(tmp_path):
    good = png(tmp_path / "good.png", size=(200, 200))
    broken = tmp_path / "broken.png"
    broken.write_bytes(good.read_bytes()[:200])
    with pytest.raises(ImageError, match="broken.png"):
        data_url(str(broken), file_sha256(broken))


def test_not_an_image_is_a_clear_error(tmp_path):
    path = tmp_path / "notes.png"
    path.write_text("not an image")
    with pytest.raises(ImageError, match="notes.png.*cannot identify"):
        data_url(str(path), file_sha256(path))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def test_the_decompression_bomb_guard_stays_on(tmp_path):
    # A valid PNG header claiming 30000 x 30000 pixels (above Pillow's 2 x MAX_IMAGE_PIXELS).
    header = struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)
    path = tmp_path / "bomb.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IEND", b""))
    with pytest.raises(ImageError, match="bomb.png.*decompression bomb"):
        data_url(str(path), file_sha256(path))


def test_to_openai_replaces_image_references_and_keeps_text(tmp_path):
    path = png(tmp_path / "x.png")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    messages = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image", "path": str(path), "sha256": digest}],
        },
    ]
    out = to_openai(messages)
    assert out[0] == {"role": "system", "content": "be brief"}
    assert out[1]["content"][0] == {"type": "text", "text": "look"}
    image = out[1]["content"][1]
    assert image["type"] == "image_url"
    assert hashlib.sha256(decode(image["image_url"]["url"])[1]).hexdigest() == digest
    assert messages[1]["content"][1]["type"] == "image"  # the input is not modified

"""Image perturbations: the item's own image blurred, JPEG-compressed, downscaled, cropped or
flipped, for the image variants of a condition (`C+Q+I~blur`, `conditions.IMAGE_VARIANTS`).

Each perturbation has its parameters in one table, `PARAMETERS` (a run records the ones it used
in its manifest):

- `blur`: a Gaussian blur of `radius` pixels (4), enough to take fine detail (text on a chart,
  the edge of a lesion) and keep the layout;
- `jpeg`: the image saved as JPEG at `quality` 10, blocking and colour loss of a bad scan;
- `downscale`: the image resized to `scale` 0.25 of its width and height with `resample`
  bicubic (the model sees a quarter of the resolution, upscaled or not by its own processor);
- `crop`: the central `box` (left, top, right, bottom as fractions of the width and height:
  0.15 to 0.85 keeps the central 70 % of each side) cut out;
- `hflip`: the mirror image (left and right swapped).

The image is first turned as its EXIF orientation says (what a viewer shows). The result is
PNG, lossless, except for `jpeg`, whose bytes are the JPEG itself.

Each perturbed image is made once per (source image content, perturbation, parameters): it is
written to medvqa's cache folder, `<cache>/perturbed/<variant>/<source sha256>-<parameters
hash>.<png|jpg>` (through `files.write_atomic`), and every later request and run reads it from
there; no decode or encode happens for an image already made. A file there that is a link, or
that is not a file inside that folder once links are resolved, is made again.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import files
from .files import cache_dir, write_atomic
from .items import DataError
from .messages import file_sha256

if TYPE_CHECKING:
    from PIL.Image import Image

# Bumped when what a perturbation makes of the same parameters changes: old files are not reused.
VERSION = 1

PARAMETERS: dict[str, dict[str, Any]] = {
    "blur": {"radius": 4.0},
    "jpeg": {"quality": 10},
    "downscale": {"scale": 0.25, "resample": "bicubic"},
    "crop": {"box": [0.15, 0.15, 0.85, 0.85]},
    "hflip": {},
}
PERTURBATIONS = tuple(PARAMETERS)

_PLAIN_MODES = ("L", "LA", "RGB", "RGBA")  # what blurring and resampling take as they are
_PNG_MODES = ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16")


def parameters(variant: str) -> dict[str, Any]:
    """The parameters of `variant` (a copy of its row of `PARAMETERS`); an unknown name raises
    ValueError."""
    if variant not in PARAMETERS:
        raise ValueError(f"{variant!r} is no image perturbation; they are {', '.join(PERTURBATIONS)}")
    return json.loads(json.dumps(PARAMETERS[variant]))


def folder() -> Path:
    """Where perturbed images are kept: `<cache>/perturbed`."""
    return cache_dir() / "perturbed"


def decode(data: bytes) -> Image:
    """The image in `data`, loaded (Pillow's decompression-bomb guard on)."""
    from PIL import Image, ImageOps

    image = Image.open(io.BytesIO(data))
    image.load()
    return ImageOps.exif_transpose(image)


def encode(image: Image, fmt: str, **options: Any) -> bytes:
    """`image` saved as `fmt` (PNG, JPEG) with Pillow's `options`."""
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def _plain(image: Image) -> Image:
    if image.mode in _PLAIN_MODES:
        return image
    has_alpha = image.mode in ("PA", "RGBa") or (image.mode == "P" and "transparency" in image.info)
    return image.convert("RGBA" if has_alpha else "RGB")


def apply(image: Image, variant: str, params: dict[str, Any]) -> Image:
    """`variant` done to `image` with `params` (a row of `PARAMETERS`)."""
    from PIL import Image, ImageFilter

    if variant == "blur":
        return _plain(image).filter(ImageFilter.GaussianBlur(params["radius"]))
    if variant == "jpeg":
        return image.convert("RGB")
    if variant == "downscale":
        w, h = image.size
        size = (max(1, round(w * params["scale"])), max(1, round(h * params["scale"])))
        return _plain(image).resize(size, Image.Resampling[params["resample"].upper()])
    if variant == "crop":
        w, h = image.size
        left, top, right, bottom = params["box"]
        return image.crop((round(w * left), round(h * top), round(w * right), round(h * bottom)))
    if variant == "hflip":
        return image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    raise ValueError(f"{variant!r} is no image perturbation; they are {', '.join(PERTURBATIONS)}")


def confined(path: Path) -> bool:
    """Whether `path` is a file inside the perturbed images' folder, links resolved (as dataset
    images are confined to their dataset folder)."""
    return files.confined(path, (os.path.realpath(folder()),))


def perturbed_path(source: Path, variant: str) -> Path:
    """The file of `source` perturbed by `variant`: made (one decode, one encode) and kept in
    `folder()` the first time, read from there every time after. A source that cannot be read or
    decoded, or a cache folder that cannot be written, raises `DataError` naming the file."""
    params = parameters(variant)
    spec = json.dumps({"version": VERSION, "variant": variant, "params": params}, sort_keys=True)
    ext = "jpg" if variant == "jpeg" else "png"
    try:
        digest = file_sha256(Path(source))
    except OSError as exc:
        raise DataError(f"cannot read the image to perturb ({exc.strerror})", file=source) from None
    path = folder() / variant / f"{digest}-{hashlib.sha256(spec.encode()).hexdigest()[:16]}.{ext}"
    if not path.is_symlink() and confined(path):
        return path
    try:
        image = decode(Path(source).read_bytes())
    except Exception as exc:  # noqa: BLE001 - unreadable or undecodable: one message naming the file
        raise DataError(f"cannot decode the image to perturb ({exc})", file=source) from None
    image = apply(image, variant, params)
    if variant == "jpeg":
        data = encode(image, "JPEG", quality=params["quality"])
    else:
        data = encode(image if image.mode in _PNG_MODES else image.convert("RGB"), "PNG")
    write_atomic(path, data, sync=False)
    if not confined(path):  # the folder itself is a link out of the cache: not used
        raise DataError("is not a file inside medvqa's cache folder", file=path)
    return path

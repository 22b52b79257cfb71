"""Input conditions and which of them apply to an item.

`C` choices only, `C+Q` choices and question, `C+I` choices and image, `C+Q+I` everything.
Image removal is the pair (`C+Q+I`, `C+Q`) on the same image item with the same template; the
model is not told that the image is missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from .errors import UsageError
from .items import Item


class Condition(StrEnum):
    C = "C"
    CQ = "C+Q"
    CI = "C+I"
    CQI = "C+Q+I"

    @property
    def with_question(self) -> bool:
        return self in (Condition.CQ, Condition.CQI)

    @property
    def with_image(self) -> bool:
        return self in (Condition.CI, Condition.CQI)


ALL = (Condition.C, Condition.CQ, Condition.CI, Condition.CQI)
IMAGE_REMOVAL = (Condition.CQI, Condition.CQ)  # (with image, image removed)
# Conditions derived from a base condition by a second request (e.g. a forced guess after a
# refusal) are written "<base>/<suffix>", e.g. "C+Q/forced".
FORCED_SUFFIX = "/forced"

# A variant of a condition: the same item asked under the same condition with one thing changed,
# written "<base>~<variant>" ("C+Q+I~swap"). Image variants change the image (another item's
# image of the same type, or the item's own image blurred, JPEG-compressed, downscaled, cropped
# or flipped) and apply to the conditions that show it; `order` changes the options' order, and
# `confidence` asks for a confidence (0-100) beside the answer. An
# item asked with its options rotated r places (CircularEval's rotations, r = 1 .. k-1 for k
# options) is recorded under "<base>~order:<r>" ("C+Q+I~order:2"): one record per rotation.
VARIANT_SEP = "~"
ROTATION_SEP = ":"
IMAGE_VARIANTS = ("swap", "blur", "jpeg", "downscale", "crop", "hflip")
ORDER = "order"
# the prompt asks for a stated confidence beside the answer (`Benchmark.confidence_instruction`)
CONFIDENCE = "confidence"
VARIANTS = (*IMAGE_VARIANTS, ORDER, CONFIDENCE)


def variant_label(condition: Condition | str, variant: str) -> str:
    """The record label of `condition` under `variant`: `C+Q+I~swap`."""
    return f"{Condition(condition).value}{VARIANT_SEP}{variant}"


def rotation_label(condition: Condition | str, rotation: int) -> str:
    """The record label of `condition` with the options rotated `rotation` places: `C+Q+I~order:2`."""
    return f"{variant_label(condition, ORDER)}{ROTATION_SEP}{rotation}"


def parse_variants(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """Parse `swap,hflip` (the CLI form) or a list of names, in the order given, each once;
    an unknown name raises a UsageError listing the valid ones. None or empty: no variants."""
    if not text:
        return ()
    parts = text.split(",") if isinstance(text, str) else [str(p) for p in text]
    out: list[str] = []
    for part in parts:
        name = part.strip().lower()
        if name not in VARIANTS:
            raise UsageError(f"unknown variant {part!r}; choose from {', '.join(VARIANTS)}")
        if name not in out:
            out.append(name)
    return tuple(out)


def parse_conditions(text: str | Iterable[str] | None) -> tuple[Condition, ...]:
    """Parse `C+Q,C+Q+I` (the CLI form) or a list of names (`["C+Q", "C+Q+I"]`, from Python).
    Unknown names raise a UsageError listing the valid ones."""
    if not text:
        return ALL
    parts = text.split(",") if isinstance(text, str) else [str(p) for p in text]
    out = []
    for part in parts:
        name = part.strip().upper().replace(" ", "")
        try:
            cond = Condition(name)
        except ValueError:
            raise UsageError(f"unknown condition {part!r}; choose from {', '.join(c.value for c in ALL)}") from None
        if cond not in out:
            out.append(cond)
    return tuple(out)


def applicable(item: Item) -> tuple[Condition, ...]:
    """Text-only items, and image items whose images are not all present, admit C and C+Q;
    image items with their images admit all four."""
    if item.image_available:
        return ALL
    return (Condition.C, Condition.CQ)


def as_printed(item: Item) -> Condition:
    """The condition an item was asked under when asked as its exam prints it: C+Q+I for an item
    with images (whether or not their files are here), C+Q for the others. For answers published
    one per question (`medvqa import BENCH FILE --as-printed`)."""
    return Condition.CQI if item.has_images else Condition.CQ


def plan(items: list[Item], conditions: tuple[Condition, ...]) -> list[tuple[Item, Condition]]:
    """Every (item, condition) pair to request, in a stable order: excluded items never enter,
    except held-out ones (asked, never scored)."""
    return [
        (item, cond)
        for item in items
        if not item.excluded or item.held_out
        for cond in conditions
        if cond in applicable(item)
    ]

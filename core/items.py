"""Items, images and official answer structures.

One immutable `Item` carries every shape the supported exams have: multiple choice with text
options (any labels), image-as-options items, numeric-slot answers, free text and bounding
boxes. Adapters build items; everything downstream only reads them.
"""

from __future__ import annotations

import hashlib
import json
import reprlib
from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class DataError(ValueError):
    """Bad input data. The message names the file and the record."""

    def __init__(self, message: str, *, file: str | Path | None = None, record: str | None = None):
        self.reason = message  # the message without the file and record
        parts = []
        if file is not None:
            parts.append(str(file))
        if record is not None:
            parts.append(f"record {record}")
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.file = str(file) if file is not None else None
        self.record = record


class ImageRole(str, Enum):  # noqa: UP042  (str() of a member is `ImageRole.CONTENT`; a StrEnum's would be `content`)
    CONTENT = "content"  # part of the question (a photograph, a chart, ...)
    ANSWER = "answer"  # the options themselves, or an image shown with the options
    SUPPLEMENTARY = "supplementary"


class ImageRef(BaseModel):
    """An image as the dataset references it. `path` is set only when the file exists."""

    model_config = ConfigDict(frozen=True)

    ref: str  # the reference as written in the source, e.g. "2025_images/A11_content.png"
    role: ImageRole = ImageRole.CONTENT
    path: Path | None = None  # resolved absolute path inside the dataset root, or None

    @property
    def available(self) -> bool:
        return self.path is not None


_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxstring, _BRIEF.maxlong, _BRIEF.maxother = 3, 80, 40, 80


def brief(value: Any) -> str:
    """A short repr of a value from the data, for messages: bounded in length and depth, so a
    huge or deeply nested value cannot flood a message or exhaust the stack."""
    return _BRIEF.repr(value)


def resolve_image(root: Path, ref: str, *, file: Path | str, record: str) -> Path | None:
    """Resolve `ref` relative to `root`; refuse references that escape `root`.

    Returns the absolute path when the file exists, None when it is absent. Messages name the
    folder as the caller gave it (the user's --data), as every other path in them.
    """
    given, root = root, Path(root).resolve()
    if not ref or "\x00" in ref:
        raise DataError(f"empty or invalid image reference {brief(ref)}", file=file, record=record)
    candidate = Path(ref)
    if candidate.is_absolute():
        raise DataError(
            f"image reference {brief(ref)} is absolute; it must be relative to {given}", file=file, record=record
        )
    try:
        resolved = (root / candidate).resolve()
        if not resolved.is_relative_to(root):
            raise DataError(
                f"image reference {brief(ref)} escapes the dataset folder {given}", file=file, record=record
            )
        return resolved if resolved.is_file() else None
    except OSError as exc:  # e.g. a name too long for the file system
        raise DataError(
            f"image reference {brief(ref)} is not a usable file name ({exc.strerror})", file=file, record=record
        ) from None


GoldFormat = Literal["single", "multi", "alternatives", "numeric", "text", "bbox"]


class Gold(BaseModel):
    """An official answer, as JMed48k Appendix B.2 writes them.

    `alternatives` holds one or more accepted answers, each a tuple of keys: a single key is
    `(("A",),)`, a multi-key set `(("B","D"),)`, officially accepted alternatives
    `(("A",),("C",))`. Numeric-slot answers hold their digits, one per slot. `raw` keeps the
    source value exactly.
    """

    model_config = ConfigDict(frozen=True)

    alternatives: tuple[tuple[str, ...], ...] = ()
    text: str | None = None  # open-ended reference answer
    box: tuple[float, float, float, float] | None = None  # [x, y, w, h]
    boxes: tuple[tuple[float, float, float, float], ...] = ()  # several gold boxes, each [x, y, w, h]
    raw: Any = None

    @property
    def all_boxes(self) -> tuple[tuple[float, float, float, float], ...]:
        """Every gold box: `box` and `boxes` together."""
        return ((self.box,) if self.box is not None else ()) + self.boxes

    @property
    def format(self) -> GoldFormat:
        if self.box is not None or self.boxes:
            return "bbox"
        if self.text is not None and not self.alternatives:
            return "text"
        if len(self.alternatives) > 1:
            return "alternatives"
        if len(self.alternatives[0]) > 1:
            return "multi"
        return "single"

    @property
    def keys(self) -> frozenset[str]:
        """Every key that appears in any accepted answer."""
        return frozenset(k for alt in self.alternatives for k in alt)

    @classmethod
    def from_json(cls, value: Any, *, file: str | Path | None = None, record: str | None = None) -> Gold | None:
        """Parse the release's `correct_answer`: `null`, `"A"`, `["A"]`, `["B","D"]`,
        `[["1"],["4"]]` or `[["2","4"],["3","4"]]`. Returns None for no usable answer."""
        if value is None or value == [] or value == "":
            return None
        if isinstance(value, str):
            return cls(alternatives=((value.strip(),),), raw=value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return cls(alternatives=((str(value),),), raw=value)
        if isinstance(value, list):
            if all(isinstance(v, list) for v in value):
                alts = []
                for alt in value:
                    if not alt or not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in alt):
                        raise DataError(
                            f"malformed alternative {brief(alt)} in correct_answer", file=file, record=record
                        )
                    alts.append(tuple(str(k).strip() for k in alt))
                return cls(alternatives=tuple(alts), raw=value)
            if all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
                return cls(alternatives=(tuple(str(k).strip() for k in value),), raw=value)
        raise DataError(f"unreadable correct_answer {brief(value)}", file=file, record=record)


class Option(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str  # canonical key used in gold answers and predictions ("A", "1", ...)
    label: str  # the label as printed ("a", "A", "1", ...)
    text: str


AnswerFormat = Literal["choice", "numeric", "text", "bbox"]


class Item(BaseModel):
    """One exam question. Immutable."""

    model_config = ConfigDict(frozen=True)

    id: str
    benchmark: str
    question: str
    options: tuple[Option, ...] = ()
    gold: Gold | None = None
    answer_format: AnswerFormat = "choice"
    n_select: int | None = None  # how many keys the stem asks for ("choose two" → 2); None = one
    images: tuple[ImageRef, ...] = ()
    image_as_options: bool = False
    text_reference: str | None = None
    language: str = "en"
    meta: dict[str, Any] = Field(default_factory=dict)  # strata the adapter declares: year, section, ...
    exclusion_reason: str | None = None
    # answers withheld by the benchmark's owners (a private test split): the item is asked and
    # its records kept for export (`medvqa export`), never scored nor counted in a denominator
    held_out: bool = False

    @field_validator("options")
    @classmethod
    def _unique_keys(cls, options: tuple[Option, ...]) -> tuple[Option, ...]:
        keys = [o.key for o in options]
        if len(set(keys)) != len(keys):
            raise ValueError(f"duplicate option keys {keys}")
        return options

    @model_validator(mode="after")
    def _excluded_has_reason(self) -> Item:
        if self.gold is None and self.exclusion_reason is None:
            object.__setattr__(self, "exclusion_reason", "no usable official answer")
        return self

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.options)

    @property
    def excluded(self) -> bool:
        return self.gold is None

    @property
    def has_images(self) -> bool:
        """The source references images (whether or not the files are present)."""
        return bool(self.images)

    @property
    def usable_images(self) -> tuple[ImageRef, ...]:
        return tuple(im for im in self.images if im.available)

    @property
    def image_available(self) -> bool:
        """Every referenced image is present, so the item can be shown with its images."""
        return bool(self.images) and all(im.available for im in self.images)

    def canonical(self) -> str:
        """The text the fingerprint hashes: the item as JSON with sorted keys, each image's path
        replaced by whether it is there (absolute paths differ between machines)."""
        data = self.model_dump(mode="json")
        for im in data["images"]:
            im["path"] = im["path"] is not None
        return json.dumps(data, sort_keys=True, ensure_ascii=False)

    def fingerprint(self) -> str:
        return hashlib.sha256(self.canonical().encode()).hexdigest()


def fingerprint_texts(texts: Iterable[str]) -> str:
    """The data fingerprint of items given as their `Item.canonical` texts."""
    h = hashlib.sha256()
    for text in texts:
        h.update(hashlib.sha256(text.encode()).hexdigest().encode())
    return h.hexdigest()


def fingerprint_items(items: list[Item]) -> str:
    return fingerprint_texts(item.canonical() for item in items)

"""Turning an item, a condition and a template into chat messages.

Messages are OpenAI-style chat messages whose image parts are kept as references
(`{"type": "image", "path": ..., "sha256": ...}`) until a backend sends them; records and the
cache therefore hold hashes and paths, never inline image data.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .conditions import Condition
from .items import ImageRef, ImageRole, Item

Message = dict  # {"role": str, "content": str | list[dict]}


@lru_cache(maxsize=65536)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, computed once per (path, mtime, size)."""
    st = path.stat()
    return _file_sha256(str(path), st.st_mtime_ns, st.st_size)


def text_part(text: str) -> dict:
    return {"type": "text", "text": text}


def image_part(image: ImageRef) -> dict:
    assert image.path is not None, "only available images are rendered"
    return {"type": "image", "path": str(image.path), "sha256": file_sha256(image.path)}


@dataclass(frozen=True)
class Template:
    """The words around an item, in the item's language.

    `instruction` and `numeric_instruction` are format strings with `{labels}` (the valid
    option labels, comma-joined), `{n}` (how many to choose) and `{slots}` (numeric slots).
    """

    name: str
    system: str | None = None
    question_header: str = ""
    reference_header: str = ""
    options_header: str = "Options:"
    option_line: str = "{label}. {text}"
    instruction: str = (
        'Answer with the option label(s) only, as JSON: {{"answer": ["<label>"]}}. Valid labels: {labels}. Choose {n}.'
    )
    numeric_instruction: str = (
        'Answer with the digits of the result, one per slot, as JSON: {{"answer": ["<digit>", ...]}} ({slots} slots).'
    )
    image_instruction: str = ""  # added when images are shown
    labels_joiner: str = ", "
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # adapter-specific strings

    @property
    def hash(self) -> str:
        data = json.dumps(self.__dict__, sort_keys=True, ensure_ascii=False, default=list)
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    def render(self, item: Item, condition: Condition, *, suffix: str | None = None) -> list[Message]:
        """Messages for `item` under `condition`: optional text reference, stem, content
        images, option list (omitted for image-as-options items), answer images, instruction."""
        parts: list[dict] = []
        texts: list[str] = []

        def flush() -> None:
            if texts:
                parts.append(text_part("\n\n".join(texts)))
                texts.clear()

        if condition.with_question:
            if item.text_reference:
                texts.append(f"{self.reference_header}{item.text_reference}")
            texts.append(f"{self.question_header}{item.question}")
        images = item.usable_images if condition.with_image else ()
        for im in images:
            if im.role is not ImageRole.ANSWER:
                flush()
                parts.append(image_part(im))
        if item.options and not (item.image_as_options and condition.with_image):
            lines = [self.option_line.format(label=o.label, text=o.text) for o in item.options]
            texts.append("\n".join([self.options_header, *lines]) if self.options_header else "\n".join(lines))
        for im in images:
            if im.role is ImageRole.ANSWER:
                flush()
                parts.append(image_part(im))
        # Every condition of an image item gets the same instruction block, so removing the
        # image changes nothing else in the prompt.
        if instruction := self.instruction_for(item, with_images=item.has_images):  # empty: the system prompt asks
            texts.append(instruction)
        if suffix:
            texts.append(suffix)
        flush()
        messages: list[Message] = []
        if self.system:
            messages.append({"role": "system", "content": self.system})
        if len(parts) == 1 and parts[0]["type"] == "text":
            messages.append({"role": "user", "content": parts[0]["text"]})
        else:
            messages.append({"role": "user", "content": parts})
        return messages

    def instruction_for(self, item: Item, *, with_images: bool) -> str:
        if item.answer_format == "numeric":
            slots = len(item.gold.alternatives[0]) if item.gold else 0
            text = self.numeric_instruction.format(slots=slots, labels="", n=1)
        else:
            labels = self.labels_joiner.join(o.label for o in item.options)
            text = self.instruction.format(labels=labels, n=item.n_select or 1, slots=0)
        if with_images and self.image_instruction:
            text = f"{self.image_instruction}\n{text}"
        return text


def messages_for_key(messages: list[Message]) -> str:
    """Canonical JSON of messages for hashing: images are represented by their hash only."""

    def strip(part):
        if isinstance(part, dict) and part.get("type") == "image":
            return {"type": "image", "sha256": part["sha256"]}
        return part

    canon = [
        {
            "role": m["role"],
            "content": m["content"] if isinstance(m["content"], str) else [strip(p) for p in m["content"]],
        }
        for m in messages
    ]
    return json.dumps(canon, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

"""medvqa: evaluate vision-language models on national medical licensing exams, and audit
whether they use the images.

    >>> import medvqa
    >>> items = medvqa.load("jmed48k", split="sample")
    >>> medvqa.score(items[0], '{"answer": ["a"]}').correct
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from medvqa.core.items import Item
    from medvqa.core.scoring import Score

__all__ = ["load", "score"]


def load(benchmark: str, path: str | Path | None = None, split: str | None = None, **options) -> list["Item"]:
    """Items of a registered benchmark (`medvqa list` shows them)."""
    from medvqa.core.plugins import get_benchmark

    return get_benchmark(benchmark).load(Path(path) if path is not None else None, split, **options)


def score(item: "Item", response_text: str | None, *, error: str | None = None) -> "Score":
    """Normalise a raw model response under the registered language patterns and score it."""
    from medvqa.core.plugins import answer_patterns
    from medvqa.core.scoring import score as _score

    return _score(item, response_text, error=error, patterns=answer_patterns())

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


def score(item: "Item", response_text: str | None, *, error: str | None = None, saved: bool = False) -> "Score":
    """Read a raw model response under the registered language patterns and the answer
    conventions of the item's benchmark, and score it. `saved` marks a prediction saved in the
    benchmark's own format rather than a model's reply (docs/scoring.md)."""
    from medvqa.core.benchmark import AnswerConventions
    from medvqa.core.plugins import answer_patterns, benchmarks
    from medvqa.core.scoring import score as _score

    registered = benchmarks().get(item.benchmark)
    conventions = registered.obj.answer_conventions() if registered else AnswerConventions()
    return _score(item, response_text, error=error, patterns=answer_patterns(), conventions=conventions, saved=saved)

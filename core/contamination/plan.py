"""`medvqa contamination --dry-run`: what making the quiz and taking it would ask, and what it
would cost, before anything is sent or written.

The requests are built exactly as they would be sent (the same prompts and request keys), and
those the response cache already answers are left out; tokens and cost are counted by the run
command's own estimate (`run.plan.estimate_cost`: litellm's token counter, `--price` or
litellm's price map). Before the quiz exists its variants are unknown: each examination is
counted with the question in all four places, a paraphrase being about as long as its original;
the generator's own re-asks (a reply with a rejected variant, up to `GENERATOR_ATTEMPTS` in all)
are not counted, and `note` says so."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..inference.base import request_key
from .exam import QUIZZES, options_of
from .quiz import (
    EXAMINEE_DEFAULTS,
    GENERATOR_ATTEMPTS,
    GENERATOR_DEFAULTS,
    GENERATOR_PROMPT_HASH,
    QUIZ_PROMPT_HASH,
    generator_messages,
    instance,
    quiz_messages,
    read_quiz,
)


def dry_run(
    target: str,
    *,
    data: str | Path | None = None,
    split: str | None = None,
    select: Mapping[str, Sequence[str]] | None = None,
    limit: int | None = None,
    quiz: str | Path,
    quiz_model: str | None = None,
    quiz_options: dict[str, Any] | None = None,
    dataset: str | None = None,
    models: Sequence[str] = (),
    model_options: dict[str, Any] | None = None,
    cache_path: str | Path | None = None,
) -> dict[str, Any]:
    """The plan (see the module's docstring): for the generator and each examined model, the
    requests to send, those the cache answers, tokens and cost."""
    from ..files import default_cache_path
    from ..inference.cache import ResponseCache
    from ..inference.path import backend_for
    from ..plugins import get_benchmark

    cache_file = Path(cache_path) if cache_path else default_cache_path()
    cache = ResponseCache(cache_file) if cache_file.is_file() else None  # a plan makes no cache
    bench = get_benchmark(target)
    quiz_path = Path(quiz)
    plan: dict[str, Any] = {"quiz": str(quiz_path), "benchmark": bench.name}
    try:
        if quiz_path.exists():
            the_quiz = read_quiz(quiz_path)
            entries = the_quiz.items
            dataset, the_split = the_quiz.dataset, the_quiz.split  # (the quiz's own, as the examination uses)
            plan["generator"] = {"model": the_quiz.generator.get("model"), "requests": 0, "note": "the quiz exists"}
        else:
            if quiz_model is None:
                from ..errors import UsageError

                raise UsageError(f"{quiz_path} does not exist: give --quiz-model to plan writing the quiz")
            the_split = bench.checked_split(split)
            items = [
                i for i in bench.load(Path(data) if data else None, the_split, select=select) if i.question.strip()
            ]
            items = items[:limit]
            dataset = dataset or bench.name
            entries = [{"item_id": i.id, "instance": instance(i), "variants": [instance(i)] * 4} for i in items]
            backend = backend_for(quiz_model, quiz_options or {}, GENERATOR_DEFAULTS)
            params = {**backend.params, "dcq_generator_prompt": GENERATOR_PROMPT_HASH}
            payloads = [generator_messages(e["instance"]) for e in entries]
            plan["generator"] = {
                "model": quiz_model,
                **_priced(backend, params, payloads, cache),
                "note": f"a reply with a rejected variant is asked again, up to {GENERATOR_ATTEMPTS} in all: "
                "those are not counted",
            }
        plan["n_items"] = len(entries)
        plan["examinations"] = {}
        for model in models:
            backend = backend_for(model, model_options or {}, EXAMINEE_DEFAULTS)
            params = {**backend.params, "dcq_quiz_prompt": QUIZ_PROMPT_HASH}
            payloads = [
                quiz_messages(options_of(e, name), dataset=dataset, split=the_split)
                for e in entries
                for name in QUIZZES
            ]
            plan["examinations"][model] = _priced(backend, params, payloads, cache)
    finally:
        if cache is not None:
            cache.close()
    return plan


def _priced(backend: Any, params: dict[str, Any], payloads: list[list[dict]], cache: Any) -> dict[str, Any]:
    """Requests, cache hits, tokens and cost of sending `payloads` through `backend`."""
    from ..run.plan import estimate_cost

    keys = [request_key(backend.model, params, m, backend.endpoint) for m in payloads]
    cached = set(cache.get_many(keys)) if cache is not None and backend.cacheable and keys else set()
    to_send = [m for k, m in zip(keys, payloads, strict=True) if k not in cached]
    out: dict[str, Any] = {"to_ask": len(payloads), "cached": len(payloads) - len(to_send), "requests": len(to_send)}
    if backend.cacheable:
        out.update(estimate_cost(backend, [(m, 1) for m in to_send]))
    return out

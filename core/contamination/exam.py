"""The Data Contamination Quiz taken: a quiz (`quiz.Quiz`) put to an examined model through the
one request path, and its answers estimated by the authors' computation (`..dcq.estimate`).

Each quiz item is asked five times: the Bias Detector Quiz (the four variants as A-D, E "None of
the provided options.") and a Bias Compensator Quiz for each position A-D, the original put in
that position in place of the variant there (the authors' `_create_option_mapping` in
`src/core/bias_compensator_quiz.py`). The authors ask the BCQs of the non-preferred positions
only, after the BDQ; medvqa asks all four at once. The estimate is the same (it reads only the
non-preferred positions' BCQs), the requests can go out together, and each stratum (exam year,
profession, country) is estimated with its own non-preferred positions, as the authors would
estimate it had they quizzed that stratum alone. The cost is at most one BCQ in four more.

A request that fails (after the backend's retries) leaves its answer blank: it counts nothing
and stays in n, as a blank answer does in the authors' files; `errors` counts them, and a quiz
with any is flagged in `notes`. The answers can be written as a results CSV in the authors'
layout (`answers_csv`), which `medvqa contamination --dcq-results` reads back to the same level."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import dcq
from ..errors import UsageError
from ..items import Item
from .quiz import EXAMINEE_DEFAULTS, QUIZ_PROMPT_HASH, Quiz, quiz_messages, spent

QUIZZES = ("bdq", *(f"bcq_{p}" for p in dcq.POSITIONS))


def options_of(entry: dict[str, Any], quiz_name: str) -> list[str]:
    """The four options A-D of one quiz of an item: the variants (BDQ), or the variants with the
    original in position x (`bcq_x`)."""
    options = list(entry["variants"])
    if quiz_name != "bdq":
        options[dcq.POSITIONS.index(quiz_name[-1])] = entry["instance"]
    return options


def take_quiz(
    quiz: Quiz,
    model: str,
    *,
    backend_options: dict[str, Any] | None = None,
    cache: bool = True,
    cache_path: str | Path | None = None,
) -> tuple[dict[str, dict[str, str | None]], dict[str, Any]]:
    """The examined model's raw answers, {item_id: {quiz: text or None}}, and what it took
    (requests, cache hits, cost, errors)."""
    from ..inference.base import Request, Response, request_key
    from ..inference.cache import ResponseCache
    from ..inference.path import RequestPath, backend_for

    backend = backend_for(model, backend_options or {}, EXAMINEE_DEFAULTS)
    params = {**backend.params, "dcq_quiz_prompt": QUIZ_PROMPT_HASH}
    requests = []
    for entry in quiz.items:
        # the backend needs an item; the quiz's own text stands in for it (no options: the quiz
        # letters are the prompt's, not the exam's)
        item = Item(id=entry["item_id"], benchmark=quiz.benchmark, question=entry["instance"], language=quiz.language)
        for name in QUIZZES:
            messages = quiz_messages(options_of(entry, name), dataset=quiz.dataset, split=quiz.split)
            key = request_key(backend.model, params, messages, backend.endpoint)
            requests.append(Request(item=item, condition=f"dcq:{name}", messages=messages, key=key))
    answers: dict[str, dict[str, str | None]] = {e["item_id"]: {} for e in quiz.items}
    errors: list[str] = []

    def done(req: Request, response: Response, value: Any, attempts: int) -> bool:
        name = req.condition.removeprefix("dcq:")
        answers[req.item.id][name] = response.text if response.error is None else None
        if response.error is not None:
            errors.append(f"{req.item.id} {name}: {response.error}")
        return response.error is None and response.text is not None

    response_cache = ResponseCache(Path(cache_path) if cache_path else None) if cache else None
    path = RequestPath(backend, response_cache)
    try:
        path.send(requests, done, dedupe=True)
    finally:
        if response_cache is not None:
            response_cache.close()
    return answers, {**spent(path), "errors": len(errors), "first_errors": errors[:5]}


def estimate_answers(answers: dict[str, dict[str, str | None]], item_ids: list[str]) -> dcq.DcqEstimate:
    """The authors' estimate (`dcq.estimate`) of the answers of `item_ids`, each answer read as
    their files are read (`dcq.answer_cell`), so the answers written as a CSV give the same level."""

    def cell(text: str | None) -> str | None:
        return None if text is None else dcq.answer_cell(text)

    bdq = [cell(answers[i].get("bdq")) for i in item_ids]
    bcq = {p: [cell(answers[i].get(f"bcq_{p}")) for i in item_ids] for p in dcq.POSITIONS}
    return dcq.estimate(bdq, bcq)


def examine(
    quiz: Quiz,
    model: str,
    *,
    by: list[str] | None = None,
    backend_options: dict[str, Any] | None = None,
    cache: bool = True,
    cache_path: str | Path | None = None,
    answers_csv: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """`model` takes `quiz`: the estimate overall and by each stratum of `by` (the quiz's strata by
    default), with what it took; `answers_csv` also writes the answers in the authors' layout."""
    if not quiz.items:
        raise ValueError("the quiz holds no items (every item was dropped: see its 'dropped')")
    held = sorted({k for e in quiz.items for k in (e.get("strata") or {})})
    fields = by if by is not None else held
    if unknown := [f for f in fields if f not in held]:
        raise UsageError(f"--by {', '.join(unknown)}: the quiz's items hold the strata {', '.join(held) or 'none'}")
    if progress:
        progress(f"{model}: {len(quiz.items)} items x {len(QUIZZES)} quizzes")
    answers, took = take_quiz(quiz, model, backend_options=backend_options, cache=cache, cache_path=cache_path)
    ids = [e["item_id"] for e in quiz.items]
    strata: dict[str, dict[str, Any]] = {}
    for name in fields:
        levels: dict[str, list[str]] = {}
        for e in quiz.items:
            levels.setdefault(str((e.get("strata") or {}).get(name)), []).append(e["item_id"])
        strata[name] = {
            level: estimate_answers(answers, members).as_json() for level, members in sorted(levels.items())
        }
    notes = []
    if took["errors"]:
        notes.append(f"{took['errors']} quiz request(s) failed; their answers are blank (counted in n, as no letter)")
    if answers_csv is not None:
        from ..files import write_atomic

        write_atomic(answers_csv, results_csv(quiz, answers))
    return {
        "model": model,
        "quiz_prompt_hash": QUIZ_PROMPT_HASH,
        "n_items": len(ids),
        **took,
        "overall": estimate_answers(answers, ids).as_json(),
        "by": strata,
        "notes": notes,
    }


def results_csv(quiz: Quiz, answers: dict[str, dict[str, str | None]]) -> str:
    """The answers as a results CSV in the authors' layout: the instance, its four options, the
    BDQ's answer and each BCQ's (`bcq_results_for_position_<x>`), one row per item."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    columns = [f"bcq_results_for_position_{p}" for p in dcq.POSITIONS]
    writer.writerow(["item_id", "instance", "option_a", "option_b", "option_c", "option_d", "bdq_results", *columns])
    for e in quiz.items:
        got = answers[e["item_id"]]
        writer.writerow(
            [
                e["item_id"],
                e["instance"],
                *e["variants"],
                got.get("bdq") or "",
                *(got.get(f"bcq_{p}") or "" for p in dcq.POSITIONS),
            ]
        )
    return out.getvalue()

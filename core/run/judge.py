"""`judge_run`: a saved run's free-text answers judged by a model, the verdicts appended to its
records (the judge's prompt and reading are `scoring.judge`'s `JudgePrompt`; see there)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from ..inference.base import Request, Response, request_key
from ..inference.path import RequestPath, WriteBatch, backend_for
from ..messages import Message
from ..scoring.judge import JUDGE_BACKEND_DEFAULTS, Judgement, Verdict, apply_verdict, is_judged

if TYPE_CHECKING:
    from ..inference.cache import ResponseCache


class JudgeStats(TypedDict):
    """What one judge model did in a `judge_run`."""

    judged: int  # records given a verdict (or a judge error) now
    requested: int  # requests sent to the judge
    cache_hits: int  # verdicts found in the response cache
    judge_errors: int  # records left unreadable or failed
    already_judged: int  # records this model had judged under this prompt before


class JudgeSummary(TypedDict):
    """What `judge_run` returns (`medvqa judge --json` prints it; a run's summary keeps it as `judged`)."""

    run_dir: str
    judge: str  # the model whose verdict counts
    prompt: str
    prompt_version: str
    prompt_hash: str
    n_judgeable: int  # answered records the judge reads
    judges: dict[str, JudgeStats]  # per judge model, in the order given
    reading: str  # the headline numbers' reading (`metrics.headline_numbers`)
    conditions: dict[str, dict]  # {condition: `Cell.as_dict()`} after judging


def judge_run(
    run_dir: str | Path,
    models: Iterable[str],
    *,
    backend_options: dict[str, Any] | None = None,
    cache: bool = True,
    cache_path: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> JudgeSummary:
    """Judge the newest records of a saved run with each of `models` (the first one's verdict
    counts); return per judge what was judged, asked, found in the cache and left as judge
    errors. Records judged before by a model under the same prompt are skipped."""
    from ..inference.cache import ResponseCache
    from ..metrics import headline_numbers
    from .saved import read_run
    from .store import RunStore

    models = list(dict.fromkeys(models))
    if not models:
        raise ValueError("name a judge model: --judge MODEL")
    run_dir = Path(run_dir)
    saved = read_run(run_dir)
    spec = saved.benchmark.judge()
    if spec is None:
        raise ValueError(f"benchmark {saved.benchmark.name} declares no judge: its answers are scored without one")
    primary = models[0]
    current = {(r["item_id"], r["condition"]): r for r in saved.records}
    judgeable: dict[tuple[str, str], list[Message]] = {}
    for pair, rec in current.items():
        if rec.get("status") == "answered":
            messages = spec.messages(saved.items[rec["item_id"]], rec)
            if messages is not None:
                judgeable[pair] = messages
    if not judgeable:
        answered = sum(r.get("status") == "answered" for r in current.values())
        raise ValueError(
            f"nothing to judge in {run_dir}: of its {len(current)} records, {answered} hold an answer "
            f"and none of them is one the {spec.name} judge reads (closed items are scored by their "
            f"options without a judge); nothing was written"
        )
    judges = {
        **(saved.manifest.get("judges") or {}),
        **{m: {"prompt": spec.name, "version": spec.version, "prompt_hash": spec.hash} for m in models},
    }
    store = RunStore(run_dir)
    store.open({**saved.manifest, "judges": judges})
    written = WriteBatch(store)
    response_cache: ResponseCache | None = None

    def judge_with(model: str) -> JudgeStats:
        """The pending records judged by `model`, each verdict added to `written` as it comes."""
        nonlocal response_cache
        pending = [pair for pair in judgeable if not is_judged(current[pair], model, spec.hash)]
        stats = JudgeStats(
            judged=0, requested=0, cache_hits=0, judge_errors=0, already_judged=len(judgeable) - len(pending)
        )
        if not pending:
            return stats
        backend = backend_for(model, backend_options or {}, JUDGE_BACKEND_DEFAULTS)
        if response_cache is None and cache and backend.cacheable:
            response_cache = ResponseCache(Path(cache_path) if cache_path else None)
        usable_cache = response_cache if backend.cacheable else None
        params = {**backend.params, "judge_prompt": spec.hash}
        requests = [
            Request(
                item=saved.items[pair[0]],
                condition=pair[1],
                messages=judgeable[pair],
                key=request_key(backend.model, params, judgeable[pair], backend.endpoint),
            )
            for pair in pending
        ]

        def record(req: Request, response: Response, verdict: Verdict | None, attempts: int) -> bool:
            """The verdict kept in its record; whether it was readable (an unreadable one is asked again)."""
            pair = (req.item.id, req.condition)
            error = response.error
            if error is None and verdict is None:
                error = f"unreadable verdict after {attempts} request(s)"
            judged = Judgement(
                verdict=verdict,
                response=response.text,
                error=error,
                key=req.key,
                prompt=spec.name,
                prompt_version=spec.version,
                prompt_hash=spec.hash,
                cached=response.cached,
                attempts=attempts,
            )
            rec = current[pair]
            new = apply_verdict(
                {**rec, "judgements": {**(rec.get("judgements") or {}), model: judged}, "judge": primary}
            )
            written.add(new)
            current[pair] = new
            stats["judged"] += 1
            stats["judge_errors"] += verdict is None
            return verdict is not None

        # records whose judge request is identical are asked once (dedupe)
        path = RequestPath(backend, usable_cache)
        path.send(
            requests,
            record,
            read=lambda req, text: spec.verdict(text),
            max_attempts=spec.max_attempts,
            dedupe=True,
            again=(lambda n: progress(f"{model}: {n} unreadable verdict(s), asking again")) if progress else None,
        )
        stats["requested"], stats["cache_hits"] = path.requested, path.cache_hits
        return stats

    judged_by: dict[str, JudgeStats] = {}
    try:
        with store:
            try:
                for model in models:
                    judged_by[model] = judge_with(model)
                for pair in judgeable:  # the verdict that counts is the first judge's, where it has one
                    rec = current[pair]
                    if rec.get("judge") != primary and primary in (rec.get("judgements") or {}):
                        current[pair] = apply_verdict({**rec, "judge": primary})
                        written.add(current[pair])
            finally:  # what was judged reaches the file, even on Ctrl-C
                written.flush()
    finally:
        if response_cache is not None:
            response_cache.close()
    numbers = headline_numbers(current.values(), saved.benchmark)  # the protocol's reading, the other beside it
    return JudgeSummary(
        run_dir=str(run_dir),
        judge=primary,
        prompt=spec.name,
        prompt_version=spec.version,
        prompt_hash=spec.hash,
        n_judgeable=len(judgeable),
        judges=judged_by,
        reading=numbers["reading"],
        conditions=numbers["conditions"],
    )

"""`medvqa run`: plan the (item, condition) pairs, skip what the run directory already holds
(except `error` and `missing` records, which are retried unless `retry_errors` is off), answer
the rest from the cache or the backend (after the backend's preflight), score, and append
records (each made by `recording.make_record`). A retried pair's old record stays in the file;
readers take the newest."""

from __future__ import annotations

import gc
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..benchmark import Benchmark
from ..conditions import ALL, Condition, parse_variants, plan
from ..inference.base import Backend, Request, Response, backend_request_key
from ..inference.cache import ResponseCache
from ..inference.path import RequestPath
from ..inference.secrets import redact_command_line, redact_params
from ..inference.vllm_engines import ENGINES
from ..items import Item, fingerprint_items, fingerprint_texts
from ..metrics import headline_numbers
from ..repeat_metrics import repeat_numbers
from ..results import FORMAT_VERSION
from ..usage import usage_by_condition, usage_warning
from . import item_cache
from .forced import forced_guess_requests
from .interrupt import interrupts_deferred
from .recording import DEFAULT_MAX_RESPONSE_BYTES, REASONING_TRUNCATED, SCORING_ERROR, TRUNCATED, make_record
from .shards import Shard
from .store import HELD_OUT, RunStore, gc_paused, newest_per_pair, pair_key
from .summary import DEFAULT_MAX_ERROR_RATE, health
from .variants import VariantPlan, check_variants, variant_messages, variant_plan, variant_schema

if TYPE_CHECKING:
    from .extract import ExtractSummary
    from .judge import JudgeSummary

RETRIED_STATUSES = ("error", "missing")  # what a re-run asks again by default
# The most repeats a run asks (`--repeats`): sampling studies use 5 to 100; a run of more is a typo.
MAX_REPEATS = 1000


def package_versions(*names: str) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("medvqa", *names):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


@dataclass
class RunResult:
    run_dir: Path
    n_items: int
    n_excluded: int
    records: list[dict]
    requested: int = 0
    cache_hits: int = 0
    elapsed_s: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)  # tokens of the requests made in this run
    cost_usd: float = 0.0
    n_image_fallback: int = 0  # items whose image files are missing: run without images only
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    judged: JudgeSummary | None = None  # what `judge_run` did, when the run was judged
    extracted: ExtractSummary | None = None  # what `extract_run` did, when an extractor read the parse failures
    held_out: list[dict] = field(default_factory=list)  # records of held-out items: exported, not scored
    benchmark: Benchmark | None = None  # whose rules (`Benchmark.counts`) the numbers follow
    reading: str | None = None  # the headline's reading; None: the benchmark's protocol's

    def accuracy(self) -> dict[str, float]:
        return self.summary()["accuracy"]

    def summary(self) -> dict:
        """Counts, accuracy and, per condition, n, accuracy with its 95 % CI and every status;
        `failure` says why the run cannot be trusted (None when it can)."""
        summary = {
            "run_dir": str(self.run_dir),
            "n_items": self.n_items,
            "n_records": len(self.records),
            "n_excluded": self.n_excluded,
            **headline_numbers(self.records, self.benchmark, self.reading),
            "n_image_fallback": self.n_image_fallback,
            **health(self.records + self.held_out, self.max_error_rate),
            **({"n_held_out": len(self.held_out)} if self.held_out else {}),
            "requested": self.requested,
            "cache_hits": self.cache_hits,
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "elapsed_s": round(self.elapsed_s, 3),
            **({"judged": self.judged} if self.judged is not None else {}),
            **({"extracted": self.extracted} if self.extracted is not None else {}),
            **(
                {"repeats": repeated}
                if (repeated := repeat_numbers(self.records, self.benchmark, self.reading))
                else {}
            ),
            **({"usage_by_condition": used} if (used := usage_by_condition(self.records)) else {}),
        }
        if (unreadable := usage_warning(self.records)) is not None:
            summary["warnings"] = [*summary.get("warnings", []), unreadable]
        return summary


@dataclass
class RunSpec:
    benchmark: Benchmark
    items: list[Item]
    backend: Backend
    conditions: tuple[Condition, ...]
    run_dir: Path
    split: str = "full"
    data: str | None = None
    cache: ResponseCache | None = None
    command_line: list[str] = field(default_factory=lambda: list(sys.argv))
    extra_manifest: dict[str, Any] = field(default_factory=dict)
    # Re-ask refused image-removed items with the benchmark's permission to guess (`C+Q/forced`).
    forced_guess: bool = False
    # Ask again the pairs whose newest record is `error` or `missing`.
    retry_errors: bool = True
    # What a record keeps of an answer (bytes of UTF-8); None keeps it whole.
    max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES
    # Ask every pair this many times (`--repeats`); each record past the first keeps its index in `repeat`.
    repeats: int = 1
    # The backend of repeat r ≥ 1 (the run's with its own seed, say); None: `backend` for every repeat.
    # One that gives `backend` itself (a batch API's) is handed every repeat's requests in one call.
    repeat_backend: Callable[[int], Backend] | None = None
    # Image variants asked besides the conditions (`--variants`, `variants.variant_plan`); `seed` draws swap's partners.
    variants: tuple[str, ...] = ()
    seed: int = 0
    planned_variants: VariantPlan | None = field(default=None, repr=False)  # made once, by `variant_pairs`
    # The data's signature taken before `items` were loaded (`item_cache.signature_of`): the run keeps
    # its items under it for the analyses after it (`item_cache.keep`); None keeps nothing.
    data_signature: str | None = None
    # The share of the pairs this run asks (`--shard I/N`, `shards.Shard`); None: every pair.
    shard: Shard | None = None

    def __post_init__(self) -> None:  # refused here, before the run directory is touched
        if type(self.repeats) is not int or not 1 <= self.repeats <= MAX_REPEATS:
            raise ValueError(f"repeats must be a whole number from 1 to {MAX_REPEATS}, not {self.repeats!r}")
        if self.repeats > 1 and self.forced_guess:
            raise ValueError("--forced-guess and --repeats cannot be combined yet: give one")
        self.variants = check_variants(parse_variants(self.variants), self.conditions)  # known names, each once

    def shard_items(self) -> list[Item]:
        """The items whose pairs the run asks: its shard's (`shard`), else all of them."""
        return self.items if self.shard is None else [it for it in self.items if self.shard.holds(it.id)]

    def pairs(self) -> list[tuple[Item, str, Item]]:
        """(item, record label, the item as shown) of every pair the run asks: each item of its
        shard under each of its conditions, then each variant pair of those items (`variant_pairs`,
        whose swap partners are drawn from every item)."""
        items = self.shard_items()
        out = [(item, cond.value, item) for item, cond in plan(items, self.conditions)]
        if self.variants:
            held = {it.id for it in items}
            out += [pair for pair in self.variant_pairs().pairs if pair[0].id in held]
        return out

    def variant_pairs(self) -> VariantPlan:
        """The variant pairs of the run and its manifest section, computed once (the perturbed
        images made or found in the cache folder)."""
        if self.planned_variants is None:
            self.planned_variants = variant_plan(self.benchmark, self.items, self.conditions, self.variants, self.seed)
        return self.planned_variants


def build_manifest(spec: RunSpec, texts: list[str] | None = None) -> dict:
    """The run's manifest; `texts`, the items' `Item.canonical` texts when the caller has them,
    spares computing them again for the data fingerprint."""
    bench = spec.benchmark
    templates = {}
    for item in spec.items:
        t = bench.template(item)
        if t.name not in templates:
            templates[t.name] = t.hash
    # each with the conditions its item takes, so that a condition's rows count only the excluded
    # items it would have asked (an annulled text question is no C+Q+I row's)
    excluded = [
        {
            "item_id": it.id,
            "reason": it.exclusion_reason,
            **bench.record_fields(it),
            "conditions": [c.value for c in (ALL if it.has_images else (Condition.C, Condition.CQ))],
        }
        for it in spec.items
        if it.excluded
    ]
    return {
        "format": FORMAT_VERSION,
        "benchmark": bench.name,
        "split": spec.split,
        "data": spec.data,
        "data_fingerprint": fingerprint_texts(texts) if texts is not None else fingerprint_items(spec.items),
        "n_items": len(spec.items),
        "model": spec.backend.model,
        "params": redact_params(spec.backend.params),  # header and query values masked
        "conditions": [c.value for c in spec.conditions],
        **({"variants": spec.variant_pairs().manifest} if spec.variants else {}),
        **({"shard": {**spec.shard.manifest(), "pairs": shard_pairs(spec)}} if spec.shard is not None else {}),
        "templates": dict(sorted(templates.items())),
        "strata": list(bench.strata),
        "language": bench.active_language,
        "excluded": excluded,
        "versions": package_versions("pydantic", "pluggy", "litellm"),
        "plugins": plugins.loaded_plugins(),
        "command_line": redact_command_line(spec.command_line),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        **spec.extra_manifest,
    }


def shard_pairs(spec: RunSpec) -> int:
    """How many pairs the run's shard asks, repeats and variants included (a forced guess, asked
    only after a refusal, is not counted): what `merge` checks a shard has recorded."""
    return spec.repeats * len(spec.pairs())


def plan_requests(
    spec: RunSpec, existing: list[dict], repeats: int | None = None
) -> tuple[list[dict], list[Request], dict[int, Backend]]:
    """(the records kept of `existing`, the requests still to ask, the backend of each repeat):
    what `execute` asks and what `--dry-run` counts, computed here once. `repeats` plans the
    first repeats only (`--dry-run` counts the others without building them)."""
    repeats = spec.repeats if repeats is None else min(repeats, spec.repeats)
    retried = RETRIED_STATUSES if spec.retry_errors else ()
    kept = [r for r in existing if r.get("status") not in retried]
    done = {pair_key(r) for r in kept}
    backends = {0: spec.backend}
    for r in range(1, repeats):
        backends[r] = spec.repeat_backend(r) if spec.repeat_backend is not None else spec.backend
        if backends[r].stats is not None:  # one run, one set of live counters (tokens, cost, in flight)
            backends[r].stats = spec.backend.stats
    todo: list[Request] = []
    bench = spec.benchmark
    # every pair, the variants' included: the item as shown is scored (a rotation's gold is where its text now stands)
    for item, label, shown in spec.pairs():
        messages = schema = None
        for r in range(repeats):
            if pair_key({"item_id": item.id, "condition": label, "repeat": r}) in done:
                continue
            if messages is None:
                messages, schema = variant_messages(bench, label, shown), variant_schema(bench, label, shown)
            todo.append(
                Request(
                    item=shown,
                    condition=label,
                    messages=messages,
                    response_schema=schema,
                    key=backend_request_key(backends[r], messages, schema, r),
                    repeat=r,
                )
            )
    return kept, todo, backends


def execute(spec: RunSpec, progress: Callable[[dict], None] | None = None) -> RunResult:
    """Run (or resume) `spec`. Every planned pair ends with exactly one record."""
    started = time.monotonic()
    bench = spec.benchmark
    patterns = plugins.answer_patterns()
    store = RunStore(spec.run_dir)
    # the items' texts made once: the data fingerprint and the entry the run keeps both hash them
    texts = [it.canonical() for it in spec.items] if spec.data_signature is not None else None
    manifest = build_manifest(spec, texts)
    existing = store.open(manifest)
    if spec.data_signature is not None:  # the items just loaded and checked, kept for the first analysis
        with gc_paused():
            item_cache.keep(bench, manifest, spec.items, spec.data_signature, texts)
    del texts
    kept, todo, backends = plan_requests(spec, existing)
    records = list(existing)  # every record of this run; superseded ones are dropped at the end
    retried = RETRIED_STATUSES if spec.retry_errors else ()
    result = RunResult(
        run_dir=spec.run_dir,
        n_items=len(asked := spec.shard_items()),  # a shard's summary counts its own items
        n_excluded=sum(1 for it in asked if it.excluded),
        records=records,
        benchmark=bench,
    )
    state = progress_state(kept, todo, spec.backend.stats)
    if progress:
        progress(state)
    paths = {0: RequestPath(spec.backend, spec.cache)}
    for r in range(1, spec.repeats):  # the first repeat's preflight checks the server for every repeat
        if spec.repeat_backend is not None and backends[r] is spec.backend:
            paths[r] = paths[0]  # a backend that takes every repeat (a batch API's): asked once for all
            continue
        paths[r] = RequestPath(backends[r], spec.cache, preflight=paths[0].preflight)
    distinct = list({id(p): p for p in paths.values()}.values())  # each path once, with all its repeats
    numbered = spec.repeats > 1 or any(r.get("repeat") for r in existing)

    def answer(requests: list[Request]) -> None:
        """Through the one request path of each repeat: cache hits first, then the backend
        (checked by its preflight before its first request); every request ends as one
        appended record."""
        if requests:  # a directory the records cannot reach fails now, before anything is asked
            store.check_writable()

        def done(req: Request, resp: Response, _value, attempts: int) -> bool:
            record = _finish(
                store, records, bench, req, resp, patterns, state, progress, spec.max_response_bytes, numbered
            )
            # the cache keeps whole, readable answers: a reply or reasoning cut is not whole
            return (
                SCORING_ERROR not in record
                and TRUNCATED not in record
                and REASONING_TRUNCATED not in record
                and not resp.refusal
            )

        for path in distinct:
            path.send([req for req in requests if paths[req.repeat] is path], done)
        result.cache_hits = sum(p.cache_hits for p in distinct)
        result.requested = sum(p.requested for p in distinct)

    gc.freeze()  # items and requests live as long as the run: keep the collector's full passes off them
    try:
        # the repeats' backends share one engine on the GPUs, shut down when the run ends (`vllm_engines`)
        with store, ENGINES.kept():
            answer(todo)
            if spec.forced_guess:
                current = [r for r in newest_per_pair(records) if r.get("status") not in retried]
                forced = forced_guess_requests(bench, spec.backend, current, {it.id: it for it in spec.items})
                for req in forced:
                    state["conditions"].setdefault(req.condition, {"done": 0, "total": 0})["total"] += 1
                state["total"] += len(forced)
                answer(forced)
    finally:
        gc.unfreeze()
        if spec.cache is not None:
            spec.cache.flush()
    result.records = [r for r in newest_per_pair(records) if not r.get(HELD_OUT)]
    result.held_out = [r for r in newest_per_pair(records) if r.get(HELD_OUT)]
    backend = state["backend"]
    result.usage = {k: backend.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
    result.cost_usd = round(backend.get("cost_usd", 0.0), 6)
    result.elapsed_s = time.monotonic() - started
    return result


def progress_state(existing: list[dict], todo: list[Request], backend_stats: dict | None) -> dict:
    """What a progress display shows: done/total overall and per condition, errors, cache hits,
    and the backend's live counters (in flight, retries, tokens, cost)."""
    conditions: dict[str, dict[str, int]] = {}
    for cond in [r["condition"] for r in existing] + [r.condition for r in todo]:
        conditions.setdefault(cond, {"done": 0, "total": 0})["total"] += 1
    for r in existing:
        conditions[r["condition"]]["done"] += 1
    return {
        "done": len(existing),
        "total": len(existing) + len(todo),
        "errors": 0,
        "cached": 0,
        "conditions": conditions,
        "backend": backend_stats if backend_stats is not None else {},
    }


def _finish(
    store, records, bench, req, resp, patterns, state, progress, max_response_bytes=None, numbered: bool = False
) -> dict:
    record = make_record(bench, req.item, req.condition, req.key, resp, patterns, max_response_bytes)
    if numbered:  # a run with repeats: every record says which
        record["repeat"] = req.repeat
    with interrupts_deferred():  # the line written and the count Ctrl-C prints stay together
        store.append(record)
        records.append(record)
        state["done"] += 1
    state["conditions"][req.condition]["done"] += 1
    state["errors"] += record["status"] == "error"
    state["cached"] += bool(resp.cached)
    if progress:
        progress(state)
    return record

"""`medvqa run`: plan the (item, condition) pairs, skip what the run directory already holds,
answer the rest from the cache or the backend, score, and append records."""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from . import plugins
from .benchmark import Benchmark
from .conditions import Condition, plan
from .inference.base import Backend, Request, Response, request_key
from .inference.cache import ResponseCache
from .items import Item, fingerprint_items
from .scoring import score
from .store import RunStore

RECORD_FIELDS = ("item_id", "condition", "key", "response", "error", "usage", "latency_s",
                 "cached", "predicted", "status", "correct", "rule")


def package_versions(*names: str) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("medvqa", *names):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def make_record(benchmark: Benchmark, item: Item, condition: str, key: str, response: Response,
                patterns: tuple = ()) -> dict:
    """One record: the raw response, its score, and the item's strata."""
    result = score(item, response.text, error=response.error, patterns=patterns)
    record = {
        "item_id": item.id,
        "condition": condition,
        "key": key,
        "response": response.text,
        "error": response.error,
        "usage": response.usage,
        "latency_s": round(response.latency_s, 4),
        "cached": response.cached,
        "predicted": list(result.predicted) if result.predicted is not None else None,
        "status": result.status,
        "correct": result.correct,
        "rule": result.rule,
    }
    record.update(benchmark.record_fields(item))
    return record


def rescore_record(benchmark: Benchmark, item: Item, record: dict, patterns: tuple = ()) -> dict:
    response = Response(text=record.get("response"), error=record.get("error"),
                        usage=record.get("usage") or {}, latency_s=record.get("latency_s") or 0.0,
                        cached=bool(record.get("cached")))
    new = make_record(benchmark, item, record["condition"], record["key"], response, patterns)
    for k, v in record.items():  # keep fields added by other tools
        new.setdefault(k, v)
    return new


@dataclass
class RunResult:
    run_dir: Path
    n_items: int
    n_excluded: int
    records: list[dict]
    requested: int = 0
    cache_hits: int = 0
    elapsed_s: float = 0.0

    def accuracy(self) -> dict[str, float]:
        by: dict[str, list[bool]] = {}
        for r in self.records:
            by.setdefault(r["condition"], []).append(bool(r["correct"]))
        return {c: sum(v) / len(v) for c, v in by.items() if v}

    def summary(self) -> dict:
        return {"run_dir": str(self.run_dir), "n_items": self.n_items, "n_records": len(self.records),
                "n_excluded": self.n_excluded, "accuracy": self.accuracy(),
                "requested": self.requested, "cache_hits": self.cache_hits}


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


def build_manifest(spec: RunSpec) -> dict:
    bench = spec.benchmark
    templates = {}
    for item in spec.items:
        t = bench.template(item)
        templates[t.name] = t.hash
    excluded = [{"item_id": it.id, "reason": it.exclusion_reason, **bench.record_fields(it)}
                for it in spec.items if it.excluded]
    return {
        "benchmark": bench.name,
        "split": spec.split,
        "data": spec.data,
        "data_fingerprint": fingerprint_items(spec.items),
        "n_items": len(spec.items),
        "model": spec.backend.model,
        "params": spec.backend.params,
        "conditions": [c.value for c in spec.conditions],
        "templates": dict(sorted(templates.items())),
        "strata": list(bench.strata),
        "excluded": excluded,
        "versions": package_versions("pydantic", "pluggy", "litellm"),
        "command_line": spec.command_line,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **spec.extra_manifest,
    }


def execute(spec: RunSpec, progress: Callable[[dict], None] | None = None) -> RunResult:
    """Run (or resume) `spec`. Every planned pair ends with exactly one record."""
    started = time.monotonic()
    bench = spec.benchmark
    patterns = plugins.answer_patterns()
    store = RunStore(spec.run_dir)
    existing = store.open(build_manifest(spec))
    done = {(r["item_id"], r["condition"]) for r in existing}
    records = list(existing)
    todo: list[Request] = []
    for item, cond in plan(spec.items, spec.conditions):
        if (item.id, cond.value) in done:
            continue
        messages = bench.render(item, cond)
        key = request_key(spec.backend.model, spec.backend.params, messages)
        todo.append(Request(item=item, condition=cond.value, messages=messages, key=key))
    result = RunResult(run_dir=spec.run_dir, n_items=len(spec.items),
                       n_excluded=sum(1 for it in spec.items if it.excluded), records=records)
    cacheable = spec.cache is not None and getattr(spec.backend, "cacheable", True)
    hits = spec.cache.get_many([r.key for r in todo]) if cacheable else {}
    total = len(done) + len(todo)
    state = {"done": len(done), "total": total, "errors": 0, "cached": 0}
    try:
        with store:
            for req in todo:
                if req.key in hits:
                    _finish(store, records, bench, req, hits[req.key], patterns, state, progress)
                    result.cache_hits += 1
            misses = [r for r in todo if r.key not in hits]
            result.requested = len(misses)
            for req, resp in spec.backend.generate(iter(misses)):
                if cacheable:
                    spec.cache.put(req.key, spec.backend.model, resp)
                _finish(store, records, bench, req, resp, patterns, state, progress)
    finally:
        if spec.cache is not None:
            spec.cache.flush()
    result.elapsed_s = time.monotonic() - started
    return result


def _finish(store, records, bench, req, resp, patterns, state, progress) -> None:
    record = make_record(bench, req.item, req.condition, req.key, resp, patterns)
    store.append(record)
    records.append(record)
    state["done"] += 1
    state["errors"] += record["status"] == "error"
    state["cached"] += bool(resp.cached)
    if progress:
        progress(state)

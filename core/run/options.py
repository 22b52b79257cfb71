"""Everything `medvqa run` does between parsing arguments and printing: load the items,
build the backend, choose the run directory, execute with progress, and turn Ctrl-C into a
line that says how many records are saved and how to resume."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import plugins
from ..conditions import parse_conditions, parse_variants
from ..errors import UsageError
from ..inference.cache import ResponseCache
from ..inference.secrets import redact_command_line, scrub
from ..items import DataError, fingerprint_items
from ..validation import require_valid
from . import item_cache
from .interrupt import RunInterrupted, exit_on_second_interrupt
from .items import load_items
from .names import path_part
from .progress import for_stderr
from .recording import DEFAULT_MAX_RESPONSE_BYTES
from .runner import RunResult, RunSpec, execute
from .shards import parse_shard
from .store import read_manifest, read_records
from .summary import DEFAULT_MAX_ERROR_RATE, image_fallbacks
from .variants import check_variants


@dataclass
class RunOptions:
    benchmark: str
    model: str
    data: str | None = None
    sample: bool = False
    split: str | None = None
    # field -> accepted values (`--select field=v1,v2`), passed to the benchmark's loader
    select: dict[str, list[str]] | None = None
    context: str | None = None  # the benchmark's context template, for benchmarks that offer several
    judges: list[str] | None = None  # judge models for free-text answers (the first one's verdict counts)
    judge_options: dict[str, Any] = field(default_factory=dict)  # the judge backends' options
    # an extractor model reads the parse failures once the answers are in (`extract_run`)
    extractor: str | None = None
    extractor_options: dict[str, Any] = field(default_factory=dict)  # the extractor backend's options
    conditions: str | None = None  # None: the benchmark's default_conditions
    # image variants asked besides the conditions (`--variants swap,hflip`; `variants.variant_plan`)
    variants: str | tuple[str, ...] | None = ()
    limit: int | None = None
    run_dir: str | None = None
    seed: int = 0
    cache: bool = True
    cache_path: str | None = None
    allow_invalid: bool = False
    forced_guess: bool = False
    retry_errors: bool = True  # re-ask the pairs whose newest record is `error` or `missing`
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE  # above it the run's summary reports a failure
    convention: str | None = None  # one of the benchmark's scoring conventions; None: its default
    max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES  # what a record keeps of an answer
    language: str | None = None  # one of the benchmark's languages (`--language`); None: its first
    model_name: str | None = None  # the name the model goes by in tables and pairing (`--model-name`)
    reading: str | None = None  # the summary's headline reading (`--reading`); None: the benchmark's protocol's
    repeats: int = 1  # ask every pair this many times (`--repeats`), repeat r with `repeat_seed(seed, r)`
    batch: bool = False  # send the requests through the provider's batch API (`--batch`)
    batch_poll_s: float = 30.0  # seconds between two polls of the open batches
    batch_wait_s: float | None = None  # stop waiting after this many seconds (the rest: missing, polled next time)
    backend_options: dict[str, Any] = field(default_factory=dict)
    command_line: list[str] = field(default_factory=list)
    shard: str | None = None  # ask one shard's pairs (`--shard I/N` or `auto`, `shards.parse_shard`); None: all

    def load_options(self) -> dict[str, Any]:
        """What `medvqa score` needs to load the same items again."""
        return {
            "data": str(Path(self.data).resolve()) if self.data else None,
            "split": self.split,
            "sample": self.sample,
            "select": self.select,
            "limit": self.limit,
            **({"context": self.context} if self.context else {}),
        }


def repeat_seed(seed: int, repeat: int) -> int:
    """The seed repeat `repeat` of a run with `seed` is asked with: the run's own for repeat 0 (so
    the first repeat is the run without repeats), past it one drawn from (seed, repeat) by SHA-256,
    a non-negative 31-bit integer. Not seed + repeat: that made repeat 1 of `--seed 0` the same
    answers as repeat 0 of `--seed 1`, so two runs meant to be independent shared repeats."""
    if repeat == 0:
        return seed
    digest = hashlib.sha256(f"medvqa-repeat\x00{seed}\x00{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def default_run_dir(bench: str, split: str, model: str, identity: dict, language: str | None = None) -> Path:
    """runs/<benchmark>[-<language>]-<split>-<model>-<hash of identity>; the language is named
    when it is not the benchmark's first (a run in the exam's own language keeps its old name)."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:8]
    lang = f"-{path_part(language)}" if language else ""
    return Path("runs") / f"{bench}{lang}-{split}-{path_part(model)}-{digest}"


def prepare(options: RunOptions, *, cache: bool | None = None) -> RunSpec:
    """The `RunSpec` of what `options` describe: the benchmark checked, its items loaded, the
    backend built, the run directory chosen; nothing asked, nothing written. `cache=False`
    leaves the response cache closed whatever the options say."""
    benchmark = plugins.get_benchmark(options.benchmark).with_convention(options.convention)
    benchmark = benchmark.with_language(options.language)
    other_language = benchmark.active_language if benchmark.active_language != benchmark.offered_languages[0] else None
    if options.sample and options.data:
        raise ValueError("give either --data or --sample, not both")
    conditions = parse_conditions(options.conditions) if options.conditions else benchmark.default_conditions
    variants = check_variants(parse_variants(options.variants), conditions)
    shard = parse_shard(options.shard)  # a bad --shard, or `auto` outside a scheduler's task: at once
    plugins.check_backend(options.model, **options.backend_options)  # a misspelt model or a missing key: at once
    for judge in options.judges or ():
        plugins.check_backend(judge, **options.judge_options)
    if options.extractor:
        plugins.check_backend(options.extractor, **options.extractor_options)
    require_valid(benchmark, options.data, options.allow_invalid)
    signature = item_cache.signature_of(options.load_options())  # the data as it was before the load
    items, split = load_items(benchmark, options.load_options())
    if not items:
        raise ValueError(f"no items to run for {options.benchmark} (split {split})")
    if all(it.excluded and not it.held_out for it in items):  # nothing to ask: no run directory is written
        reasons = Counter(it.exclusion_reason or "no usable official answer" for it in items)
        raise ValueError(
            f"nothing to evaluate: all {len(items)} items of {options.benchmark} (split {split}) are "
            f"excluded ({'; '.join(f'{n} {why}' for why, n in reasons.most_common())}); give the data "
            f"its answer key (medvqa validate {options.benchmark} --data DIR lists what is missing)"
        )
    backend = plugins.get_backend(options.model, seed=options.seed, **options.backend_options)
    run_dir = (
        Path(options.run_dir)
        if options.run_dir
        else default_run_dir(
            benchmark.name,
            split,
            options.model,
            {
                "data": fingerprint_items(items),
                "params": backend.params,
                "conditions": [c.value for c in conditions],
                **({"convention": options.convention} if options.convention else {}),
                **({"language": other_language} if other_language else {}),
                **({"variants": list(variants)} if variants else {}),
            },
            other_language,
        )
    )
    if shard is not None and not options.run_dir:  # each shard a directory of its own
        run_dir = run_dir.with_name(f"{run_dir.name}-shard{shard.index}of{shard.count}")
    if options.convention is None:  # a resume without --convention keeps the run's own (`score --convention`)
        benchmark = benchmark.with_convention(recorded_convention(run_dir))

    def batched(live):
        if not options.batch:
            return live
        from ..inference.batch import BatchBackend, BatchError

        try:
            return BatchBackend(live, run_dir, poll_s=options.batch_poll_s, wait_s=options.batch_wait_s)
        except BatchError as exc:
            raise UsageError(str(exc)) from None

    backend = batched(backend)

    def repeat_backend(r, live):  # a batch backend takes every repeat: one batch for all of them
        return backend.add_repeat(r, live) if options.batch else live

    use_cache = options.cache if cache is None else cache and options.cache
    response_cache = ResponseCache(Path(options.cache_path) if options.cache_path else None) if use_cache else None
    command_line = options.command_line or list(sys.argv)
    spec = RunSpec(
        benchmark=benchmark,
        items=items,
        backend=backend,
        conditions=conditions,
        run_dir=run_dir,
        split=split,
        data=options.load_options()["data"],
        cache=response_cache,
        command_line=command_line,
        extra_manifest={
            "load": options.load_options(),
            "backend": dict(backend.settings),
            "params_left_out": dict(backend.params_left_out),
            "forced_guess": options.forced_guess,
            "convention": benchmark.active_convention,
            **({"model_name": options.model_name} if options.model_name else {}),
        },
        forced_guess=options.forced_guess,
        retry_errors=options.retry_errors,
        max_response_bytes=options.max_response_bytes,
        repeats=options.repeats,
        variants=variants,
        seed=options.seed,
        data_signature=signature,
        shard=shard,
        repeat_backend=lambda r: repeat_backend(
            r, plugins.get_backend(options.model, seed=repeat_seed(options.seed, r), **options.backend_options)
        ),
    )
    if options.repeats > 1:
        spec.extra_manifest["repeats"] = {
            "n": options.repeats,
            "seeds": [repeat_seed(options.seed, r) for r in range(options.repeats)],
        }
    return spec


def run(options: RunOptions, progress: bool = True, *, second_interrupt_exits: bool = False) -> RunResult:
    """Run (or resume) what `options` describe; progress goes to stderr when `progress`.

    Ctrl-C stops the run with `RunInterrupted` (a KeyboardInterrupt) once the files are closed;
    its message says how many records are saved and the command that resumes. With
    `second_interrupt_exits` (the CLI), a second Ctrl-C during that shutdown prints the same
    line and ends the process at once with status 130."""
    spec = prepare(options)
    run_dir, cache, conditions = spec.run_dir, spec.cache, spec.conditions
    command_line = spec.command_line
    reporter = for_stderr() if progress else None
    latest: dict | None = None  # the runner's live state, once it has planned the run

    def update(state: dict) -> None:
        nonlocal latest
        latest = state
        if reporter is not None:
            reporter(state)

    def interrupted() -> str:
        saved = latest["done"] if latest is not None else len(read_records(run_dir))
        return resume_line(saved, command_line, run_dir)

    def guard():  # a fresh one per stage: a context manager made from a generator is entered once
        return exit_on_second_interrupt(interrupted) if second_interrupt_exits else nullcontext()

    try:
        with guard(), reporter or nullcontext():
            result = execute(spec, progress=update)
        if options.judges:  # free-text answers judged once the answers are in; Ctrl-C here resumes too
            from .judge import judge_run

            with guard():
                result.judged = judge_run(
                    run_dir,
                    options.judges,
                    backend_options=options.judge_options,
                    cache=options.cache,
                    cache_path=options.cache_path,
                )
            result.records = read_records(run_dir)
        if options.extractor:  # the answers the strict reader could not read, read by the extractor
            from .extract import extract_run

            with guard():
                result.extracted = extract_run(
                    run_dir,
                    options.extractor,
                    backend_options=options.extractor_options,
                    cache=options.cache,
                    cache_path=options.cache_path,
                )
            result.records = read_records(run_dir)
    except KeyboardInterrupt:
        raise RunInterrupted(interrupted()) from None
    finally:
        if cache is not None:
            cache.close()
    result.n_image_fallback = image_fallbacks(spec.shard_items(), conditions)
    result.max_error_rate = options.max_error_rate
    result.reading = options.reading
    return result


def recorded_convention(run_dir: Path) -> str | None:
    """The scoring convention an existing run directory records, or None (no run there yet)."""
    try:
        return read_manifest(run_dir).get("convention")
    except DataError:
        return None


def resume_line(saved: int, command_line: list[str], run_dir: Path) -> str:
    """What Ctrl-C prints: the records saved and the command that resumes the run, with every
    credential in it masked (a header given with --param, a key in a URL)."""
    return scrub(f"{saved} records saved; resume with: {resume_command(redact_command_line(command_line), run_dir)}")


def resume_command(command_line: list[str], run_dir: Path) -> str:
    """The command line that resumes the run in `run_dir`, as one shell-quoted string."""
    words = list(command_line)
    if not any(w == "--run-dir" or w.startswith("--run-dir=") for w in words):
        words += ["--run-dir", str(run_dir)]
    return shlex.join(words)

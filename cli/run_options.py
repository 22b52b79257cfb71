"""The options of `medvqa run`, in groups by what they are about: each group a decorator that adds
its options to the command (`model_choice`, `what_to_run`, ...), and the values of a group handed
on as one small typed object (`ModelChoice`, `WhatToRun`, ...) that says which `RunOptions`
fields they set. The command stacks the groups; `--help` lists the options group by group, in
the order of the stack. The backend's options are the groups of cli/backend_flags.py, which
share the checks of single values here (`finite`, `server_urls`).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Self, TypeVar

import click

from .common import EXIT_UNTRUSTED, BenchmarkOption, model_name_option, reading_option, selections

F = TypeVar("F", bound=Callable[..., Any])


def option_group(*options: Callable[[F], F]) -> Callable[[F], F]:
    """A decorator that adds `options` (click.option decorators) to a command, in this order."""

    def decorate(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


@dataclass(frozen=True)
class OptionValues:
    """The values of one group of options, as a dataclass whose fields are the options' parameter
    names."""

    @classmethod
    def take(cls, given: dict[str, Any]) -> Self:
        """This group's values, taken out of the keyword arguments the command is called with
        (what is left are the other groups' and the benchmarks' selection keywords)."""
        return cls(**{f.name: given.pop(f.name) for f in fields(cls)})


# -- checks of single values -------------------------------------------------------------------


def finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A number option that must be a real number (click lets `nan` and `inf` through its ranges)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def _repeats(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """`--repeats`: a whole number from 1 to the documented bound (`runner.MAX_REPEATS`)."""
    from medvqa.core.run.runner import MAX_REPEATS

    if not 1 <= value <= MAX_REPEATS:
        raise click.BadParameter(f"{value} is not from 1 to {MAX_REPEATS}")
    return value


def _not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An option that, when given, must say something (`--conditions=` is not the default)."""
    if value is not None and not value.strip():
        raise click.BadParameter("empty; leave the option out for the default")
    return value


def _variants(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--variants`: known names, each once."""
    if value is None:
        return None
    from medvqa.core.conditions import parse_variants
    from medvqa.core.errors import UsageError
    from medvqa.core.run.variants import check_variants

    try:
        return ",".join(check_variants(parse_variants(_not_empty(ctx, param, value)))) or None
    except UsageError as exc:
        raise click.BadParameter(str(exc)) from None


def server_urls(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Server URLs: each one http(s)://host[:port][/path] (`-M api_base=...` is checked alike)."""
    if not values:
        return values
    from medvqa.core.inference.backend_options import url_problem

    for url in values:
        if problem := url_problem(url):
            raise click.BadParameter(problem)
    return values


def _server_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """One server URL, checked as `server_urls` checks each."""
    return value and server_urls(ctx, param, (value,))[0]


# -- the model ---------------------------------------------------------------------------------

model_choice = option_group(
    click.option(
        "--model",
        "-m",
        required=True,
        help="random, constant:A, replay:FILE.jsonl, vllm/MODEL, or a litellm model (openai/gpt-5, hosted_vllm/NAME).",
    ),
    model_name_option,
)


@dataclass(frozen=True)
class ModelChoice(OptionValues):
    """The model that answers (`--model`) and the name it goes by (`--model-name`)."""

    model: str
    model_name: str | None

    def run_fields(self) -> dict[str, Any]:
        return {"model": self.model, "model_name": self.model_name}


# -- what to run: the data, the items, the conditions, the template ------------------------------

what_to_run = option_group(
    click.option("--data", type=click.Path(path_type=str), help="Folder with the benchmark's data."),
    click.option("--sample", is_flag=True, help="Use the small sample bundled with the benchmark."),
    click.option("--split", help="Split to run (the benchmark's default when omitted)."),
    click.option(
        "--select",
        "select",
        multiple=True,
        metavar="FIELD=V1,V2",
        help="Only items whose stratum FIELD is one of the values (repeat for more fields), "
        "e.g. --select year=2024,2025.",
    ),
    click.option(
        "--context",
        cls=BenchmarkOption,
        applies=lambda b: "context" in inspect.signature(b.load).parameters,
        help="Context template, for benchmarks that offer several (e.g. none, modality, full).",
    ),
    click.option(
        "--conditions",
        callback=_not_empty,
        help="Any of C, C+Q, C+I, C+Q+I (default: the benchmark's, C+Q,C+Q+I for most).",
    ),
    click.option(
        "--variants",
        callback=_variants,
        metavar="V1,V2",
        help="Ask again with one thing changed: the image (swap, blur, jpeg, downscale, crop, hflip: C+Q+I~swap), "
        "the options rotated (order: C+Q~order:1) or a confidence asked (confidence); docs/runs.md#variants.",
    ),
    click.option("--limit", type=click.IntRange(min=1), help="Only the first N items."),
    click.option(
        "--convention",
        cls=BenchmarkOption,
        applies=lambda b: bool(b.conventions),
        help="One of the benchmark's scoring conventions (its default when omitted).",
    ),
    click.option(
        "--language",
        cls=BenchmarkOption,
        applies=lambda b: len(b.offered_languages) > 1,
        help="One of the languages the benchmark's items exist in (`medvqa list`; its first, the exam's own, "
        "when omitted), e.g. en.",
    ),
    click.option(
        "--forced-guess",
        is_flag=True,
        help="Re-ask refused image-removed (C+Q) items with permission to guess, as condition C+Q/forced.",
    ),
    click.option("--allow-invalid", is_flag=True, help="Run even when `medvqa validate` finds errors in the data."),
)


@dataclass(frozen=True)
class WhatToRun(OptionValues):
    """The benchmark's data and split, the items chosen, the conditions they are asked under,
    the context template, scoring convention and language."""

    data: str | None
    sample: bool
    split: str | None
    select: tuple[str, ...]
    context: str | None
    conditions: str | None
    variants: str | None
    limit: int | None
    convention: str | None
    language: str | None
    forced_guess: bool
    allow_invalid: bool

    def run_fields(self, benchmark: str, keywords: dict[str, str | None]) -> dict[str, Any]:
        """`keywords`: the benchmarks' selection keyword options, shorthands for `--select`."""
        return {
            "data": self.data,
            "sample": self.sample,
            "split": self.split,
            "select": selections(benchmark, self.select, keywords),
            "conditions": self.conditions,
            "variants": self.variants or (),
            "limit": self.limit,
            "convention": self.convention,
            "language": self.language,
            "context": self.context,
            "allow_invalid": self.allow_invalid,
            "forced_guess": self.forced_guess,
        }


# -- repeats -----------------------------------------------------------------------------------

repeats = option_group(
    click.option("--seed", type=int, default=0, show_default=True),
    click.option(
        "--repeats",
        type=int,
        default=1,
        show_default=True,
        callback=_repeats,
        help="Ask every (item, condition) K times (1 to 1000), repeat 0 with --seed, each other with its own seed "
        "drawn from --seed and r (give a --temperature above 0 for sampled answers); the summary gives the "
        "mean over repeats, their SD and an item-level interval.",
    ),
)


@dataclass(frozen=True)
class Repeats(OptionValues):
    """The run's seed and how many times each (item, condition) is asked."""

    seed: int
    repeats: int

    def run_fields(self) -> dict[str, Any]:
        return {"seed": self.seed, "repeats": self.repeats}


# -- how answers are read: judges, the extractor, the headline reading ----------------------------

answer_reading = option_group(
    click.option(
        "--judge",
        "judges",
        multiple=True,
        metavar="MODEL",
        cls=BenchmarkOption,
        applies=lambda b: b.judge() is not None,
        help="Judge free-text answers with MODEL (any litellm model); repeat for several, the first counts.",
    ),
    click.option(
        "--judge-api-base",
        metavar="URL",
        cls=BenchmarkOption,
        applies=lambda b: b.judge() is not None,
        help="Server URL of the judge model.",
        callback=_server_url,
    ),
    click.option(
        "--extractor",
        metavar="MODEL",
        help="Once the answers are in, read those the strict reader could not (parse failures) with MODEL: "
        "the assisted accuracy, beside the strict one (see medvqa score --extractor).",
    ),
    click.option(
        "--extractor-api-base",
        metavar="URL",
        help="Server URL of the extractor model.",
        callback=_server_url,
    ),
    reading_option,
)


@dataclass(frozen=True)
class AnswerReading(OptionValues):
    """The judges of free-text answers, the extractor of the replies the rules could not read,
    their servers, and the reading of the summary's headline numbers."""

    judges: tuple[str, ...]
    judge_api_base: str | None
    extractor: str | None
    extractor_api_base: str | None
    reading: str | None

    def run_fields(self) -> dict[str, Any]:
        return {
            "judges": list(self.judges) or None,
            "judge_options": {"api_base": self.judge_api_base} if self.judge_api_base else {},
            "extractor": self.extractor,
            "extractor_options": {"api_base": self.extractor_api_base} if self.extractor_api_base else {},
            "reading": self.reading,
        }


# -- the run directory and what the command prints ------------------------------------------------

output = option_group(
    click.option(
        "--run-dir",
        type=click.Path(path_type=str),
        help="Run directory (default: runs/<benchmark>-<split>-<model>-<hash>). Re-running resumes it.",
    ),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache."),
    click.option(
        "--no-retry-errors",
        is_flag=True,
        help="On a re-run, keep `error` and `missing` records instead of asking those pairs again.",
    ),
    click.option(
        "--max-error-rate",
        type=click.FloatRange(0, 1),
        default=0.05,
        show_default=True,
        callback=finite,
        help=f"Exit with status {EXIT_UNTRUSTED} when more records than this fraction are errors.",
    ),
    click.option(
        "--max-response-bytes",
        type=click.IntRange(min=1),
        help="What a record keeps of an answer (default 262144, 256 KiB); a longer one is cut and marked truncated.",
    ),
    click.option(
        "--dry-run",
        is_flag=True,
        help="Print the plan and send nothing: requests (already recorded, cached), tokens and cost.",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print one JSON summary on stdout, nothing else."),
)


@dataclass(frozen=True)
class Output(OptionValues):
    """Where the records go and what a re-run of the directory asks again, how many errors a
    trusted run may hold, what a record keeps of an answer; and what the command prints (the
    plan only, JSON)."""

    run_dir: str | None
    no_cache: bool
    no_retry_errors: bool
    max_error_rate: float
    max_response_bytes: int | None
    dry_run: bool
    as_json: bool

    def run_fields(self) -> dict[str, Any]:
        return {
            "run_dir": self.run_dir,
            "cache": not self.no_cache,
            "retry_errors": not self.no_retry_errors,
            "max_error_rate": self.max_error_rate,
            **({"max_response_bytes": self.max_response_bytes} if self.max_response_bytes else {}),
        }


# -- the provider's batch API ------------------------------------------------------------------

batch_api = option_group(
    click.option(
        "--batch",
        is_flag=True,
        help="Send the requests through the provider's batch API (openai/, hosted_vllm/, mistral/, xai/ models); "
        "the run directory keeps the batch ids and a re-run polls them.",
    ),
    click.option(
        "--batch-poll",
        type=click.FloatRange(min=0),
        default=30.0,
        show_default=True,
        callback=finite,
        help="Seconds between two polls of the open batches.",
    ),
    click.option(
        "--batch-wait",
        type=click.FloatRange(min=0),
        callback=finite,
        help="Stop waiting for the batches after this many seconds: what they still hold is recorded missing "
        "and the same command polls it (default: wait until done).",
    ),
)


@dataclass(frozen=True)
class BatchApi(OptionValues):
    """Whether the requests go through the provider's batch API, and how its batches are polled."""

    batch: bool
    batch_poll: float
    batch_wait: float | None

    def run_fields(self) -> dict[str, Any]:
        return {"batch": self.batch, "batch_poll_s": self.batch_poll, "batch_wait_s": self.batch_wait}

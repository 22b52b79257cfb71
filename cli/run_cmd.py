import inspect
import json
import math
import sys
import warnings
from urllib.parse import urlsplit

import click

from ._common import (
    EXIT_PREFLIGHT,
    BenchmarkOption,
    ExitWith,
    SelectionCommand,
    model_name_option,
    print_json,
    print_run_summary,
    reading_option,
    selections,
    user_errors,
)

# Exit statuses besides 0 (success), 1 (bad input or data: one line naming it), 2 (bad usage) and
# 3 (EXIT_PREFLIGHT: the model, its credentials or its server failed the preflight request).
EXIT_UNTRUSTED = 4  # the run finished, but errors exceed --max-error-rate or no request succeeded
# and 130 (EXIT_INTERRUPTED, core/run/interrupt.py): Ctrl-C; the run resumes where it stopped
JSON_FIELDS = (
    "run_dir",
    "n_items",
    "n_records",
    "n_excluded",
    "accuracy",
    "conditions",
    "n_image_fallback",
    "errors",
    "error_rate",
    "max_error_rate",
    "failure",
    "judged",
    "n_held_out",
    "extracted",
    "warnings",
    "repeats",
    "usage",
    "cost_usd",
    "usage_by_condition",
)


def _finite(ctx, param, value):
    """A number option that must be a real number (click lets `nan` and `inf` through its ranges)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def _repeats(ctx, param, value):
    """`--repeats`: a whole number from 1 to the documented bound (`runner.MAX_REPEATS`)."""
    from medvqa.core.run.runner import MAX_REPEATS

    if not 1 <= value <= MAX_REPEATS:
        raise click.BadParameter(f"{value} is not from 1 to {MAX_REPEATS}")
    return value


def _not_empty(ctx, param, value):
    """An option that, when given, must say something (`--conditions=` is not the default)."""
    if value is not None and not value.strip():
        raise click.BadParameter("empty; leave the option out for the default")
    return value


def _server_urls(ctx, param, values):
    """Server URLs: each one http(s)://host[:port][/path]."""
    for url in values or ():
        try:
            parts = urlsplit(url)
            parts.port  # a port that is not a number raises here
        except ValueError as exc:
            raise click.BadParameter(f"{url!r} is not a URL ({exc})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
            raise click.BadParameter(f"{url!r} is not a URL; expected http(s)://host[:port][/path]")
    return values


def _key_values(pairs: tuple[str, ...], option: str) -> dict:
    """`KEY=VALUE` pairs; a value is read as JSON when it parses (0.5, true, null, {...})."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint=option)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _price(ctx, param, text: str | None) -> tuple[float, float] | None:
    """`--price IN,OUT`: two finite numbers from 0 (a cost is never negative, NaN or infinite)."""
    if text is None:
        return None
    try:
        prompt, completion = (float(x) for x in text.split(","))
    except ValueError:
        raise click.BadParameter(f"expected IN,OUT (USD per million tokens), got {text!r}") from None
    if not all(math.isfinite(x) and x >= 0 for x in (prompt, completion)):
        raise click.BadParameter(f"prices are finite numbers from 0 (USD per million tokens), got {text!r}")
    return prompt, completion


def backend_options(
    api_base,
    model_list,
    concurrency,
    rpm,
    timeout,
    max_retries,
    retry_wait,
    max_retry_wait,
    max_image_side,
    price,
    temperature,
    max_tokens,
    params,
    response_format,
    workers,
    tensor_parallel_size,
    batch_size,
    engine_options,
) -> dict:
    """Only the options the user gave: each backend rejects those that do not apply to it."""
    given = {
        "api_base": list(api_base) or None,
        "model_list": model_list,
        "concurrency": concurrency,
        "rpm": rpm,
        "timeout": timeout,
        "max_retries": max_retries,
        "retry_wait": retry_wait,
        "max_retry_wait": max_retry_wait,
        "max_image_side": max_image_side,
        "price": price,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "params": _key_values(params, "--param") or None,
        "response_format": response_format,
        "workers": workers,
        "tensor_parallel_size": tensor_parallel_size,
        "batch_size": batch_size,
        "engine_options": _key_values(engine_options, "--engine-option") or None,
    }
    return {k: v for k, v in given.items() if v is not None}


@click.command("run", cls=SelectionCommand)
@click.argument("benchmark")
@click.option(
    "--model",
    "-m",
    required=True,
    help="random, constant:A, replay:FILE.jsonl, vllm/MODEL, or a litellm model (openai/gpt-5, hosted_vllm/NAME).",
)
@click.option("--data", type=click.Path(path_type=str), help="Folder with the benchmark's data.")
@click.option("--sample", is_flag=True, help="Use the small sample bundled with the benchmark.")
@click.option("--split", help="Split to run (the benchmark's default when omitted).")
@click.option(
    "--select",
    "select",
    multiple=True,
    metavar="FIELD=V1,V2",
    help="Only items whose stratum FIELD is one of the values (repeat for more fields), e.g. --select year=2024,2025.",
)
@click.option(
    "--context",
    cls=BenchmarkOption,
    applies=lambda b: "context" in inspect.signature(b.load).parameters,
    help="Context template, for benchmarks that offer several (e.g. none, modality, full).",
)
@click.option(
    "--judge",
    "judges",
    multiple=True,
    metavar="MODEL",
    cls=BenchmarkOption,
    applies=lambda b: b.judge() is not None,
    help="Judge free-text answers with MODEL (any litellm model); repeat for several, the first counts.",
)
@click.option(
    "--judge-api-base",
    metavar="URL",
    cls=BenchmarkOption,
    applies=lambda b: b.judge() is not None,
    help="Server URL of the judge model.",
    callback=lambda ctx, param, value: value and _server_urls(ctx, param, (value,))[0],
)
@click.option(
    "--extractor",
    metavar="MODEL",
    help="Once the answers are in, read those the strict reader could not (parse failures) with MODEL: "
    "the assisted accuracy, beside the strict one (see medvqa score --extractor).",
)
@click.option(
    "--extractor-api-base",
    metavar="URL",
    help="Server URL of the extractor model.",
    callback=lambda ctx, param, value: value and _server_urls(ctx, param, (value,))[0],
)
@click.option(
    "--conditions",
    callback=_not_empty,
    help="Any of C, C+Q, C+I, C+Q+I (default: the benchmark's, C+Q,C+Q+I for most).",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N items.")
@click.option(
    "--convention",
    cls=BenchmarkOption,
    applies=lambda b: bool(b.conventions),
    help="One of the benchmark's scoring conventions (its default when omitted).",
)
@click.option(
    "--language",
    cls=BenchmarkOption,
    applies=lambda b: len(b.offered_languages) > 1,
    help="One of the languages the benchmark's items exist in (`medvqa list`; its first, the exam's own, "
    "when omitted), e.g. en.",
)
@click.option(
    "--run-dir",
    type=click.Path(path_type=str),
    help="Run directory (default: runs/<benchmark>-<split>-<model>-<hash>). Re-running resumes it.",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--repeats",
    type=int,
    default=1,
    show_default=True,
    callback=_repeats,
    help="Ask every (item, condition) K times (1 to 1000), repeat 0 with --seed, each other with its own seed "
    "drawn from --seed and r (give a --temperature above 0 for sampled answers); the summary gives the "
    "mean over repeats, their SD and an item-level interval.",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option(
    "--no-retry-errors",
    is_flag=True,
    help="On a re-run, keep `error` and `missing` records instead of asking those pairs again.",
)
@click.option(
    "--max-error-rate",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    callback=_finite,
    help=f"Exit with status {EXIT_UNTRUSTED} when more records than this fraction are errors.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary on stdout, nothing else.")
@click.option(
    "--batch",
    is_flag=True,
    help="Send the requests through the provider's batch API (openai/ models; half the price at OpenAI); "
    "the run directory keeps the batch ids and a re-run polls them.",
)
@click.option(
    "--batch-poll",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    callback=_finite,
    help="Seconds between two polls of the open batches.",
)
@click.option(
    "--batch-wait",
    type=click.FloatRange(min=0),
    callback=_finite,
    help="Stop waiting for the batches after this many seconds: what they still hold is recorded missing "
    "and the same command polls it (default: wait until done).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan and send nothing: requests (already recorded, cached), tokens and cost.",
)
@reading_option
@model_name_option
@click.option("--allow-invalid", is_flag=True, help="Run even when `medvqa validate` finds errors in the data.")
@click.option(
    "--forced-guess",
    is_flag=True,
    help="Re-ask refused image-removed (C+Q) items with permission to guess, as condition C+Q/forced.",
)
@click.option(
    "--api-base",
    multiple=True,
    metavar="URL",
    callback=_server_urls,
    help="Server URL (OpenAI-compatible, e.g. http://host:8000/v1). Repeat to load-balance over several.",
)
@click.option(
    "--model-list",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="YAML model list (litellm Router format) of deployments to load-balance over.",
)
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests in flight at once (default 16).")
@click.option(
    "--rpm",
    type=click.FloatRange(min=0, min_open=True),
    callback=_finite,
    help="At most this many requests per minute.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    callback=_finite,
    help="Seconds per request in all, however slowly the answer arrives (default 120).",
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    help="Retries after a 429, 5xx, timeout or connection error (default 6).",
)
@click.option(
    "--retry-wait",
    type=click.FloatRange(min=0),
    callback=_finite,
    help="First backoff bound in seconds; doubles per retry (default 1).",
)
@click.option(
    "--max-retry-wait",
    type=click.FloatRange(min=0),
    callback=_finite,
    help="The longest wait in seconds before a retry that a server asks for with Retry-After (default 900); "
    "a long wait is said on stderr.",
)
@click.option(
    "--max-image-side", type=click.IntRange(min=16), help="Downscale images to at most this many pixels per side."
)
@click.option(
    "--price", metavar="IN,OUT", callback=_price, help="USD per million prompt and completion tokens, for the cost."
)
@click.option("--temperature", type=float, callback=_finite, help="Sampling temperature (default 0).")
@click.option("--max-tokens", type=click.IntRange(min=1), help="Completion token limit.")
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="Any other generation parameter (JSON value); KEY=null removes a default.",
)
@click.option(
    "--max-response-bytes",
    type=click.IntRange(min=1),
    help="What a record keeps of an answer (default 262144, 256 KiB); a longer one is cut and marked truncated.",
)
@click.option(
    "--response-format",
    type=click.Choice(["auto", "json_schema", "json_object", "none"]),
    help="Structured JSON output (default auto: where the provider supports it).",
)
@click.option("--workers", type=click.IntRange(min=1), help="Processes sending requests (when one core is the limit).")
@click.option("--tensor-parallel-size", type=click.IntRange(min=1), help="GPUs per model (vllm/ models).")
@click.option(
    "--batch-size", type=click.IntRange(min=1), help="Conversations per vLLM batch (vllm/ models, default 512)."
)
@click.option(
    "--engine-option",
    "engine_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="vllm.LLM(...) argument, e.g. max_model_len=8192 (vllm/ models).",
)
@click.option(
    "-M",
    "--model-option",
    "model_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Any backend option as data, repeatable: the options above in Python spelling "
    "(-M temperature=0.2, -M api_base=URL, -M concurrency=64, -M params.top_p=0.9, "
    "-M engine_options.max_model_len=8192), JSON values. A flag and -M for the same key is an "
    "error; credentials are read from the environment, never given here.",
)
@click.option(
    "--model-config",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=str),
    help="Backend options from a JSON, TOML or YAML file (the keys of -M); -M and the flags override it.",
)
def command(
    benchmark,
    model,
    data,
    sample,
    split,
    select,
    context,
    judges,
    judge_api_base,
    extractor,
    extractor_api_base,
    conditions,
    limit,
    convention,
    language,
    run_dir,
    seed,
    repeats,
    no_cache,
    no_retry_errors,
    max_error_rate,
    as_json,
    batch,
    batch_poll,
    batch_wait,
    dry_run,
    reading,
    model_name,
    allow_invalid,
    forced_guess,
    api_base,
    model_list,
    concurrency,
    rpm,
    timeout,
    max_retries,
    retry_wait,
    max_retry_wait,
    max_image_side,
    price,
    temperature,
    max_tokens,
    params,
    max_response_bytes,
    response_format,
    workers,
    tensor_parallel_size,
    batch_size,
    engine_options,
    model_options,
    model_config,
    **keywords,
) -> None:
    """Run BENCHMARK on a model and write records to a run directory.

    \b
    Examples:
      medvqa run jmed48k --sample --model random
      medvqa run igakuqa --data DIR --model openai/gpt-5 --conditions C+Q,C+Q+I --json

    An option whose help ends with [benchmarks: ...] applies to those benchmarks only
    (`medvqa list` shows them all).

    Backend options are data: the flags below, -M KEY=VALUE or --model-config FILE give the
    same options (same request keys, same cache); `medvqa run ... -M nonsense=1` lists the
    valid keys of the model's backend.

    Exit status: 0 done; 1 bad input; 2 bad usage; 3 preflight failed (model, credentials,
    server); 4 more errors than --max-error-rate, or no request succeeded; 130 interrupted."""
    from medvqa.core.inference import backend_options as options_as_data
    from medvqa.core.inference.preflight import PreflightError
    from medvqa.core.run.interrupt import EXIT_INTERRUPTED, RunInterrupted
    from medvqa.core.run.options import RunOptions, run

    with user_errors():
        flags = backend_options(
            api_base,
            model_list,
            concurrency,
            rpm,
            timeout,
            max_retries,
            retry_wait,
            max_retry_wait,
            max_image_side,
            price,
            temperature,
            max_tokens,
            params,
            response_format,
            workers,
            tensor_parallel_size,
            batch_size,
            engine_options,
        )
        config = options_as_data.read_model_config(model_config) if model_config else {}
        resolved = options_as_data.resolve(
            model, flags, options_as_data.parse_model_options(model_options), config, model_config
        )
        options = RunOptions(
            benchmark=benchmark,
            model=model,
            data=data,
            sample=sample,
            split=split,
            select=selections(benchmark, select, keywords),
            conditions=conditions,
            limit=limit,
            convention=convention,
            language=language,
            run_dir=run_dir,
            seed=seed,
            cache=not no_cache,
            context=context,
            judges=list(judges) or None,
            judge_options={"api_base": judge_api_base} if judge_api_base else {},
            extractor=extractor,
            extractor_options={"api_base": extractor_api_base} if extractor_api_base else {},
            command_line=["medvqa", *sys.argv[1:]],
            allow_invalid=allow_invalid,
            forced_guess=forced_guess,
            retry_errors=not no_retry_errors,
            max_error_rate=max_error_rate,
            reading=reading,
            model_name=model_name,
            repeats=repeats,
            batch=batch,
            batch_poll_s=batch_poll,
            batch_wait_s=batch_wait,
            **({"max_response_bytes": max_response_bytes} if max_response_bytes else {}),
            backend_options=resolved,
        )
        if dry_run:
            from medvqa.core.run.plan import dry_run as plan_run
            from medvqa.core.run.plan import plan_lines

            try:
                plan = plan_run(options)
            except PreflightError as exc:
                raise ExitWith(str(exc), EXIT_PREFLIGHT) from None
            if as_json:
                print_json(plan)
            else:
                click.echo("\n".join(plan_lines(plan)))
            return
        try:
            result = run(options, progress=not as_json, second_interrupt_exits=True)
        except PreflightError as exc:
            raise ExitWith(str(exc), EXIT_PREFLIGHT) from None
        except RunInterrupted as exc:
            # requests still in flight are abandoned on purpose: their never-awaited coroutines
            # would print a RuntimeWarning at exit, after the line that says how to resume
            warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
            click.echo(str(exc), err=True)
            sys.exit(EXIT_INTERRUPTED)
    summary = result.summary()
    if as_json:
        print_json({k: summary[k] for k in JSON_FIELDS if k in summary})
    else:
        print_run_summary(summary)
    if summary["failure"]:
        raise ExitWith(summary["failure"], EXIT_UNTRUSTED)

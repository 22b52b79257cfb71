"""`medvqa run`: its options in groups (cli/run_options.py, cli/backend_flags.py; the stack of
groups below reads as their table of contents), the run, and its summary."""

import sys
import warnings
from typing import Any

import click

from .backend_flags import BackendFlags, backend_as_data, generation, requests, vllm_engine
from .common import (
    EXIT_PREFLIGHT,
    EXIT_UNTRUSTED,
    ExitWith,
    SelectionCommand,
    print_json,
    print_run_summary,
    user_errors,
)
from .run_options import (
    AnswerReading,
    BatchApi,
    ModelChoice,
    Output,
    Repeats,
    WhatToRun,
    answer_reading,
    batch_api,
    model_choice,
    output,
    repeats,
    what_to_run,
)
from .shard_option import Sharding, shard_option

# Exit statuses besides 0 (success), 1 (bad input or data: one line naming it) and 2 (bad usage):
# 3 (EXIT_PREFLIGHT: the model, its credentials or its server failed the preflight request), 4
# (EXIT_UNTRUSTED: the run finished, but errors exceed --max-error-rate or no request succeeded),
# and 130 (EXIT_INTERRUPTED, core/run/interrupt.py): Ctrl-C; the run resumes where it stopped.

# what `medvqa run --json` prints of the run's summary
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


@click.command("run", cls=SelectionCommand)
@click.argument("benchmark")
@model_choice
@what_to_run
@repeats
@answer_reading
@output
@batch_api
@requests
@generation
@vllm_engine
@backend_as_data
@shard_option
def command(benchmark: str, **given: Any) -> None:
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
    from medvqa.core.inference.preflight import PreflightError
    from medvqa.core.run.interrupt import EXIT_INTERRUPTED, RunInterrupted
    from medvqa.core.run.options import RunOptions, run

    model, what, repeated = ModelChoice.take(given), WhatToRun.take(given), Repeats.take(given)
    reading, out, batching = AnswerReading.take(given), Output.take(given), BatchApi.take(given)
    backend, sharding = BackendFlags.take(given), Sharding.take(given)
    keywords = given  # what is left: the options of the benchmarks' selection keywords
    with user_errors():
        backend_options = backend.resolve(model.model)
        options = RunOptions(
            benchmark=benchmark,
            **model.run_fields(),
            **what.run_fields(benchmark, keywords),
            **repeated.run_fields(),
            **reading.run_fields(),
            **out.run_fields(),
            **batching.run_fields(),
            **sharding.run_fields(),
            backend_options=backend_options,
            command_line=["medvqa", *sys.argv[1:]],
        )
        if out.dry_run:
            from medvqa.core.run.plan import dry_run as plan_run
            from medvqa.core.run.plan import plan_lines

            try:
                plan = plan_run(options)
            except PreflightError as exc:
                raise ExitWith(str(exc), EXIT_PREFLIGHT) from None
            if out.as_json:
                print_json(plan)
            else:
                click.echo("\n".join(plan_lines(plan)))
            return
        try:
            result = run(options, progress=not out.as_json, second_interrupt_exits=True)
        except PreflightError as exc:
            raise ExitWith(str(exc), EXIT_PREFLIGHT) from None
        except RunInterrupted as exc:
            # requests still in flight are abandoned on purpose: their never-awaited coroutines
            # would print a RuntimeWarning at exit, after the line that says how to resume
            warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
            click.echo(str(exc), err=True)
            sys.exit(EXIT_INTERRUPTED)
    summary = result.summary()
    if out.as_json:
        print_json({k: summary[k] for k in JSON_FIELDS if k in summary})
    else:
        print_run_summary(summary)
    if summary["failure"]:
        raise ExitWith(summary["failure"], EXIT_UNTRUSTED)

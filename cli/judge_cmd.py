import click

from .common import EXIT_PREFLIGHT, ExitWith, print_json, user_errors


@click.command("judge")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--judge",
    "judges",
    multiple=True,
    required=True,
    metavar="MODEL",
    help="Judge model (any litellm model, hosted_vllm/NAME with --api-base); repeat for several, "
    "the first one's verdict counts.",
)
@click.option("--api-base", metavar="URL", help="Server URL of the judge model(s).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Judge requests in flight at once (default 16).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds per request (default 120).")
@click.option(
    "--max-retries", type=click.IntRange(min=0), help="Retries after a 429, 5xx, timeout or connection error."
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(run_dir, judges, api_base, concurrency, timeout, max_retries, no_cache, as_json) -> None:
    """Judge the free-text answers of RUN_DIR with a judge model, without calling the answering
    model; records already judged by that model under the same prompt cost no request."""
    from medvqa.core.run.judge import judge_run

    options = {
        k: v
        for k, v in {
            "api_base": api_base,
            "concurrency": concurrency,
            "timeout": timeout,
            "max_retries": max_retries,
        }.items()
        if v is not None
    }
    from medvqa.core.inference.preflight import PreflightError

    with user_errors():
        try:
            summary = judge_run(
                run_dir,
                judges,
                backend_options=options,
                cache=not no_cache,
                progress=None if as_json else (lambda line: click.echo(line, err=True)),
            )
        except PreflightError as exc:
            raise ExitWith(str(exc), EXIT_PREFLIGHT) from None
        except KeyboardInterrupt:
            click.echo("judging interrupted; the verdicts so far are saved: run the same command to resume", err=True)
            raise SystemExit(130) from None
    if as_json:
        print_json(summary)
        return
    click.echo(
        f"judged {run_dir} with prompt {summary['prompt']} v{summary['prompt_version']} "
        f"({summary['prompt_hash']}); {summary['n_judgeable']} judgeable records; the verdict of "
        f"{summary['judge']} counts"
    )
    for model, s in summary["judges"].items():
        click.echo(
            f"  {model}: judged {s['judged']} (requests {s['requested']}, from cache {s['cache_hits']}), "
            f"already judged {s['already_judged']}, judge errors {s['judge_errors']}"
        )
    for cond, c in summary["conditions"].items():
        acc = f"{100 * c['accuracy']:.1f}%" if c["accuracy"] is not None else "-"
        click.echo(f"  {cond}: accuracy {acc} (n {c['n']})")

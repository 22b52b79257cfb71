import click

from .common import EXIT_PREFLIGHT, ExitWith, analysis, condition_table, print_json


@click.command("score")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--convention", help="Re-score under this scoring convention of the benchmark (recorded in the manifest)."
)
@click.option(
    "--extractor",
    metavar="MODEL",
    help="Read the answers the strict reader could not (parse failures, and only those) with this model "
    "(any litellm model, hosted_vllm/NAME with --extractor-api-base): the assisted accuracy, "
    "beside the strict one.",
)
@click.option("--extractor-api-base", metavar="URL", help="Server URL of the extractor model.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache (extractor requests).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(run_dir, convention, extractor, extractor_api_base, no_cache, as_json) -> None:
    """Re-score RUN_DIR from its saved responses (no model calls); with --extractor, then read
    its parse failures with an extractor model (records already read cost no request)."""
    from pathlib import Path

    from medvqa.core.inference.preflight import PreflightError
    from medvqa.core.run.rescore import rescore_lines
    from medvqa.core.run.store import newest_records
    from medvqa.core.run.summary import run_warnings

    if extractor_api_base and not extractor:
        raise click.UsageError("--extractor-api-base needs --extractor MODEL")
    extracted = None
    with analysis():
        lines, changed = rescore_lines(Path(run_dir), convention)
        n = len(lines)
        if extractor:
            from medvqa.core.run.extract import extract_run

            try:
                extracted = extract_run(
                    run_dir,
                    extractor,
                    cache=not no_cache,
                    backend_options={"api_base": extractor_api_base} if extractor_api_base else {},
                    progress=None if as_json else (lambda line: click.echo(line, err=True)),
                )
            except PreflightError as exc:
                raise ExitWith(str(exc), EXIT_PREFLIGHT) from None
        # the records just re-scored, unless an extractor has rewritten them since
        warnings = run_warnings(run_dir, records=None if extractor else newest_records(lines))
    if as_json:
        print_json(
            {
                "run_dir": run_dir,
                "n_records": n,
                "changed": changed,
                **({"extracted": extracted} if extracted is not None else {}),
                "warnings": warnings,
            }
        )
        return
    click.echo(f"re-scored {n} records in {run_dir}; {changed} changed")
    if extracted is not None:
        e = extracted
        click.echo(
            f"extractor {e['extractor']} (prompt {e['prompt']} v{e['prompt_version']}, {e['prompt_hash']}): "
            f"{e['n_extractable']} parse failures to read; read {e['extracted']} (requests {e['requested']}, "
            f"from cache {e['cache_hits']}), already read {e['already_extracted']}, unread {e['unread']}"
        )
        click.echo(condition_table(e["conditions"]))
    for line in warnings:
        click.echo(line)

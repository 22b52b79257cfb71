import click

from .common import print_json, user_errors


@click.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=str),
    help="Predictions file to write (JSON lines; default: predictions.jsonl in the current folder).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(run_dir, out, as_json) -> None:
    """Write the predictions of RUN_DIR (one line per item and condition: the raw response and
    what was read from it) for evaluation by the benchmark's owners, without scoring them."""
    from medvqa.core.run.export import export_predictions

    with user_errors():
        summary = export_predictions(run_dir, out or "predictions.jsonl")
    if as_json:
        print_json(summary)
    else:
        click.echo(
            f"wrote {summary['n_predictions']} predictions to {summary['out']} "
            f"({summary['n_without_response']} without a response)"
        )

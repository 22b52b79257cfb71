import click

from .common import print_json, user_errors


@click.command("contamination")
@click.option(
    "--dcq-results",
    "dcq_results",
    type=click.Path(dir_okay=False, path_type=str),
    help="A results CSV of the Data Contamination Quiz in its authors' layout (bdq_results, "
    "bcq_results_for_position_<x>): estimate its contamination level as they do.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def command(dcq_results, as_json) -> None:
    """Was the exam memorised? The Data Contamination Quiz (Golchin & Surdeanu, TACL 2025): the
    examined model is asked which of five options is an exam's exact wording (four word-level
    paraphrases, or "none of the provided options"); the level is an interval, the lower bound
    corrected for the model's liking for a position. With --dcq-results, the estimate of a
    results file in the authors' layout, computed as their code computes it; without --json, the
    authors' report, line for line. No model is called."""
    from medvqa.core import dcq
    from medvqa.core.contamination.api import contamination, read_text

    if dcq_results is None:
        raise click.UsageError("give --dcq-results CSV")
    with user_errors():
        if as_json:
            print_json(contamination(dcq_results=dcq_results))
            return
        click.echo(dcq.report(dcq.estimate_results(read_text(dcq_results), file=dcq_results)), nl=False)

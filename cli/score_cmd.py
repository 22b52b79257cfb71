import click

from ._common import analysis, print_json


@click.command("score")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option("--convention", help="Re-score under this scoring convention of the benchmark (recorded in the manifest).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(run_dir, convention, as_json) -> None:
    """Re-score RUN_DIR from its saved responses (no model calls)."""
    from pathlib import Path

    from medvqa.core.scoring.rescore import rescore

    with analysis():
        n, changed = rescore(Path(run_dir), convention)
    if as_json:
        print_json({"run_dir": run_dir, "n_records": n, "changed": changed})
    else:
        click.echo(f"re-scored {n} records in {run_dir}; {changed} changed")

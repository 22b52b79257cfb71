import click

from ._common import user_errors


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option("--by", help="Comma-separated strata, e.g. profession,year.")
@click.option("--format", "fmt", type=click.Choice(["md", "csv", "json"]), default="md", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(run_dir, by, fmt, as_json) -> None:
    """Accuracy by condition (and by any stratum) with n, exclusions and status counts."""
    from pathlib import Path

    from medvqa.core import report
    from medvqa.core.store import read_manifest, read_records

    with user_errors():
        manifest = read_manifest(Path(run_dir))
        records = read_records(Path(run_dir))
        fields = [f.strip() for f in by.split(",")] if by else []
        table = report.accuracy_table(records, manifest.get("excluded"), fields)
    click.echo(report.render(table, "json" if as_json else fmt), nl=False)

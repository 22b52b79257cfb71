import click

from .common import analysis, print_json, reading_option, user_errors


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--by",
    help="Comma-separated strata (record fields), e.g. year,section; default: by condition, then by each of "
    "the benchmark's default strata; --by '' for by condition only.",
)
@click.option("--table", "table_set", help="The benchmark's own tables, named after it (e.g. jmed48k).")
@click.option(
    "--pass",
    "pass_report",
    is_flag=True,
    help="Pass / fail / not evaluable per exam against the official criteria, with the margin.",
)
@click.option(
    "--judges",
    "judges",
    is_flag=True,
    help="Judge sensitivity: each judge's accuracy, their agreement and Cohen's kappa.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "md", "csv", "latex", "json", "html"]),
    default="md",
    show_default=True,
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
@reading_option
def command(run_dir, by, table_set, pass_report, judges, fmt, as_json, reading) -> None:
    """Accuracy by condition (and by any stratum) with n, exclusions and status counts; or the
    benchmark's own tables (--table); or pass / fail against its criteria (--pass)."""
    from medvqa.core.report import report

    fmt = "json" if as_json else fmt
    with analysis():
        output = report(
            run_dir, by=by, table=table_set, pass_lines=pass_report, judges=judges, fmt=fmt, reading=reading
        )
    if fmt == "json":
        print_json(output)
    else:
        click.echo(output, nl=False)
    if fmt != "json" and not (table_set or pass_report or judges):
        from medvqa.core.run.summary import run_warnings

        with user_errors():
            for line in run_warnings(run_dir, reading):  # on stderr: the table on stdout stays one document
                click.echo(line, err=True)

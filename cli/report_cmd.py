import click

from ._common import print_json, user_errors


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option("--by", help="Comma-separated strata, e.g. profession,year.")
@click.option("--table", "table_set", help="The benchmark's own tables, named after it (e.g. jmed48k).")
@click.option("--pass", "pass_report", is_flag=True,
              help="Pass / fail / not evaluable per exam against the official criteria, with the margin.")
@click.option("--format", "fmt", type=click.Choice(["md", "csv", "latex", "json"]), default="md", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(run_dir, by, table_set, pass_report, fmt, as_json) -> None:
    """Accuracy by condition (and by any stratum) with n, exclusions and status counts; or the
    benchmark's own tables (--table); or pass / fail against its criteria (--pass)."""
    from pathlib import Path

    from medvqa.core import plugins, report
    from medvqa.core.store import read_manifest, read_records

    fmt = "json" if as_json else fmt
    with user_errors():
        if table_set and pass_report:
            raise ValueError("give either --table or --pass, not both")
        if pass_report:
            from medvqa.core.rescore import load_run

            _, records, bench, items = load_run(Path(run_dir))
            if not hasattr(bench, "pass_report"):
                raise ValueError(f"benchmark {bench.name} ships no pass criteria")
            result = bench.pass_report(list(items.values()), records)
            if fmt == "json":
                print_json(result.as_json())
            else:
                click.echo(result.text(), nl=False)
            return
        manifest = read_manifest(Path(run_dir))
        records = read_records(Path(run_dir))
        if table_set:
            bench = plugins.get_benchmark(manifest["benchmark"])
            if table_set.lower() != bench.name or not hasattr(bench, "report_tables"):
                raise ValueError(f"no table set {table_set!r} for this {bench.name} run"
                                 + (f"; use --table {bench.name}" if hasattr(bench, "report_tables") else ""))
            output = bench.report_tables(records, manifest).render(fmt)
        else:
            fields = [f.strip() for f in by.split(",")] if by else []
            output = report.render(report.accuracy_table(records, manifest.get("excluded"), fields), fmt)
    click.echo(output, nl=False)

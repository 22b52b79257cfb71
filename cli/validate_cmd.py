import click

from ._common import print_json, printable, user_errors


@click.command("validate")
@click.argument("benchmark")
@click.option("--data", required=True, type=click.Path(path_type=str), help="Folder with the benchmark's data.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(benchmark, data, as_json) -> None:
    """Check the data of BENCHMARK at --data: every finding names its file, record and rule.
    Exit status 1 when any finding is an error."""
    from pathlib import Path

    from medvqa.core import plugins
    from medvqa.core.validation import errors, nothing_to_evaluate

    with user_errors():
        bench = plugins.get_benchmark(benchmark)
        findings = list(bench.validate(Path(data)))
        if not errors(findings):
            findings += nothing_to_evaluate(bench, data)
    n_errors = len(errors(findings))
    if as_json:
        print_json({"benchmark": bench.name, "data": data, "errors": n_errors,
                    "warnings": len(findings) - n_errors, "findings": [f.as_dict() for f in findings]})
    else:
        for finding in findings:
            click.echo(printable(str(finding)))
        click.echo(f"{bench.name}: {n_errors} error(s), {len(findings) - n_errors} warning(s) in {data}")
    if n_errors:
        raise click.exceptions.Exit(1)

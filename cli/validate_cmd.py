import click

from .common import print_json, printable, user_errors


@click.command("validate")
@click.argument("benchmark")
@click.option("--data", required=True, type=click.Path(path_type=str), help="Folder with the benchmark's data.")
@click.option("--quiet", "-q", is_flag=True, help="Print the counts per rule and the total only, not the findings.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(benchmark, data, quiet, as_json) -> None:
    """Check the data of BENCHMARK at --data: first one line per rule checked with its count of
    errors and warnings (0 included), then every finding naming its file, record and rule, then
    the total. Paths are printed as the --data folder was given, then the path inside it.
    Exit status 1 when any finding is an error."""
    from pathlib import Path

    from medvqa.core import plugins
    from medvqa.core.validation import NO_ANSWERS_RULE, errors, nothing_to_evaluate, rule_counts, shown, shown_path

    with user_errors():
        bench = plugins.get_benchmark(benchmark)
        findings = list(bench.validate(Path(data)))
        rules = dict(bench.validation_rules)
        if not errors(findings):  # data with errors is not loaded, so this rule is checked only without them
            findings += nothing_to_evaluate(bench, data)
            rules.update(NO_ANSWERS_RULE)
    findings = shown(findings, data)
    counts = rule_counts(findings, rules)
    n_errors = len(errors(findings))
    total = f"{bench.name}: {n_errors} error(s), {len(findings) - n_errors} warning(s) in {shown_path(data, data)}"
    if as_json:
        print_json(
            {
                "benchmark": bench.name,
                "data": shown_path(data, data),
                "errors": n_errors,
                "warnings": len(findings) - n_errors,
                "rules": counts,
                "findings": [f.as_dict() for f in findings],
            }
        )
    else:
        for line in _rule_lines(counts):
            click.echo(printable(line))
        for finding in [] if quiet else findings:
            click.echo(printable(str(finding)))
        click.echo(total)
    if n_errors:
        raise click.exceptions.Exit(1)


def _rule_lines(counts: list[dict]) -> list[str]:
    """A header, then one line per rule: its name, its errors, its warnings, what it checks."""
    width = max([len("rule"), *(len(c["rule"]) for c in counts)])
    lines = [f"{'rule':<{width}}  errors  warnings  what it finds"]
    for c in counts:
        lines.append(f"{c['rule']:<{width}}  {c['errors']:>6}  {c['warnings']:>8}  {c['description'] or '-'}".rstrip())
    return lines

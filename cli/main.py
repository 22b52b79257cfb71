"""The `medvqa` command. Each subcommand lives in its own module and imports heavy
dependencies only when it runs, so `medvqa --help` starts fast."""

import click

from . import audit_cmd, extract_cmd, list_cmd, report_cmd, run_cmd, score_cmd, validate_cmd


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="medvqa")
def cli() -> None:
    """Evaluate vision-language models on medical licensing exams and audit image use."""


for module in (list_cmd, run_cmd, score_cmd, report_cmd, validate_cmd, audit_cmd, extract_cmd):
    cli.add_command(module.command)

"""The `medvqa` command. Each subcommand lives in its own module and imports heavy
dependencies only when it runs, so `medvqa --help` starts fast; plugins add their own commands
through the `register_commands` hook."""

import click

from . import (
    audit_cmd,
    compare_cmd,
    contamination_cmd,
    eval_cmd,
    export_cmd,
    judge_cmd,
    list_cmd,
    merge_cmd,
    new_adapter_cmd,
    report_cmd,
    run_cmd,
    score_cmd,
    validate_cmd,
    view_cmd,
)


class Commands(click.Group):
    """A command group that keeps the first command of each name: a plugin cannot replace a
    built-in command, or another plugin's, and is told so on stderr."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        name = name or cmd.name
        if name in self.commands:
            click.echo(f"medvqa: a plugin's command {name!r} is ignored: that name is taken", err=True)
            return
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context):
        """Run the command; Ctrl-C before a command handles it itself (while data loads, before
        a run starts) ends with status 130 and one line, not click's "Aborted!" and status 1."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            from . import EXIT_INTERRUPTED

            click.echo("\ninterrupted", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="medvqa")
def cli() -> None:
    """Evaluate vision-language models on medical licensing exams and audit image use."""


for module in (
    list_cmd,
    run_cmd,
    eval_cmd,
    score_cmd,
    judge_cmd,
    report_cmd,
    validate_cmd,
    audit_cmd,
    compare_cmd,
    contamination_cmd,
    export_cmd,
    merge_cmd,
    new_adapter_cmd,
    view_cmd,
):
    cli.add_command(module.command)


def _plugin_commands() -> None:
    from medvqa.core import plugins

    from .import_cmd import import_group

    import_group(cli)  # generic import for every benchmark, whether or not a plugin adds its own

    try:
        plugins.manager().hook.register_commands(cli=cli)
    except plugins.PluginError as exc:
        raise SystemExit(f"medvqa: {exc}") from None


_plugin_commands()

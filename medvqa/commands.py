"""Helpers for the commands a plugin adds through `register_commands`, so that they behave like
the built-in ones: user errors as one-line messages, `--json` as one JSON document, a run's
summary printed as `medvqa run` prints it (`print_run_summary`).

    >>> import click
    >>> from medvqa.commands import add_selection_option, print_json, print_run_summary, user_errors

`add_selection_option(cli, "--years", field="year", help=...)` (in `register_commands`) gives
`medvqa run` a shorthand for `--select year=...`; `import_group(cli).add_command(cmd)` adds
`medvqa import NAME`, the group every adapter's importer of saved predictions shares.
"""

from medvqa.cli._common import add_selection_option, import_group, print_json, print_run_summary, user_errors

__all__ = ["add_selection_option", "import_group", "print_json", "print_run_summary", "user_errors"]

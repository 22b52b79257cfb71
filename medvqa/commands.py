"""Helpers for the commands a plugin adds through `register_commands`, so that they behave like
the built-in ones: user errors as one-line messages, `--json` as one JSON document, a run's
summary printed as `medvqa run` prints it (`print_run_summary`), `--model-name` as every
command that writes a run takes it (`model_name_option`), and `medvqa run`'s progress display
(`progress_display`).

    >>> import click
    >>> from medvqa.commands import print_json, print_run_summary, user_errors

`import_group(cli).add_command(cmd)` adds `medvqa import NAME`, the group every adapter's
importer of saved predictions shares. (A shorthand for `--select` on `medvqa run`, such as
`--years`, needs no command: the benchmark declares it in `Benchmark.selection_keywords`.)
"""

from medvqa.cli.common import model_name_option, print_json, print_run_summary, progress_display, user_errors
from medvqa.cli.import_cmd import import_group

__all__ = ["import_group", "model_name_option", "print_json", "print_run_summary", "progress_display", "user_errors"]

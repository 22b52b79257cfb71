"""Helpers for the commands a plugin adds through `register_commands`, so that they behave like
the built-in ones: user errors as one-line messages, `--json` as one JSON document.

    >>> import click
    >>> from medvqa.commands import print_json, user_errors
"""

from medvqa.cli._common import print_json, user_errors

__all__ = ["print_json", "user_errors"]

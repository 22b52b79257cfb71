"""Small helpers shared by commands, built-in or added by a plugin (`medvqa.commands`): errors
as clean messages, JSON output."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

import click


@contextmanager
def user_errors():
    """Turn data, usage and file-system errors into a one-line message (no traceback) and exit
    status 1. Messages are scrubbed of credentials."""
    from medvqa.core.inference.secrets import scrub
    from medvqa.core.items import DataError
    from medvqa.core.plugins import PluginError

    try:
        yield
    except (DataError, PluginError, KeyError, ValueError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise click.ClickException(printable(scrub(str(msg)))) from None
    except OSError as exc:  # a disk full, a file we may not read or write
        where = f"{exc.filename}: " if exc.filename else ""
        raise click.ClickException(printable(scrub(f"{where}{exc.strerror or exc}"))) from None


def printable(text: str) -> str:
    """`text` with lone surrogates (which no terminal encoding holds) written as `\\udXXX`."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def print_json(data) -> None:
    sys.stdout.write(printable(json.dumps(data, ensure_ascii=False, indent=1, default=str)) + "\n")

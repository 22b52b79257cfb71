"""Small helpers shared by commands: errors as clean messages, JSON output."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

import click


@contextmanager
def user_errors():
    """Turn data and usage errors into a one-line message and exit status 1."""
    from medvqa.core.items import DataError

    try:
        yield
    except (DataError, KeyError, ValueError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise click.ClickException(str(msg)) from None


def print_json(data) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=1, default=str) + "\n")

"""Errors a caller may want to tell apart, besides `DataError` (bad input data, in items.py),
`PluginError` (plugins.py) and `RunInterrupted` (run/interrupt.py). All are public names of `medvqa`."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UsageError(ValueError):
    """A value the caller gave that cannot be used (an unknown condition, a `--select` field no
    item has, an unknown benchmark). The commands print it as a usage error (exit status 2)."""


class UnknownBenchmarkError(UsageError, KeyError):
    """A benchmark name no installed plugin registers; the message names the nearest known one.
    Also a `KeyError` (a lookup that failed), printed without KeyError's quotes."""

    def __init__(self, name: str, known: Iterable[str]):
        known = sorted(known)
        close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        super().__init__(
            f"unknown benchmark {name!r}{hint}; installed: {', '.join(known) or 'none'} (see `medvqa list`)"
        )
        self.name, self.known, self.nearest = name, known, close[0] if close else None

    def __str__(self) -> str:
        return str(self.args[0])


class PreflightError(Exception):
    """The model cannot be used as given; the message is one line saying why (the checks before
    a run's first request: `inference/preflight.py`)."""

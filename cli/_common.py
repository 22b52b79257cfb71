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


class SelectionOption(click.Option):
    """A shorthand for `--select FIELD=...` that a plugin adds to `medvqa run`
    (`add_selection_option`): `--years 2024,2025` is `--select year=2024,2025`."""

    def __init__(self, name: str, field: str, help: str):
        super().__init__([name], help=help, metavar="V1,V2")
        self.field = field


def add_selection_option(cli: click.Group, name: str, field: str, help: str) -> None:
    """Give `medvqa run` the option `name` (e.g. `--years`) as a shorthand for
    `--select field=...`; a name another plugin already added for the same field is kept once."""
    run = cli.commands["run"]
    taken = {opt: p for p in run.params for opt in p.opts}
    if name in taken:
        if getattr(taken[name], "field", None) != field:
            click.echo(f"medvqa: a plugin's option {name} for {field!r} is ignored: that name is taken", err=True)
        return
    run.params.append(SelectionOption(name, field, help))


def selections(pairs: tuple[str, ...], shorthands: dict[str, str | None], params: list) -> dict[str, list[str]] | None:
    """`--select FIELD=V1,V2` pairs and the plugins' shorthand options as {field: [values]}."""
    out: dict[str, list[str]] = {}
    for pair in pairs:
        field, sep, values = pair.partition("=")
        if not sep or not field.strip() or not values.strip():
            raise click.BadParameter(f"expected FIELD=VALUE[,VALUE...], got {pair!r}", param_hint="--select")
        out.setdefault(field.strip(), []).extend(v.strip() for v in values.split(",") if v.strip())
    for param in params:
        if isinstance(param, SelectionOption) and shorthands.get(param.name):
            out.setdefault(param.field, []).extend(v.strip() for v in shorthands[param.name].split(",") if v.strip())
    return out or None


def import_group(cli: click.Group) -> click.Group:
    """The `medvqa import` group, where each adapter adds a command that reads predictions saved
    by another tool (`import_group(cli).add_command(...)` in `register_commands`); created by the
    first plugin that asks for it."""
    group = cli.commands.get("import")
    if group is None:
        @click.group("import")
        def group() -> None:
            """Import predictions saved by another tool as a run directory."""

        cli.add_command(group)
    if not isinstance(group, click.Group):
        raise click.ClickException("medvqa: the command name 'import' is taken by a command that is not a group")
    return group

"""The `medvqa` command line (`main`); the commands live in `main.py`, one module each."""

import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as after Ctrl-C at any other moment (core/run/interrupt.py)


def main() -> None:
    """The `medvqa` program: Ctrl-C while it starts (imports, plugins) ends it with status 130
    and one line, as Ctrl-C later does."""
    try:
        from .main import cli

        cli(prog_name="medvqa")
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        sys.exit(EXIT_INTERRUPTED)

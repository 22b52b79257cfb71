"""Registers JMed48k with medvqa, exactly as a third-party adapter would."""

from medvqa import hookimpl


@hookimpl
def register_benchmarks(register):
    from .benchmark import JMed48k

    register(JMed48k())


@hookimpl
def register_answer_patterns(register):
    from medvqa.ja import JAPANESE

    register(JAPANESE)


@hookimpl
def register_commands(cli):
    from medvqa.commands import add_selection_option

    from .commands import extract

    cli.add_command(extract)
    add_selection_option(cli, "--years", field="year", help="Comma-separated exam years, e.g. 2024,2025 (= --select year=...).")
    add_selection_option(cli, "--professions", field="profession",
                         help="Comma-separated professions, English or Japanese (= --select profession=...).")

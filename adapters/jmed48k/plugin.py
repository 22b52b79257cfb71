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
    from .commands import extract

    cli.add_command(extract)

"""Registers MIR with medvqa, exactly as a third-party adapter would, with its Spanish answer
phrases and `medvqa import mir`."""

from medvqa import hookimpl


@hookimpl
def register_benchmarks(register):
    from .benchmark import MIR

    register(MIR())


@hookimpl
def register_answer_patterns(register):
    from .templates import SPANISH

    register(SPANISH)


@hookimpl
def register_commands(cli):
    from medvqa.commands import import_group

    from .commands import mir

    import_group(cli).add_command(mir)

"""Registers Polish PES with medvqa, exactly as a third-party adapter would, and adds `medvqa
polish-pes-dcq` (the paper's Table 2 from Data Contamination Quiz results)."""

from medvqa import hookimpl


@hookimpl
def register_benchmarks(register):
    from .benchmark import PolishPES

    register(PolishPES())


@hookimpl
def register_answer_patterns(register):
    from .patterns import POLISH

    register(POLISH)


@hookimpl
def register_commands(cli):
    from .commands import polish_pes_dcq

    cli.add_command(polish_pes_dcq)

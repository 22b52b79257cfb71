"""Registers Polish PES with medvqa, exactly as a third-party adapter would."""

from medvqa import hookimpl


@hookimpl
def register_benchmarks(register):
    from .benchmark import PolishPES

    register(PolishPES())


@hookimpl
def register_answer_patterns(register):
    from .patterns import POLISH

    register(POLISH)

"""Registers MMBU-hard with medvqa, exactly as a third-party adapter would."""

from medvqa import hookimpl


@hookimpl
def register_benchmarks(register):
    from .benchmark import MMBUHard

    register(MMBUHard())

"""Registers JMed48k with medvqa, exactly as a third-party adapter would."""

from medvqa.core.hookspecs import hookimpl


@hookimpl
def register_benchmarks(register):
    from .benchmark import JMed48k

    register(JMed48k())


@hookimpl
def register_answer_patterns(register):
    from .patterns import JAPANESE

    register(JAPANESE)

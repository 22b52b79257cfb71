"""Plugin hook specifications. Each hook receives a `register` callback."""

import pluggy

hookspec = pluggy.HookspecMarker("medvqa")
hookimpl = pluggy.HookimplMarker("medvqa")


@hookspec
def register_benchmarks(register):
    """Register benchmarks: call register(benchmark) once per `Benchmark` object."""


@hookspec
def register_backends(register):
    """Register model backends: call register(factory) with a `prefix` selected by --model."""


@hookspec
def register_answer_patterns(register):
    """Register language answer patterns: call register(LanguagePatterns(...))."""

"""Plugin hook specifications. The `register_*` hooks receive a `register` callback, so one
plugin can register several things; `register_commands` receives the `medvqa` click group."""

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


@hookspec
def register_commands(cli):
    """Add commands to the `medvqa` command line: call cli.add_command(command)."""

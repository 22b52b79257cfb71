"""Registers WorldMedQA-V with medvqa, exactly as a third-party adapter would, and adds
`medvqa import worldmedqa_v`."""

from medvqa import hookimpl


@hookimpl
def register_benchmarks(register):
    from .benchmark import WorldMedQAV

    register(WorldMedQAV())


@hookimpl
def register_commands(cli):
    from medvqa.commands import import_group

    from .commands import worldmedqa_v

    import_group(cli).add_command(worldmedqa_v)

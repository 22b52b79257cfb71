"""Registers KokushiMD-10, IgakuQA and YakugakuQA with medvqa, exactly as a third-party adapter
would, and adds `medvqa import igakuqa|kokushimd10`."""

from medvqa import hookimpl


@hookimpl
def register_benchmarks(register):
    from .benchmark import IgakuQA, KokushiMD10, YakugakuQA

    register(KokushiMD10())
    register(IgakuQA())
    register(YakugakuQA())


@hookimpl
def register_commands(cli):
    from medvqa.commands import import_group

    from .commands import igakuqa, kokushimd10

    import_group(cli).add_command(igakuqa)
    import_group(cli).add_command(kokushimd10)

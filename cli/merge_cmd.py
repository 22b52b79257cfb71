"""`medvqa merge`: the shards of one run (`medvqa run --shard I/N`) joined into one run directory."""

import click

from .common import print_json, user_errors


@click.command("merge")
@click.argument("shard_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--into",
    required=True,
    type=click.Path(file_okay=False, path_type=str),
    help="The run directory to write (new, or holding no records).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def command(shard_dirs: tuple[str, ...], into: str, as_json: bool) -> None:
    """Merge the run directories of every shard of one run into one run directory.

    \b
    Example:
      medvqa merge runs/exam-shard0of3 runs/exam-shard1of3 runs/exam-shard2of3 --into runs/exam

    The shards must be of one run (benchmark, data, model, parameters, templates, conditions,
    shard count) and all there, each once: a missing shard is named, and nothing is written."""
    from medvqa.core.run.shards import merge_shards

    with user_errors():
        merged = merge_shards(shard_dirs, into)
    if as_json:
        print_json(merged.summary())
        return
    for s in merged.shards:
        click.echo(f"shard {s['shard']}: {s['records']} records from {s['run_dir']}")
    click.echo(f"{merged.n_records} records of {merged.count} shards merged into {merged.run_dir}")

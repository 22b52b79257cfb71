import click


@click.command("list")
def command() -> None:
    """List installed benchmarks and backends, with the plugin each came from."""
    from medvqa.core import plugins

    click.echo("Benchmarks:")
    for name, reg in sorted(plugins.benchmarks().items()):
        langs = reg.obj.offered_languages
        languages = f"  [--language {'|'.join(langs)}]" if len(langs) > 1 else ""
        click.echo(f"  {name:<16} {reg.obj.title}{languages}  [plugin: {reg.plugin}]")
    click.echo("Backends (--model):")
    for name, reg in sorted(plugins.backends().items()):
        click.echo(f"  {name:<16} {reg.obj.description}  [plugin: {reg.plugin}]")

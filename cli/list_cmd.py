import click


@click.command("list")
def command() -> None:
    """List installed benchmarks and backends, with the plugin each came from and the
    distribution (and version) that ships it."""
    from medvqa.core import plugins

    shipped = plugins.loaded_plugins()

    def origin(plugin: str) -> str:
        found = shipped.get(plugin) or {}
        dist = found.get("distribution")
        where = f"{dist} {found.get('version') or '(version unknown)'}" if dist else "not from a distribution"
        return f"[plugin: {plugin}] ({where})"

    click.echo("Benchmarks:")
    for name, reg in sorted(plugins.benchmarks().items()):
        langs = reg.obj.offered_languages
        languages = f"  [--language {'|'.join(langs)}]" if len(langs) > 1 else ""
        click.echo(f"  {name:<16} {reg.obj.title}{languages}  {origin(reg.plugin)}")
    click.echo("Backends (--model):")
    for name, reg in sorted(plugins.backends().items()):
        click.echo(f"  {name:<16} {reg.obj.description}  {origin(reg.plugin)}")

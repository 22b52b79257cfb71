import click

from .common import user_errors


@click.command("new-adapter")
@click.argument("name")
@click.option(
    "--language",
    default="en",
    show_default=True,
    help="ISO 639 code of the exam's language: the prompts and answer phrases are written in it.",
)
@click.option(
    "--labels",
    metavar="RANGE",
    help="The option labels the exam prints: A-E, a-e or 1-5 (or another range of these forms, "
    "A-C to A-J, a-c to a-j, 1-3 to 1-10). The fixture's options and answers carry them, and the "
    "prompt asks for the option's number where they are digits, its letter otherwise. "
    "Default from --language: ja 1-5 (most Japanese licensing exams; the physician's and "
    "dentist's use a-e), es 1-4 (MIR), A-E for the others.",
)
@click.option("--title", help="The benchmark's title, as `medvqa list` shows it.")
@click.option(
    "--out",
    "out_dir",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False, path_type=str),
    help="Folder in which the package folder NAME is written.",
)
def command(name, language, labels, title, out_dir) -> None:
    """Write a new adapter package NAME: pyproject with the `medvqa` entry point, loader,
    prompts in --language, answer phrases, a fixture labelled --labels, tests using the
    conformance kit and a README. It passes its own tests as written; see
    docs/adding-an-exam.md."""
    from medvqa.core.scaffold.adapter import write_adapter

    with user_errors():
        made = write_adapter(name, out_dir, language=language, title=title, labels=labels)
    for path in made.files:
        click.echo(f"wrote {path}", err=True)
    if not made.phrasebook:
        click.echo(
            f"medvqa: no phrasebook for language {language!r}: the prompts are in English; translate "
            f"{made.root / made.module / 'prompts.py'}",
            err=True,
        )
    click.echo(f"cd {made.root} && pip install -e '.[test]' && python -m pytest -q && medvqa run {name} --model random")

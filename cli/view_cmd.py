import click

from .common import reading_option, user_errors


@click.command("view")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--html",
    "html_out",
    required=True,
    type=click.Path(dir_okay=False, path_type=str),
    help="The page to write: one self-contained HTML file (images embedded, no network).",
)
@click.option(
    "--image-px",
    type=click.IntRange(32, 2048),
    default=384,
    show_default=True,
    help="Longer side of each embedded image, in pixels.",
)
@reading_option
def command(run_dirs, html_out, image_px, reading) -> None:
    """Browse saved runs: one page with every item, its images, gold answer and strata, and each
    run's response, reading, status and verdict per condition; filters for model, condition,
    status, stratum, correctness, image-removal transitions, disagreement and text (kept in
    the URL fragment, so a link reproduces a view). No model is called."""
    from medvqa.core.view import view

    with user_errors():
        path = view(*run_dirs, html=html_out, image_px=image_px, reading=reading)
    click.echo(f"wrote {path}", err=True)

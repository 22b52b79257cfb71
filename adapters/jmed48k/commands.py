"""The jmed48k plugin's own commands (`register_commands`): `medvqa extract jmed48k`."""

import click

from medvqa.commands import print_json, user_errors


@click.group("extract")
def extract() -> None:
    """Extract a benchmark's records from its source documents into its release layout."""


@extract.command("jmed48k")
@click.option(
    "--questions",
    "questions",
    multiple=True,
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Question booklet PDF (repeat for each booklet).",
)
@click.option(
    "--figures",
    "figures",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Figure booklet (別冊) PDF, paired with the question booklets in order.",
)
@click.option("--answers", type=click.Path(exists=True, dir_okay=False), help="Answer key (正答), PDF or CSV.")
@click.option("--profession", required=True, help="Profession, e.g. Physician or 'Radiological Technologist'.")
@click.option("--year", type=int, required=True, help="Exam year, e.g. 2025.")
@click.option("--section-names", help="Comma-separated section names, one per question booklet (e.g. AM,PM).")
@click.option("--engine", type=click.Choice(["pdfplumber", "mineru"]), default="pdfplumber", show_default=True)
@click.option(
    "--mineru-output",
    type=click.Path(exists=True, file_okay=False),
    help="An existing MinerU output folder (with --engine mineru) instead of running it.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Root folder of the release layout.")
@click.option("--json", "as_json", is_flag=True, help="Print the extraction report as one JSON document.")
def jmed48k(questions, figures, answers, profession, year, section_names, engine, mineru_output, out, as_json) -> None:
    """MHLW question booklets, figure booklets and answer keys → JMed48k release records, then
    check them.

    Exits 1 when the written records have error-level findings (the report lists them)."""
    from pathlib import Path

    from .benchmark import JMed48k

    with user_errors():
        result = JMed48k().extract(
            questions=[Path(q) for q in questions],
            figures=[Path(f) for f in figures],
            answers=Path(answers) if answers else None,
            profession=profession,
            year=year,
            section_names=section_names.split(",") if section_names else None,
            engine=engine,
            mineru_output=Path(mineru_output) if mineru_output else None,
            out=Path(out),
        )
    report = result.to_json()
    if as_json:
        print_json(report)
    else:
        counts = report["counts"]
        click.echo(f"wrote {report['path']} ({counts['questions']} questions)")
        click.echo(f"report: {report['report_path']}")
        for line in report["errors"]:
            click.echo(f"error: {line}", err=True)
        click.echo(f"{counts['warnings']} warning(s), {counts['errors']} error(s)")
    if not result.ok:
        raise SystemExit(1)

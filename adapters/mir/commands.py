"""`medvqa import mir WORKBOOK --data DIR --run-dir OUT`: the repository's answer workbooks as
run directories (one per model column of MIR26.xlsx, or the column `--response-column`)."""

from __future__ import annotations

from pathlib import Path

import click

from medvqa.commands import print_json, print_run_summary, user_errors
from medvqa.metrics import READINGS


@click.command("mir")
@click.argument("workbook", type=click.Path(exists=True, dir_okay=False, path_type=str))
@click.option(
    "--data",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=str),
    help="The MIR folder (2024/, 2026/), whose questions the answers are for.",
)
@click.option(
    "--run-dir",
    required=True,
    type=click.Path(path_type=str),
    help="The run directory to write; for MIR26.xlsx's model columns, the folder holding one per model.",
)
@click.option(
    "--response-column",
    metavar="COLUMN",
    help='Import this column alone (" GPT-4", " GPT-4 Vision" in 2024; headers as published). '
    "Default: every answer_<model> column, one run each.",
)
@click.option(
    "--condition",
    type=click.Choice(["C+Q+I", "C+Q"]),
    help="C+Q+I (default): image questions asked with their image, the others as they are; C+Q: every "
    "question without its image (GPT-4 in 2024).",
)
@click.option("--model", help="The model string for the manifest (default: the column's name).")
@click.option(
    "--model-name",
    metavar="NAME",
    help="The name the model goes by in tables, pairing and compare (default: the model string): GPT-4 "
    "and GPT-4 Vision under one name pair for Δimg.",
)
@click.option("--year", type=click.Choice(["2024", "2026"]), help="The exam's year (default: from the file name).")
@click.option("--sheet", metavar="NAME", help="The sheet of the workbook to read (default: the first).")
@click.option(
    "--max-response-bytes",
    type=click.IntRange(min=1),
    help="What a record keeps of an answer (default 262144, 256 KiB), as in medvqa run; a longer one is "
    "cut and marked truncated.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
@click.option("--reading", type=click.Choice(READINGS), help="The summary's headline reading (default: strict, MIR's).")
def mir(
    workbook,
    data,
    run_dir,
    response_column,
    condition,
    model,
    model_name,
    year,
    sheet,
    max_response_bytes,
    as_json,
    reading,
) -> None:
    """Import a MIR answer workbook (MIR26.xlsx, MIR24GPT_*.xlsx) as run directories, scored by the
    exam's rules (medvqa report RUN --table mir)."""
    from .importer import import_workbook

    with user_errors():
        summaries = import_workbook(
            Path(workbook),
            Path(data),
            Path(run_dir),
            response_column=response_column,
            condition=condition,
            model=model,
            model_name=model_name,
            sheet=sheet,
            year=int(year) if year else None,
            reading=reading,
            max_response_bytes=max_response_bytes,
        )
    if as_json:
        print_json(summaries if response_column is None else summaries[0])
        return
    for summary in summaries:
        click.echo(
            f"{summary['run_dir']}: model {summary['model']}, MIR {summary['year']}, column "
            f"{summary['column']!r}, condition {summary['condition']}"
            + (
                f"; {len(summary['annulled_answers'])} answers to annulled questions not scored"
                if summary["annulled_answers"]
                else ""
            )
        )
        print_run_summary(summary)

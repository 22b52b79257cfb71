"""`medvqa import worldmedqa_v TABLE --data DIR --run-dir OUT`: a VLMEvalKit prediction table of
WorldMedQA-V (the authors' published outputs) as a normal run directory."""

from __future__ import annotations

from pathlib import Path

import click

from medvqa.commands import print_json, print_run_summary, user_errors
from medvqa.metrics import READINGS


@click.command("worldmedqa_v")
@click.argument("table", type=click.Path(exists=True, dir_okay=False, path_type=str))
@click.option("--data", required=True, type=click.Path(exists=True, file_okay=False, path_type=str),
              help="WorldMedQA-V's tables (the questions the predictions answer).")
@click.option("--run-dir", required=True, type=click.Path(path_type=str), help="The run directory to write.")
@click.option("--language", type=click.Choice(["local", "en"]),
              help="The language the items were asked in (default: from the file name, _english → en).")
@click.option("--condition", type=click.Choice(["C+Q", "C+Q+I"]),
              help="C+Q+I with the image, C+Q without (default: C+Q for a table under outputs_blind/, else C+Q+I).")
@click.option("--country", type=click.Choice(["brazil", "israel", "japan", "spain"]),
              help="The country of the items (default: from the file name).")
@click.option("--model", help="Model name for the manifest (default: from the file name, GPT4o_japan_local.xlsx → GPT4o).")
@click.option("--convention", type=click.Choice(["vlmevalkit-exact", "vlmevalkit"]),
              help="vlmevalkit-exact (default): VLMEvalKit's exact matching alone, the rest parse failures (read "
                   "by the published extractor where the table has one); vlmevalkit: medvqa's chain reads what "
                   "matching cannot.")
@click.option("--sheet", metavar="NAME", help="The sheet of an XLSX workbook to read (default: the first; with several, "
                                              "stderr says which was read and names the others).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary on stdout, nothing else.")
@click.option("--reading", type=click.Choice(READINGS),
              help="The summary's headline reading (default: assisted, the protocol's: matching, then the published "
                   "extractor's option; the strict reading is shown beside it).")
def worldmedqa_v(table, data, run_dir, language, condition, country, model, convention, sheet, as_json,
                 reading) -> None:
    """A VLMEvalKit prediction table (XLSX, CSV or TSV with index and prediction), scored the way
    VLMEvalKit's multiple-choice matching reads answers."""
    from .importer import import_table

    with user_errors():
        summary = import_table(Path(table), Path(data), Path(run_dir), language=language, condition=condition,
                               country=country, model=model, convention=convention, reading=reading,
                               sheet=sheet)
    if as_json:
        print_json(summary)
        return
    click.echo(f"model {summary['model']}, {summary['country']}, language {summary['language']}, condition "
               f"{summary['condition']}, convention {summary['convention']}")
    if summary["n_extractor"]:
        click.echo(f"{summary['n_extractor']} replies matching could not read are read by the published extractor "
                   "(assisted accuracy)")
    print_run_summary(summary)
    click.echo(f"audit: medvqa audit {summary['run_dir']} <the run of the other language or condition>")

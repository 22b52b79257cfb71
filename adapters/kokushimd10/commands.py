"""`medvqa import igakuqa|kokushimd10 PRED_FILE... --data DIR --run-dir OUT`: predictions made by
the authors' tools, in their own formats, as a normal run directory (scored, reported, audited
and compared like any run)."""

from __future__ import annotations

from pathlib import Path

import click

from medvqa.commands import model_name_option, print_json, print_run_summary, user_errors

_CONVENTION = click.option("--convention", help="Scoring convention (the benchmark's default, mhlw, when omitted).")
_COMMON = [
    click.option(
        "--data",
        required=True,
        type=click.Path(exists=True, file_okay=False, path_type=str),
        help="The benchmark's data folder the predictions answer.",
    ),
    click.option("--run-dir", required=True, type=click.Path(path_type=str), help="The run directory to write."),
    click.option("--model", help="Model name for the manifest (default: named from the files)."),
    model_name_option,
    click.option(
        "--condition", default="C+Q", show_default=True, help="The condition the predictions were made under."
    ),
    _CONVENTION,
    click.option("--json", "as_json", is_flag=True, help="Print one JSON summary on stdout, nothing else."),
]


def _options(f):
    for option in reversed(_COMMON):
        f = option(f)
    return f


@click.command("igakuqa")
@click.argument("pred_files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=str))
@_options
def igakuqa(pred_files, data, run_dir, model, model_name, condition, convention, as_json) -> None:
    """IgakuQA prediction files (JSON Lines: problem_id, prediction), e.g. 116-A_gpt4.jsonl."""
    from .importer import import_igakuqa

    with user_errors():
        summary = import_igakuqa(
            [Path(p) for p in pred_files],
            Path(data),
            Path(run_dir),
            model=model,
            model_name=model_name,
            condition=condition,
            convention=convention,
        )
    _print(summary, as_json)


@click.command("kokushimd10")
@click.argument("pred_files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=str))
@_options
def kokushimd10(pred_files, data, run_dir, model, model_name, condition, convention, as_json) -> None:
    """KokushiMD-10 prediction files <profession>_<year>_<section>_pred.json (a list of {"pred": ...},
    aligned with the block)."""
    from .importer import import_kokushimd10

    with user_errors():
        summary = import_kokushimd10(
            [Path(p) for p in pred_files],
            Path(data),
            Path(run_dir),
            model=model,
            model_name=model_name,
            condition=condition,
            convention=convention,
        )
    _print(summary, as_json)


def _print(summary: dict, as_json: bool) -> None:
    if as_json:
        print_json(summary)
        return
    print_run_summary(summary)  # as `medvqa run` prints it
    click.echo(
        f"model {summary['model']}, convention {summary['convention']}; items without a prediction: "
        f"{summary['n_missing']} (recorded as missing); the benchmark's tables: "
        f"medvqa report {summary['run_dir']} --table {summary['benchmark']}"
    )

"""The Polish PES plugin's own command (`register_commands`): `medvqa polish-pes-dcq`, the
paper's Table 2 from Data Contamination Quiz results."""

from __future__ import annotations

import click

from medvqa.commands import print_json, user_errors


@click.command("polish-pes-dcq")
@click.option(
    "--dcq-results",
    "results",
    multiple=True,
    required=True,
    metavar="MODEL[@DATASET]=FILE",
    help="A DCQ results CSV in the authors' layout (medvqa contamination --answers writes one), the model it "
    "examined and the dataset (a column of the table: QA, VQA); repeat for each.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "csv", "latex", "text"]),
    default="md",
    show_default=True,
    help="How to print the table.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document: the table's rows and each file's whole estimate.",
)
def polish_pes_dcq(results, fmt, as_json) -> None:
    """The Polish PES paper's Table 2: per model and dataset, the Data Contamination Quiz's
    contamination level as (min contamination, max contamination), each estimated from its
    results file as the DCQ authors estimate it (medvqa contamination --dcq-results)."""
    import json

    import medvqa

    from .contamination import labelled, table2

    with user_errors():
        try:
            entries = [labelled(value) for value in results]
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--dcq-results") from None
        seen: dict[tuple[str, str], str] = {}
        for model, dataset, path in entries:
            if (model, dataset) in seen:
                raise click.BadParameter(
                    f"{model} on {dataset} is given twice ({seen[model, dataset]} and {path})",
                    param_hint="--dcq-results",
                )
            seen[model, dataset] = path
        estimates = {(m, d): medvqa.contamination(dcq_results=path)["dcq"] for m, d, path in entries}
    tables = table2({key: est["level"] for key, est in estimates.items()})
    if as_json:
        print_json(
            {
                "table": json.loads(tables.render("json"))["dcq"],
                "estimates": [{"model": m, "dataset": d, **estimates[m, d]} for m, d, _ in entries],
            }
        )
        return
    click.echo(tables.render(fmt), nl=not tables.render(fmt).endswith("\n"))

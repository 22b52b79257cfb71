"""`medvqa import BENCH FILE`: answers made elsewhere, for any benchmark, as a run directory.

A benchmark whose adapter adds its own import command (a published format) keeps it; every other
installed benchmark gets this generic one: JSON Lines `{item_id, condition, response}`, a JSON
array of such objects (wide too: one column per model), or a CSV / XLSX table with an id and a
response column."""

import click

from .common import model_name_option, print_json, print_run_summary, reading_option, selections, user_errors


def generic_import(benchmark: str) -> click.Command:
    """The generic import command of `benchmark`."""
    from medvqa.core.run.answer_file import ID_FROM

    @click.command(benchmark)
    @click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=str))
    @click.option(
        "--data",
        required=True,
        type=click.Path(exists=True, path_type=str),
        help="The benchmark's data, as for medvqa run.",
    )
    @click.option("--split", help="The split the answers are for (the benchmark's default when omitted).")
    @click.option(
        "--select",
        "select",
        multiple=True,
        metavar="FIELD=V1,V2",
        help="The items the answers are for, as medvqa run selects them (repeat for more fields), e.g. "
        "--select year=2026: items outside are not in the run, so none is recorded missing.",
    )
    @click.option("--run-dir", required=True, type=click.Path(path_type=str), help="The run directory to write.")
    @click.option("--model", default="imported", show_default=True, help="The model's name, recorded in the manifest.")
    @click.option("--id-column", default="item_id", show_default=True, help="The field holding the item id.")
    @click.option(
        "--id-from",
        type=click.Choice(ID_FROM),
        default="column",
        show_default=True,
        help="column: an answer's item is its --id-column value; row: its position among the answers (1 "
        "for the first data row, row 2 of a sheet under its header, or for the first line of JSON "
        "Lines), matched to the items' ids as an id column's value is: for sources whose own "
        "numbers repeat.",
    )
    @click.option(
        "--sheet",
        metavar="NAME",
        help="The sheet of an XLSX workbook to read (default: the first; with "
        "several, stderr says which was read and names the others).",
    )
    @click.option(
        "--response-column",
        default="response",
        show_default=True,
        help="The field holding the raw answer; in a wide file, one column per model, the model's column.",
    )
    @click.option("--condition", help="The condition of lines that name none (default C+Q).")
    @click.option(
        "--as-printed",
        "printed",
        is_flag=True,
        help="Answers given one per question, as the exam prints it: a line that names no condition is "
        "C+Q+I for an image item (the source showed its images, whether or not their files are here) "
        "and C+Q for the others, and no other pair is expected of it (none is recorded missing).",
    )
    @click.option("--convention", help="Score under this convention of the benchmark (its default when omitted).")
    @click.option(
        "--saved",
        is_flag=True,
        help="The responses are predictions saved in the benchmark's own format, not raw replies: read "
        'by its saved-answer convention (AnswerConventions.saved_label_sets: "1,6" or "AC" '
        "names a set of labels), as medvqa.score(item, text, saved=True) reads them.",
    )
    @click.option(
        "--max-response-bytes",
        type=click.IntRange(min=1),
        help="What a record keeps of an answer (default 262144, 256 KiB), as in medvqa run; a longer one "
        "is cut and marked truncated.",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
    @reading_option
    @model_name_option
    def command(
        file,
        data,
        split,
        select,
        run_dir,
        model,
        id_column,
        id_from,
        sheet,
        response_column,
        condition,
        printed,
        convention,
        saved,
        max_response_bytes,
        as_json,
        reading,
        model_name,
    ) -> None:
        """Import FILE, answers made elsewhere (JSON Lines {item_id, condition, response}, a JSON array
        of such objects, or CSV / XLSX with an id and a response column), as a run directory scored
        like any run. A wide file holds one column per model: import each with --response-column."""
        import sys

        import medvqa
        from medvqa.core import plugins
        from medvqa.core.conditions import as_printed
        from medvqa.core.run.answer_file import read_answer_file
        from medvqa.core.run.items import load_items

        with user_errors():
            bench = plugins.get_benchmark(benchmark)
            if convention:
                bench = bench.with_convention(convention)
            load = {
                "data": data,
                "split": split,
                **({"select": chosen} if (chosen := selections(benchmark, select, {})) else {}),
            }
            items, split_used = load_items(bench, load)
            answers = read_answer_file(
                file,
                items,
                id_column=id_column,
                response_column=response_column,
                condition=condition,
                sheet=sheet,
                id_from=id_from,
                printed=printed,
            )
            summary = medvqa.write_run(
                bench,
                items,
                answers,
                run_dir,
                model=model,
                load=load,
                split=split_used,
                saved=saved,
                command_line=["medvqa", *sys.argv[1:]],
                source={
                    "file": file,
                    "format": "generic",
                    **({"as_printed": True} if printed else {}),
                    **({"saved": True} if saved else {}),
                },
                reading=reading,
                model_name=model_name,
                images_attested=printed,
                asked=(lambda it: (as_printed(it).value,)) if printed else None,
                **({"max_response_bytes": max_response_bytes} if max_response_bytes else {}),
            )
            if not chosen and (hint := unanswered_hint(items, answers)):
                summary["warnings"] = [*summary.get("warnings", []), hint]
        if as_json:
            print_json(summary)
            return
        print_run_summary(summary)
        failures = sum(c.get("parse_failure", 0) for c in summary["conditions"].values())
        if failures and not saved and bench.answer_conventions().saved_label_sets:
            click.echo(
                f"{failures} parse failures: if {file} holds predictions in {benchmark}'s own format (labels "
                'joined, such as "1,6") rather than raw replies, --saved reads them as its saved answers are '
                "read",
                err=True,
            )

    return command


def unanswered_hint(items, answers) -> str | None:
    """A line for a file that answers fewer items than the data holds: every item it leaves out
    is recorded missing, in every denominator, which is right for answers that skipped items and
    wrong for answers to part of the data, which `--select` chooses."""
    runnable = {it.id for it in items if not it.excluded}
    answered = {item.id for item, *_ in answers} & runnable
    if len(answered) == len(runnable):
        return None
    return (
        f"the file answers {len(answered)} of the {len(runnable)} items of the data: the other "
        f"{len(runnable) - len(answered)} are recorded missing and count in every denominator; answers to "
        "part of the data take --select FIELD=V1,V2 (as medvqa run selects items), and the items outside "
        "are then not in the run"
    )


class _ImportGroup(click.Group):
    """`medvqa import`: an adapter's own command where it adds one, else the generic import of
    any installed benchmark."""

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is None:
            from medvqa.core import plugins

            if name in plugins.benchmarks():
                command = generic_import(name)
        return command


def import_group(cli: click.Group) -> click.Group:
    """The `medvqa import` group, where each adapter adds a command that reads predictions saved
    by another tool (`import_group(cli).add_command(...)` in `register_commands`); created by the
    first plugin that asks for it."""
    group = cli.commands.get("import")
    if group is None:

        @click.group("import", cls=_ImportGroup)
        def group() -> None:
            """Import predictions saved by another tool as a run directory: `medvqa import BENCH
            FILE --data DIR --run-dir OUT` for any installed benchmark (JSON Lines {item_id,
            condition, response}, or CSV / XLSX with --id-column and --response-column); the
            benchmarks listed here read their own published formats."""

        cli.add_command(group)
    if not isinstance(group, click.Group):
        raise click.ClickException("medvqa: the command name 'import' is taken by a command that is not a group")
    return group

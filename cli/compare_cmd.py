import click

from .common import analysis, print_json, reading_option


@click.command("compare")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--by",
    help="Comma-separated strata beside benchmark and condition (record fields or a benchmark's "
    "aliases); default: each benchmark's default strata.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "csv", "latex", "json", "html", "parquet"]),
    default="md",
    show_default=True,
    help="md, latex and html show the model × benchmark table; csv and parquet write "
    "the long table (one row per model × benchmark × condition × stratum level).",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=str),
    help="Write the output to this file instead of stdout (needed for --format parquet).",
)
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=str),
    help="Also write one self-contained HTML page (table, forest plot of Δimg) and, beside it, each "
    "run's audit page it links to.",
)
@click.option(
    "--figure",
    "figure_out",
    type=click.Path(dir_okay=False, path_type=str),
    help="Also write the figure of accuracy by stratum and language (a panel per level, e.g. per country; "
    "a bar per model and language; the pass line where the benchmark declares one) as PNG or SVG, "
    "by the file's suffix.",
)
@click.option("--resamples", type=click.IntRange(1), help="Bootstrap resamples (default 10,000).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option(
    "--cluster",
    help="A cluster level the benchmark declares (JMed48k, IgakuQA: case, block): "
    "cluster-bootstrap intervals beside the item-level ones (docs/audit.md); "
    "default: the benchmark's first level, where it declares any; none: item-level only.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
@reading_option
def command(run_dirs, by, fmt, out_path, html_out, figure_out, resamples, seed, cluster, as_json, reading) -> None:
    """Compare saved runs across models and benchmarks: each benchmark's headline metric per
    condition with n, non-answer rates and 95 % CIs, Δimg (C+Q+I vs C+Q) per benchmark, and
    paired tests between models on the same items (no model calls); where runs differ by a stratum
    and a language (WorldMedQA-V's countries), the table and figure by stratum and language with
    each level's pass line. Runs of one benchmark on different data of the same items are
    refused."""
    from pathlib import Path

    from medvqa.core.api import names
    from medvqa.core.compare.comparison import compare_runs
    from medvqa.core.compare.page import write_page
    from medvqa.core.compare.render import render, write_parquet
    from medvqa.core.files import write_atomic

    fmt = "json" if as_json else fmt
    with analysis():
        if fmt == "parquet" and not out_path:
            raise ValueError("--format parquet writes a file: give --out FILE.parquet")
        result = compare_runs(
            run_dirs,
            by=names(by) if by is not None else None,
            resamples=resamples,
            seed=seed,
            reading=reading,
            cluster=cluster,
        )
        written = []
        if fmt == "parquet":
            written.append(write_parquet(result, Path(out_path)))
            text = None
        else:
            text = render(result, fmt)
            if out_path:
                written.append(write_atomic(Path(out_path), text))
        if html_out:
            written += write_page(result, Path(html_out), resamples=resamples, seed=seed)
        if figure_out:
            from medvqa.core.compare.figure import write_panel_figure

            written += write_panel_figure(result.as_json(), Path(figure_out))
    if text is not None and not out_path:
        if fmt == "json":
            print_json(result.as_json())
        else:
            click.echo(text, nl=False)
    for path in written:
        click.echo(f"wrote {path}", err=True)

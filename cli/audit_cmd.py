import click

from ._common import print_json, user_errors


@click.command("audit")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option("--by", help="Comma-separated record fields (or a benchmark's aliases for them) to stratify by; "
                           "default: the benchmark's default strata.")
@click.option("--cohort", "cohort_file", type=click.Path(exists=True, dir_okay=False, path_type=str),
              help="YAML or JSON file mapping models to cohorts ({cohort: [model, ...]} or {model: cohort}).")
@click.option("--refusals", type=click.Choice(["strict", "conditional", "imputed"]), default="strict",
              show_default=True, help="How refusals enter the paired image-removal tables.")
@click.option("--examples", type=click.IntRange(0), default=3, show_default=True, help="Examples per transition state.")
@click.option("--resamples", type=click.IntRange(1), default=1000, show_default=True, help="Bootstrap resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap and example picks.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=str), help="Write a self-contained HTML report.")
@click.option("--figures", "figures_dir", type=click.Path(file_okay=False, path_type=str),
              help="Write the figures (PNG and SVG) into this folder.")
def command(run_dirs, by, cohort_file, refusals, examples, resamples, seed, as_json, html_out, figures_dir) -> None:
    """Visual-reliance audit of saved runs: image-removal transitions, input ablation, refusal
    conventions, image-as-options control and selection bias (no model calls). Runs of one
    model on the same data holding different conditions (C+Q+I in one, C+Q in another) are
    paired as one."""
    from pathlib import Path

    from medvqa.core.api import audit
    from medvqa.core.audit.analysis import summary_markdown

    with user_errors():
        doc = audit(*run_dirs, by=by, cohorts=cohort_file, refusals=refusals, examples=examples,
                    resamples=resamples, seed=seed)
        written = []
        if figures_dir or html_out:
            from medvqa.core.audit.figures import figures, save_figures, svg_texts
            from medvqa.core.audit.html import write_html

            figs = figures(doc)
            svgs = svg_texts(figs)
            if figures_dir:
                written += save_figures(doc, Path(figures_dir), svgs, figs)
            if html_out:
                written.append(write_html(doc, Path(html_out), svgs))
    if as_json:
        print_json(doc)
    else:
        from medvqa.core.audit.pairing import language_markdown

        click.echo(summary_markdown(doc) + language_markdown(doc))
    for path in written:
        click.echo(f"wrote {path}", err=True)

import click

from ._common import print_json, user_errors


@click.command("audit")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option("--by", help="Comma-separated record fields to stratify by, e.g. profession,image_type "
                           "(image_type = the dominant image type).")
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
    conventions, image-as-options control and selection bias (no model calls)."""
    from pathlib import Path

    from medvqa.core.audit import Settings, audit, summary_markdown

    with user_errors():
        settings = Settings(by=tuple(f.strip() for f in by.split(",") if f.strip()) if by else (),
                            refusals=refusals, resamples=resamples, seed=seed, examples=examples)
        cohorts = _read_cohorts(Path(cohort_file)) if cohort_file else None
        doc = audit([_read_run(Path(d)) for d in run_dirs], settings, cohorts)
        written = []
        if figures_dir or html_out:
            from medvqa.core.audit_figures import figures, save_figures, svg_texts
            from medvqa.core.audit_html import write_html

            figs = figures(doc)
            svgs = svg_texts(figs)
            if figures_dir:
                written += save_figures(doc, Path(figures_dir), svgs, figs)
            if html_out:
                written.append(write_html(doc, Path(html_out), svgs))
    if as_json:
        print_json(doc)
    else:
        click.echo(summary_markdown(doc))
    for path in written:
        click.echo(f"wrote {path}", err=True)


def _read_run(run_dir):
    from medvqa.core import plugins
    from medvqa.core.audit import RunInput
    from medvqa.core.rescore import load_run

    manifest, records, _, items = load_run(run_dir)
    return RunInput(model=manifest["model"], records=records, items=items, source=str(run_dir),
                    patterns=plugins.answer_patterns())


def _read_cohorts(path):
    import yaml

    from medvqa.core.audit import parse_cohorts
    from medvqa.core.items import DataError

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DataError(f"not valid YAML or JSON ({exc})", file=path) from None
    return parse_cohorts(data, path)

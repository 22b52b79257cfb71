import click

from .common import analysis, print_json, reading_option


@click.command("audit")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--by",
    help="Comma-separated record fields (or a benchmark's aliases for them) to stratify by; "
    "default: the benchmark's default strata.",
)
@click.option(
    "--cohort",
    "cohort_file",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="YAML or JSON file mapping models to cohorts ({cohort: [model, ...]} or {model: cohort}).",
)
@click.option(
    "--refusals",
    type=click.Choice(["strict", "conditional", "imputed"]),
    default="strict",
    show_default=True,
    help="How refusals enter the paired image-removal tables.",
)
@reading_option
@click.option("--examples", type=click.IntRange(0), default=3, show_default=True, help="Examples per transition state.")
@click.option("--resamples", type=click.IntRange(1), help="Bootstrap resamples (default 10,000).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap and example picks.")
@click.option(
    "--cluster",
    help="A cluster level the benchmark declares (JMed48k, IgakuQA: case, block): "
    "cluster-bootstrap intervals beside the item-level ones (docs/audit.md); "
    "default: the benchmark's first level, where it declares any; none: item-level only.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=str),
    help="Write a self-contained HTML report, and beside it (<name>-items.html) the item "
    "browser of the runs, which its cells link to.",
)
@click.option(
    "--figures",
    "figures_dir",
    type=click.Path(file_okay=False, path_type=str),
    help="Write the figures (PNG and SVG) into this folder.",
)
@click.option(
    "--cutoff",
    "cutoffs",
    multiple=True,
    metavar="[MODEL=]YYYY-MM",
    help="A model's declared knowledge cutoff (one for every model, or MODEL=YYYY-MM each): adds the "
    "exam-date curves, split there, under exam_dates (the --html page shows the curves of runs with exam "
    "years without it, unsplit).",
)
def command(
    run_dirs,
    by,
    cohort_file,
    refusals,
    reading,
    examples,
    resamples,
    seed,
    cluster,
    as_json,
    html_out,
    figures_dir,
    cutoffs,
) -> None:
    """Visual-reliance audit of saved runs: image-removal transitions, input ablation, refusal
    conventions, image-as-options control and selection bias (no model calls). Runs of one
    model on the same data holding different conditions (C+Q+I in one, C+Q in another) are
    paired as one."""
    from pathlib import Path

    from medvqa.core.api import names
    from medvqa.core.audit.runs import audit_saved, read_runs
    from medvqa.core.audit.summary import summary_markdown
    from medvqa.core.contamination.curves import read_cutoffs
    from medvqa.core.metrics import reading_of

    with analysis():
        reading_of(None, reading)  # an unknown reading is refused before any run is read
        cutoff = read_cutoffs(cutoffs)
        saved, repeated = read_runs(run_dirs)  # read once: the audit and, with --html, the item browser beside it
        doc = audit_saved(
            saved,
            repeated,
            by=tuple(names(by)) if by is not None else None,
            cohorts=cohort_file,
            refusals=refusals,
            examples=examples,
            resamples=resamples,
            seed=seed,
            reading=reading,
            cluster=cluster,
            # the page shows the curves where the records carry years; --json holds them when asked
            exam_dates=html_out is not None,
            cutoff=cutoff,
        )
        written = []
        if figures_dir or html_out:
            if figures_dir:  # matplotlib figures, PNG and SVG, for print
                from medvqa.core.audit.figures import save_figures

                written += save_figures(doc, Path(figures_dir))
            if html_out:
                from urllib.parse import quote

                from medvqa.core.view import items_page_beside, write_view

                runs = [run.read_as(doc["readings"].get(run.benchmark.name)) for run in saved]
                items_page = write_view(runs, items_page_beside(Path(html_out)))
                from medvqa.core.audit.html import write_html

                written.append(write_html(doc, Path(html_out), view_href=f"./{quote(items_page.name)}"))
                written.append(items_page)
    if as_json:
        print_json(doc)
    else:
        from medvqa.core.audit.pairing import language_markdown

        click.echo(summary_markdown(doc) + language_markdown(doc))
        click.echo(more_sections(doc))
        if cutoff is not None:  # asked for: the exam-date curves, split at the cutoffs
            from .contamination_cmd import curve_lines

            click.echo("\n".join(curve_lines(doc["exam_dates"])))
    for path in written:
        click.echo(f"wrote {path}", err=True)


def _with_ci(cell: dict | None) -> str:
    from medvqa.tables import fmt, percent

    if not cell or cell.get("accuracy") is None:
        return "–"
    return percent(cell["accuracy"]) + (f" {fmt(cell['ci'], 'ci')}" if cell.get("ci") else "")


_ABLATION_GROUPS = {
    "image": "image items",
    "text_only": "text-only items",
    "image_unavailable": "image items without their files",
}


def more_sections(doc: dict) -> str:
    """The sections of the audit document the terminal summary adds after the paired tables, as
    Markdown: per model the input ablation (accuracy with its 95 % CI per condition beside the
    random baseline, overall) and the selection bias (labels chosen more often than they are
    right, answers outside the options), then the paired tests between models. Strata of the
    ablation are in --json and --html."""
    from medvqa.core.audit.between_models import BETWEEN_MODELS_TEXT
    from medvqa.core.audit.summary import model_docs
    from medvqa.core.conditions import ALL
    from medvqa.tables import fmt, p_value, percent, points

    lines: list[str] = []
    models = model_docs(doc)
    lines += [
        "## Input ablation (accuracy %, 95 % CI)",
        "",
        "| model | items | n | " + " | ".join(c.value for c in ALL) + " | random baseline |",
        "|---|---|---|" + "---|" * len(ALL) + "---|",
    ]
    for name, m in models.items():
        for group, label in _ABLATION_GROUPS.items():
            row = (m.get("ablation") or {}).get(group)
            if not row or not row.get("n"):
                continue
            cells = [_with_ci(row["conditions"].get(c.value)) for c in ALL]
            lines.append(
                f"| {name} | {label} | {row['n']} | " + " | ".join(cells) + f" | {percent(row.get('baseline'))} |"
            )
    lines += [
        "",
        "## Selection bias",
        "",
        "| model | condition | n | over-selected labels (points above their share as gold) "
        "| answers outside the options |",
        "|---|---|---|---|---|",
    ]
    for name, m in models.items():
        for cond, bias in sorted((m.get("selection_bias") or {}).items()):
            if not isinstance(bias, dict) or "n" not in bias:
                continue
            over = (
                ", ".join(f"{o['label']} {points(o['difference'])}" for o in bias.get("over_selected") or []) or "none"
            )
            outside = f"{bias.get('n_outside', 0)} ({percent(bias.get('outside_share'))} %)"
            lines.append(f"| {name} | {cond} | {bias['n']} | {over} | {outside} |")
    comparisons = doc.get("comparisons") or []
    if comparisons:
        # a warning (a note) column only where a row has one
        said = [k for k in ("warning", "note") if any(c.get(k) for c in comparisons)]
        lines += [
            "",
            "## Between models (paired, on the items both answered)",
            "",
            "| a | b | measure | n | a − b (pp) | 95 % CI | test | p | Holm p |" + "".join(f" {k} |" for k in said),
            "|---|---|---|---|---|---|---|---|---|" + "---|" * len(said),
        ]
        for c in comparisons:
            ci = fmt(c.get("ci"), "ci_pp")
            lines.append(
                f"| {c['a']} | {c['b']} | {c['measure']} | {c['n']} | {points(c.get('difference'))} | {ci} | "
                f"{c.get('test') or '–'} | {p_value(c.get('p'))} | {p_value(c.get('p_holm'))} |"
                + "".join(f" {c.get(k) or '–'} |" for k in said)
            )
        lines += ["", BETWEEN_MODELS_TEXT]
    return "\n".join(lines) + "\n"

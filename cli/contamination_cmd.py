import click

from .common import EXIT_PREFLIGHT, ExitWith, print_json, user_errors


def _key_values(ctx: click.Context, param: click.Parameter, pairs: tuple[str, ...]) -> dict:
    """`KEY=VALUE` pairs; a value is read as JSON when it parses (0.5, true, null)."""
    import json

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _selection(ctx: click.Context, param: click.Parameter, pairs: tuple[str, ...]) -> dict:
    out: dict[str, list[str]] = {}
    for pair in pairs:
        field, sep, values = pair.partition("=")
        if not sep or not field or not values:
            raise click.BadParameter(f"expected FIELD=VALUE[,VALUE...], got {pair!r}")
        out.setdefault(field, []).extend(values.split(","))
    return out


@click.command("contamination")
@click.argument("targets", nargs=-1)
@click.option("--data", type=click.Path(exists=True, path_type=str), help="The benchmark's data folder.")
@click.option("--split", help="The split to quiz (the benchmark's default).")
@click.option("--select", multiple=True, callback=_selection, metavar="FIELD=V[,V]", help="Quiz these items only.")
@click.option("--limit", type=click.IntRange(min=1), help="Quiz the first N items (of the selection).")
@click.option(
    "--quiz",
    type=click.Path(dir_okay=False, path_type=str),
    help="The quiz file: read when it exists (any examined model reuses it), else written by --quiz-model.",
)
@click.option("--quiz-model", metavar="MODEL", help="The generator model that writes the quiz's paraphrases.")
@click.option("--quiz-api-base", metavar="URL", help="Server URL of the generator model.")
@click.option(
    "--quiz-option",
    "quiz_options",
    multiple=True,
    callback=_key_values,
    metavar="KEY=VALUE",
    help="A backend setting of the generator (temperature, max_tokens, timeout, ...).",
)
@click.option(
    "--dataset-name",
    "dataset",
    metavar="NAME",
    help='The dataset\'s name in the quiz prompt ("an instance from the <split> split of the NAME dataset"); '
    "the benchmark's name by default.",
)
@click.option("--model", "models", multiple=True, metavar="MODEL", help="A model to examine; repeat for several.")
@click.option("--api-base", metavar="URL", help="Server URL of the examined model(s).")
@click.option(
    "-M",
    "model_options",
    multiple=True,
    callback=_key_values,
    metavar="KEY=VALUE",
    help="A backend setting of the examined model(s) (max_tokens, timeout, concurrency, ...); with run "
    "directories, cutoff=YYYY-MM: the model's declared knowledge cutoff.",
)
@click.option("--by", help="Strata to estimate by, comma-separated (default: the benchmark's default strata).")
@click.option(
    "--answers",
    type=click.Path(dir_okay=False, path_type=str),
    help="Write the examined model's answers as a results CSV in the authors' layout (one --model).",
)
@click.option(
    "--dcq-results",
    "dcq_results",
    type=click.Path(dir_okay=False, path_type=str),
    help="A results CSV of the Data Contamination Quiz in its authors' layout (bdq_results, "
    "bcq_results_for_position_<x>): estimate its contamination level as they do.",
)
@click.option(
    "--slots",
    is_flag=True,
    help="Slot guessing (Deng et al. 2024): each --model restores one masked wrong option per question.",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Plan writing the quiz and taking it: requests, cached answers, tokens, cost. Nothing is sent or written.",
)
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=str),
    help="Also write the results as one self-contained HTML page.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def command(
    targets,
    data,
    split,
    select,
    limit,
    quiz,
    quiz_model,
    quiz_api_base,
    quiz_options,
    dataset,
    models,
    api_base,
    model_options,
    by,
    answers,
    dcq_results,
    slots,
    no_cache,
    dry_run,
    html_out,
    as_json,
) -> None:
    """Was the exam memorised? The Data Contamination Quiz (Golchin & Surdeanu, TACL 2025): the
    examined model is asked which of five options is an exam's exact wording (four word-level
    paraphrases, or "none of the provided options"); the level is an interval, the lower bound
    corrected for the model's liking for a position.

    With BENCHMARK and --quiz FILE: the quiz is read from FILE, or written there by --quiz-model
    (four paraphrases of each question, checked); each --model then takes it, and the level is
    estimated overall and by stratum. With --dcq-results, the estimate of a results file in the
    authors' layout, computed as their code computes it (without --json: their report, line for
    line; no model is called).

    With RUN_DIR ...: the exam-date curves of saved runs, accuracy by exam year, split before and
    after the model's knowledge cutoff declared with -M cutoff=YYYY-MM (no model is called)."""
    from pathlib import Path

    from medvqa.core import dcq
    from medvqa.core.api import names
    from medvqa.core.contamination.api import contamination, read_text
    from medvqa.core.contamination.quiz import QuizIncomplete
    from medvqa.core.errors import PreflightError

    runs = bool(targets) and all(Path(t).is_dir() for t in targets)
    if len(targets) > 1 and not runs:
        raise click.UsageError("give one BENCHMARK, or run directories only")
    benchmark = None if runs or not targets else targets[0]
    cutoff = None
    if runs:
        cutoff = model_options.pop("cutoff", None)
        if model_options or models or quiz or quiz_model:
            raise click.UsageError("run directories take -M cutoff=YYYY-MM only (no quiz, no model to ask)")
    if not targets and dcq_results is None:
        raise click.UsageError("give BENCHMARK --quiz FILE, RUN_DIR ..., or --dcq-results CSV")
    if not targets and not as_json and html_out is None:
        with user_errors():
            click.echo(dcq.report(dcq.estimate_results(read_text(dcq_results), file=dcq_results)), nl=False)
        return
    if quiz_api_base:
        quiz_options = {"api_base": quiz_api_base, **quiz_options}
    if api_base:
        model_options = {"api_base": api_base, **model_options}
    # the quiz, its generator and the examinees: what the plan and the audit both take
    quiz_setup = dict(
        data=data,
        split=split,
        select=select or None,
        limit=limit,
        quiz=quiz,
        quiz_model=quiz_model,
        quiz_options=quiz_options,
        dataset=dataset,
        models=models,
        model_options=model_options,
    )
    if dry_run:
        from medvqa.core.contamination.plan import dry_run as plan

        if benchmark is None or quiz is None:
            raise click.UsageError("--dry-run plans a quiz: give BENCHMARK and --quiz FILE")
        with user_errors():
            doc = plan(benchmark, **quiz_setup)
        if as_json:
            print_json(doc)
        else:
            for line in plan_lines(doc):
                click.echo(line)
        return
    with user_errors():
        try:
            doc = contamination(
                list(targets) if runs else benchmark,
                dcq_results=dcq_results,
                **quiz_setup,
                by=names(by) if by is not None else None,
                answers=answers,
                cutoff=cutoff,
                slots=slots,
                cache=not no_cache,
                progress=None if as_json else (lambda line: click.echo(line, err=True)),
            )
        except PreflightError as exc:
            raise ExitWith(str(exc), EXIT_PREFLIGHT) from None
        except QuizIncomplete as exc:  # generator requests that failed after their retries
            raise click.ClickException(str(exc)) from None
    if html_out is not None:
        from medvqa.core.contamination.html import write

        with user_errors():
            written = write(doc, html_out)
        click.echo(f"wrote {written}", err=True)
    if as_json:
        print_json(doc)
        return
    for line in text_lines(doc):
        click.echo(line)


def plan_lines(plan: dict) -> list[str]:
    """A dry run's plan as lines: the generator's, then each examined model's requests and cost."""

    def cost(part: dict) -> str:
        if part.get("cost_usd") is None:
            return part.get("price_source") or part.get("note") or "no cost"
        return f"about ${part['cost_usd']:.4f}"

    lines = [f"quiz {plan['quiz']}: {plan['n_items']} items of {plan['benchmark']}"]
    g = plan["generator"]
    lines.append(f"  writing it ({g['model']}): {g['requests']} requests; {cost(g)}")
    for model, e in plan["examinations"].items():
        lines.append(f"  {model}: {e['requests']} requests ({e['cached']} of {e['to_ask']} cached); {cost(e)}")
    return lines


def text_lines(doc: dict) -> list[str]:
    """The document as a few lines: the quiz, then each examined model's level overall and by stratum."""
    from medvqa.core.dcq import percent

    lines = []
    if "dcq" in doc:
        lines.append(f"{doc['dcq']['file']}: {doc['dcq']['printed']}")
    q = doc.get("quiz")
    if q:
        verb = "wrote" if q["created"] else "read"
        lines.append(
            f"quiz {q['file']} ({verb}; generator {q['generator'].get('model')}): {q['n_items']} items, "
            f"{q['n_dropped']} dropped"
        )
        lines += [f"  dropped {d['item_id']}: {d['reason']}" for d in q["dropped"][:10]]
    for model, ex in (doc.get("examinations") or {}).items():
        o = ex["overall"]
        lines.append(
            f"{model}: [{percent(o['level']['lower'])}, {percent(o['level']['upper'])}] over {o['n']} items "
            f"(non-preferred {', '.join(o['non_preferred'])}; best BCQ {o['best']})"
        )
        for field, levels in ex["by"].items():
            for level, est in levels.items():
                lines.append(
                    f"  {field}={level}: [{percent(est['level']['lower'])}, {percent(est['level']['upper'])}] "
                    f"(n {est['n']})"
                )
        lines += [f"  note: {n}" for n in ex["notes"]]
    for model, g in (doc.get("slot_guessing") or {}).items():
        rates = ", ".join(
            f"{name} {g[name]['matches']}/{g['n']}"
            + (
                f" ({100 * g[name]['rate']:.1f}%, [{100 * g[name]['ci'][0]:.1f}, {100 * g[name]['ci'][1]:.1f}])"
                if g["n"]
                else ""
            )
            for name in ("exact", "normalised")
        )
        lines.append(f"{model}: slot guessing, masked wrong options restored: {rates}; {g['skipped']} items not asked")
    dates = doc.get("exam_dates")
    if dates:
        lines += curve_lines(dates)
    return lines


def curve_lines(dates: dict) -> list[str]:
    """The exam-date curves as lines: per run and condition, accuracy by year, then the split."""

    def pct(x) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    def ci(pair) -> str:
        return "" if not pair else f" [{100 * pair[0]:+.1f}, {100 * pair[1]:+.1f}]"

    if "cutoffs" in dates:  # each model's own
        declared = ", ".join(f"{m} {c}" for m, c in dates["cutoffs"].items() if c)
        lines = [f"exam-date curves; cutoffs {declared or 'not declared'}"]
    else:
        lines = [f"exam-date curves; cutoff {dates['cutoff'] or 'not declared (-M cutoff=YYYY-MM)'}"]
    from medvqa.core.contamination.curves import run_title

    parts = [(run_title(r), r["conditions"]) for r in dates["runs"]]
    if len(dates["runs"]) > 1:
        parts += [(f"{m} pooled", conds) for m, conds in dates["pooled"].items()]
    for name, conds in parts:
        for condition, c in conds.items():
            years = ", ".join(f"{y} {pct(v['accuracy'])} (n {v['n']})" for y, v in c["years"].items())
            lines.append(f"{name}, {condition}: {years}")
            if "before" in c:
                diff = "-" if c["difference"] is None else f"{100 * c['difference']:+.1f} pp"
                left_out = f"; {', '.join(c['straddles'])} left out (the cutoff falls inside)" if c["straddles"] else ""
                lines.append(
                    f"  before {pct(c['before']['accuracy'])} (n {c['before']['n']}), after "
                    f"{pct(c['after']['accuracy'])} (n {c['after']['n']}): difference {diff}"
                    f"{ci(c['difference_ci'])}{left_out}"
                )
    return lines

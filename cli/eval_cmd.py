"""`medvqa eval SET`: every experiment of an eval set (models × benchmarks × languages), resumable,
with one compare at the end (core/run/evalset.py)."""

import sys

import click

from .common import print_json, user_errors

EXIT_FAILED = 4  # the set ran, but one experiment or more failed (the summary names them)


@click.command("eval")
@click.argument("set_file", metavar="SET", type=click.Path(exists=True, dir_okay=False, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print every experiment's plan and the totals and send nothing: requests (already recorded, "
    "cached), tokens and cost.",
)
@click.option(
    "--shard",
    metavar="I/N|auto",
    help="Run shard I (from 0) of N of every experiment (auto: from a Slurm array task or a Kubernetes "
    "indexed Job, as medvqa run --shard), under STUDY_DIR/.shards; no compare.",
)
@click.option("--merge", is_flag=True, help="Merge every experiment's shards into its run directory, then compare.")
def command(set_file, as_json, dry_run, shard, merge) -> None:
    """Run every experiment of the eval set SET (TOML, YAML or JSON): each model on each
    benchmark in each language, one run directory each under the set's study_dir. Re-running
    resumes the set. docs/studies.md walks through a study.

    Exit status: 0 every experiment done; 1 a bad set (nothing ran); 4 one experiment or more
    failed (named in the summary); 130 interrupted."""
    from medvqa.core.api import run_eval_set
    from medvqa.core.run.evalset import read_set

    with user_errors():
        study = read_set(set_file)
    if dry_run and (shard or merge):
        raise click.UsageError("--dry-run plans the whole set: give it without --shard or --merge")
    if dry_run:
        from medvqa.core.contamination.evalset import dry_run_study
        from medvqa.core.run.plan import plan_lines

        with user_errors():
            doc = dry_run_study(study)
        if as_json:
            print_json(doc)
        else:
            for plan in doc["plans"]:
                click.echo("\n".join(plan_lines(plan)))
            t = doc["total"]
            unknown = f" (and {t['cost_unknown']} experiments of unknown price)" if t["cost_unknown"] else ""
            click.echo(
                f"set: {t['experiments']} experiments, {t['pairs']} pairs, {t['recorded']} recorded, "
                f"{t['cached']} cached: {t['requests']} requests to send (and {t['preflight']} preflight); "
                f"{t['input_tokens']:,} input and {t['output_tokens']:,} output tokens, "
                f"${t['cost_usd']:.4f}{unknown}"
            )
            for f in doc["failed"]:
                click.echo(f"  cannot plan {f['experiment']}: {f['failure']}")
            c = doc.get("contamination") or {}
            if c.get("exam_dates"):
                split = ", ".join(f"{m} at {cut}" for m, cut in c["cutoffs"].items() if cut) or "none declared"
                click.echo(
                    f"then the exam-date curves of every experiment, from its records (no request): "
                    f"{' and '.join(c['files'])}; cutoffs: {split}"
                )
            for bench, q in (c.get("dcq") or {}).items():
                g = q["generator"]
                asks = ", ".join(f"{m} {e['requests']} ({e['cached']} cached)" for m, e in q["examinations"].items())
                click.echo(
                    f"then the Data Contamination Quiz of {bench} ({q['quiz']}, {q['n_items']} items): writing it "
                    f"({g['model']}) {g['requests']} requests; taking it: {asks}"
                )
        return
    say = None if as_json else (lambda line: click.echo(line, err=True))
    if say:
        say(f"eval set {set_file}: {len(study.experiments)} experiments under {study.study_dir}")
    from medvqa.core.run.interrupt import exit_on_second_interrupt

    from . import EXIT_INTERRUPTED

    if shard is not None:  # the shard read once, here (`auto`: from this process's scheduler variables)
        from medvqa.core.run.shards import parse_shard

        with user_errors():
            if merge:
                raise click.UsageError("give --shard (run one shard of the set) or --merge (join the shards), not both")
            shard = parse_shard(shard).label
    command_line = ["medvqa", "eval", set_file, *(["--shard", shard] if shard else [])]
    stopped = f"interrupted; every record written is kept: resume with: {' '.join(command_line)}"
    try:
        # its own SIGINT handler, as `run` has: a shell starts a background job with SIGINT ignored,
        # and `kill -INT` would not stop the set; a second one during the shutdown exits at once
        with exit_on_second_interrupt(lambda: stopped):
            result = run_eval_set(study, progress=say, command_line=command_line, shard=shard, merge=merge)
    except KeyboardInterrupt:
        click.echo(stopped, err=True)
        sys.exit(EXIT_INTERRUPTED)
    if as_json:
        print_json(result.as_json())
    else:
        if result.compare_text:
            click.echo(result.compare_text)
            click.echo(f"compare of the set: {study.study_dir / 'compare.md'} (and compare.json)")
        if result.contamination is not None:
            said = [
                what
                for key, what in (("exam_dates", "exam-date curves"), ("dcq", "Data Contamination Quiz"))
                if key in result.contamination
            ]
            click.echo(
                f"{' and '.join(said)} of the set: {study.study_dir / 'contamination.md'} (and contamination.json)"
            )
        for note in result.notes:
            click.echo(note)
        done = len(result.outcomes) - len(result.failed)
        click.echo(
            f"experiments: {done} of {len(result.outcomes)} done"
            + (f", {len(result.failed)} failed:" if result.failed else "")
        )
        for o in result.failed:
            click.echo(f"  {o.experiment.label} ({o.experiment.run_dir}): {o.failure}")
    if result.failed:
        sys.exit(EXIT_FAILED)

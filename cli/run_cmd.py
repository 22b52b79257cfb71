import sys

import click

from ._common import print_json, user_errors


@click.command("run")
@click.argument("benchmark")
@click.option("--model", "-m", required=True, help="random, constant:A, replay:FILE.jsonl, or a litellm model (openai/gpt-5, hosted_vllm/NAME).")
@click.option("--data", type=click.Path(path_type=str), help="Folder with the benchmark's data.")
@click.option("--sample", is_flag=True, help="Use the small sample bundled with the benchmark.")
@click.option("--split", help="Split to run (the benchmark's default when omitted).")
@click.option("--years", help="Comma-separated exam years, e.g. 2024,2025.")
@click.option("--professions", help="Comma-separated professions / subsets.")
@click.option("--conditions", default="C+Q,C+Q+I", show_default=True, help="Any of C, C+Q, C+I, C+Q+I.")
@click.option("--limit", type=int, help="Only the first N items.")
@click.option("--run-dir", type=click.Path(path_type=str), help="Run directory (default: runs/<benchmark>-<split>-<model>-<hash>). Re-running resumes it.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary on stdout, nothing else.")
def command(benchmark, model, data, sample, split, years, professions, conditions, limit, run_dir, seed,
            no_cache, as_json) -> None:
    """Run BENCHMARK on a model and write records to a run directory."""
    from medvqa.core.session import RunOptions, run

    with user_errors():
        options = RunOptions(
            benchmark=benchmark, model=model, data=data, sample=sample, split=split,
            years=[int(y) for y in years.split(",")] if years else None,
            professions=professions.split(",") if professions else None,
            conditions=conditions, limit=limit, run_dir=run_dir, seed=seed, cache=not no_cache,
            command_line=["medvqa", *sys.argv[1:]],
        )
        result = run(options, progress=not as_json)
    summary = result.summary()
    if as_json:
        print_json({k: summary[k] for k in ("run_dir", "n_items", "n_records", "n_excluded", "accuracy")})
        return
    click.echo(f"run directory: {summary['run_dir']}")
    click.echo(f"items: {summary['n_items']} ({summary['n_excluded']} excluded), records: {summary['n_records']} "
               f"(requested {summary['requested']}, from cache {summary['cache_hits']})")
    for cond, acc in sorted(summary["accuracy"].items()):
        click.echo(f"  {cond:<8} accuracy {100 * acc:.1f}%")
    click.echo(f"tables: medvqa report {summary['run_dir']}")

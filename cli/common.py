"""Small helpers shared by commands, built-in or added by a plugin (`medvqa.commands`): errors
as clean messages, JSON output, a run's summary."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import click

# The exit status of a command that asks a model (run, score --extractor, judge) when the model,
# its credentials or its server fail the preflight request; besides 0, 1 (bad input or data) and
# 2 (bad usage).
EXIT_PREFLIGHT = 3
# The exit status of `medvqa run` when the run finished but its errors exceed --max-error-rate, or
# no request succeeded.
EXIT_UNTRUSTED = 4


class ExitWith(click.ClickException):
    """A one-line error with its own exit status."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


@contextmanager
def user_errors():
    """Turn data and file-system errors into a one-line message (no traceback) and exit status
    1, and a value that cannot be used (`UsageError`: an unknown condition, benchmark or
    `--select` field) into a usage error, status 2. Messages are scrubbed of credentials."""
    from medvqa.core.errors import UsageError
    from medvqa.core.inference.secrets import scrub
    from medvqa.core.items import DataError
    from medvqa.core.plugins import PluginError

    try:
        yield
    except UsageError as exc:
        raise click.UsageError(printable(scrub(str(exc))), ctx=click.get_current_context(silent=True)) from None
    except (DataError, PluginError, KeyError, ValueError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise click.ClickException(printable(scrub(str(msg)))) from None
    except OSError as exc:  # a disk full, a file we may not read or write
        where = f"{exc.filename}: " if exc.filename else ""
        raise click.ClickException(printable(scrub(f"{where}{exc.strerror or exc}"))) from None


@contextmanager
def analysis():
    """`user_errors` for a command that reads whole runs (audit, compare, score, report): the
    cyclic collector stays off while it runs. Its records and items hold no cycles, and the
    collector's passes over their large heap would otherwise cost a third of the command's time."""
    import gc

    from medvqa.core.run.store import gc_paused

    with user_errors(), gc_paused():
        yield
        # what the command built and still holds is left out of the collector's later passes (it is
        # freed by reference counting as ever): one pass over it all as the collector resumes costs
        # a tenth of the command
        gc.freeze()


def printable(text: str) -> str:
    """`text` with lone surrogates (which no terminal encoding holds) written as `\\udXXX`."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def print_json(data) -> None:
    sys.stdout.write(printable(json.dumps(data, ensure_ascii=False, indent=1, default=str, allow_nan=False)) + "\n")


def print_run_summary(summary: dict) -> None:
    """What `medvqa run` prints after a run: the run directory, items and records, per condition
    n, accuracy with its 95 % CI and every status, and the error rate. Also for a run written
    another way (`medvqa import`: `medvqa.write_run`'s summary), whose lines about requests,
    tokens or the error threshold are left out when the summary has no such field."""
    click.echo(f"run directory: {summary['run_dir']}")
    made = f" (requested {summary['requested']}, from cache {summary['cache_hits']})" if "requested" in summary else ""
    click.echo(f"items: {summary['n_items']} ({summary['n_excluded']} excluded), records: {summary['n_records']}{made}")
    if summary.get("n_image_fallback"):
        click.echo(
            f"image items without a usable image file: {summary['n_image_fallback']} "
            "(asked without their images only; no C+I or C+Q+I record)"
        )
    usage = summary.get("usage") or {}
    if any(usage.values()):
        cost = f", cost ${summary['cost_usd']:.4f}" if summary.get("cost_usd") else ""
        thought = f" (of which {usage['reasoning_tokens']:,} reasoning)" if usage.get("reasoning_tokens") else ""
        click.echo(
            f"tokens: {usage['prompt_tokens']:,} prompt + {usage['completion_tokens']:,} completion{thought}{cost}"
        )
    if summary.get("reading"):
        click.echo(f"reading: {summary['reading']} (--reading strict|assisted switches; docs/scoring.md)")
    click.echo(condition_table(summary["conditions"]))
    if summary.get("repeats"):
        click.echo(repeats_table(summary["repeats"]))
    for cond, u in (summary.get("usage_by_condition") or {}).items():
        thought = f" ({u['reasoning_tokens']:,} reasoning)" if u.get("reasoning_tokens") else ""
        cost = f", ${u['cost_usd']:.4f}" if u.get("cost_usd") else ""
        click.echo(
            f"  {cond}: {u['prompt_tokens']:,} prompt + {u['completion_tokens']:,} completion tokens{thought}{cost}"
        )
    if summary.get("n_held_out"):
        click.echo(
            f"held-out records (answers withheld, not scored): {summary['n_held_out']}; "
            f"medvqa export {summary['run_dir']} writes them for evaluation"
        )
    threshold = (
        f"; --max-error-rate {100 * summary['max_error_rate']:g}%"
        if summary.get("max_error_rate") is not None and summary["max_error_rate"] < 1
        else ""
    )
    click.echo(
        f"errors: {summary['errors']} of {summary['n_records']} records ({100 * summary['error_rate']:.1f}%{threshold})"
    )
    for line in summary.get("warnings") or ():
        click.echo(line)
    click.echo(f"tables: medvqa report {summary['run_dir']}")


def condition_table(conditions: dict[str, dict]) -> str:
    """Per condition: n (and, for a run with repeats, the items its interval is over), accuracy
    with its 95 % CI, and every status."""
    from medvqa.core.metrics import READINGS
    from medvqa.core.results import STATUSES

    # the other reading's accuracy, where an extractor read some replies (`assisted_*` or `strict_*`)
    other = next((r for r in READINGS if any(c.get(f"{r}_accuracy") is not None for c in conditions.values())), None)
    # records the benchmark's rules leave out of every denominator (withdrawn items), where there are any
    uncounted = any(c.get("uncounted") for c in conditions.values())
    repeated = any(c.get("repeats") for c in conditions.values())  # n counts item × repeat; the CI is over items
    w = max([11, *(len(c) + 2 for c in conditions)])  # variant labels (C+Q+I~downscale) are longer
    lines = [
        f"  {'condition':<{w}}{'n':>6}"
        + (f"  {'items':>6}" if repeated else "")
        + f"  {'accuracy':>8}  {'95% CI':<13}"
        + "".join(f"  {s}" for s in STATUSES)
        + ("  uncounted" if uncounted else "")
        + (f"  {other} accuracy (extracted)" if other else "")
    ]
    for cond, c in conditions.items():  # in the metrics layer's order: C, C+Q, C+I, C+Q+I
        ci = f"{100 * c['ci'][0]:.1f}–{100 * c['ci'][1]:.1f}%" if c["ci"] else "-"
        acc = f"{100 * c['accuracy']:.1f}%" if c["accuracy"] is not None else "-"
        extra = (
            f"  {100 * c[f'{other}_accuracy']:.1f}% ({c['extracted']})"
            if other and c.get(f"{other}_accuracy") is not None
            else "  -"
            if other
            else ""
        )
        items = f"  {c.get('n_items') or '-':>6}" if repeated else ""
        lines.append(
            f"  {cond:<{w}}{c['n']:>6}{items}  {acc:>8}  {ci:<13}"
            + "".join(f"  {c[s]:>{len(s)}}" for s in STATUSES)
            + (f"  {c.get('uncounted', 0):>9}" if uncounted else "")
            + extra
        )
    if repeated:
        lines.append("  (n counts item × repeat; the 95% CI is item-level: each item's mean over its repeats)")
    return "\n".join(lines)


def repeats_table(repeats: dict) -> str:
    """The numbers over a run's repeats (`core.repeat_metrics.repeat_numbers`): per condition the mean,
    the between-repeat SD, the item-level interval and each repeat's value; Δimg likewise."""

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    def pp(x):
        return "-" if x is None else f"{100 * x:+.1f} pp"

    def ci(c, fmt):
        return f"{fmt(c[0])} to {fmt(c[1])}" if c else "-"

    w = max([11, *(len(c) + 2 for c in repeats["conditions"])])
    lines = [
        f"over {repeats['repeats']} repeats (interval: {repeats['method']}):",
        f"  {'condition':<{w}}{'items':>6}  {'mean':>7}  {'SD':>7}  {'95% CI':<17}  per repeat",
    ]
    for cond, c in repeats["conditions"].items():
        sd = "-" if c["between_repeat_sd"] is None else f"{100 * c['between_repeat_sd']:.1f}"
        lines.append(
            f"  {cond:<{w}}{c['n_items']:>6}  {pct(c['mean']):>7}  {sd:>7}  {ci(c['ci'], pct):<17}  "
            + " ".join(pct(v) for v in c["per_repeat"])
        )
    if repeats.get("delta_img"):
        lines.append("  " + delta_line("Δimg (C+Q+I − C+Q)", repeats["delta_img"]))
    return "\n".join(lines)


def delta_line(name: str, d: dict) -> str:
    """One paired factor over repeats (`core.repeats.paired_repeats`) on one line."""

    def pp(x):
        return "-" if x is None else f"{100 * x:+.1f} pp"

    pooled = d["pooled"]
    ci = f" [{pp(pooled['ci'][0])}, {pp(pooled['ci'][1])}]" if pooled["ci"] else ""
    sd = "" if d["between_repeat_sd"] is None else f", SD {100 * d['between_repeat_sd']:.1f} pp"
    return f"{name}: pooled {pp(pooled['delta'])}{ci} on {pooled['n_items']} items{sd}; per repeat " + " ".join(
        pp(r["delta"]) for r in d["per_repeat"]
    )


def benchmarks_where(applies: Callable[[Any], bool]) -> list[str]:
    """The names of the installed benchmarks for which `applies(benchmark)` is true."""
    from medvqa.core import plugins

    try:
        found = plugins.benchmarks()
    except plugins.PluginError:
        return []
    names = []
    for name, reg in sorted(found.items()):
        try:
            if applies(reg.obj):
                names.append(name)
        except Exception:  # a plugin's benchmark that cannot answer: help still prints
            continue
    return names


class BenchmarkOption(click.Option):
    """An option that only some benchmarks use: its help ends with the installed benchmarks
    `applies(benchmark)` accepts, found when the help is shown."""

    def __init__(self, *args, applies: Callable[[Any], bool], **kwargs):
        super().__init__(*args, **kwargs)
        self.applies = applies

    def get_help_record(self, ctx: click.Context):
        record = super().get_help_record(ctx)
        if record is None:
            return None
        names = benchmarks_where(self.applies)
        return record[0], f"{record[1]} [benchmarks: {', '.join(names) or 'none installed'}]"


def keyword_option_name(keyword: str) -> str:
    """The `medvqa run` option of a benchmark's selection keyword: `image_types` → `--image-types`."""
    return "--" + keyword.replace("_", "-")


class SelectionOption(BenchmarkOption):
    """`--KEYWORD V1,V2`: a selection keyword that installed benchmarks declare
    (`Benchmark.selection_keywords`), a shorthand for `--select FIELD=V1,V2` on the field the
    chosen benchmark names. Its help names the field of each benchmark that declares it."""

    def __init__(self, keyword: str):
        super().__init__(
            [keyword_option_name(keyword), keyword],
            metavar="V1,V2",
            applies=lambda b: keyword in b.selection_keywords,
            help="Comma-separated values, a shorthand for --select (the benchmark's own keyword):",
        )
        self.keyword = keyword

    def get_help_record(self, ctx: click.Context):
        from medvqa.core import plugins

        record = click.Option.get_help_record(self, ctx)
        fields: dict[str, list[str]] = {}
        for name in benchmarks_where(self.applies):
            fields.setdefault(plugins.benchmarks()[name].obj.selection_keywords[self.keyword], []).append(name)
        where = "; ".join(f"--select {field}=... [benchmarks: {', '.join(names)}]" for field, names in fields.items())
        return record[0], f"{record[1]} {where or '[benchmarks: none installed]'}"


def keyword_options(taken: set[str]) -> list[SelectionOption]:
    """An option for every selection keyword the installed benchmarks declare, in the order they
    declare them; a keyword whose option name is in `taken` (another option of `medvqa run`)
    is left out with a message, and stays a keyword of `load`."""
    from medvqa.core import plugins

    try:
        found = plugins.benchmarks()
    except plugins.PluginError:  # the run itself reports it
        return []
    keywords = dict.fromkeys(k for _, reg in sorted(found.items()) for k in reg.obj.selection_keywords)
    for keyword in [k for k in keywords if keyword_option_name(k) in taken]:
        if keyword not in _told:
            _told.add(keyword)
            click.echo(
                f"medvqa: the selection keyword {keyword!r} has no option: {keyword_option_name(keyword)} "
                "is taken (use --select)",
                err=True,
            )
        del keywords[keyword]
    return [SelectionOption(k) for k in keywords]


_told: set[str] = set()


class SelectionCommand(click.Command):
    """`medvqa run`: its own options and one per selection keyword of the installed benchmarks,
    found when the command line is read (so `medvqa --help` loads no benchmark)."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        help_option = self.get_help_option(ctx)
        own = [p for p in params if p is not help_option]
        extra = keyword_options({o for p in own for o in p.opts})
        return [*own, *extra, *([help_option] if help_option is not None else [])]


def selections(benchmark: str, pairs: tuple[str, ...], keywords: dict[str, str | None]) -> dict[str, list[str]] | None:
    """`--select FIELD=V1,V2` pairs and the selection keyword options as {field: [values]}, each
    keyword under the field `benchmark` declares for it (`Benchmark.keyword_selection`)."""
    out: dict[str, list[str]] = {}
    for pair in pairs:
        field, sep, values = pair.partition("=")
        if not sep or not field.strip() or not values.strip():
            raise click.BadParameter(f"expected FIELD=VALUE[,VALUE...], got {pair!r}", param_hint="--select")
        out.setdefault(field.strip(), []).extend(v.strip() for v in values.split(",") if v.strip())
    given = {k: [v.strip() for v in text.split(",") if v.strip()] for k, text in keywords.items() if text}
    if given:
        from medvqa.core import plugins

        out = plugins.get_benchmark(benchmark).keyword_selection(out, **given)
    return out or None


def progress_display():
    """The progress display `medvqa run` shows on stderr (rich on a terminal, plain lines
    elsewhere, rarer ones in a notebook): a context manager, called with the progress state
    {done, total, errors, cached, backend: {}, conditions: {name: {done, total}}}."""
    from medvqa.core.run.progress import for_stderr

    return for_stderr()


# `--reading` of every command that shows numbers: the headline's reading (the other beside it)
reading_option = click.option(
    "--reading",
    type=click.Choice(["strict", "assisted"]),
    default=None,
    help="The reading of the headline numbers: strict (the rules alone) or assisted (an extractor's answer "
    "where the rules could not read a reply: medvqa score --extractor, or a published extractor's). "
    "Default: the benchmark's protocol's (docs/scoring.md); the other reading is shown beside it.",
)

# `--model-name` of every command that writes a run (run, the imports): the name runs pair and compare by
model_name_option = click.option(
    "--model-name",
    metavar="NAME",
    help="The name the model goes by in tables, pairing (image, language) and compare (default: the model string, "
    "kept beside it in the manifest): runs of one model under two strings pair when they share it.",
)

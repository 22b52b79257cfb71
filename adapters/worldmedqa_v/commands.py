"""`medvqa import worldmedqa_v TABLE --run-dir OUT`: a VLMEvalKit prediction table of
WorldMedQA-V (the authors' published outputs) as a normal run directory, its items taken from
the table; `medvqa import worldmedqa_v FOLDER --run-dir OUT`: every table under the folder, one
run directory each."""

from __future__ import annotations

import time
from pathlib import Path

import click

from medvqa.commands import model_name_option, print_json, print_run_summary, progress_display, user_errors
from medvqa.metrics import READINGS


@click.command("worldmedqa_v")
@click.argument("table", type=click.Path(exists=True, path_type=str))
@click.option(
    "--data",
    type=click.Path(exists=True, file_okay=False, path_type=str),
    help="WorldMedQA-V's tables (the questions the predictions answer), to check the table against; "
    "default: the items the table itself carries.",
)
@click.option(
    "--run-dir",
    required=True,
    type=click.Path(path_type=str),
    help="The run directory to write; for a folder, the directory under which each table's run goes "
    "(<model>/<country>_<local|english>_<image|blind>).",
)
@click.option(
    "--language",
    type=click.Choice(["local", "en", "english", "pt", "he", "ja", "es"], case_sensitive=False),
    help="The language the items were asked in: local (the country's: pt, he, ja, es) or en (default: from "
    "the file name, _english → en).",
)
@click.option(
    "--condition",
    type=click.Choice(["C+Q", "C+Q+I"]),
    help="C+Q+I with the image, C+Q without (default: C+Q for a table under outputs_blind/, else C+Q+I).",
)
@click.option(
    "--country",
    type=click.Choice(["brazil", "israel", "japan", "spain"]),
    help="The country of the items (default: from the file name).",
)
@click.option(
    "--model", help="Model name for the manifest (default: from the file name, GPT4o_japan_local.xlsx → GPT4o)."
)
@model_name_option
@click.option(
    "--convention",
    type=click.Choice(["vlmevalkit-exact", "vlmevalkit"]),
    help="vlmevalkit-exact (default): VLMEvalKit's exact matching alone, the rest parse failures (read "
    "by the published extractor where the table has one); vlmevalkit: medvqa's chain reads what "
    "matching cannot.",
)
@click.option(
    "--sheet",
    metavar="NAME",
    help="The sheet of an XLSX workbook to read (default: the first; with several, "
    "stderr says which was read and names the others).",
)
@click.option(
    "--max-response-bytes",
    type=click.IntRange(min=1),
    help="What a record keeps of a reply (default 262144, 256 KiB), as in medvqa run; a longer one is cut "
    "and marked truncated.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary on stdout, nothing else.")
@click.option(
    "--reading",
    type=click.Choice(READINGS),
    help="The summary's headline reading (default: assisted, the protocol's: matching, then the published "
    "extractor's option; the strict reading is shown beside it).",
)
def worldmedqa_v(
    table,
    data,
    run_dir,
    language,
    condition,
    country,
    model,
    model_name,
    convention,
    sheet,
    max_response_bytes,
    as_json,
    reading,
) -> None:
    """A VLMEvalKit prediction table (XLSX, CSV or TSV with index and prediction), scored the way
    VLMEvalKit's multiple-choice matching reads answers, and compared with the verdicts published
    in it; or every such table under a folder (TABLE a folder), one run directory each."""
    from .importer import import_folder, import_table

    if Path(table).is_dir():
        given = {
            "--language": language,
            "--condition": condition,
            "--country": country,
            "--model": model,
            "--model-name": model_name,
            "--sheet": sheet,
            "--data": data,
        }
        if named := [k for k, v in given.items() if v]:
            raise click.UsageError(
                f"{', '.join(named)}: for one table; a folder's tables each say theirs in their path"
            )
        start = time.monotonic()
        with user_errors():
            if as_json:
                doc = import_folder(
                    Path(table),
                    Path(run_dir),
                    convention=convention,
                    reading=reading,
                    max_response_bytes=max_response_bytes,
                )
            else:
                with progress_display() as show:
                    doc = import_folder(
                        Path(table),
                        Path(run_dir),
                        convention=convention,
                        reading=reading,
                        progress=show,
                        max_response_bytes=max_response_bytes,
                    )
        doc["wall_s"] = round(time.monotonic() - start, 2)
        if as_json:
            print_json(doc)
        else:
            print_folder_summary(doc)
        return
    with user_errors():
        summary = import_table(
            Path(table),
            Path(data) if data else None,
            Path(run_dir),
            language=language,
            condition=condition,
            country=country,
            model=model,
            model_name=model_name,
            convention=convention,
            reading=reading,
            sheet=sheet,
            max_response_bytes=max_response_bytes,
        )
    if as_json:
        print_json(summary)
        return
    click.echo(
        f"model {summary['model']}, {summary['country']}, language {summary['language']}, condition "
        f"{summary['condition']}, convention {summary['convention']}"
    )
    frm = summary["items_from"]
    click.echo(f"items: from the table ({frm['rows']} rows)" if "file" in frm else f"items: from {frm['data']}")
    if summary["n_extractor"]:
        click.echo(
            f"{summary['n_extractor']} replies matching could not read are read by the published extractor "
            "(assisted accuracy)"
        )
    print_run_summary(summary)
    for line in reconciliation_lines(summary):
        click.echo(line)
    click.echo(f"audit: medvqa audit {summary['run_dir']} <the run of the other language or condition>")


def reconciliation_lines(summary: dict) -> list[str]:
    """The published accuracy beside medvqa's, each named difference, each finding."""
    lines = []
    pub = summary.get("published")
    if pub:
        lines.append(
            f"published: {pub['accuracy']:.4f} ({pub['correct']} of {pub['n']}, {pub['source']}); medvqa "
            f"assisted {pub['medvqa_assisted_correct']}, strict {pub['medvqa_strict_correct']} "
            f"({pub['difference']:+d} items)"
        )
    for d in summary.get("differences", []):
        shown = ", ".join(d["items"][:5]) + (", ..." if len(d["items"]) > 5 else "")
        kind = "difference" if d.get("verdicts_differ", True) else "note"  # a note changes no verdict
        lines.append(f"{kind} [{d['cause']}]: {d['message']}" + (f" ({shown})" if shown else ""))
    for f in summary.get("findings", []):
        lines.append(f"{f['level']}: {summary['file']}: record {f['record']}: [{f['rule']}] {f['message']}")
    return lines


def print_folder_summary(doc: dict) -> None:
    """One table: a line per run (published vs medvqa, the differences named), then the totals."""
    header = ("model", "country", "lang", "cond", "n", "published", "assisted", "strict", "Δ", "named differences")
    rows = []
    for s in doc["runs"]:
        pub = s.get("published") or {}
        cell = s["conditions"][s["condition"]]
        rows.append(
            (
                s["model"],
                s["country"],
                s["language"],
                s["condition"],
                str(cell["n"]),
                f"{pub['accuracy']:.4f}" if pub else "-",
                str(pub.get("medvqa_assisted_correct", cell.get("assisted_correct", cell["correct"]))),
                str(pub.get("medvqa_strict_correct", cell.get("strict_correct", cell["correct"]))),
                f"{pub['difference']:+d}" if pub else "-",
                "; ".join(f"{d['cause']} {d['n']}" for d in s["differences"]) or "-",
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        click.echo("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    causes: dict[str, list] = {}
    for s in doc["runs"]:
        for d in s["differences"]:
            causes.setdefault(d["cause"], []).append(d)
    for cause, ds in causes.items():  # each cause once: its message names the rows of one table
        n = sum(d["n"] for d in ds)
        click.echo(
            f"[{cause}] in {len(ds)} table{'s' * (len(ds) != 1)}, {n} row{'s' * (n != 1)}; e.g. {ds[0]['message']}"
        )
    findings: dict[tuple, list] = {}
    for s in doc["runs"]:
        for f in s["findings"]:
            findings.setdefault((f["rule"], f["record"], tuple(f.get("items", ()))), []).append(f)
    for (rule, record, _), fs in findings.items():
        click.echo(
            f"{fs[0]['level']}: [{rule}] {record} in {len(fs)} table{'s' * (len(fs) != 1)}: "
            f"{fs[0]['message'].split('; listed')[0]}"
        )
    click.echo(
        f"{len(doc['runs'])} imported, {len(doc['skipped'])} already imported (skipped), "
        f"{len(doc['passed_over'])} passed over, in {doc['wall_s']:.1f} s"
    )
    for p in doc["passed_over"]:
        click.echo(f"passed over: {p['file']}: {p['reason']}")

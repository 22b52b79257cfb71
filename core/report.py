"""The Python form of `medvqa report` (`medvqa.report`): what the command shows for a run,
returned instead of printed. `report` chooses one of four reports, each its own function here:
accuracy by condition (and strata), the benchmark's official table set, its pass lines, and the
agreement of its judges. Heavy modules are imported inside the functions, so `import medvqa`
stays fast."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from .api import installed_benchmark, names

if TYPE_CHECKING:
    from typing import TypeAlias

    import pandas as pd

    from .benchmark import Benchmark

    # What `report` returns: a DataFrame (accuracy, pass lines), {table name: DataFrame} (a table
    # set), the JSON document `--json` prints (a mapping; for accuracy, its list of rows), or text.
    Report: TypeAlias = pd.DataFrame | dict[str, pd.DataFrame] | dict[str, Any] | list[dict[str, Any]] | str


def report(
    run_dir: str | Path,
    *,
    by: str | Iterable[str] | None = None,
    table: str | None = None,
    pass_lines: bool = False,
    judges: bool = False,
    fmt: str | None = None,
    reading: str | None = None,
) -> Report:
    """What `medvqa report` shows for a run: accuracy by condition (and `by` strata; without
    `by`, then by each of the benchmark's default strata, `by=""` for by condition only), or
    the benchmark's own `table` set, or its `pass_lines`, or the agreement of its `judges`.

    Without `fmt`, as DataFrames, like `records` and `compare`: the accuracy table as one
    DataFrame (the rows `--json` prints, the other reading's columns flat beside the headline's),
    a table set as {table name: DataFrame} (each with its `title`, `notes` and `reading` in
    `.attrs`), pass lines as one DataFrame (one row per exam × criterion; `convention`, `notes`,
    `reading` in `.attrs`); the judges' agreement stays the document `--json` prints. With
    `fmt="json"` the parsed JSON document `--json` prints; `md`, `csv`, `latex`, `text` or `html`
    give the text. The headline numbers use `reading` ("strict" or "assisted"; None: the
    benchmark's protocol's, `Benchmark.reading`), the other reading beside them; each row or
    table names it. A run imported from published results that carries their accuracy (the
    manifest's `imported.published`, per condition) shows it beside them on the rows by condition
    (`published_accuracy`, `published_correct`)."""
    run_dir = Path(run_dir)
    if sum(map(bool, (table, pass_lines, judges))) > 1:
        raise ValueError(
            "ask for either the benchmark's tables (--table), its pass lines (--pass) or its judges' "
            "agreement (--judges), not several"
        )
    if judges:
        return judges_report(run_dir, fmt)
    if pass_lines:
        return pass_lines_report(run_dir, fmt, reading)
    saved = ReadRecords.of(run_dir, reading)
    if table:
        return table_set_report(saved, table, fmt)
    return by_condition_report(saved, by, fmt)


def judges_report(run_dir: Path, fmt: str | None) -> dict[str, Any] | str:
    """The agreement of a run's judges (`report(judges=True)`): each judge's accuracy and each
    pair's agreement, as the document `--json` prints, or as text in `fmt`. A run no judge read
    is an error that says how to judge it."""
    from .run.store import read_records
    from .scoring.judge import agreement_tables, judge_agreement

    doc = judge_agreement(read_records(run_dir))
    if not doc["n_judged"]:
        raise ValueError(
            f"{run_dir}: no record was judged, so no judge has an accuracy or an agreement; "
            f"`medvqa judge {run_dir} --judge MODEL` (or `medvqa run ... --judge MODEL`) judges them"
        )
    return doc if fmt in (None, "json") else agreement_tables(doc).render(fmt)


def pass_lines_report(run_dir: Path, fmt: str | None, reading: str | None) -> pd.DataFrame | dict[str, Any] | str:
    """The benchmark's pass lines for a run (`report(pass_lines=True)`), on its whole exams where
    the benchmark judges whole exams: without `fmt` one DataFrame of the rows `--json` prints
    (the rest of the document in `.attrs`), with `fmt="json"` that document, else text. A
    plugin's untyped pass report has no rows to frame: its document, or its own text."""
    from .passlines import PassLines, PassVerdict
    from .run.saved import read_run, whole_exam_items

    saved = read_run(run_dir).read_as(reading)
    items = whole_exam_items(saved) if saved.benchmark.pass_on_whole_exams else list(saved.items.values())
    result = saved.benchmark.pass_report(items, saved.records)
    if result is None:
        raise ValueError(f"benchmark {saved.benchmark.name} ships no pass criteria")
    if isinstance(result, PassLines):
        result.reading = saved.reading
        if fmt is None:  # the rows `--json` prints, field by field (`unit` says points or share)
            import pandas as pd

            doc = result.as_json()
            frame = pd.DataFrame(doc.pop("rows"), columns=list(PassVerdict.model_fields))
            frame.attrs.update(doc)
            return frame
    if fmt in (None, "json"):  # an untyped report has no rows to frame: its document
        return result.as_json()
    return result.render(fmt) if isinstance(result, PassLines) else result.text()  # text(): an untyped report


class ReadRecords(NamedTuple):
    """A run's records as a reading reads them, with its manifest and its installed benchmark:
    what the table set and the accuracy tables count."""

    run_dir: Path
    manifest: dict[str, Any]
    benchmark: Benchmark | None  # None: its plugin is not installed (the records still read, strictly)
    reading: str
    records: list[dict[str, Any]]

    @classmethod
    def of(cls, run_dir: Path, reading: str | None) -> ReadRecords:
        """The records of `run_dir` as `reading` reads them (None: the benchmark's protocol's)."""
        from . import metrics
        from .run.store import read_manifest, read_records

        manifest = read_manifest(run_dir)
        bench = installed_benchmark(manifest)
        reading = metrics.reading_of(bench, reading)
        # dicts: read_records' own, or the new ones assisted_record makes (`read` says Mapping)
        records = cast("list[dict[str, Any]]", metrics.read(read_records(run_dir), reading))
        return cls(run_dir, manifest, bench, reading, records)


def table_set_report(saved: ReadRecords, table: str, fmt: str | None) -> dict[str, pd.DataFrame] | dict[str, Any] | str:
    """The benchmark's official table set `table` (`report(table=...)`): without `fmt`
    {table name: DataFrame} (each with its `title`, `notes` and `reading` in `.attrs`), with
    `fmt="json"` the document `--json` prints, else text. A plugin's own table object (not a
    `Tables`) gives the document it renders."""
    from .render import Tables

    bench = saved.benchmark
    if bench is None:
        raise ValueError(f"benchmark {saved.manifest['benchmark']!r} is not installed: no table set")
    tables = bench.report_tables(saved.records, saved.manifest)
    if tables is None or table.lower() != bench.name:
        raise ValueError(
            f"no table set {table!r} for this {bench.name} run"
            + (f"; its table set is {bench.name!r}" if tables is not None else "")
        )
    tables.reading = saved.reading
    if fmt is None and isinstance(tables, Tables):
        for t in tables.tables:
            t.frame.attrs.update(title=t.title, notes=list(t.notes), reading=saved.reading)
        return {t.name: t.frame for t in tables.tables}
    text = tables.render(fmt or "json")  # a plugin's own table object: the document it renders
    return json.loads(text) if fmt in (None, "json") else text


def by_condition_report(
    saved: ReadRecords, by: str | Iterable[str] | None, fmt: str | None
) -> pd.DataFrame | list[dict[str, Any]] | str:
    """Accuracy by condition and the strata `by` names (`report`'s default): without `fmt` one
    DataFrame of every grouping's rows (`reading` in `.attrs`), with `fmt="json"` those rows as
    JSON values, `csv` them as one CSV; any other format one table per grouping, each with its
    own columns and heading."""
    from .render import Table, Tables, render

    groupings = report_groupings(saved, by)
    frames = accuracy_tables(saved, groupings)
    if fmt not in (None, "csv", "json"):  # one table per grouping, each with its own columns and heading
        return Tables(
            [
                Table(
                    "by " + " and ".join(["condition", *fields]),
                    "Accuracy by " + " and ".join(["condition", *fields]),
                    t,
                )
                for fields, t in zip(groupings, frames)
            ]
        ).render(fmt)
    import pandas as pd

    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if fmt is None:
        frame.attrs["reading"] = saved.reading
        return frame
    text = render(frame, fmt)
    return json.loads(text) if fmt == "json" else text


def report_groupings(saved: ReadRecords, by: str | Iterable[str] | None) -> list[list[str]]:
    """The record fields of each accuracy table, beside the condition: those of the strata `by`
    names (an unknown one is an error naming the fields there are), else none, then each of the
    benchmark's default strata the records hold, one by one."""
    from .metrics import held_fields, resolve_fields

    bench = saved.benchmark
    aliases = bench.stratum_aliases if bench else {}
    if by is not None:
        return [list(resolve_fields(names(by), saved.records, str(saved.run_dir), aliases).values())]
    held, _ = held_fields(bench.default_strata if bench else (), saved.records, aliases)
    return [[]] + [[f] for f in held.values()]


def accuracy_tables(saved: ReadRecords, groupings: Sequence[list[str]]) -> list[pd.DataFrame]:
    """One accuracy table per grouping (`metrics.table`). The table by condition alone also holds
    the numbers over repeats (a run asked `--repeats` K times), the tokens and cost per condition
    where the records hold them, and, for a run imported from published results, the published
    accuracy beside medvqa's."""
    from . import metrics
    from .repeat_metrics import repeat_numbers, with_repeat_columns
    from .usage import usage_by_condition, usage_columns

    bench, recs, reading = saved.benchmark, saved.records, saved.reading
    excluded = saved.manifest.get("excluded") or []
    frames = [metrics.table(recs, fields, bench, excluded, reading) for fields in groupings]
    if (repeated := repeat_numbers(recs, bench, reading)) is not None:  # a run asked --repeats K times
        frames = [with_repeat_columns(f, repeated) if not fields else f for f, fields in zip(frames, groupings)]
    if used := usage_by_condition(recs):  # tokens and cost per condition, where the records hold them
        frames = [usage_columns(f, used) if not fields else f for f, fields in zip(frames, groupings)]
    published = (saved.manifest.get("imported") or {}).get("published") or {}
    for fields, frame in zip(groupings, frames):
        if published and not fields:  # an import of published results: the published accuracy beside medvqa's
            add_published(frame, published)
    return frames


def add_published(frame: pd.DataFrame, published: Mapping[str, Any]) -> None:
    """Beside each condition of a table by condition, the accuracy and correct count the
    published results give for it (and the artifact they come from, where any names one)."""
    import pandas as pd

    frame["published_accuracy"] = [(published.get(c) or {}).get("accuracy") for c in frame["condition"]]
    frame["published_correct"] = pd.array(
        [(published.get(c) or {}).get("correct") for c in frame["condition"]], dtype="Int64"
    )
    if any((published.get(c) or {}).get("artifact") for c in frame["condition"]):
        frame["published_artifact"] = [(published.get(c) or {}).get("artifact") for c in frame["condition"]]

"""The Python form of each command: what `medvqa run`, `audit` and `compare` compute, returned
instead of printed (the commands call these and print; `report` has its own module,
`core/report.py`). Heavy modules are imported inside the functions, so `import medvqa` stays
fast.

`names` reads a list given as a comma-separated string or as a list, as the command line's
comma-separated options are given; the commands read theirs through it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pandas as pd

    from .benchmark import Benchmark
    from .items import Item
    from .run.evalset import EvalSet
    from .run.evalset_run import EvalResult
    from .scoring.score import Score


def load(
    benchmark: str,
    path: str | Path | None = None,
    split: str | None = None,
    *,
    language: str | None = None,
    **options: Any,
) -> list[Item]:
    """Items of a registered benchmark (`medvqa list` shows them), in one of its languages
    (`language`; its first when None). `select={"year": [2024]}` chooses items by stratum; each
    field's values may be a list, one value or a comma-separated string."""
    from .plugins import get_benchmark

    if options.get("select"):
        options["select"] = _selection(options["select"])
    bench = get_benchmark(benchmark).with_language(language)
    return bench.load(Path(path) if path is not None else None, split, **options)


def score(item: Item, response_text: str | None, *, error: str | None = None, saved: bool = False) -> Score:
    """Read a raw model response under the registered language patterns and the answer
    conventions of the item's benchmark, and score it. `saved` marks a prediction saved in the
    benchmark's own format rather than a model's reply (docs/scoring.md)."""
    from .plugins import answer_patterns, benchmarks
    from .scoring.conventions import AnswerConventions
    from .scoring.score import score as _score

    registered = benchmarks().get(item.benchmark)
    conventions = registered.obj.answer_conventions() if registered else AnswerConventions()
    return _score(item, response_text, error=error, patterns=answer_patterns(), conventions=conventions, saved=saved)


class RunOutcome(NamedTuple):
    """What `run` returns: the run directory and the run's summary (what `medvqa run --json`
    prints, and more)."""

    run_dir: Path
    summary: dict[str, Any]


def run(benchmark: str, model: str, *, progress: bool = True, **options: Any) -> RunOutcome:
    """Run `benchmark` on `model`, as `medvqa run` does, and return the run directory and its
    summary. `options` are `medvqa run`'s options in Python spelling (`sample=True`,
    `conditions="C+Q,C+Q+I"` or `["C+Q", "C+Q+I"]`, `select={"year": [2024, 2025]}`,
    `run_dir=...`, `limit=...`) and `backend_options={...}` for the
    backend's (`{"temperature": 0.2, "api_base": ["http://..."]}`)."""
    from dataclasses import fields

    from .run.options import RunOptions
    from .run.options import run as run_session

    accepted = {f.name for f in fields(RunOptions)} - {"benchmark", "model"}
    if unknown := sorted(set(options) - accepted):
        raise TypeError(
            f"medvqa.run() got unknown options {', '.join(unknown)}; accepted: {', '.join(sorted(accepted))}"
        )
    # what the command line takes comma-separated (or repeated) takes a string or a list here
    if options.get("conditions") is not None:
        options["conditions"] = ",".join(names(options["conditions"]))
    if options.get("select"):
        options["select"] = _selection(options["select"])
    if isinstance(options.get("judges"), str):
        options["judges"] = names(options["judges"])
    if options.get("backend_options"):  # typed as `medvqa run -M` types them ("IN,OUT" for a price, ...)
        from .inference.backend_options import resolve

        options["backend_options"] = resolve(model, {}, options["backend_options"], given_as="backend_options[{!r}]")
    call = ", ".join([repr(benchmark), repr(model), *(f"{k}={v!r}" for k, v in options.items())])
    # recorded in the manifest, and printed as the command that resumes an interrupted run
    options.setdefault("command_line", ["python", "-c", f"import medvqa; medvqa.run({call})"])
    result = run_session(RunOptions(benchmark=benchmark, model=model, **options), progress=progress)
    return RunOutcome(Path(result.run_dir), result.summary())


def eval_set(source: str | Path | Mapping[str, Any], *, progress: bool = True) -> dict[str, Any]:
    """Run (or resume) an eval set, as `medvqa eval` does: `source` is its file (TOML, YAML or
    JSON) or the same mapping (a relative `study_dir` or `data` is then relative to the working
    directory). Returns what `medvqa eval --json` prints: the study directory, every experiment
    (its run directory, whether it finished, why not), the failed ones, and the compare of the
    set. A bad set raises `DataError` naming the file, the entry and the key, before anything runs."""
    import sys

    from .run.evalset import read_set

    study = read_set(source)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if progress else None
    return run_eval_set(
        study, progress=say, command_line=["python", "-c", "import medvqa; medvqa.eval_set(...)"]
    ).as_json()


def merge(shard_dirs: Iterable[str | Path], into: str | Path) -> dict[str, Any]:
    """Merge the run directories of every shard of one run (`run(..., shard="I/N")`) into the
    new run directory `into`, as `medvqa merge` does, and return what `medvqa merge --json`
    prints: `run_dir`, each shard's directory and records, `n_records`. Shards of different runs,
    a missing shard or one given twice raise `DataError` naming it, before anything is written."""
    from .run.shards import merge_shards

    return merge_shards(list(shard_dirs), into).summary()


def records(run_dir: str | Path, *, reading: str | None = None) -> pd.DataFrame:
    """The records of a run, one row per (item, condition) — the newest when a pair was
    written more than once — read as `reading` reads them, so that counting `correct` gives what
    `report` gives: "strict" (the rules alone) or "assisted" (a parse failure an extractor read
    takes the extractor's answer, its strict reading kept in `strict_reading`); None takes the
    benchmark's protocol's (`Benchmark.reading`). `.attrs` holds the run's `manifest` and the
    `reading` used."""
    import pandas as pd

    from . import metrics
    from .run.recording import RECORD_FIELDS
    from .run.store import read_manifest, read_records

    manifest = read_manifest(Path(run_dir))
    reading = metrics.reading_of(installed_benchmark(manifest), reading)
    rows = metrics.read(read_records(Path(run_dir)), reading)
    frame = pd.DataFrame.from_records(rows) if rows else pd.DataFrame(columns=list(RECORD_FIELDS))
    frame.attrs.update(manifest=manifest, reading=reading)
    return frame


def installed_benchmark(manifest: Mapping[str, Any]) -> Benchmark | None:
    """The benchmark of a run's manifest under the run's convention, or None when its plugin
    is not installed (a saved run still reads, strictly)."""
    from . import plugins

    entry = plugins.benchmarks().get(manifest["benchmark"])
    return entry.obj.with_convention(manifest.get("convention")) if entry else None


def _selection(select: Mapping[str, Any]) -> dict[str, list[str]]:
    """{field: values} with each field's values a list, one value or a comma-separated string,
    as {field: [value, ...]} (what `--select field=v1,v2` gives)."""
    return {
        field: names(values if isinstance(values, (list, tuple, set, frozenset)) else str(values))
        for field, values in select.items()
    }


def names(given: str | Iterable[Any] | None) -> list[str]:
    """A comma-separated string (`"year,profession"`, as `--by` takes it) or a list of names (or
    values) as a list of stripped strings, the empty ones left out; None is none."""
    if given is None:
        return []
    parts = given.split(",") if isinstance(given, str) else [str(n) for n in given]
    return [n.strip() for n in parts if n.strip()]


def audit(
    *run_dirs: str | Path,
    by: str | Iterable[str] | None = None,
    cohorts: str | Path | Mapping[str, Any] | None = None,
    refusals: str = "strict",
    examples: int = 3,
    resamples: int | None = None,
    seed: int = 0,
    reading: str | None = None,
    cluster: str | None = None,
    cutoff: str | Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The visual-reliance audit of saved runs, as `medvqa audit --json` prints it. `by` names
    the strata (the benchmark's default strata when None); `cohorts` is a file or a mapping
    (`{cohort: [model, ...]}` or `{model: cohort}`). Runs of one model on the same data that
    hold different conditions are joined, and `notes` says how runs were paired. Runs of one
    model that differ only in the language are paired item by item under each condition they
    share (`paired_language`, keyed "<language> vs <language>"). Records are read as `reading`
    reads them: "assisted" (`metrics.assisted_record`: a parse failure an extractor read counts
    with the extractor's answer) or "strict"; None takes each benchmark's protocol's reading
    (`Benchmark.reading`). `reading` (and `readings`, per benchmark) in the document say which.
    `cluster` names a cluster level the benchmarks declare (`Benchmark.cluster_levels`): each
    interval then gets a cluster-bootstrap interval beside it; `intervals` says which are shown.
    `cutoff`, a model's declared knowledge cutoff (`"2024-06"` for every model, or a mapping of
    model names to theirs), adds the runs' exam-date curves under `exam_dates`, as `medvqa audit
    --cutoff` does."""
    from .audit.runs import audit_saved, read_runs
    from .metrics import reading_of

    if not run_dirs:
        raise ValueError("no runs to audit")
    reading_of(None, reading)  # an unknown reading is refused before any run is read
    runs, repeated = read_runs(run_dirs)
    return audit_saved(
        runs,
        repeated,
        by=tuple(names(by)) if by is not None else None,
        cohorts=cohorts,
        refusals=refusals,
        examples=examples,
        resamples=resamples,
        seed=seed,
        reading=reading,
        cluster=cluster,
        cutoff=cutoff,
    )


def compare(
    run_dirs: str | Path | Iterable[str | Path],
    *,
    by: str | Iterable[str] | None = None,
    resamples: int | None = None,
    seed: int = 0,
    reading: str | None = None,
    cluster: str | None = None,
) -> pd.DataFrame:
    """Runs of several models and benchmarks side by side, as `medvqa compare` computes them:
    one row per model × benchmark × condition × stratum level (`stratum` "overall" for the
    whole condition) with the benchmark's headline metric, its 95 % CI, n and the non-answer
    rates. `by` names strata (default: each benchmark's default strata). `.attrs` holds the
    rest of `medvqa compare --json`: `delta_img`, `delta_lang`, `tests`, `pass_lines`, `panels`, `runs`, `notes`,
    `by`, `reading`, `readings` and `intervals`, `delta_variants` where the runs hold image-variant
    records, and `calibration` and `abstention` where records carry a confidence. Records are
    read as `reading` reads them (None: each benchmark's protocol's reading); `cluster` adds
    cluster-bootstrap intervals (see `audit`)."""
    from .compare.comparison import compare_runs

    if isinstance(run_dirs, (str, Path)):
        run_dirs = [run_dirs]
    result = compare_runs(
        list(run_dirs),
        by=names(by) if by is not None else None,
        resamples=resamples,
        seed=seed,
        reading=reading,
        cluster=cluster,
    )
    frame = result.table
    doc = result.as_json()
    frame.attrs.update(
        {
            key: doc[key]
            for key in (
                "delta_img",
                "delta_lang",
                "tests",
                "pass_lines",
                "panels",
                "runs",
                "notes",
                "by",
                "reading",
                "readings",
                "intervals",
            )
        },
        # the Δ of each image variant, where the runs hold variant records (as `compare --json`)
        **({"delta_variants": doc["delta_variants"]} if "delta_variants" in doc else {}),
        # calibration and abstention per model × benchmark × condition, where records carry a confidence
        **{key: doc[key] for key in ("calibration", "abstention") if key in doc},
    )
    return frame


def run_eval_set(
    study: EvalSet,
    *,
    progress: Callable[[str], None] | None = None,
    command_line: list[str] | None = None,
    shard: str | None = None,
    merge: bool = False,
) -> EvalResult:
    """Run (or resume) the eval set `study` (`run.evalset_run.run_set`), then compare the experiments
    that finished: `compare.md` and `compare.json` in its study folder, and in the result. A
    failed comparison is a note; the set's runs stand. With `shard` ("I/N" or "auto"), run that
    shard of every experiment and compare nothing (a shard is part of each run); with `merge`,
    merge every experiment's shards instead of running it, then compare."""
    from .errors import UsageError
    from .run.evalset_run import merge_set, run_set
    from .run.shards import parse_shard

    if shard is not None and merge:
        raise UsageError("give --shard (run one shard of the set) or --merge (join the shards), not both")
    if merge:
        result = merge_set(study)
    else:
        part = parse_shard(shard)
        result = run_set(study, progress=progress, command_line=command_line, shard=part)
        if part is not None:
            result.notes.append(
                f"shard {part.label} of every experiment, under {study.study_dir / '.shards'}; once every shard "
                "has run, merge them into the set (medvqa eval SET --merge)"
            )
            return result
    finished = [o.experiment.run_dir for o in result.outcomes if o.summary is not None]
    if finished:
        import json

        from .compare.comparison import compare_runs
        from .compare.render import markdown
        from .files import write_atomic

        try:
            comparison = compare_runs(finished)
        except Exception as exc:  # the set's runs stand; only the comparison is missing
            result.notes.append(f"no compare of the set: {exc}")
        else:
            result.compare = comparison.as_json()
            result.compare_text = markdown(result.compare)
            write_atomic(result.study_dir / "compare.md", result.compare_text)
            write_atomic(
                result.study_dir / "compare.json",
                json.dumps(result.compare, ensure_ascii=False, indent=1, default=str, allow_nan=False),
            )
        if study.exam_dates:
            set_exam_dates(study, result, finished)
    if study.quiz_model is not None:  # each benchmark's quiz, taken by every model of the set
        from .contamination.evalset import set_quizzes

        quizzes, notes = set_quizzes(study, progress)
        result.notes += notes
        result.contamination = {**(result.contamination or {}), "dcq": quizzes}
        write_contamination(result)
    return result


def write_contamination(result: EvalResult) -> None:
    """`contamination.json` and `contamination.md` of a set's study folder, from `result.contamination`."""
    import json

    from .contamination.curves import markdown
    from .files import write_atomic

    doc = result.contamination or {}
    text = markdown(doc["exam_dates"]) if "exam_dates" in doc else ""
    if doc.get("dcq"):
        from .contamination.evalset import dcq_markdown

        text += ("\n" if text else "") + dcq_markdown(doc["dcq"])
    write_atomic(result.study_dir / "contamination.md", text)
    write_atomic(
        result.study_dir / "contamination.json",
        json.dumps(doc, ensure_ascii=False, indent=1, default=str, allow_nan=False),
    )


def set_exam_dates(study: EvalSet, result: EvalResult, finished: list[Path]) -> None:
    """The exam-date curves of a set's finished experiments, each model's split at its declared
    cutoff: what `medvqa contamination RUN_DIR... --json` prints of them, in the result and in
    `contamination.json` and `contamination.md` in the study folder. A failure is a note, as the
    compare's is: the set's runs stand."""
    from .contamination.curves import exam_date_curves
    from .run.saved import read_runs

    try:
        doc = {"exam_dates": exam_date_curves(read_runs(finished), study.cutoffs)}
    except Exception as exc:  # the set's runs stand; only the curves are missing
        result.notes.append(f"no exam-date curves of the set: {exc}")
        return
    result.contamination = doc
    write_contamination(result)

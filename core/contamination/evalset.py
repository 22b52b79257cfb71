"""The Data Contamination Quiz of an eval set (`[contamination] quiz_model`): each benchmark's quiz
written once by the generator, in the benchmark's own language, from the items its entry selects
(`<study_dir>/quizzes/<benchmark>.json`, reused when it exists), then taken by every model of
the set with its own options, through the one request path (cache, retries, resume); and the
plan of it that `medvqa eval --dry-run` prints beside the runs' (`plan_quizzes`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..run.evalset import BenchmarkEntry, EvalSet, ModelEntry
from ..run.names import path_part

QUIZZES = "quizzes"  # the folder of a study's quiz files


def quiz_file(study: EvalSet, b: BenchmarkEntry) -> Path:
    return study.study_dir / QUIZZES / f"{path_part(b.benchmark)}.json"


def entries(study: EvalSet) -> tuple[list[BenchmarkEntry], list[tuple[ModelEntry, dict[str, Any]]]]:
    """The set's benchmark entries and its models with their resolved options, each once, in order."""
    benches: dict[int, BenchmarkEntry] = {}
    models: dict[str, tuple[ModelEntry, dict[str, Any]]] = {}
    for e in study.experiments:
        benches.setdefault(id(e.benchmark), e.benchmark)
        models.setdefault(e.model.name or e.model.model, (e.model, e.backend_options))
    return list(benches.values()), list(models.values())


def selection(b: BenchmarkEntry) -> dict[str, Any]:
    """The items of entry `b` as `contamination` takes them: data, split, select, limit."""
    select = {k: v if isinstance(v, list) else [str(v)] for k, v in b.select.items()} if b.select else None
    return {"data": b.data, "split": "sample" if b.sample else b.split, "select": select, "limit": b.limit}


def set_quizzes(study: EvalSet, progress: Callable[[str], None] | None = None) -> tuple[dict[str, Any], list[str]]:
    """{benchmark: {"quiz", "examinations": {model name: ...}}} as `medvqa contamination BENCH
    --quiz FILE --json` prints them, and notes: a benchmark whose quiz cannot be made, or a model
    whose examination fails, is a note naming why (the set's runs, the other benchmarks' quizzes
    and the other models' examinations stand)."""
    from .api import quiz_and_examinations

    out: dict[str, Any] = {}
    notes: list[str] = []
    benches, models = entries(study)
    for b in benches:
        path = quiz_file(study, b)

        def take(model: ModelEntry | None, options: dict[str, Any], b: BenchmarkEntry = b, path: Path = path) -> dict:
            return quiz_and_examinations(
                b.benchmark,
                **selection(b),
                quiz=path,
                quiz_model=study.quiz_model,
                quiz_options=study.quiz_options,
                dataset=None,
                models=[model.model] if model is not None else [],
                model_options=options,
                by=None,
                answers=None,
                cache=True,
                cache_path=None,
                progress=progress,
            )

        try:  # the quiz first, written or read: without it no model is examined
            path.parent.mkdir(parents=True, exist_ok=True)
            done: dict[str, Any] = {"quiz": take(None, {})["quiz"], "examinations": {}}
        except Exception as exc:  # the set's runs stand; this benchmark's quiz is missing
            notes.append(f"no Data Contamination Quiz of {b.benchmark}: {exc}")
            continue
        for model, options in models:  # one model's failure is its own, as in the runs
            name = model.name or model.model
            try:
                done["examinations"][name] = take(model, options)["examinations"][model.model]
            except Exception as exc:
                notes.append(f"{name} did not take the Data Contamination Quiz of {b.benchmark}: {exc}")
        out[b.benchmark] = done
    return out, notes


def plan_quizzes(study: EvalSet) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Each benchmark's quiz plan (`plan.dry_run`) with every model's examination, by model name,
    and those that cannot be planned (`{"experiment", "failure"}`, as the runs' are named)."""
    benches, models = entries(study)
    out: dict[str, Any] = {}
    failed: list[dict[str, str]] = []
    for b in benches:
        try:
            out[b.benchmark] = plan_quiz(study, b, models)
        except Exception as exc:  # named, the others planned
            failed.append({"experiment": f"the Data Contamination Quiz of {b.benchmark}", "failure": str(exc)})
    return out, failed


def plan_quiz(study: EvalSet, b: BenchmarkEntry, models: list[tuple[ModelEntry, dict[str, Any]]]) -> dict[str, Any]:
    """The plan of benchmark entry `b`'s quiz (see `plan_quizzes`)."""
    from .plan import dry_run

    plan: dict[str, Any] = {}
    for model, options in models:
        doc = dry_run(
            b.benchmark,
            **selection(b),
            quiz=quiz_file(study, b),
            quiz_model=study.quiz_model,
            quiz_options=study.quiz_options,
            models=[model.model],
            model_options=options,
        )
        plan.setdefault("quiz", doc["quiz"])
        plan.setdefault("n_items", doc["n_items"])
        plan.setdefault("generator", doc["generator"])
        plan.setdefault("examinations", {})[model.name or model.model] = doc["examinations"][model.model]
    return plan


def dcq_markdown(quizzes: dict[str, Any]) -> str:
    """The quizzes of `set_quizzes` as Markdown: per benchmark its quiz, and each model's level
    (min, max) as the DCQ report prints it."""
    from ..dcq import percent

    lines = ["# Data Contamination Quiz"]
    for bench, q in quizzes.items():
        quiz = q["quiz"]
        lines += [
            "",
            f"## {bench}",
            "",
            f"Quiz {quiz['file']}: {quiz['n_items']} items, {quiz['n_dropped']} dropped; generator "
            f"{quiz['generator'].get('model')}.",
            "",
            "| model | n | min | max |",
            "|---|---:|---:|---:|",
        ]
        for model, ex in q["examinations"].items():
            o = ex["overall"]
            lines.append(f"| {model} | {o['n']} | {percent(o['level']['lower'])} | {percent(o['level']['upper'])} |")
    return "\n".join(lines) + "\n"


def dry_run_study(study: EvalSet) -> dict[str, Any]:
    """`medvqa eval --dry-run`: the runs' plan (`run.plan.dry_run_set`) and, with a quiz model,
    each benchmark's quiz plan under `contamination.dcq` (`plan_quizzes`), its requests counted
    in `contamination.requests` (the runs' totals are the runs' own)."""
    from ..run.plan import dry_run_set

    doc = dry_run_set(study)
    if study.quiz_model is not None:
        quizzes, failed = plan_quizzes(study)
        doc["failed"] += failed
        part = doc.setdefault("contamination", {"exam_dates": False, "requests": 0})
        part["dcq"] = quizzes
        part["requests"] += sum(
            q["generator"]["requests"] + sum(e["requests"] for e in q["examinations"].values())
            for q in quizzes.values()
        )
    return doc

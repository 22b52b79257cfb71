"""The Python form of `medvqa contamination`: what the command prints with `--json`, returned."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import dcq
from ..errors import UsageError
from ..items import DataError


def read_text(path: str | Path) -> str:
    """The text of a results file, a DataError naming it when it is missing, unreadable or not UTF-8."""
    path = Path(path)
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise DataError("no such file", file=path) from None
    except IsADirectoryError:
        raise DataError("a folder, where a results CSV is expected", file=path) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", file=path) from None


def estimate_file(path: str | Path) -> dict[str, Any]:
    """The Data Contamination Quiz's estimate of a results CSV in its authors' layout (one row per
    instance; `bdq_results` and `bcq_results_for_position_<x>` hold the examined model's answers),
    computed as the authors compute it (`dcq.estimate`): the letter counts and shares of the Bias
    Detector Quiz, the non-preferred positions, each Bias Compensator Quiz's counts and shares,
    and the level {"lower", "upper"} as fractions, with the line the authors' report prints."""
    return {"file": str(path), **dcq.estimate_results(read_text(path), file=str(path)).as_json()}


def contamination(
    target: str | Path | Sequence[str | Path] | None = None,
    *,
    dcq_results: str | Path | None = None,
    data: str | Path | None = None,
    split: str | None = None,
    select: Mapping[str, Sequence[str]] | None = None,
    limit: int | None = None,
    quiz: str | Path | None = None,
    quiz_model: str | None = None,
    quiz_options: dict[str, Any] | None = None,
    dataset: str | None = None,
    models: Sequence[str] = (),
    model_options: dict[str, Any] | None = None,
    by: Sequence[str] | None = None,
    answers: str | Path | None = None,
    cutoff: str | int | None = None,
    slots: bool = False,
    cache: bool = True,
    cache_path: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The contamination audit, as `medvqa contamination --json` prints it.

    - `dcq_results`: a results CSV of the Data Contamination Quiz in its authors' layout,
      estimated as they estimate it (`estimate_file`), under "dcq".
    - `target` a benchmark: its quiz, under "quiz": read from the file `quiz` when it exists,
      else written there by `quiz_model` (with `quiz_options`, its backend's settings) from the
      items of `data` (`split`, `select`, the first `limit`), the quiz prompt naming the dataset
      `dataset` (the benchmark's name by default); then each model of `models` takes
      it (with `model_options`), under "examinations" by model: the estimate overall and by the
      strata `by` (the benchmark's default strata when None). `answers` writes the answers of a
      single examined model as a results CSV in the authors' layout.
    - `slots`, with `target` a benchmark: slot guessing (`slots.guess_slots`) by each model of
      `models` on the same items, under "slot_guessing" by model.
    - `target` one or more run directories: their exam-date curves (`curves.exam_date_curves`),
      under "exam_dates", split at the models' declared knowledge `cutoff` (`YYYY-MM`) when given."""
    out: dict[str, Any] = {}
    if dcq_results is not None:
        out["dcq"] = estimate_file(dcq_results)
    run_dirs = run_targets(target)
    if run_dirs:
        from ..run.saved import read_runs
        from .curves import exam_date_curves

        out["exam_dates"] = exam_date_curves(read_runs(run_dirs), cutoff)
    elif isinstance(target, (str, Path)) and (quiz is not None or not slots):
        out.update(
            quiz_and_examinations(
                str(target),
                data=data,
                split=split,
                select=select,
                limit=limit,
                quiz=quiz,
                quiz_model=quiz_model,
                quiz_options=quiz_options,
                dataset=dataset,
                models=models,
                model_options=model_options,
                by=by,
                answers=answers,
                cache=cache,
                cache_path=cache_path,
                progress=progress,
            )
        )
    if slots and isinstance(target, (str, Path)) and not run_dirs:
        from ..plugins import get_benchmark
        from .slots import guess_slots

        if not models:
            raise UsageError("slot guessing asks a model: give --model")
        items = load_items(get_benchmark(str(target)), data, split, select, limit)
        out["slot_guessing"] = {
            m: guess_slots(items, m, backend_options=model_options, cache=cache, cache_path=cache_path) for m in models
        }
    if not out:
        raise UsageError("contamination: give a benchmark (with --quiz) or --dcq-results CSV")
    return out


def load_items(
    bench: Any,
    data: str | Path | None,
    split: str | None,
    select: Mapping[str, Sequence[str]] | None,
    limit: int | None,
) -> list[Any]:
    """The items of `bench` a quiz or a slot guess asks: those of `data` (`split`, `select`) with a
    question's text, the first `limit`."""
    items = bench.load(Path(data) if data is not None else None, bench.checked_split(split), select=select)
    items = [i for i in items if i.question.strip()][:limit]
    if not items:
        raise UsageError(f"no items of {bench.name} to ask (the selection holds none with a question's text)")
    return items


def run_targets(target: str | Path | Sequence[str | Path] | None) -> list[Path]:
    """The run directories `target` names (a folder, or a list of them), or [] for a benchmark's name."""
    if target is None:
        return []
    many = [target] if isinstance(target, (str, Path)) else list(target)
    if isinstance(target, (str, Path)) and not Path(target).is_dir():
        return []
    for each in many:
        if not Path(each).is_dir():
            raise UsageError(f"{each} is not a run directory (a benchmark is given alone)")
    return [Path(each) for each in many]


def quiz_and_examinations(
    target: str | Path,
    *,
    data: str | Path | None,
    split: str | None,
    select: Mapping[str, Sequence[str]] | None,
    limit: int | None,
    quiz: str | Path | None,
    quiz_model: str | None,
    quiz_options: dict[str, Any] | None,
    dataset: str | None,
    models: Sequence[str],
    model_options: dict[str, Any] | None,
    by: Sequence[str] | None,
    answers: str | Path | None,
    cache: bool,
    cache_path: str | Path | None,
    progress: Callable[[str], None] | None,
) -> dict[str, Any]:
    """`contamination` of a benchmark (see there)."""
    from ..plugins import get_benchmark
    from .exam import examine
    from .quiz import QuizIncomplete, make_quiz, read_quiz, write_quiz

    if quiz is None:
        raise UsageError("give --quiz FILE: the quiz is read from it, or written there by --quiz-model")
    bench = get_benchmark(str(target))
    quiz_path = Path(quiz)
    took: dict[str, Any] = {"requested": 0, "cache_hits": 0, "cost_usd": None}
    if quiz_path.exists():
        the_quiz = read_quiz(quiz_path)
        if the_quiz.benchmark != bench.name:
            raise UsageError(f"{quiz_path} is a quiz of {the_quiz.benchmark}, not of {bench.name}")
        if quiz_model is not None and quiz_model != the_quiz.generator.get("model"):
            raise UsageError(
                f"{quiz_path} was written by {the_quiz.generator.get('model')}, not {quiz_model}: "
                "remove the file (or give another --quiz) to write a new quiz"
            )
        created = False
    else:
        if quiz_model is None:
            raise UsageError(f"{quiz_path} does not exist: give --quiz-model to write the quiz there")
        split = bench.checked_split(split)
        items = load_items(bench, data, split, select, limit)
        if progress:
            progress(f"{quiz_model}: writing the quiz of {len(items)} items")
        the_quiz, took = make_quiz(
            items,
            quiz_model,
            benchmark=bench.name,
            split=split,
            language=bench.active_language,
            dataset=dataset,
            strata=bench.default_strata,
            backend_options=quiz_options,
            cache=cache,
            cache_path=cache_path,
            progress=progress,
        )
        failed = [d for d in the_quiz.dropped if d.get("failed")]
        if failed:  # a quiz file is final: an item is not dropped for a server's passing failure
            raise QuizIncomplete(
                f"{len(failed)} of {len(items)} quiz requests to {quiz_model} failed (first: {failed[0]['reason']}); "
                f"{quiz_path} is not written: run the same command again (the replies so far are cached)"
            )
        write_quiz(the_quiz, quiz_path)
        created = True
    if answers is not None and len(models) != 1:
        raise UsageError("the answers are written for one examined model: give one --model with --answers")
    quiz_doc = {
        "file": str(quiz_path),
        "created": created,
        "benchmark": the_quiz.benchmark,
        "split": the_quiz.split,
        "generator": the_quiz.generator,
        "n_items": len(the_quiz.items),
        "n_dropped": len(the_quiz.dropped),
        "dropped": the_quiz.dropped,
        **took,
    }
    examinations = {
        model: examine(
            the_quiz,
            model,
            by=list(by) if by is not None else None,
            backend_options=model_options,
            cache=cache,
            cache_path=cache_path,
            answers_csv=answers,
            progress=progress,
        )
        for model in models
    }
    return {"quiz": quiz_doc, "examinations": examinations}

"""Eval sets: a study of models × benchmarks × languages in one resumable command.

An eval set (`medvqa eval SET.toml`, `medvqa.eval_set(...)`; TOML, YAML or JSON) declares

```toml
study_dir = "studies/2026-vlms"    # relative to the set's file
repeats = 1                        # optional, as --repeats
seed = 0                           # optional, as --seed
batch = false                      # optional, as --batch (batch_poll_s as --batch-poll)

[[models]]
model = "hosted_vllm/qwen3-vl"     # as --model
name = "qwen3-vl"                  # optional, as --model-name (default: the model string)
options = { api_base = "http://gpu1:8000/v1", max_tokens = 2048 }   # as -M takes them
cutoff = "2024-06"                 # optional: its declared knowledge cutoff (YYYY-MM or YYYY)

[[benchmarks]]
benchmark = "igakuqa"
data = "../data/igakuqa"           # or sample = true
select = { block = ["116A"] }      # optional, as --select
languages = ["ja", "en"]           # optional: the benchmark's first when left out
conditions = "C+Q,C+Q+I"           # optional: the benchmark's default
variants = "swap,hflip"            # optional, as --variants: none when left out
limit = 50                         # optional

[contamination]                    # optional: the exam-date curves of every experiment
exam_dates = true
quiz_model = "openai/gpt-5"        # optional: each benchmark's Data Contamination Quiz, by this generator
quiz_options = { max_tokens = 4096 }   # optional: the generator's settings
```

Every experiment (model × benchmark × language) is an ordinary run directory,
`<study_dir>/<benchmark>[-<language>]/<model name>`, with the run's own cache and resume; the
names made folder names by `names.path_part`, and two experiments whose folders come out the
same (models `x/y` and `x_y`, one benchmark listed twice) are refused naming both.
The whole set is checked before anything runs: a bad set is one `DataError` naming the file,
the entry (`models[1]`, `benchmarks[0]`) and the key.

Concurrency is shared per server: experiments whose requests go to the same server (the same
`api_base`, or the same provider without one) run one after another, each with its model's
`concurrency`, so that a server never sees more than one budget; experiments on different
servers run at the same time. A failing experiment (an error, a preflight refused, more errors
than `max_error_rate`) does not stop the others: the result names it and why. Re-running the
set resumes every experiment; one `compare` of the finished experiments ends the set (written
to `<study_dir>/compare.md` and `compare.json`). A set with a `[contamination]` table also
writes the exam-date curves of the finished experiments after the compare (per run and pooled
per model, each model's split at its `cutoff`; `<study_dir>/contamination.md` and `.json`):
they are read from the records, and cost no request. A `cutoff` in a set that asks for no
curves is refused, since it would change nothing. With a `quiz_model`, each benchmark's Data
Contamination Quiz is written by it (`<study_dir>/quizzes/<benchmark>.json`, in the benchmark's
own language, from the entry's items; reused when it exists) and every model of the set takes it
with its own options; the levels go into the same files.

This module holds what a set declares and how it is read and checked (`read_set`);
`evalset_run` runs it (`run_set`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from ..items import DataError
from .names import path_part, run_dirs
from .runner import MAX_REPEATS

SET_KEYS = (
    "study_dir",
    "models",
    "benchmarks",
    "repeats",
    "seed",
    "max_error_rate",
    "batch",
    "batch_poll_s",
    "contamination",
)


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    name: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    cutoff: str | int | None = None  # the declared knowledge cutoff, YYYY-MM or YYYY (`cutoffs.parse_cutoff`)


class BenchmarkEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    benchmark: str
    data: str | None = None
    sample: bool = False
    split: str | None = None
    select: dict[str, list[str] | str | int] | None = None
    languages: list[str] | None = None
    conditions: str | list[str] | None = None
    variants: str | list[str] | None = None
    limit: int | None = Field(None, ge=1)
    convention: str | None = None

    @field_validator("languages", mode="before")
    @classmethod
    def _one_or_several(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class ContaminationEntry(BaseModel):
    """What a set's `[contamination]` table asks for: the exam-date curves (no request), and with
    a `quiz_model` the Data Contamination Quiz of each benchmark, taken by every model."""

    model_config = ConfigDict(extra="forbid")

    exam_dates: bool = True
    quiz_model: str | None = None  # the generator that writes each benchmark's quiz (as --quiz-model)
    quiz_options: dict[str, Any] = Field(default_factory=dict)  # its backend settings (as --quiz-option)


class EvalSetFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    study_dir: str
    models: list[ModelEntry] = Field(min_length=1)
    benchmarks: list[BenchmarkEntry] = Field(min_length=1)
    repeats: StrictInt = Field(1, ge=1, le=MAX_REPEATS)  # a whole number: 1e9 is no count of repeats
    seed: int = 0
    max_error_rate: float = Field(0.05, ge=0, le=1)
    batch: bool = False  # every experiment through its provider's batch API (`--batch`)
    batch_poll_s: float = Field(30.0, ge=0)
    contamination: ContaminationEntry | None = None


@dataclass
class Experiment:
    """One run of the set: a model on a benchmark in one language."""

    model: ModelEntry
    benchmark: BenchmarkEntry
    language: str | None  # None: the benchmark's only language
    run_dir: Path
    backend_options: dict[str, Any]
    lane: str  # the server (or provider) its requests go to: experiments of one lane run in turn

    @property
    def label(self) -> str:
        lang = f" ({self.language})" if self.language else ""
        return f"{self.benchmark.benchmark}{lang} × {self.model.name or self.model.model}"


@dataclass
class EvalSet:
    file: Path | None
    study_dir: Path
    experiments: list[Experiment]
    repeats: int = 1
    seed: int = 0
    max_error_rate: float = 0.05
    batch: bool = False
    batch_poll_s: float = 30.0
    # the exam-date curves of the finished experiments, written after the compare, and each
    # model's declared knowledge cutoff by its name (None: its curves are not split)
    exam_dates: bool = False
    cutoffs: dict[str, str | None] = field(default_factory=dict)
    # the generator of each benchmark's Data Contamination Quiz and its resolved settings (None: no quiz)
    quiz_model: str | None = None
    quiz_options: dict[str, Any] = field(default_factory=dict)


def _where(exc: ValidationError, data: Mapping[str, Any]) -> tuple[str | None, str]:
    """(the entry, the message naming the key) of a set's first validation error."""
    err = exc.errors(include_url=False)[0]
    loc = list(err["loc"])
    if loc and loc[0] in ("models", "benchmarks") and len(loc) > 1 and isinstance(loc[1], int):
        entry = f"{loc[0]}[{loc[1]}]"
        items = data.get(loc[0]) or []
        name = (
            items[loc[1]].get("name") or items[loc[1]].get("model") or items[loc[1]].get("benchmark")
            if loc[1] < len(items) and isinstance(items[loc[1]], dict)
            else None
        )
        if name:
            entry += f" ({name})"
        key = ".".join(str(p) for p in loc[2:]) or "entry"
    else:
        entry, key = None, ".".join(str(p) for p in loc) or "set"
    message = err["msg"]
    if err["type"] == "extra_forbidden":
        message = "not a key of an eval set" if entry is None else "not a key of this entry"
    return entry, f"{key}: {message}"


def read_set(source: str | Path | Mapping[str, Any], *, base: Path | None = None) -> EvalSet:
    """The eval set of a file (TOML, YAML or JSON, by its suffix) or a mapping, checked whole:
    every key, every benchmark, language, condition and data folder, every model's options.
    A problem is a `DataError` naming the file, the entry and the key; nothing has run."""
    from .. import plugins
    from ..conditions import parse_conditions, parse_variants
    from ..cutoffs import cutoff_text, parse_cutoff
    from ..errors import UsageError
    from ..inference.backend_options import read_model_config, resolve
    from .variants import check_variants

    file: Path | None = None
    if isinstance(source, (str, Path)):
        file = Path(source)
        data = read_model_config(file)
    else:
        data = dict(source)
    base = base or (file.parent if file is not None else Path.cwd())

    def fail(entry: str | None, message: str) -> DataError:
        return DataError(message, file=file or "the eval set", record=entry)

    try:
        parsed = EvalSetFile.model_validate(data)
    except ValidationError as exc:
        raise fail(*_where(exc, data)) from None
    study_dir = Path(parsed.study_dir)
    study_dir = study_dir if study_dir.is_absolute() else base / study_dir
    names: dict[str, int] = {}
    options: list[dict[str, Any]] = []
    cutoffs: dict[str, str | None] = {}
    exam_dates = parsed.contamination is not None and parsed.contamination.exam_dates
    for i, m in enumerate(parsed.models):
        entry = f"models[{i}] ({m.name or m.model})"
        name = m.name or m.model
        if name in names:
            raise fail(entry, f"name: {name!r} is models[{names[name]}]'s too; give each model its own name")
        names[name] = i
        cutoffs[name] = None
        if m.cutoff is not None:
            try:
                cutoffs[name] = cutoff_text(parse_cutoff(m.cutoff))
            except UsageError as exc:
                raise fail(entry, str(exc)) from None
            if not exam_dates:
                raise fail(
                    entry,
                    "cutoff: the set asks for no exam-date curves, which the cutoff splits: add a "
                    "[contamination] table (exam_dates = true), or remove the cutoff",
                )
        try:
            resolved = resolve(m.model, {}, m.options, given_as="options.{}")
            plugins.backend_factory(m.model)
        except (UsageError, DataError, ValueError, KeyError) as exc:
            raise fail(entry, str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)) from None
        options.append(resolved)
    quiz_options: dict[str, Any] = {}
    asked = parsed.contamination or ContaminationEntry(exam_dates=False)
    quiz_model = asked.quiz_model
    if quiz_model is not None:
        try:
            quiz_options = resolve(quiz_model, {}, asked.quiz_options, given_as="quiz_options.{}")
            plugins.backend_factory(quiz_model)
        except (UsageError, DataError, ValueError, KeyError) as exc:
            raise fail("contamination", str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)) from None
    elif asked.quiz_options:
        raise fail("contamination", "quiz_options: give the quiz_model they are for")
    benches = []
    for j, b in enumerate(parsed.benchmarks):
        entry = f"benchmarks[{j}] ({b.benchmark})"
        try:
            bench = plugins.get_benchmark(b.benchmark)
        except (UsageError, KeyError) as exc:
            raise fail(entry, f"benchmark: {exc.args[0] if exc.args else exc}") from None
        if b.sample and b.data:
            raise fail(entry, "data: give either data or sample = true, not both")
        if not b.sample and not b.data:
            raise fail(entry, "data: give the benchmark's data folder, or sample = true")
        for split in (["sample"] if b.sample else []) + ([b.split] if b.split else []):
            if split not in bench.splits:
                key = "sample" if b.sample and split == "sample" else "split"
                raise fail(
                    entry,
                    f"{key}: {bench.name} has no split {split!r} (it has {', '.join(bench.splits)})"
                    + ("; give its data" if key == "sample" else ""),
                )
        if b.data:
            folder = Path(b.data) if Path(b.data).is_absolute() else base / b.data
            if not folder.exists():
                raise fail(entry, f"data: {folder} does not exist")
            b = b.model_copy(update={"data": str(folder)})
        for language in b.languages or ():
            if language not in bench.offered_languages:
                raise fail(
                    entry,
                    f"languages: {language!r} is not one of {bench.name}'s ({', '.join(bench.offered_languages)})",
                )
        if b.conditions is not None:
            text = b.conditions if isinstance(b.conditions, str) else ",".join(b.conditions)
            try:
                parse_conditions(text)
            except (UsageError, ValueError) as exc:
                raise fail(entry, f"conditions: {exc}") from None
            b = b.model_copy(update={"conditions": text})
        if b.variants is not None:
            try:
                variants = check_variants(parse_variants(b.variants))
            except (UsageError, ValueError) as exc:
                raise fail(entry, f"variants: {exc}") from None
            b = b.model_copy(update={"variants": ",".join(variants) or None})
        if b.convention is not None and b.convention not in bench.conventions:
            raise fail(entry, f"convention: {b.convention!r} is not one of {bench.name}'s")
        benches.append((b, bench))
    # each experiment's run directory, named after its entries
    planned: list[tuple[str, ModelEntry, BenchmarkEntry, str | None, dict[str, Any]]] = []
    folders: dict[str, tuple[str, str]] = {}
    for j, (b, bench) in enumerate(benches):
        languages: list[str | None] = list(b.languages) if b.languages else [None]
        for lang in languages:
            for i, (m, resolved) in enumerate(zip(parsed.models, options)):
                first = lang is None or lang == bench.offered_languages[0]
                folder_name = f"{b.benchmark}-{path_part(lang)}" if lang and not first else b.benchmark
                bench_entry = f"benchmarks[{j}] ({b.benchmark}{'' if first else f', {lang}'})"
                source = f"{bench_entry} × models[{i}] ({m.name or m.model})"
                planned.append((source, m, b, lang, resolved))
                folders[source] = (folder_name, m.name or m.model)
    try:
        dirs = run_dirs(study_dir, folders)
    except DataError as exc:
        raise fail(None, exc.reason) from None
    experiments = [
        Experiment(m, b, lang, dirs[source], resolved, _lane(m.model, resolved))
        for source, m, b, lang, resolved in planned
    ]
    return EvalSet(
        file,
        study_dir,
        experiments,
        parsed.repeats,
        parsed.seed,
        parsed.max_error_rate,
        parsed.batch,
        parsed.batch_poll_s,
        exam_dates,
        cutoffs,
        quiz_model,
        quiz_options,
    )


def _lane(model: str, options: Mapping[str, Any]) -> str:
    """The server an experiment's requests go to (its `api_base`s, else its model list, else its
    provider); a model without a server of its own (a baseline) has a lane to itself."""
    servers = options.get("api_base")
    if servers:
        return "servers:" + ",".join(sorted(str(s).rstrip("/") for s in servers))
    if options.get("model_list"):
        return f"model list:{options['model_list']}"
    prefix = model.split("/", 1)[0] if "/" in model else None
    return f"provider:{prefix}" if prefix else f"local:{model}:{id(options)}"

"""medvqa: evaluate vision-language models on national medical licensing exams, and audit
whether they use the images.

    >>> import medvqa
    >>> items = medvqa.load("jmed48k", split="sample")
    >>> medvqa.score(items[0], '{"answer": ["2"]}').correct
    True

Everything an adapter or a notebook needs is a name here (`__all__`), re-exported from the
private modules that implement it and imported on first use, so `import medvqa` stays fast.
`medvqa.ja` holds helpers for Japanese exams, `medvqa.metrics` the one metrics layer every
number comes from, `medvqa.tables` and `medvqa.stats` table rendering and confidence intervals,
`medvqa.mhlw` the pass criteria of Japan's MHLW national exams, and `medvqa.commands` helpers
for the commands a plugin adds. docs/api.md documents every name.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# public name -> the private module that defines it
_EXPORTS = {
    # adapters: what a benchmark is made of
    "Benchmark": "medvqa.core.benchmark",
    "AnswerConventions": "medvqa.core.scoring.conventions",
    "Item": "medvqa.core.items",
    "Gold": "medvqa.core.items",
    "Option": "medvqa.core.items",
    "ImageRef": "medvqa.core.items",
    "ImageRole": "medvqa.core.items",
    "DataError": "medvqa.core.items",
    # errors a caller may want to catch (DataError above)
    "UsageError": "medvqa.core.errors",
    "UnknownBenchmarkError": "medvqa.core.errors",
    "PluginError": "medvqa.core.plugins",
    "PreflightError": "medvqa.core.errors",
    "RunInterrupted": "medvqa.core.run.interrupt",
    "resolve_image": "medvqa.core.items",
    "brief": "medvqa.core.items",
    "brief_list": "medvqa.core.jsonl",
    "Condition": "medvqa.core.conditions",
    "as_printed": "medvqa.core.conditions",
    "Template": "medvqa.core.messages",
    "LanguagePatterns": "medvqa.core.scoring.patterns",
    "ANSWER_TOKEN": "medvqa.core.scoring.patterns",
    "Finding": "medvqa.core.validation",
    "lone_surrogate": "medvqa.core.validation",
    "Score": "medvqa.core.scoring.score",
    "JudgePrompt": "medvqa.core.scoring.judge",
    "PassVerdict": "medvqa.core.passlines",
    "PassLines": "medvqa.core.passlines",
    "BlankRule": "medvqa.core.abstention",
    "hookimpl": "medvqa.core.hookspecs",
    "order_patterns": "medvqa.core.order",
    # plugins: what a backend is made of
    "Backend": "medvqa.core.inference.base",
    "Request": "medvqa.core.inference.base",
    "Response": "medvqa.core.inference.base",
    "read_jsonl": "medvqa.core.jsonl",
    "numbered_jsonl": "medvqa.core.jsonl",
    "read_json": "medvqa.core.jsonl",
    "read_table": "medvqa.core.jsonl",
    "refuse_repeat": "medvqa.core.jsonl",
    "write_atomic": "medvqa.core.files",
    "from_hub": "medvqa.core.hub",
    # notebooks: the commands as functions
    "load": "medvqa.core.api",
    "score": "medvqa.core.api",
    "run": "medvqa.core.api",
    "RunOutcome": "medvqa.core.api",
    "eval_set": "medvqa.core.api",
    "merge": "medvqa.core.api",
    "records": "medvqa.core.api",
    "report": "medvqa.core.report",
    "audit": "medvqa.core.api",
    "compare": "medvqa.core.api",
    "contamination": "medvqa.core.contamination.api",
    "view": "medvqa.core.view",
    "cache_dir": "medvqa.core.files",
    "read_run": "medvqa.core.run.saved",
    "SavedRun": "medvqa.core.run.saved",
    "write_run": "medvqa.core.run.imported",
    "run_dirs": "medvqa.core.run.names",
    # the results model: what a run directory holds
    "Record": "medvqa.core.results",
    "Manifest": "medvqa.core.results",
    "Status": "medvqa.core.results",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'medvqa' has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from medvqa.core.abstention import BlankRule
    from medvqa.core.api import RunOutcome, audit, compare, load, records, run, score
    from medvqa.core.benchmark import Benchmark
    from medvqa.core.conditions import Condition, as_printed
    from medvqa.core.contamination.api import contamination
    from medvqa.core.errors import PreflightError, UnknownBenchmarkError, UsageError
    from medvqa.core.files import cache_dir, write_atomic
    from medvqa.core.hookspecs import hookimpl
    from medvqa.core.hub import from_hub
    from medvqa.core.inference.base import Backend, Request, Response
    from medvqa.core.items import DataError, Gold, ImageRef, ImageRole, Item, Option, brief, resolve_image
    from medvqa.core.jsonl import numbered_jsonl, read_json, read_jsonl, read_table, refuse_repeat
    from medvqa.core.messages import Template
    from medvqa.core.order import order_patterns
    from medvqa.core.passlines import PassLines, PassVerdict
    from medvqa.core.plugins import PluginError
    from medvqa.core.report import report
    from medvqa.core.results import Manifest, Record, Status
    from medvqa.core.run.imported import write_run
    from medvqa.core.run.interrupt import RunInterrupted
    from medvqa.core.run.names import run_dirs
    from medvqa.core.run.saved import SavedRun, read_run
    from medvqa.core.scoring.conventions import AnswerConventions
    from medvqa.core.scoring.judge import JudgePrompt
    from medvqa.core.scoring.patterns import ANSWER_TOKEN, LanguagePatterns
    from medvqa.core.scoring.score import Score
    from medvqa.core.validation import Finding, lone_surrogate
    from medvqa.core.view import view

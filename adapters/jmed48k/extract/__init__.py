"""Extraction of MHLW exam PDFs (question booklets, figure booklets 別冊, answer keys) into
the JMed48k release layout.

`extract(...)` is the entry point; it returns an `ExtractionResult` whose `errors` say
whether the written cell may be used."""

from .pipeline import extract
from .report import ExtractionResult, QuestionReport

__all__ = ["extract", "ExtractionResult", "QuestionReport"]

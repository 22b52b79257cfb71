"""VLMEvalKit prediction tables → a run directory (`medvqa import worldmedqa_v`).

WorldMedQA-V's authors evaluated models with VLMEvalKit, whose output table per model and
dataset (`<Model>_<country>_<local|english>.xlsx`) holds each item's `index`, its question and
options as asked, and the model's reply in `prediction`; with the image in
`visuals/outputs_w_images/` (condition C+Q+I) and without it in `visuals/outputs_blind/` (C+Q).
The replies are scored under the benchmark's convention (VLMEvalKit's matching, `matching.py`).

VLMEvalKit's result table (`<Model>_<country>_<version>_gpt-4o-mini_result.xlsx`) adds, per
item, the option its extractor model named (`extracted`) and whether it hit the gold (`hit`): the
published accuracy is the mean of `hit`. Given such a table, the import reads each reply by
matching and, where matching fails, records the extractor's option as the answer (as VLMEvalKit
did; the record keeps the reply as `source_reply`, and the manifest lists those items under
`imported.extractor_items`; an extractor output that names no option, such as "I", is a parse
failure, as it was a miss there); items where matching
reads another option than the published one are listed too (`differs_from_published`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import medvqa
from medvqa import DataError

from .benchmark import WorldMedQAV
from .matching import can_infer

NAME = re.compile(r"(?:(?P<model>.+?)_)?(?P<country>brazil|israel|japan|spain)_(?P<version>local|english)"
                  r"(?:_.*)?\.(?:xlsx|csv|tsv)", re.IGNORECASE)


def read_predictions(path: Path) -> list[dict]:
    """The rows of a VLMEvalKit table (XLSX, CSV or TSV), every value as text; it needs the
    columns `index` and `prediction`."""
    import pandas as pd

    suffix = path.suffix.lower()
    try:
        if suffix == ".xlsx":
            frame = pd.read_excel(path, dtype=str, keep_default_na=False)
        elif suffix in (".csv", ".tsv"):
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
        else:
            raise DataError("a prediction table is .xlsx, .csv or .tsv", file=path)
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise DataError(f"unreadable table ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
                        file=path) from None
    missing = [c for c in ("index", "prediction") if c not in frame.columns]
    if missing:
        raise DataError(f"the table has no column {', '.join(missing)} (a VLMEvalKit prediction table has index "
                        "and prediction)", file=path)
    return frame.to_dict("records")


def condition_of(path: Path) -> str:
    """C+Q for the authors' `outputs_blind` tables, C+Q+I otherwise (VLMEvalKit shows the image)."""
    return "C+Q" if any(part.lower() == "outputs_blind" for part in path.resolve().parts) else "C+Q+I"


def import_table(file: Path, data: Path, run_dir: Path, *, language: str | None = None,
                 condition: str | None = None, country: str | None = None, model: str | None = None) -> dict:
    """Write the run directory `run_dir` from one VLMEvalKit table of WorldMedQA-V. The country,
    the language and the model come from the file name (`GPT4o_japan_english.xlsx`) unless
    given; the condition from its folder (`condition_of`) unless given. Each row's question must
    be the data's, in that language: a table of another country or language is refused."""
    if file.suffix.lower() not in (".xlsx", ".csv", ".tsv"):
        raise DataError("a prediction table is .xlsx, .csv or .tsv", file=file)
    m = NAME.fullmatch(file.name)
    country = (country or (m["country"] if m else "")).lower()
    if not country:
        raise DataError("the file name does not say the country (<model>_<country>_<local|english>.xlsx): "
                        "give --country", file=file)
    if language is None:
        language = ("en" if m["version"].lower() == "english" else "local") if m else "local"
    model = model or (m["model"] if m and m["model"] else file.stem)
    condition = condition or condition_of(file)
    bench = WorldMedQAV().with_language(language)
    items = bench.load(data, select={"country": [country]})
    by_index = {it.meta["index"]: it for it in items}
    answers, seen, extracted, differs = [], set(), [], []
    for row in read_predictions(file):
        index = str(row["index"]).strip()
        record = f"index {index}"
        if not index.isdigit() or int(index) not in by_index:
            raise DataError(f"the data has no {country} item with this index", file=file, record=record)
        item = by_index[int(index)]
        if int(index) in seen:
            raise DataError("two rows for this index", file=file, record=record)
        seen.add(int(index))
        question = str(row.get("question", "")).strip()
        if question and question != item.question:
            raise DataError(f"the question differs from the data's {country} item in language {language!r} "
                            "(a table of another language or country?)", file=file, record=record)
        text = str(row["prediction"])
        published = str(row.get("extracted", "")).strip()
        extra = None
        if published:
            matched = can_infer(text, {o.key: o.text for o in item.options})
            if matched is None:  # VLMEvalKit asked its extractor model here: its answer is the record's
                extra = {"source_reply": text, "answer_source": "published extractor"}
                text = published
                extracted.append(item.id)
            elif matched != published:
                differs.append({"item_id": item.id, "matching": matched, "published": published})
        answers.append((item, condition, text if text.strip() else None, extra))
    load = {"data": str(data.resolve()), "split": None, "sample": False, "limit": None,
            "select": {"country": [country]}}
    summary = medvqa.write_run(bench, items, answers, run_dir, model=model, load=load, saved=False,
                               command_line=["medvqa", *sys.argv[1:]], images_attested=True,
                               source={"files": [str(file.resolve())], "condition": condition,
                                       "extractor_items": extracted, "differs_from_published": differs})
    return {**summary, "benchmark": bench.name, "model": model, "language": language, "country": country,
            "condition": condition, "convention": bench.active_convention,
            "n_extractor": len(extracted), "differs_from_published": differs,
            "n_missing": sum(1 for _, _, t, _ in answers if t is None) + len(items) - len(answers)}

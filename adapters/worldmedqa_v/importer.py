"""VLMEvalKit prediction tables → a run directory (`medvqa import worldmedqa_v`).

WorldMedQA-V's authors evaluated models with VLMEvalKit, whose output table per model and
dataset (`<Model>_<country>_<local|english>.xlsx`) holds each item's `index`, its question and
options as asked, and the model's reply in `prediction`; with the image in
`visuals/outputs_w_images/` (condition C+Q+I) and without it in `visuals/outputs_blind/` (C+Q).
The replies are scored under the convention `vlmevalkit-exact` (VLMEvalKit's exact matching
alone, `matching.py`; `--convention vlmevalkit` adds medvqa's answer chain where matching fails).

VLMEvalKit's result table (`<Model>_<country>_<version>_gpt-4o-mini_result.xlsx`) adds, per
item, the option its extractor model named (`extracted`) and whether it hit the gold (`hit`): the
published accuracy is the mean of `hit`. Given such a table, each reply the strict reader cannot
read (where VLMEvalKit asked its extractor) keeps its strict `parse_failure` and gains the
published extractor's option as its assisted reading (`Record.assisted`, source
`vlmevalkit-result`, the extractor named from the file name; an output that names no option,
such as "I", is a reading that could not tell, incorrect, as it was a miss there); the manifest
lists those items under `imported.extractor_items`. The strict accuracy is then VLMEvalKit's exact
matching, the assisted one its published accuracy. Items where matching reads another option than
the published one are listed too (`differs_from_published`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import medvqa
from medvqa import DataError

from .benchmark import WorldMedQAV
from .matching import VLMEVALKIT_EXACT, can_infer

NAME = re.compile(r"(?:(?P<model>.+?)_)?(?P<country>brazil|israel|japan|spain)_(?P<version>local|english)"
                  r"(?:_(?P<extractor>.+?)_result|_.*)?\.(?:xlsx|csv|tsv)", re.IGNORECASE)
# the `source` of an assisted reading taken from VLMEvalKit's published result table
PUBLISHED_SOURCE = "vlmevalkit-result"


def published_reading(item, published: str, extractor: str | None) -> dict:
    """The assisted reading (`medvqa.Record.assisted`) of a reply the strict reader could not read,
    from the option VLMEvalKit's extractor model named in the result table (`extracted`); an output
    that names no option of the item ("I") is a reading that could not tell (`predicted` null),
    incorrect, as it was a miss in VLMEvalKit's `hit`."""
    key = published.upper() if published.upper() in {o.key for o in item.options} else None
    return {"predicted": [key] if key else None, "correct": key is not None and (key,) in item.gold.alternatives,
            "source": PUBLISHED_SOURCE, "extractor": extractor, "response": published}


def condition_of(path: Path) -> str:
    """C+Q for the authors' `outputs_blind` tables, C+Q+I otherwise (VLMEvalKit shows the image)."""
    return "C+Q" if any(part.lower() == "outputs_blind" for part in path.resolve().parts) else "C+Q+I"


def import_table(file: Path, data: Path, run_dir: Path, *, language: str | None = None,
                 condition: str | None = None, country: str | None = None, model: str | None = None,
                 convention: str | None = None, reading: str | None = None, sheet: str | None = None) -> dict:
    """Write the run directory `run_dir` from one VLMEvalKit table of WorldMedQA-V. The country,
    the language and the model come from the file name (`GPT4o_japan_english.xlsx`) unless
    given; the condition from its folder (`condition_of`) unless given. The replies are read
    under `convention` (default `vlmevalkit-exact`: VLMEvalKit's exact matching alone). Each
    row's question must be the data's, in that language: a table of another country or language
    is refused, and so is a second row for an index (naming both rows). A workbook is read at
    `sheet` (`medvqa.read_table`: its first sheet, with a note on stderr when it has others)."""
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
    extractor = m["extractor"] if m else None  # VLMEvalKit's extractor model: `..._gpt-4o-mini_result.xlsx`
    condition = condition or condition_of(file)
    bench = WorldMedQAV().with_language(language).with_convention(convention or VLMEVALKIT_EXACT)
    items = bench.load(data, select={"country": [country]})
    by_index = {it.meta["index"]: it for it in items}
    answers, seen, extracted, differs = [], {}, [], []
    rows = medvqa.read_table(file, ("index", "prediction"), sheet=sheet)
    for number, row in enumerate(rows, 2):  # row 1 is the header
        index = str(row["index"]).strip()
        record = f"index {index}"
        if not index.isdigit() or int(index) not in by_index:
            raise DataError(f"the data has no {country} item with this index", file=file, record=record)
        item = by_index[int(index)]
        medvqa.refuse_repeat(seen, int(index), f"row {number}", file=file, what=f"two rows for index {index}")
        question = str(row.get("question", "")).strip()
        if question and question != item.question:
            raise DataError(f"the question differs from the data's {country} item in language {language!r} "
                            "(a table of another language or country?)", file=file, record=record)
        text = str(row["prediction"])
        published = str(row.get("extracted", "")).strip()
        extra = None
        if published:
            matched = can_infer(text, {o.key: o.text for o in item.options})
            unread = matched is None and text.strip() and (bench.active_convention == VLMEVALKIT_EXACT
                                                           or medvqa.score(item, text).status == "parse_failure")
            if unread:
                # VLMEvalKit asked its extractor model here: its answer is the record's assisted reading
                extra = {"assisted": published_reading(item, published, extractor)}
                extracted.append(item.id)
            elif matched is not None and matched != published:
                differs.append({"item_id": item.id, "matching": matched, "published": published})
        answers.append((item, condition, text if text.strip() else None, extra))
    load = {"data": str(data.resolve()), "split": None, "sample": False, "limit": None,
            "select": {"country": [country]}}
    summary = medvqa.write_run(bench, items, answers, run_dir, model=model, load=load, saved=False,
                               command_line=["medvqa", *sys.argv[1:]], images_attested=True, reading=reading,
                               source={"files": [str(file.resolve())], "condition": condition,
                                       "extractor_items": extracted, "differs_from_published": differs})
    return {**summary, "benchmark": bench.name, "model": model, "language": language, "country": country,
            "condition": condition, "convention": bench.active_convention,
            "n_extractor": len(extracted), "differs_from_published": differs,
            "n_missing": sum(1 for _, _, t, _ in answers if t is None) + len(items) - len(answers)}

"""VLMEvalKit prediction tables → run directories (`medvqa import worldmedqa_v`).

WorldMedQA-V's authors evaluated models with VLMEvalKit, whose output table per model and
dataset (`<Model>_<country>_<local|english>.xlsx`) holds each item's `index`, its question and
options as asked, the gold letter (`correct_option`; `answer` is empty in the published tables)
and the model's reply in `prediction`; with the image in `visuals/outputs_w_images/` (condition
C+Q+I) and without it in `visuals/outputs_blind/` (C+Q). The table carries its items, so no
other data is needed: the run's items are the table's (`loader.load_table`; the manifest's
`imported.items_from` names the file and its rows), and `--data` checks the table against
WorldMedQA-V's own tables instead. The replies are scored under the convention
`vlmevalkit-exact` (VLMEvalKit's exact matching alone, `matching.py`; `--convention vlmevalkit`
adds medvqa's answer chain where matching fails).

VLMEvalKit's result table (`<Model>_<country>_<version>_<extractor>_result.xlsx`) adds, per
item, whether the reply hit the gold (`hit`), and the option VLMEvalKit's extractor model named
(`extracted`) where the extractor ran; the published accuracy is the mean of `hit`, and
`<Model>_<country>_<version>_acc.csv` beside it holds it where it was published. Each reply the
strict reader cannot read (where VLMEvalKit asked its extractor) keeps its strict
`parse_failure` and gains the published extractor's option as its assisted reading
(`Record.assisted`, source `vlmevalkit-result`, the extractor named from the file name; an
output that names no option, such as "I", is a reading that could not tell, incorrect, as it was
a miss there); the manifest lists those items under `imported.extractor_items`. The strict
accuracy is then VLMEvalKit's exact matching, the assisted one its published accuracy.

`reconcile` (`published.py`, beside the published accuracy and the extractor's readings)
compares medvqa's assisted verdict with the published `hit` item by item and names
the cause of every difference (`imported.differences`), and the published accuracy beside
medvqa's (`imported.published`): `report --json` shows it beside the strict and assisted ones.
`import_folder` imports every table under a folder, one run directory each.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import medvqa
from medvqa import DataError

from .benchmark import WorldMedQAV
from .loader import by_index, gold_letter, item_id_of, items_of_rows, occurrences
from .matching import VLMEVALKIT_EXACT, can_infer
from .published import published_reading, reconcile
from .sources import Source, describe, tables_under


def read_source(source: Source, sheet: str | None = None, *, items: bool = True) -> Source:
    """`source` with its rows read, and with `items` the items they carry (in row order; none
    where the table holds no question and options)."""
    source.rows = medvqa.read_table(source.file, ("index", "prediction"), sheet=sheet)
    carried = bool(source.rows) and all(c in source.rows[0] for c in ("question", "A", "B", "C", "D"))
    source.items = (
        items_of_rows(source.rows, source.country, source.language, source.file) if (items and carried) else []
    )
    return source


def repeats(source: Source) -> list[dict]:
    """The repeated indices of a table, as findings (warnings): each further question of an index
    is kept as its own item (`israel-84#2`), counted as the published accuracy counts it."""
    out = []
    rows_of: dict[str, list[tuple[int, int]]] = {}
    for number, (row, n) in enumerate(zip(source.rows, occurrences(source.rows)), 2):
        rows_of.setdefault(str(row["index"]).strip(), []).append((n, number))
    for index, rows in rows_of.items():
        if len(rows) < 2 or not index.isdigit():
            continue
        ids = {n: item_id_of(source.country, int(index), n) for n, _ in rows}
        named = ", ".join(
            f"row {number} {ids[n]} (gold {gold_letter(source.rows[number - 2])})" for n, number in sorted(rows)
        )
        order = (
            ""
            if [n for n, _ in rows] == sorted(n for n, _ in rows)
            else ("; listed here in the other order, numbered by gold letter so that every table names them alike")
        )
        out.append(
            {
                "rule": "repeated-index",
                "level": "warning",
                "record": f"index {index}",
                "items": [ids[n] for n, _ in sorted(rows)],
                "message": f"index {index} holds {len(rows)} different questions: {named}; each is an item and "
                f"counts, as in the published accuracy{order}",
            }
        )
    return out


def plan(source: Source, items: list, bench, data: Path | None) -> list[tuple]:
    """(item, condition, reply, extra fields) per row, and the rows' items: from the table itself,
    or, given `data`, WorldMedQA-V's items of its country and language, each row's question checked."""
    file, country = source.file, source.country
    if data is not None:
        by_key = {(it.meta["index"], it.meta.get("occurrence", 1)): it for it in items}
    seen: dict = {}
    out = []
    for number, (row, n) in enumerate(zip(source.rows, occurrences(source.rows)), 2):  # row 1 is the header
        index = str(row["index"]).strip()
        record = f"index {index}"
        if data is None:
            item = source.items[number - 2]
        else:
            if not index.isdigit() or (int(index), 1) not in by_key:
                raise DataError(f"the data has no {country} item with this index", file=file, record=record)
            if (int(index), n) not in by_key:  # the data holds this index once: a second row is refused
                medvqa.refuse_repeat(seen, int(index), f"row {number}", file=file, what=f"two rows for index {index}")
            item = by_key[(int(index), n)]
            seen.setdefault(int(index), (str(file), f"row {number}"))
            question = str(row.get("question", "")).strip()
            if question and question != item.question:
                raise DataError(
                    f"the question differs from the data's {country} item in language "
                    f"{source.language!r} (a table of another language or country?)",
                    file=file,
                    record=record,
                )
        text = str(row["prediction"])
        published = str(row.get("extracted", "")).strip()
        extra = None
        if published:
            matched = can_infer(text, {o.key: o.text for o in item.options})
            unread = (
                matched is None
                and text.strip()
                and (bench.active_convention == VLMEVALKIT_EXACT or medvqa.score(item, text).status == "parse_failure")
            )
            if unread:
                # VLMEvalKit asked its extractor model here: its answer is the record's assisted reading
                extra = {"assisted": published_reading(item, published, source.extractor)}
        out.append((item, source.condition, text if text.strip() else None, extra))
    return out


def import_table(
    file: Path,
    data: Path | None,
    run_dir: Path,
    *,
    language: str | None = None,
    condition: str | None = None,
    country: str | None = None,
    model: str | None = None,
    model_name: str | None = None,
    convention: str | None = None,
    reading: str | None = None,
    sheet: str | None = None,
    source: Source | None = None,
    max_response_bytes: int | None = None,
) -> dict:
    """Write the run directory `run_dir` from one VLMEvalKit table of WorldMedQA-V. The country,
    the language and the model come from the file name (`GPT4o_japan_english.xlsx`) unless
    given; the condition from its folder (`condition_of`) unless given. The items are the
    table's own (question, options and gold beside each reply); given `data`, WorldMedQA-V's
    items of that country and language instead, each row's question checked against them (a table
    of another country or language is refused, and so is a second row for an index the data holds
    once, naming both rows). The replies are read under `convention` (default `vlmevalkit-exact`:
    VLMEvalKit's exact matching alone). A workbook is read at `sheet` (`medvqa.read_table`: its
    first sheet, with a note on stderr when it has others). `source`: the table already read
    (`read_source`), as a folder import passes it. A reply longer than `max_response_bytes` (None:
    `medvqa.write_run`'s 256 KiB) is cut, its record marked `truncated`."""
    source = source or read_source(
        describe(Path(file), model=model, country=country, language=language, condition=condition),
        sheet,
        items=data is None,
    )
    file = source.file
    bench = WorldMedQAV().with_language(source.language).with_convention(convention or VLMEVALKIT_EXACT)
    if data is not None:
        items = bench.load(data, select={"country": [source.country]})
        load = {
            "data": str(Path(data).resolve()),
            "split": None,
            "sample": False,
            "limit": None,
            "select": {"country": [source.country]},
        }
        items_from = {"data": str(Path(data).resolve())}
    else:
        if not source.items:
            raise DataError(
                "the table does not carry its items (no question and options A-D): give --data",
                file=file,
                record="row 1 (the header)",
            )
        items = by_index(source.items)
        load = {
            "data": str(file.resolve()),
            "split": None,
            "sample": False,
            "limit": None,
            "select": {"country": [source.country]},
            **({"sheet": sheet} if sheet else {}),
        }
        items_from = {"file": str(file.resolve()), "rows": len(source.rows)}
    answers = plan(source, items, bench, data)
    findings = repeats(source)
    result: dict = {}

    def reconciled(records: list[dict]) -> dict:
        result.update(reconcile(source, answers, records))
        return result

    summary = medvqa.write_run(
        bench,
        items,
        answers,
        run_dir,
        model=source.model,
        load=load,
        saved=False,
        command_line=["medvqa", *sys.argv[1:]],
        images_attested=True,
        reading=reading,
        model_name=model_name,
        source={
            "files": [str(file.resolve())],
            "condition": source.condition,
            "country": source.country,
            "items_from": items_from,
            "findings": findings,
        },
        reconcile=reconciled,
        **({"max_response_bytes": max_response_bytes} if max_response_bytes else {}),
    )
    return {
        **summary,
        "benchmark": bench.name,
        "model": source.model,
        "language": source.language,
        "country": source.country,
        "condition": source.condition,
        "convention": bench.active_convention,
        "file": str(file),
        "n_extractor": len(result["extractor_items"]),
        "differs_from_published": result["differs_from_published"],
        "published": result["published"].get(source.condition),
        "differences": result["differences"],
        "findings": findings,
        "items_from": items_from,
        "n_missing": sum(1 for _, _, t, _ in answers if t is None) + len(items) - len(answers),
    }


def canonical(source: Source) -> list[tuple[int, object]]:
    """(row number, item) of a table in item order (`by_index`): what two tables must agree on."""
    return sorted(enumerate(source.items, 2), key=lambda p: (p[1].meta["index"], p[1].meta.get("occurrence", 1)))


def first_difference(a: Source, b: Source) -> str | None:
    """Where the items of two tables of one country and language first differ (`row N of A and
    row M of B: the question`), None where they agree."""
    x, y = canonical(a), canonical(b)
    for (ra, ia), (rb, ib) in zip(x, y):
        if ia != ib:
            what = next(
                (
                    name
                    for name, u, v in (
                        ("id", ia.id, ib.id),
                        ("question", ia.question, ib.question),
                        ("options", ia.options, ib.options),
                        ("gold", ia.gold, ib.gold),
                    )
                    if u != v
                ),
                "item",
            )
            return f"row {ra} ({ia.id}) and row {rb} ({ib.id}): the {what} differs"
    if len(x) != len(y):
        return f"row {min(len(x), len(y)) + 2}: one table has {len(x)} items, the other {len(y)}"
    return None


def import_folder(
    root: Path,
    out: Path,
    *,
    convention: str | None = None,
    reading: str | None = None,
    progress: Callable[[dict], None] | None = None,
    max_response_bytes: int | None = None,
) -> dict:
    """Import every table under `root` (`tables_under`) into `out/<model>/<country>_<version>_<image|blind>`
    (`Source.run_parts`; two tables whose folders come out the same are refused naming both), in
    one process: each table read once, its items taken from it. A run directory that already
    holds a run is skipped (a re-run imports what is new). Tables of one country and language must
    hold the same items: a disagreement is an error naming both files and the first row that
    differs, before anything is written. `progress` gets the progress state after each table read
    and each run written. Returns {runs: [summary], skipped: [...], passed_over: [...]}."""
    sources, passed = tables_under(root)
    # under OUT whatever a file is named (`.._japan_local.xlsx`); two tables of one folder refused
    dirs = medvqa.run_dirs(out, {str(s.file): s.run_parts for s in sources}, file=root)
    todo = [s for s in sources if not (dirs[str(s.file)] / "manifest.json").exists()]
    skipped = [
        {
            "run_dir": str(dirs[str(s.file)]),
            "file": str(s.file),
            "model": s.model,
            "country": s.country,
            "language": s.language,
            "condition": s.condition,
        }
        for s in sources
        if s not in todo
    ]
    total = 2 * len(todo)
    state = {
        "done": 0,
        "total": total,
        "errors": 0,
        "cached": 0,
        "backend": {},
        "conditions": {"read": {"done": 0, "total": len(todo)}, "import": {"done": 0, "total": len(todo)}},
    }

    def step(phase: str) -> None:
        state["done"] += 1
        state["conditions"][phase]["done"] += 1
        if progress is not None:
            progress(state)

    if progress is not None:
        progress(state)
    reference: dict[tuple[str, str], Source] = {}
    for s in todo:
        read_source(s)
        step("read")
        first = reference.setdefault(s.group, s)
        if first is not s and (where := first_difference(first, s)):
            raise DataError(
                f"its {s.country} items ({s.language}) differ from those of {first.file}: {where}; "
                "tables of one country and language must hold the same items",
                file=s.file,
            )
    checked = set()  # a group with new tables: one table imported before is read and compared too
    for s in (t for t in sources if t not in todo):
        if s.group in reference and s.group not in checked:
            checked.add(s.group)
            read_source(s)
            first = reference[s.group]
            if where := first_difference(s, first):
                raise DataError(
                    f"its {s.country} items ({s.language}) differ from those of {s.file} (imported "
                    f"before): {where}; tables of one country and language must hold the same items",
                    file=first.file,
                )
    runs = []
    for s in todo:
        runs.append(
            import_table(
                s.file,
                None,
                dirs[str(s.file)],
                convention=convention,
                reading=reading,
                source=s,
                max_response_bytes=max_response_bytes,
            )
        )
        s.rows, s.items = [], []  # what is written need not stay in memory
        step("import")
    return {"runs": runs, "skipped": skipped, "passed_over": passed}

"""One metrics layer: every number a user sees over records comes from here.

`cell` turns records into one `Cell` (n, correct, the estimate, its interval and the status
counts), under the benchmark's own rules: held-out records never count, a record the benchmark's
`counts` leaves out (a withdrawn item under the convention in force) is counted aside as
`uncounted`, and a benchmark whose headline is not accuracy (micro-F1, points) supplies its
value and interval through `Benchmark.headline`. `group` splits records by condition and any
strata, a list-valued stratum once per value. The run summary, `report`, every adapter's tables,
`compare`, the audit's marginals and the judge report all call these, so one cell has one n and
one value in every command.

Over 400 lines: the module is the one path from records to a number, and its parts are steps
of that one path rather than separate concerns: a reading (`read`, strict or assisted) decides
what each record says, `group` which cell it falls in, `counted` whether it counts, `cell` the
numbers, and the warnings and table rows are read off those cells. Every caller (audit, compare,
report, the run summary, the adapters' tables through `medvqa.metrics`) addresses them as one
layer, `metrics.read` → `metrics.group` → `metrics.cell`; split into readings, strata and
cells, each number would again be assembled from three modules by each caller.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .headline import ACCURACY, WILSON, accuracy, accuracy_ci, live
from .results import NON_ANSWERS, STATUSES, AssistedDict, RecordDict, as_records, condition_order

if TYPE_CHECKING:
    import pandas as pd

    from .benchmark import Benchmark

UNKNOWN = "unknown"  # the level of a record without a value for the stratum
NONE = "none"  # the level of an empty list-valued stratum
CI_COLUMNS = ("ci_low", "ci_high")
STRICT, ASSISTED = "strict", "assisted"
# How a record is read: strictly (the rules alone) or assisted (an extractor's answer where the
# rules could not read the reply). A benchmark's protocol names its headline reading
# (`Benchmark.reading`); `--reading` switches it, and the other stands beside it.
READINGS = (STRICT, ASSISTED)


def other_columns(reading: str = STRICT) -> tuple[str, ...]:
    """The columns a table row gains where an extraction exists, under headline `reading`: correct
    and accuracy under the other reading (`assisted_*` beside a strict headline, `strict_*` beside
    an assisted one), its 95 % (Wilson) interval, and how many parse failures the extractor read."""
    other = other_reading(reading)
    return (f"{other}_correct", f"{other}_accuracy", f"{other}_ci_low", f"{other}_ci_high", "extracted")


def other_reading(reading: str) -> str:
    return ASSISTED if reading == STRICT else STRICT


ASSISTED_COLUMNS = other_columns(STRICT)
STRICT_COLUMNS = other_columns(ASSISTED)
PARSE_FAILURE = "parse_failure"
STRICT_READING: Final = "strict_reading"  # the field of an assisted-read record that keeps its strict reading
# A condition with more parse failures than this share of its records gets a warning.
PARSE_FAILURE_WARNING = 0.10


@dataclass(frozen=True)
class Cell:
    """The numbers of one group of records. `value` is the headline metric (`metric`): accuracy
    unless the benchmark says otherwise; `accuracy` is always correct / n."""

    n: int
    correct: int
    value: float | None
    ci: tuple[float, float] | None
    ci_method: str | None
    metric: str = ACCURACY
    statuses: Mapping[str, int] = field(default_factory=dict)
    uncounted: int = 0  # records the benchmark's rules leave out of every denominator
    # correct under the other reading than `reading` (the reading of `correct`): beside a strict
    # headline, the assisted one (an extractor's reading of the parse failures, the strict reading
    # of every other record), beside an assisted one the strict; None when no record of the group
    # has an assisted reading (both readings are then the same)
    other_correct: int | None = None
    extracted: int = 0  # parse failures with an assisted reading
    reading: str = STRICT
    # a run asked --repeats K times: K, and the items the records are repeats of; n counts records
    # (item × repeat), and the interval of an accuracy is the item-level one over the items' means
    repeats: int = 1
    n_items: int | None = None

    @property
    def other_reading(self) -> str:
        return other_reading(self.reading)

    @property
    def other_accuracy(self) -> float | None:
        return self.other_correct / self.n if self.n and self.other_correct is not None else None

    def correct_under(self, reading: str) -> int | None:
        """Correct under `reading` (None where no extraction makes it differ from the headline's)."""
        if reading == self.reading:
            return self.correct
        return self.other_correct if self.other_correct is not None else self.correct

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    def accuracy_columns(self, statuses: Sequence[str] = NON_ANSWERS) -> dict[str, Any]:
        """A table row's accuracy columns: n, correct, accuracy, its 95 % (Wilson) interval (ci_low,
        ci_high, ci_method, whatever the headline metric), the count of each of `statuses` and,
        where an extraction exists, the assisted columns (`assisted_columns`)."""
        ci, method = (
            (self.ci, self.ci_method) if self.metric == ACCURACY else (accuracy_ci(self.correct, self.n), WILSON)
        )
        return {
            "n": self.n,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None,
            "ci_method": method if ci else None,
            **self.repeat_columns(),
            **{s: self.statuses.get(s, 0) for s in statuses},
            **assisted_columns(self),
        }

    def repeat_columns(self) -> dict[str, int | None]:
        """{n_items, repeats} of a group of repeated records; {} otherwise."""
        return {"n_items": self.n_items, "repeats": self.repeats} if self.repeats > 1 else {}

    def as_dict(self) -> dict[str, Any]:
        """{n, correct, accuracy, ci, ci_method, <every status>, uncounted} (and metric and value
        when the headline is not accuracy)."""
        out = {
            "n": self.n,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "ci": list(self.ci) if self.ci is not None else None,
            "ci_method": self.ci_method,
            **{s: self.statuses.get(s, 0) for s in STATUSES},
            "uncounted": self.uncounted,
            **self.repeat_columns(),
        }
        if self.metric != ACCURACY:
            out.update(metric=self.metric, value=self.value)
        if self.other_correct is not None:
            ci = accuracy_ci(self.other_correct, self.n)
            other = self.other_reading
            out.update(
                {
                    f"{other}_correct": self.other_correct,
                    f"{other}_accuracy": self.other_accuracy,
                    f"{other}_ci": list(ci) if ci is not None else None,
                    "extracted": self.extracted,
                }
            )
        return out


def assisted_columns(c: Cell) -> dict[str, Any]:
    """The other reading's columns (`other_columns`) of a table row for cell `c`; {} when no
    record of it has an assisted reading (both readings are then the same, and the headline's
    numbers the only ones). Every table (`report`, each benchmark's `--table`, compare) takes them
    from here, so a cell has one n and one value under each reading everywhere."""
    if c.other_correct is None:
        return {}
    ci = accuracy_ci(c.other_correct, c.n) or (None, None)
    other = c.other_reading
    return {
        f"{other}_correct": c.other_correct,
        f"{other}_accuracy": c.other_accuracy,
        f"{other}_ci_low": ci[0],
        f"{other}_ci_high": ci[1],
        "extracted": c.extracted,
    }


def with_assisted(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """`columns`, followed by the other reading's columns when a row has them (where an extraction
    exists; a table where both readings agree keeps its columns)."""
    rows = list(rows)
    for reading in READINGS:
        extra = other_columns(reading)
        if any(extra[1] in r for r in rows):
            return [*columns, *extra]
    return list(columns)


def add_ci(frame: pd.DataFrame) -> None:
    """Add the `CI_COLUMNS` (Wilson 95 % intervals, fractions) to a DataFrame with integer columns
    `correct` and `n`, in place."""
    cis = [accuracy_ci(int(c), int(n)) or (None, None) for c, n in zip(frame["correct"], frame["n"])]
    frame["ci_low"] = [ci[0] for ci in cis]
    frame["ci_high"] = [ci[1] for ci in cis]


def counted(records: Iterable[Mapping[str, Any]], benchmark: Benchmark | None = None) -> tuple[list[RecordDict], int]:
    """(the records that enter denominators, how many others the benchmark's rules leave out).
    Held-out records (answers withheld) are neither."""
    from .benchmark import Benchmark

    alive = live(records)
    if benchmark is None or type(benchmark).counts is Benchmark.counts:  # (the default counts every record)
        return alive, 0
    kept = [r for r in alive if benchmark.counts(r)]
    return kept, len(alive) - len(kept)


def assisted_reading(record: RecordDict) -> AssistedDict | None:
    """The assisted reading that counts for `record`: its `assisted` field when the strict reader
    could not read it (status `parse_failure`), else None (the strict reading stands)."""
    assisted = record.get("assisted")
    if not assisted or STRICT_READING in record:  # (a record already read assisted is read once)
        return None
    return assisted if str(record.get("status")) == PARSE_FAILURE else None


def assisted_correct(record: RecordDict) -> bool:
    """Correct under the assisted reading: the extractor's verdict on a parse failure it read,
    the strict one otherwise (an assisted reading never overrides a strict one)."""
    assisted = assisted_reading(record)
    return bool(assisted.get("correct")) if assisted is not None else bool(record.get("correct"))


def assisted_record(record: RecordDict) -> RecordDict:
    """`record` as its assisted reading reads it: a parse failure an extractor read takes the
    extractor's `predicted` and `correct` (status `answered` when it named an option) and keeps
    its strict reading in `strict_reading` ({predicted, correct, status}); any other record is
    returned as it is."""
    assisted = assisted_reading(record)
    if assisted is None:
        return record
    predicted = assisted.get("predicted")
    strict = {
        "predicted": record.get("predicted"),
        "correct": bool(record.get("correct")),
        "status": record.get("status"),
    }
    return {
        **record,
        "predicted": predicted,
        "correct": bool(assisted.get("correct")),
        "status": "answered" if predicted else PARSE_FAILURE,
        STRICT_READING: strict,
    }


def reading_of(benchmark: Benchmark | None, reading: str | None = None) -> str:
    """The reading an output's headline uses: `reading` where one is asked for, else the
    benchmark's protocol's (`Benchmark.reading`; strict without a benchmark)."""
    if reading is None:
        return benchmark.reading if benchmark is not None else STRICT
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; choose {', '.join(READINGS)}")
    return reading


def read(records: Iterable[Mapping[str, Any]], reading: str) -> list[RecordDict]:
    """`records` as `reading` reads them: as they are (strict), or each as `assisted_record` reads
    it. Every output reads its records through here, once, before any count."""
    if reading == STRICT:
        return list(as_records(records))
    return [assisted_record(r) for r in as_records(records)]


def reading_summary(runs: Iterable[Any]) -> dict[str, Any]:
    """What a document over several runs says of its reading: {"reading": the one reading of every
    run (else "mixed"), "readings": {benchmark: reading}} (runs: anything with `benchmark` and
    `reading`, such as `SavedRun`)."""
    readings = {run.benchmark.name: run.reading for run in runs}
    values = set(readings.values())
    return {"reading": values.pop() if len(values) == 1 else "mixed" if values else STRICT, "readings": readings}


def strict_reading(record: RecordDict) -> dict[str, Any] | None:
    """The strict reading kept by an assisted-read record (`assisted_record`), else None."""
    return record.get(STRICT_READING)


def cell(records: Iterable[Mapping[str, Any]], benchmark: Benchmark | None = None) -> Cell:
    """The `Cell` of `records` under `benchmark`'s rules and headline metric."""
    kept, left_out = counted(records, benchmark)
    n = len(kept)
    correct = len([r for r in kept if r.get("correct")])
    statuses = Counter([str(r.get("status")) for r in kept])
    as_assisted = len([r for r in kept if r.get(STRICT_READING) is not None])  # (`strict_reading`, inline: per record)
    extracted = as_assisted or len([r for r in kept if r.get("assisted") and assisted_reading(r) is not None])
    other_correct, reading = None, STRICT  # (no extraction: one reading, the headline's)
    if as_assisted:  # records read assisted: the strict reading beside
        other_correct = sum(bool((strict_reading(r) or r).get("correct")) for r in kept)
        reading = ASSISTED
    elif extracted:
        other_correct = sum(assisted_correct(r) for r in kept)
    if benchmark is not None and benchmark.headline_metric != ACCURACY:
        head = benchmark.headline(kept)
        ci = head.get("ci")
        return Cell(
            n,
            correct,
            head.get("value"),
            (ci[0], ci[1]) if ci else None,
            head.get("ci_method", "bootstrap"),
            head.get("metric", benchmark.headline_metric),
            dict(statuses),
            left_out,
            other_correct=other_correct,
            extracted=extracted,
            reading=reading,
        )
    acc = accuracy(kept)
    return Cell(
        n,
        correct,
        acc.value,
        acc.ci,
        acc.ci_method,
        ACCURACY,
        dict(statuses),
        left_out,
        other_correct=other_correct,
        extracted=extracted,
        reading=reading,
        repeats=acc.repeats,  # (1 and None without repeats, as a `Cell` has them)
        n_items=acc.n_items,
    )


def parse_failure_warnings(
    records: Iterable[Mapping[str, Any]], benchmark: Benchmark | None = None, threshold: float = PARSE_FAILURE_WARNING
) -> list[str]:
    """One line per condition whose share of parse failures exceeds `threshold`, naming the share
    and the two remedies. A warning, never an exit status: a model that babbles is a result."""
    out = []
    for key, rs in group(records).items():
        c = cell(rs, benchmark)
        failures = c.statuses.get(PARSE_FAILURE, 0)
        if c.n and failures / c.n > threshold:
            if c.reading == ASSISTED:
                out.append(
                    f"warning: {key[0]}: {failures} of {c.n} answers ({100 * failures / c.n:.1f} %) could be "
                    f"read neither by the strict reader nor by the extractor and count as wrong"
                )
                continue
            # once an extractor has read them, the remedy left is the reading (or a convention)
            remedy = (
                "; the assisted reading counts the extractor's answers (--reading assisted)"
                if c.extracted
                else "; use a scoring convention that fits the output (--convention) or read them with an "
                "extractor model (--extractor MODEL)"
            )
            named = foreign_labels(rs, benchmark)
            if named and 2 * sum(named.values()) >= failures:  # an extractor would read the same label
                labels = ", ".join(repr(k) for k, _ in named.most_common(3))
                remedy = (
                    f"; {sum(named.values())} of them are well-formed answers naming a label not among "
                    f"their item's options ({labels}): the model (or a baseline such as constant:LABEL) "
                    f"answers in labels these items do not use"
                )
            extracted = f"; {c.extracted} read by the extractor" if c.extracted else ""
            out.append(
                f"warning: {key[0]}: {failures} of {c.n} answers ({100 * failures / c.n:.1f} %) could not be "
                f"read by the strict reader and count as wrong{extracted}{remedy}"
            )
    return out


def foreign_labels(records: Iterable[RecordDict], benchmark: Benchmark | None = None) -> Counter:
    """{label: parse failures among `records` whose reply is a well-formed JSON answer
    (`{"answer": ["A"]}`, the benchmark's answer key) naming it}: replies the reader could not read
    only because the label is not one of the item's options."""
    key = benchmark.answer_conventions().answer_key if benchmark is not None else "answer"
    named: Counter = Counter()
    for r in records:
        response = r.get("response")
        if str(r.get("status")) != PARSE_FAILURE or not response:
            continue
        try:
            value = json.loads(response)
        except (ValueError, RecursionError):  # not JSON, or nested beyond Python's reach: no answer here
            continue
        answer = value.get(key) if isinstance(value, dict) else None
        answer = [answer] if isinstance(answer, str) else answer
        if isinstance(answer, list) and answer and all(isinstance(a, str) and 0 < len(a.strip()) <= 3 for a in answer):
            named[",".join(a.strip() for a in answer)] += 1
    return named


def unreadable(*records: Mapping[str, Any]) -> bool:
    """Whether any of `records` (the sides of one pair) holds a reply its reading could not read."""
    return any(str(r.get("status")) == PARSE_FAILURE for r in records)


def delta_warning(flags: Sequence[bool], threshold: float = PARSE_FAILURE_WARNING) -> dict[str, Any]:
    """What a Δ says of its unreadable pairs (`flags`: per pair, `unreadable`): {"unreadable_pairs":
    how many, "warning": a line when their share exceeds `threshold`, else None}. Every Δ (image,
    language, model against model) carries it in its own row, and every output prints it there."""
    n, k = len(flags), sum(map(bool, flags))
    warning = None
    if n and k / n > threshold:
        warning = (
            f"{k} of {n} pairs ({100 * k / n:.1f} %) hold a reply the reading could not read (a parse "
            f"failure, counted wrong): this Δ may measure the reader, not the model"
        )
    return {"unreadable_pairs": k, "warning": warning}


def level_keys(value: Any) -> list[str]:
    """The levels a stratum value falls under: one per element of a list (an item with two image
    types counts under both), `none` for an empty list, `unknown` for no value; text as it is,
    anything else as JSON (2024 → "2024", True → "true")."""
    if isinstance(value, (list, tuple)):
        return [k for v in value for k in level_keys(v)] if value else [NONE]
    if value is None:
        return [UNKNOWN]
    return [value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)]


def held_fields(
    by: Iterable[str], records: Sequence[Mapping[str, Any]], aliases: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """({stratum name: the record field holding it} for each name the records hold, directly or
    through one of the benchmark's aliases; [the names they do not hold])."""
    aliases = aliases or {}

    def held(field_name: str | None) -> bool:  # (stops at the first record that holds it: the usual case)
        return field_name is not None and any(field_name in r for r in records)

    fields, missing = {}, []
    for name in by:
        field_name = next((f for f in (name, aliases.get(name)) if held(f)), None)
        if field_name is None:
            missing.append(name)
        else:
            fields[name] = field_name
    return fields, missing


def resolve_fields(
    by: Iterable[str], records: Sequence[Mapping[str, Any]], source: str = "", aliases: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`held_fields`, where a name no record holds is a ValueError naming the fields there are."""
    fields, missing = held_fields(by, records, aliases)
    if missing:
        available = set().union(*records) if records else set()
        raise ValueError(
            f"{source or 'the run'}: records have no field {missing[0]!r}; available: {', '.join(sorted(available))}"
        )
    return fields


def group(records: Iterable[Mapping[str, Any]], by: Sequence[str] = ()) -> dict[tuple[str, ...], list[RecordDict]]:
    """{(condition, level of each field of `by`): records}, conditions in their order (C, C+Q,
    C+I, C+Q+I, derived labels after their base), levels sorted."""
    out: dict[tuple[str, ...], list[RecordDict]] = {}
    if len(by) == 1:  # (the common case, without building each record's combinations)
        name = by[0]
        for r in as_records(records):
            for level in _value_levels(r.get(name)):
                out.setdefault((r["condition"], level), []).append(r)
    else:
        for r in as_records(records):
            for levels in _levels(r, by):
                out.setdefault((r["condition"], *levels), []).append(r)
    return dict(sorted(out.items(), key=lambda kv: (condition_order(kv[0][0]), kv[0][1:])))


def _value_levels(value: Any) -> Iterable[str]:
    """`level_keys` of one stratum value, each level once (text, the usual value, as it is)."""
    return (value,) if type(value) is str else dict.fromkeys(level_keys(value))


def _levels(record: Mapping[str, Any], by: Sequence[str]) -> list[tuple[str, ...]]:
    """Every combination of levels `record` falls under for the fields `by` (each level once)."""
    keys: list[tuple[str, ...]] = [()]
    for name in by:
        keys = [k + (level,) for k in keys for level in _value_levels(record.get(name))]
    return keys


def excluded_counts(excluded: Iterable[Mapping[str, Any]], condition: str, by: Sequence[str] = ()) -> Counter:
    """{levels of `by`: how many excluded items (a manifest's `excluded`) `condition` would have
    asked}: each entry lists the conditions its item takes (`conditions`: an annulled text question
    is no C+Q+I row's); an entry without the list (an older run) counts under every condition.
    Every command's `n_excluded` on a condition's rows is this count."""
    base = condition.split("/", 1)[0]  # a derived label (`C+Q/forced`) asks what its base asks
    return Counter(levels for e in excluded if base in (e.get("conditions") or (base,)) for levels in _levels(e, by))


def by_condition(records: Iterable[Mapping[str, Any]], benchmark: Benchmark | None = None) -> dict[str, dict[str, Any]]:
    """{condition: Cell.as_dict()}: the run summary's and the judge report's per-condition numbers."""
    return {key[0]: cell(rs, benchmark).as_dict() for key, rs in group(records).items()}


def headline_numbers(
    records: Iterable[Mapping[str, Any]], benchmark: Benchmark | None = None, reading: str | None = None
) -> dict[str, Any]:
    """A run's summary numbers under `reading` (None: the benchmark's protocol's): {reading,
    accuracy: {condition: fraction}, conditions: {condition: Cell.as_dict()}, warnings}. The run,
    the import and the re-scoring commands all print these."""
    reading = reading_of(benchmark, reading)
    records = read(records, reading)
    conditions = by_condition(records, benchmark)
    return {
        "reading": reading,
        "accuracy": {c: v["accuracy"] for c, v in conditions.items()},
        "conditions": conditions,
        "warnings": parse_failure_warnings(records, benchmark),
    }


def table(
    records: Iterable[Mapping[str, Any]],
    by: Sequence[str] = (),
    benchmark: Benchmark | None = None,
    excluded: Iterable[Mapping[str, Any]] = (),
    reading: str | None = None,
) -> pd.DataFrame:
    """One row per condition (× level of each field of `by`): n (with `n_items` and `repeats`
    beside it for a run asked --repeats K times), n_excluded (items without a usable gold answer
    in that level that the condition would ask: `excluded_counts`), uncounted, correct, accuracy,
    its interval and every status; with
    `metric` and `value` too when the benchmark's headline is not accuracy, and the other reading's
    columns (`other_columns`) where an extraction exists. Given a `reading`, the records are read
    so (`read`) and each row names it (`reading` column)."""
    import pandas as pd

    if reading is not None:
        records = read(records, reading)
    by = list(by)
    headline = benchmark is not None and benchmark.headline_metric != ACCURACY
    columns = [
        "condition",
        *by,
        "n",
        "n_excluded",
        "uncounted",
        "correct",
        "accuracy",
        *CI_COLUMNS,
        "ci_method",
        *STATUSES,
        *(["metric", "value"] if headline else []),
    ]
    repeated = False
    excluded, n_excluded = list(excluded), {}
    rows = []
    for key, rs in group(records, by).items():
        c = cell(rs, benchmark)
        if c.n == 0 and c.uncounted == 0:
            continue  # held-out records only
        if key[0] not in n_excluded:
            n_excluded[key[0]] = excluded_counts(excluded, key[0], by)
        row = {
            "condition": key[0],
            **dict(zip(by, key[1:])),
            "n_excluded": n_excluded[key[0]][key[1:]],
            "uncounted": c.uncounted,
            **c.accuracy_columns(STATUSES),
        }
        if headline:
            row.update(metric=c.metric, value=c.value)
        repeated |= c.repeats > 1
        rows.append(row)
    if repeated:  # a run asked --repeats K times: the items its interval is over, and K, beside n
        columns[columns.index("n") + 1 : columns.index("n") + 1] = ["n_items", "repeats"]
    if reading is not None:
        rows = [{**row, "reading": reading} for row in rows]
        columns.append("reading")
    return pd.DataFrame(rows, columns=with_assisted(columns, rows))

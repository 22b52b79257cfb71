"""Facts about Japan's MHLW national licensing exams that every adapter of them shares: the
eleven professions, and the pass criteria (合格基準) with point weights, each with its source,
checked against a run's records (`medvqa report RUN --pass`).

    >>> from medvqa.mhlw import load_rules
    >>> sorted({r.year for r in load_rules() if r.profession == "Physician" and r.kind == "min_points"})[:2]
    [2020, 2021]

`data/mhlw/pass_criteria.csv` (package data of `medvqa`) holds one row per fact, each with its
`source` URL(s) and a `secondary` flag (yes: not quoted from mhlw.go.jp itself). Row kinds:

- `weight`: questions of `sections` (";"-separated, `*` = all) numbered `numbers` ("1-25,50",
  `*` = all) score `points_each` points and belong to `parts` (e.g. physician 必修 = `hisshu`:
  blocks B and E, questions 1-25 one point, 26-50 three points; `total` when one weight covers
  the whole exam)
- `min_points`: the points of `parts` ("+"-joined, `*` = every part) must reach `required` of
  `max`; when the data's maximum differs (items excluded from scoring), the line is scaled as
  the source states in `scaling` ("49=40;48=39": maximum=line; "80%": a share of the maximum),
  and is "not evaluable" when the source states no scaled line
- `min_percent`: the points of `parts` must reach `required` percent of their maximum
- `max_kinki`: at most `required` (e.g. "<=3") questions answered with a 禁忌肢 option; decided
  only when the caller counts the selections (`kinki=`), since MHLW does not publish which
  options are 禁忌肢 (some datasets reconstruct them); "not evaluable" otherwise
- `subject_min_percent`, `max_zero_subjects`: per-subject scores and zero-score subjects are
  not in the data: always "not evaluable"
- `scoring`: the source's sentence on weights where the questions they apply to are unknown

Criteria are shown under one name whatever the profession or year (`Rule.name`; the
row's `criterion_id`, such as `PHY119-hisshu`, only identifies the row in the file): `total`
(the whole exam), the part(s) judged (`hisshu`, `general`, `general+situational`, `practical`,
`areaA`, ...), `hisshu-subjects` (a share in each subject of 必須), `zero-subjects` and
`kinki` (the 禁忌肢 limit). `hisshu` names the block of essential questions whose line is
absolute, whatever the profession calls it (physicians', dentists' and nurses' 必修 hisshū,
pharmacists' 必須 hissu), as the items' `hisshu` field does; `kinki` is the items' `kinki`
field (their 禁忌 options).

Which record counts for an item: its C+Q+I record where it has one, else its C+Q record.
The result of a profession-year is "fail" when a criterion fails (a failed criterion is
decisive); "not evaluable" when some question of the exam has no record (a verdict needs the
whole exam), no criterion is known, or no points criterion could be decided; "pass" when every
criterion passes; and "pass on the evaluable criteria" when every criterion that could be
decided passes but some could not (禁忌肢 not marked in the data, per-subject scores, a part
the file has no weights for, a maximum the source gives no line for): each of those keeps its
own "not evaluable" row with the reason, and the exam's row names them (`not_evaluated`).
Points are reported even when no criterion is known for that year. Lines for candidates exempt
from some subjects (radiological technologists 2023, 2025) are not shipped: a model sits the
whole exam.

Over 400 lines: this is one public module (`medvqa.mhlw`, whose names the MHLW adapters import
and docs/api.md documents), and the reading of the criteria file into one verdict per exam is
one idea whose helpers only it uses; moved into a second module of `medvqa/`, they would become
either public names or a private module this one reads. The linked question sets at the end
are the MHLW exams' other shared fact, a few dozen lines.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from medvqa.core.items import DataError, Item
from medvqa.core.passlines import FAIL, NOT_EVALUABLE, OVERALL, PASS, PASS_ON_EVALUABLE, PassLines, PassVerdict

__all__ = [
    "CRITERIA_FILE",
    "JAPANESE_NAMES",
    "PROFESSIONS",
    "Rule",
    "evaluate",
    "load_rules",
    "pass_lines",
    "scoring_record",
    "case_clusters",
    "linked_numbers",
]

# Release directory name → English name, in MHLW's order of the eleven professions.
PROFESSIONS = {
    "Physician": "Physician",
    "Dentist": "Dentist",
    "Pharmacist": "Pharmacist",
    "Nurse": "Nurse",
    "Public_Health_Nurse": "Public Health Nurse",
    "Midwife": "Midwife",
    "Physical_Therapist": "Physical Therapist",
    "Occupational_Therapist": "Occupational Therapist",
    "Orthoptist": "Orthoptist",
    "Radiological_Technologist": "Radiological Technologist",
    "Clinical_Laboratory_Technologist": "Clinical Laboratory Technologist",
}
# Japanese name of each profession's licence → release directory name.
JAPANESE_NAMES = {
    "医師": "Physician",
    "歯科医師": "Dentist",
    "薬剤師": "Pharmacist",
    "看護師": "Nurse",
    "保健師": "Public_Health_Nurse",
    "助産師": "Midwife",
    "理学療法士": "Physical_Therapist",
    "作業療法士": "Occupational_Therapist",
    "視能訓練士": "Orthoptist",
    "診療放射線技師": "Radiological_Technologist",
    "臨床検査技師": "Clinical_Laboratory_Technologist",
}

CRITERIA_FILE = Path(__file__).parent / "data" / "mhlw" / "pass_criteria.csv"
POINT_KINDS = ("min_points", "min_percent")
UNDECIDABLE = {
    "max_kinki": "which options are 禁忌肢 is not published, so selections cannot be counted",
    "subject_min_percent": "the data does not say which subject each question belongs to",
    "max_zero_subjects": "the data does not say which subject each question belongs to",
}


@dataclass(frozen=True)
class Rule:
    """One row of the criteria file."""

    profession: str
    year: int
    exam_round: str
    criterion_id: str
    kind: str
    parts: str
    sections: str
    numbers: str
    points_each: str
    required: str
    max: str
    scaling: str
    text_ja: str
    source: str
    secondary: str

    @property
    def name(self) -> str:
        """The criterion as users see it, the same for every profession and year: `total`,
        the parts it judges (`hisshu`, `general+situational`), `<part>-subjects`,
        `zero-subjects` or `kinki`."""
        if self.kind == "max_kinki":
            return "kinki"
        if self.kind == "max_zero_subjects":
            return "zero-subjects"
        parts = "total" if self.parts in ("*", "") else self.parts
        return f"{parts}-subjects" if self.kind == "subject_min_percent" else parts

    def covers(self, section: str, number: int | None) -> bool:
        if self.sections != "*" and section not in self.sections.split(";"):
            return False
        return self.numbers == "*" or (number is not None and _in_ranges(number, self.numbers))


@dataclass
class Criterion:
    id: str  # its name (`Rule.name`)
    points: int | None
    max: int | None
    required: int | str | None  # the line applied (points), or the stated limit ("<=3")
    status: str
    note: str = ""
    source: str = ""

    @property
    def margin(self) -> int | None:
        """Points above the line; for a limit ("<=3"), selections left below it."""
        if self.status not in (PASS, FAIL):
            return None
        if isinstance(self.required, str) and self.required.startswith("<="):
            return int(self.required[2:]) - self.points
        return self.points - self.required

    def verdict(self, exam: str) -> PassVerdict:
        return PassVerdict(
            exam=exam,
            criterion=self.id,
            status=self.status,
            points=self.points,
            required=self.required,
            maximum=self.max,
            margin=self.margin,
            note=self.note,
        )


@dataclass
class CellResult:
    profession: str
    year: int
    result: str
    criteria: list[Criterion] = field(default_factory=list)

    @property
    def margin(self) -> int | None:
        """The smallest margin over the points criteria that were decided."""
        margins = [c.margin for c in self.criteria if c.margin is not None and isinstance(c.required, int)]
        return min(margins) if margins else None

    @property
    def exam(self) -> str:
        return f"{PROFESSIONS.get(self.profession, self.profession)} {self.year}"

    @property
    def not_evaluated(self) -> tuple[str, ...]:
        """A qualified pass's criteria that could not be decided (their rows say why)."""
        if self.result != PASS_ON_EVALUABLE:
            return ()
        return tuple(c.id for c in self.criteria if c.status == NOT_EVALUABLE)

    def verdicts(self, treatments: Iterable[str] = (), note: str = "") -> list[PassVerdict]:
        """The exam's verdict (criterion `overall`, with `treatments` and `note`, after the
        criteria a qualified pass did not weigh), then one row per criterion."""
        if self.not_evaluated:
            note = "; ".join(filter(None, [f"not evaluated: {', '.join(self.not_evaluated)} (see their rows)", note]))
        overall = PassVerdict(
            exam=self.exam,
            criterion=OVERALL,
            status=self.result,
            margin=self.margin,
            treatments=tuple(treatments),
            note=note,
            not_evaluated=self.not_evaluated,
        )
        return [overall, *(c.verdict(self.exam) for c in self.criteria)]


def load_rules(path: Path = CRITERIA_FILE) -> list[Rule]:
    """Every row of the criteria file; a malformed row raises DataError naming it."""
    return list(_load_rules(Path(path)))


@lru_cache(maxsize=4)
def _load_rules(path: Path) -> tuple[Rule, ...]:
    rules = []
    with path.open(encoding="utf-8", newline="") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            try:
                rules.append(Rule(**{**row, "year": int(row["year"])}))
            except (TypeError, ValueError) as exc:
                raise DataError(f"malformed criteria row ({exc})", file=path, record=f"line {line}") from None
    return tuple(rules)


def scoring_record(records: Iterable[dict]) -> dict[str, dict]:
    """item id → the record whose correctness counts: C+Q+I where present, else C+Q."""
    chosen: dict[str, dict] = {}
    for r in records:
        if r["condition"] == "C+Q+I" or (r["condition"] == "C+Q" and r["item_id"] not in chosen):
            chosen[r["item_id"]] = r
    return chosen


def evaluate(
    items: Iterable[Item],
    records: Iterable[dict],
    rules: list[Rule] | None = None,
    *,
    kinki: Mapping[tuple[str, int], int] | None = None,
    points: Mapping[str, int] | None = None,
) -> list[CellResult]:
    """The verdict (see the module's docstring) of every profession-year among `items`. `kinki`
    gives, per (profession, year), how many questions were answered with a 禁忌肢 option; the
    `max_kinki` criteria of those cells are then decided. `points` gives items' own points
    (item id → points, as a dataset states them), used instead of the weight rows' (which
    still say the part each item belongs to)."""
    rules = load_rules() if rules is None else rules
    counted = scoring_record(records)
    cells: dict[tuple[str, int], list[Item]] = {}
    for item in items:
        cells.setdefault((item.meta["profession"], int(item.meta["year"])), []).append(item)
    order = list(PROFESSIONS)
    out = []
    for (profession, year), cell_items in sorted(cells.items(), key=lambda kv: (_rank(order, kv[0][0]), kv[0][1])):
        if not any(it.id in counted for it in cell_items):
            continue  # an exam the run never sat
        cell_rules = [r for r in rules if r.profession == profession and r.year == year]
        selections = None if kinki is None else kinki.get((profession, year))
        out.append(evaluate_cell(profession, year, cell_items, counted, cell_rules, selections, points))
    return out


def evaluate_cell(
    profession: str,
    year: int,
    items: list[Item],
    counted: dict[str, dict],
    rules: list[Rule],
    kinki: int | None = None,
    points: Mapping[str, int] | None = None,
) -> CellResult:
    weights = [r for r in rules if r.kind == "weight"]
    scored = [it for it in items if not it.excluded]
    parts, unmatched = _assign(scored, weights, points or {})
    tally = _Tally(parts, counted, unmatched)
    unasked = sum(it.id not in counted for it in scored)
    criteria, on_points = [], []
    for rule in rules:
        if rule.kind in POINT_KINDS:
            on_points.append(_points_criterion(rule, tally))
            criteria.append(on_points[-1])
        elif rule.kind == "max_kinki" and kinki is not None and unasked:
            criteria.append(
                Criterion(
                    rule.name,
                    kinki,
                    None,
                    rule.required,
                    NOT_EVALUABLE,
                    f"{unasked} of the exam's {len(scored)} questions have no record: a verdict needs the whole exam",
                    rule.source,
                )
            )
        elif rule.kind == "max_kinki" and kinki is not None:
            criteria.append(_kinki_criterion(rule, kinki))
        elif rule.kind in UNDECIDABLE:
            criteria.append(
                Criterion(rule.name, None, None, rule.required, NOT_EVALUABLE, UNDECIDABLE[rule.kind], rule.source)
            )
    if not on_points:  # no criterion known: report the points of each part
        criteria = [tally.points_only(name) for name in (list(parts) or ["total"])] + criteria
    if any(c.status == FAIL for c in criteria):
        result = FAIL  # decisive, whatever could not be evaluated
    elif unasked or not any(c.status == PASS for c in on_points):
        result = NOT_EVALUABLE  # a verdict needs the whole exam and at least one line decided
    elif all(c.status == PASS for c in criteria):
        result = PASS
    else:
        result = PASS_ON_EVALUABLE
    return CellResult(profession, year, result, criteria)


class _Tally:
    """Points and maxima of parts, and why they may be unknown."""

    def __init__(self, parts: dict[str, list[tuple[Item, int]]], counted: dict[str, dict], unmatched: list[Item]):
        self.parts, self.counted, self.unmatched = parts, counted, unmatched

    def problem(self, names: list[str]) -> str | None:
        if not self.parts:
            return "no point weights for this exam in the criteria file"
        if self.unmatched:
            ids = ", ".join(it.id for it in self.unmatched[:3])
            return f"{len(self.unmatched)} item(s) match no weight row (e.g. {ids})"
        unknown = [n for n in names if n not in self.parts]
        if unknown:
            return f"the criteria file does not say which questions form part {', '.join(unknown)}"
        missing = [it.id for n in names for it, _ in self.parts[n] if it.id not in self.counted]
        if missing:
            return (
                f"{len(missing)} item(s) have no C+Q or C+Q+I record (e.g. {', '.join(missing[:3])}): "
                "a verdict needs the whole exam"
            )
        return None

    def points(self, names: list[str]) -> tuple[int, int]:
        pairs = [pair for n in names for pair in self.parts[n]]
        got = sum(w for it, w in pairs if self.counted[it.id].get("correct"))
        return got, sum(w for _, w in pairs)

    def points_only(self, name: str) -> Criterion:
        problem = self.problem([name]) if name in self.parts else "no point weights for this exam in the criteria file"
        if problem:
            return Criterion(name, None, None, None, NOT_EVALUABLE, problem)
        got, top = self.points([name])
        return Criterion(name, got, top, None, NOT_EVALUABLE, "no pass criterion known for this exam")


def _points_criterion(rule: Rule, tally: _Tally) -> Criterion:
    names = sorted(tally.parts) if rule.parts == "*" else rule.parts.split("+")
    problem = tally.problem(names)
    if problem:
        return Criterion(rule.name, None, None, _number(rule.required), NOT_EVALUABLE, problem, rule.source)
    got, top = tally.points(names)
    line, note = _line(rule, top)
    if line is None:
        return Criterion(rule.name, got, top, _number(rule.required), NOT_EVALUABLE, note, rule.source)
    return Criterion(rule.name, got, top, line, PASS if got >= line else FAIL, note, rule.source)


def _kinki_criterion(rule: Rule, selections: int) -> Criterion:
    """`<=N` 禁忌肢 selections: pass when the count is within the limit."""
    limit = int(rule.required.lstrip("<="))
    return Criterion(
        rule.name,
        selections,
        None,
        rule.required,
        PASS if selections <= limit else FAIL,
        f"{selections} question(s) answered with a 禁忌肢 option; at most {limit} allowed",
        rule.source,
    )


def _line(rule: Rule, data_max: int) -> tuple[int | None, str]:
    """(the pass line for a part whose maximum in the data is `data_max`, a note)."""
    official = int(rule.max) if rule.max else None
    if rule.kind == "min_percent":
        note = "" if official in (None, data_max) else f"official maximum {official}; applied to the data's {data_max}"
        return math.ceil(_percent(rule.required) * data_max / 100 - 1e-9), note
    required = int(rule.required)
    if official is None:
        return required, "the source states no maximum; its line is applied to the data's"
    if official == data_max:
        return required, ""
    scaled = _scaled(rule.scaling, data_max)
    if scaled is not None:
        return scaled, f"maximum {data_max} instead of {official}: line scaled as the source states ({rule.scaling})"
    return None, (
        f"the data's maximum is {data_max} but the line {required} applies to {official}, "
        "and the source states no line for this maximum"
    )


def _scaled(scaling: str, data_max: int) -> int | None:
    if not scaling:
        return None
    if scaling.endswith("%"):
        return math.ceil(_percent(scaling) * data_max / 100 - 1e-9)
    table = dict(pair.split("=") for pair in scaling.split(";"))
    return int(table[str(data_max)]) if str(data_max) in table else None


def _assign(
    items: list[Item], weights: list[Rule], points: Mapping[str, int]
) -> tuple[dict[str, list[tuple[Item, int]]], list[Item]]:
    """part → [(item, points)], and the items no weight row covers."""
    parts: dict[str, list[tuple[Item, int]]] = {w.parts: [] for w in weights}
    unmatched = []
    for item in items:
        section, number = str(item.meta.get("section")), _int(item.meta.get("number"))
        hits = [w for w in weights if w.covers(section, number)]
        if len(hits) > 1:
            raise DataError(
                f"criteria rows {', '.join(w.criterion_id for w in hits)} all cover {item.id}",
                file=CRITERIA_FILE,
                record=hits[0].criterion_id,
            )
        if hits:
            parts[hits[0].parts].append((item, points.get(item.id, int(hits[0].points_each))))
        elif weights:
            unmatched.append(item)
    return parts, unmatched


def _in_ranges(number: int, ranges: str) -> bool:
    for part in ranges.split(","):
        low, _, high = part.strip().partition("-")
        if int(low) <= number <= int(high or low):
            return True
    return False


def _percent(text: str) -> float:
    return float(text.strip().rstrip("%"))


def _number(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _rank(order: list[str], name: str) -> int:
    return order.index(name) if name in order else len(order)


def pass_lines(cells: Iterable[CellResult]) -> PassLines:
    """What `medvqa report RUN --pass` shows: per profession-year its verdict and margin, then
    each criterion's points, line and status."""
    return PassLines(rows=[row for cell in cells for row in cell.verdicts()])


# ---------------------------------------------------------------- linked question sets

# the opening of a linked question set: "次の文を読み、40、41の問いに答えよ。"
LINKED_SET = re.compile(r"\s*次の文を読み[、,，]\s*(?P<numbers>[0-9０-９、,，～〜~\s]+)の問い")


_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")  # full-width digits as ASCII ones


def _as_number(value: object) -> int | None:
    if type(value) is int:  # (a question's number, as the loaders give it)
        return value
    try:
        return int(str(value).translate(_DIGITS))
    except (TypeError, ValueError):
        return None


def linked_numbers(text: str) -> list[int]:
    """The question numbers a linked set's opening names: "40、41" → [40, 41], "40～42" → [40, 41, 42]."""
    out: list[int] = []
    for part in re.split(r"[、,，\s]+", text.strip()):
        ends = [n for n in (_as_number(x) for x in re.split(r"[～〜~]", part)) if n is not None]
        out += list(range(ends[0], ends[-1] + 1)) if ends else []
    return out


def case_clusters(items: Iterable[Item], blocks: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """`Benchmark.clusters` of an MHLW exam: `block`, each item's exam block (`blocks`, by item
    id); `case`, the linked question set sharing a case text, as its opening question names its
    members ("次の文を読み、40、41の問いに答えよ。"), keyed by the block and the set's first number;
    an item outside every set has no `case`."""
    items = list(items)
    members: dict[tuple[str, int], str] = {}
    for it in items:
        if (opening := LINKED_SET.match(it.question)) is not None:
            numbers = linked_numbers(opening["numbers"])
            for number in numbers:
                members[(blocks[it.id], number)] = f"{blocks[it.id]}-{numbers[0]}"
    out = {}
    for it in items:
        block = blocks[it.id]
        case = members.get((block, _as_number(it.meta.get("number"))))
        out[it.id] = {"block": block, "case": case} if case else {"block": block}
    return out

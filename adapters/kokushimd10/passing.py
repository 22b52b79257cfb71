"""Pass / fail per exam-year (`medvqa report RUN --pass`) under the run's convention.

Under `mhlw` and `igakuqa` the sourced MHLW lines (`medvqa.mhlw`) decide, on MHLW's point
weights, with the items MHLW took out of scoring left out of both points and maxima, and the
禁忌肢 limit checked against the number of questions whose counted answer contains a 禁忌肢
option (where the data marks 禁忌肢). An exam-year without a sourced line is "not evaluable".
Under `kokushimd10` the lines, points and 禁忌肢 rule are those of the authors' script, its parts
named as `medvqa.mhlw` names the criteria over the same questions (`hisshu`, `general`, `kinki`,
...), so a criterion has one name under every convention.
"""

from __future__ import annotations

from medvqa import Item, PassLines, PassVerdict
from medvqa.mhlw import PROFESSIONS, evaluate, scoring_record

from .conventions import DEPARTURES, KOKUSHIMD10, kokushimd10_prediction, script_normal_form

# calculate_scores.py's lines, per profession: {year: [line per part]} and how it splits parts.
SCRIPT_LINES: dict[str, dict[int, list[int]]] = {
    "Physician": {2020: [158, 217], 2021: [160, 209], 2022: [158, 214], 2023: [160, 220], 2024: [160, 230]},
    "Dentist": {
        2020: [64, 65, 260],
        2021: [63, 53, 236],
        2022: [64, 59, 237],
        2023: [64, 63, 257],
        2024: [64, 60, 254],
    },
    "Nurse": {2020: [40, 155], 2021: [40, 159], 2022: [40, 167], 2023: [40, 152], 2024: [40, 158]},
    "Public_Health_Nurse": {y: [87] for y in range(2020, 2025)},
    "Midwife": {y: [87] for y in range(2020, 2025)},
    "Physical_Therapist": {y: [168, 43] for y in range(2020, 2025)},
    "Occupational_Therapist": {y: [168, 43] for y in range(2020, 2025)},
    "Radiological_Technologist": {y: [120] for y in range(2020, 2025)},
    "Orthoptist": {y: [102] for y in range(2020, 2025)},
    "Pharmacist": {2020: [426], 2021: [430], 2022: [434], 2023: [470], 2024: [420]},
}
# The script's parts (必修, 一般, 領域A/B, 実地), by the criteria names of `medvqa.mhlw`; the
# nurse script's 一般 is every question after the 必修 ones, 一般 and 状況設定 alike.
SCRIPT_PARTS = {
    "Physician": ["hisshu", "general"],
    "Dentist": ["hisshu", "areaA", "areaB"],
    "Nurse": ["hisshu", "general+situational"],
    "Physical_Therapist": ["general", "practical"],
    "Occupational_Therapist": ["general", "practical"],
    "Pharmacist": ["total"],
}
SCRIPT_KINKI = ("Physician", "Dentist")  # more than 3 questions with a 禁忌肢 answer fail


def _script_part(item: Item) -> int:
    profession, number, section = item.meta["profession"], int(item.meta["number"]), item.meta["section"].lower()
    if profession == "Physician":
        return 0 if section in ("b", "e") else 1
    if profession == "Dentist":
        return 0 if number <= 20 else 1 if number <= 45 else 2
    if profession == "Nurse":
        return 0 if number <= 25 else 1
    if profession in ("Physical_Therapist", "Occupational_Therapist"):
        return 0 if number <= 80 else 1
    return 0


def treatments(items: list[Item]) -> dict[tuple[str, int], list[str]]:
    """Per exam-year, every item whose scoring MHLW changed: "item id: its treatment"."""
    out: dict[tuple[str, int], list[str]] = {}
    for it in items:
        note = None
        if it.excluded:
            note = f"excluded: {it.exclusion_reason}"
        elif it.meta.get("withdrawn"):
            note = (
                "withdrawn (採点除外): no points, out of the maximum"
                if not it.meta.get("corrected")
                else "corrected question: no points, out of the maximum"
            )
        elif it.meta.get("credited_to_all"):
            note = f"{it.meta.get('treatment')}: correct whatever the answer"
        elif it.meta.get("multiply_accepted"):
            note = f"multiply accepted ({it.meta['multiply_accepted']}): any accepted answer counts"
        if note:
            out.setdefault((it.meta["profession"], int(it.meta["year"])), []).append(f"{it.id}: {note}")
    return out


def kinki_selections(items: list[Item], counted: dict[str, dict]) -> dict[tuple[str, int], int]:
    """Per exam-year whose data marks 禁忌肢 options: questions whose counted answer contains one."""
    marked = {(it.meta["profession"], int(it.meta["year"])) for it in items if it.meta.get("kinki")}
    out = {cell: 0 for cell in marked}
    for it in items:
        cell = (it.meta["profession"], int(it.meta["year"]))
        rec = counted.get(it.id)
        if (
            cell in out
            and rec
            and not it.meta.get("withdrawn")
            and set(rec.get("predicted") or ()) & set(it.meta["kinki"])
        ):
            out[cell] += 1
    return out


def pass_report(items: list[Item], records: list[dict], convention: str) -> PassLines:
    counted = scoring_record(records)
    treated = treatments(items)
    notes = [DEPARTURES[convention]] if convention in DEPARTURES else []
    if convention == KOKUSHIMD10:
        return PassLines(rows=_script_rows(items, counted, treated), notes=notes, convention=convention)
    scored = [it for it in items if not it.meta.get("withdrawn")]
    kinki = kinki_selections(items, counted)
    own = {it.id: int(it.meta["points"]) for it in scored if not it.meta.get("weights_from_mhlw")}
    rows = []
    for cell in evaluate(scored, records, kinki=kinki, points=own):
        key = (cell.profession, cell.year)
        parts = "; ".join(f"{p} {got}/{top}" for p, got, top in _parts(items, counted, key))
        note = f"points: {parts}; 禁忌肢 answers: " + (
            "not marked in the data" if kinki.get(key) is None else str(kinki[key])
        )
        rows += cell.verdicts(treated.get(key, []), note)
    return PassLines(rows=rows, notes=notes, convention=convention)


def _parts(items: list[Item], counted: dict[str, dict], key: tuple[str, int]) -> list[tuple[str, int, int]]:
    """(part, points, maximum) of an exam-year's 必修 and general questions on the data's points
    (withdrawn items out), `hisshu` first as in the criteria rows."""
    parts: dict[str, list[int]] = {}
    for it in items:
        if (it.meta["profession"], int(it.meta["year"])) != key or it.excluded or it.meta.get("withdrawn"):
            continue
        name = "hisshu" if it.meta.get("hisshu") else "general"
        got = parts.setdefault(name, [0, 0])
        got[1] += int(it.meta["points"])
        if counted.get(it.id, {}).get("correct"):
            got[0] += int(it.meta["points"])
    return [(p, v[0], v[1]) for p, v in sorted(parts.items(), key=lambda kv: kv[0] != "hisshu")]


def _script_rows(
    items: list[Item], counted: dict[str, dict], treated: dict[tuple[str, int], list[str]]
) -> list[PassVerdict]:
    """calculate_scores.py, per profession and year: the exam's verdict, then each part's
    points against its line, then the 禁忌肢 count (physician and dentist)."""
    cells: dict[tuple[str, int], list[Item]] = {}
    for it in items:
        cells.setdefault((it.meta["profession"], int(it.meta["year"])), []).append(it)
    order = list(PROFESSIONS)
    out = []
    for (profession, year), cell_items in sorted(cells.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
        if not any(it.id in counted for it in cell_items):
            continue  # an exam the run never sat
        lines = SCRIPT_LINES.get(profession, {}).get(year)
        n_parts = len(lines) if lines else 1
        totals, forbidden, missing = [0] * n_parts, 0, []
        for it in cell_items:
            rec = counted.get(it.id)
            if it.excluded:
                continue
            if rec is None:
                missing.append(it.id)
                continue
            part = _script_part(it) if n_parts > 1 else 0
            skip = it.meta.get("corrected") and profession != "Physician"
            if rec.get("correct") and not skip:
                totals[part] += int(it.meta["points"])
            pred = script_normal_form(
                kokushimd10_prediction(it, rec.get("response") or "", _as_score(rec), bool(rec.get("saved")))
            )
            raw = it.meta.get("kinki_raw") or []
            if profession in SCRIPT_KINKI and any(ch in raw for ch in pred):
                forbidden += 1
        exam = f"{PROFESSIONS.get(profession, profession)} {year}"
        names = SCRIPT_PARTS.get(profession, ["total"])[:n_parts]
        decided = not missing and lines is not None
        parts = [
            PassVerdict(
                exam=exam,
                criterion=name,
                points=points,
                required=line,
                status=("pass" if points >= line else "fail") if decided else "not evaluable",
                margin=points - line if decided else None,
            )
            for name, points, line in zip(names, totals, lines or [None] * n_parts)
        ]
        if profession in SCRIPT_KINKI:
            parts.append(
                PassVerdict(
                    exam=exam,
                    criterion="kinki",
                    points=forbidden,
                    required="<=3",
                    margin=None if missing else 3 - forbidden,
                    note="more than 3 fail",
                    status="not evaluable" if missing else "fail" if forbidden > 3 else "pass",
                )
            )
        if missing:
            result, note = (
                "not evaluable",
                (f"{len(missing)} item(s) have no record (e.g. {missing[0]}): a verdict needs the whole exam"),
            )
        elif lines is None:
            result, note = "not evaluable", f"calculate_scores.py has no line for {profession} {year}"
        else:
            result, note = ("pass" if all(p.status == "pass" for p in parts) else "fail"), ""
        margin = min(t - line for t, line in zip(totals, lines)) if decided else None
        out += [
            PassVerdict(
                exam=exam,
                criterion="overall",
                status=result,
                margin=margin,
                treatments=tuple(treated.get((profession, year), [])),
                note=note,
            ),
            *parts,
        ]
    return out


def _as_score(rec: dict):
    from medvqa import Score

    return Score(bool(rec.get("correct")), rec.get("status") or "", tuple(rec.get("predicted") or ()), rec.get("rule"))

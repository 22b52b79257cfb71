"""Pass / fail per exam-year (`medvqa report RUN --pass`) under the run's convention.

Under `mhlw` and `igakuqa` the sourced MHLW lines (`medvqa.mhlw`) decide, on MHLW's point
weights, with the items MHLW took out of scoring left out of both points and maxima, and the
禁忌肢 limit checked against the number of questions whose counted answer contains a 禁忌肢
option (where the data marks 禁忌肢). An exam-year without a sourced line is "not evaluable".
Under `kokushimd10` the lines, points and 禁忌肢 rule are those of the authors' script.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from medvqa import Item
from medvqa.mhlw import PROFESSIONS, PassReport, evaluate, scoring_record

from .conventions import DEPARTURES, KOKUSHIMD10, kokushimd10_prediction, script_normal_form

# calculate_scores.py's lines, per profession: {year: [line per part]} and how it splits parts.
SCRIPT_LINES: dict[str, dict[int, list[int]]] = {
    "Physician": {2020: [158, 217], 2021: [160, 209], 2022: [158, 214], 2023: [160, 220], 2024: [160, 230]},
    "Dentist": {2020: [64, 65, 260], 2021: [63, 53, 236], 2022: [64, 59, 237], 2023: [64, 63, 257],
                2024: [64, 60, 254]},
    "Nurse": {2020: [40, 155], 2021: [40, 159], 2022: [40, 167], 2023: [40, 152], 2024: [40, 158]},
    "Public_Health_Nurse": {y: [87] for y in range(2020, 2025)},
    "Midwife": {y: [87] for y in range(2020, 2025)},
    "Physical_Therapist": {y: [168, 43] for y in range(2020, 2025)},
    "Occupational_Therapist": {y: [168, 43] for y in range(2020, 2025)},
    "Radiological_Technologist": {y: [120] for y in range(2020, 2025)},
    "Orthoptist": {y: [102] for y in range(2020, 2025)},
    "Pharmacist": {2020: [426], 2021: [430], 2022: [434], 2023: [470], 2024: [420]},
}
SCRIPT_PARTS = {"Physician": ["必修", "一般"], "Dentist": ["必修", "領域A", "領域B"], "Nurse": ["必修", "一般"],
                "Physical_Therapist": ["一般", "実地"], "Occupational_Therapist": ["一般", "実地"],
                "Pharmacist": ["total"]}
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


def treatments(items: list[Item]) -> dict[tuple[str, int], list[dict]]:
    """Per exam-year, every item whose scoring MHLW changed, with its treatment."""
    out: dict[tuple[str, int], list[dict]] = {}
    for it in items:
        note = None
        if it.excluded:
            note = f"excluded: {it.exclusion_reason}"
        elif it.meta.get("withdrawn"):
            note = ("withdrawn (採点除外): no points, out of the maximum" if not it.meta.get("corrected")
                    else "corrected question: no points, out of the maximum")
        elif it.meta.get("credited_to_all"):
            note = f"{it.meta.get('treatment')}: correct whatever the answer"
        elif it.meta.get("multiply_accepted"):
            note = f"multiply accepted ({it.meta['multiply_accepted']}): any accepted answer counts"
        if note:
            out.setdefault((it.meta["profession"], int(it.meta["year"])), []).append({"item_id": it.id, "treatment": note})
    return out


def kinki_selections(items: list[Item], counted: dict[str, dict]) -> dict[tuple[str, int], int]:
    """Per exam-year whose data marks 禁忌肢 options: questions whose counted answer contains one."""
    marked = {(it.meta["profession"], int(it.meta["year"])) for it in items if it.meta.get("kinki")}
    out = {cell: 0 for cell in marked}
    for it in items:
        cell = (it.meta["profession"], int(it.meta["year"]))
        rec = counted.get(it.id)
        if cell in out and rec and not it.meta.get("withdrawn") and set(rec.get("predicted") or ()) & set(it.meta["kinki"]):
            out[cell] += 1
    return out


@dataclass
class KokushiPassReport:
    convention: str
    cells: list[dict] = field(default_factory=list)  # one per exam-year, JSON-ready
    text_blocks: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"convention": self.convention, "departs_from_mhlw": DEPARTURES.get(self.convention),
                "exams": self.cells}

    def text(self) -> str:
        head = [DEPARTURES[self.convention]] if self.convention in DEPARTURES else []
        return "\n".join(head + self.text_blocks) + "\n"


def pass_report(items: list[Item], records: list[dict], convention: str) -> KokushiPassReport:
    counted = scoring_record(records)
    report = KokushiPassReport(convention)
    treated = treatments(items)
    if convention == KOKUSHIMD10:
        cells = _script_cells(items, counted)
    else:
        scored = [it for it in items if not it.meta.get("withdrawn")]
        kinki = kinki_selections(items, counted)
        cells = []
        own = {it.id: int(it.meta["points"]) for it in scored if not it.meta.get("weights_from_mhlw")}
        for cell in evaluate(scored, records, kinshi=kinki, points=own):
            doc = cell.as_json()
            key = (cell.profession, cell.year)
            doc["margin"] = cell.margin
            doc["kinki_selections"] = kinki.get(key)
            doc["parts"] = _parts(items, counted, key)
            cells.append(doc)
            block = PassReport([cell]).text().rstrip("\n")
            parts = "; ".join(f"{p['part']} {p['points']}/{p['max']}" for p in doc["parts"])
            block += f"\n  points: {parts}; 禁忌肢 answers: " + (
                "not marked in the data" if kinki.get(key) is None else str(kinki[key]))
            report.text_blocks.append(block)
    for doc in cells:
        doc["treatments"] = treated.get((doc["profession"], doc["year"]), [])
    for doc, i in zip(cells, range(len(cells))):
        lines = [f"  {t['item_id']}: {t['treatment']}" for t in doc["treatments"]]
        if convention == KOKUSHIMD10:
            report.text_blocks.append(_script_text(doc))
        if lines:
            report.text_blocks[i] += "\n  items MHLW scored differently:\n" + "\n".join(lines)
    report.cells = cells
    return report


def _parts(items: list[Item], counted: dict[str, dict], key: tuple[str, int]) -> list[dict]:
    """必修 and general points of an exam-year on the data's points (withdrawn items out)."""
    parts: dict[str, list[int]] = {}
    for it in items:
        if (it.meta["profession"], int(it.meta["year"])) != key or it.excluded or it.meta.get("withdrawn"):
            continue
        name = "hisshu" if it.meta.get("hisshu") else "general"
        got = parts.setdefault(name, [0, 0])
        got[1] += int(it.meta["points"])
        if counted.get(it.id, {}).get("correct"):
            got[0] += int(it.meta["points"])
    return [{"part": p, "points": v[0], "max": v[1]} for p, v in sorted(parts.items())]


def _script_cells(items: list[Item], counted: dict[str, dict]) -> list[dict]:
    """calculate_scores.py, per profession and year."""
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
            pred = script_normal_form(kokushimd10_prediction(it, rec.get("response") or "", _as_score(rec),
                                                              bool(rec.get("saved"))))
            raw = it.meta.get("kinki_raw") or []
            if profession in SCRIPT_KINKI and any(ch in raw for ch in pred):
                forbidden += 1
        doc: dict[str, Any] = {"profession": profession, "year": year, "points": totals,
                               "parts": SCRIPT_PARTS.get(profession, ["total"])[:n_parts], "lines": lines,
                               "kinki_selections": forbidden if profession in SCRIPT_KINKI else None}
        if missing:
            doc.update(result="not evaluable", note=f"{len(missing)} item(s) have no record (e.g. {missing[0]}): "
                                                    "a verdict needs the whole exam")
        elif lines is None:
            doc.update(result="not evaluable", note=f"calculate_scores.py has no line for {profession} {year}")
        else:
            failed_kinki = profession in SCRIPT_KINKI and forbidden > 3
            ok = all(t >= line for t, line in zip(totals, lines)) and not failed_kinki
            doc.update(result="pass" if ok else "fail", margin=min(t - line for t, line in zip(totals, lines)),
                       failed_by_forbidden=failed_kinki)
        out.append(doc)
    return out


def _as_score(rec: dict):
    from medvqa import Score

    return Score(bool(rec.get("correct")), rec.get("status") or "", tuple(rec.get("predicted") or ()), rec.get("rule"))


def _script_text(doc: dict) -> str:
    name = PROFESSIONS.get(doc["profession"], doc["profession"])
    margin = f" (margin {doc['margin']:+d})" if doc.get("margin") is not None else ""
    lines = [f"{name} {doc['year']}: {doc['result']}{margin}"]
    for part, points, line in zip(doc["parts"], doc["points"], doc["lines"] or [None] * len(doc["points"])):
        lines.append(f"  {part:<8} {points:>5}  line {line if line is not None else '-'}"
                     + (f" {points - line:+d}" if line is not None else ""))
    if doc["kinki_selections"] is not None:
        lines.append(f"  禁忌肢 answers {doc['kinki_selections']} (more than 3 fail)")
    if doc.get("note"):
        lines.append(f"  ({doc['note']})")
    return "\n".join(lines)

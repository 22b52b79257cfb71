"""PES pass lines per configuration: the written test is passed at 60 % of the questions, and
since 2022 a result of at least 70 % exempts the candidate from the oral part.

Each row is one set (VQA, QA) and configuration of the run's model: its accuracy, the margin to
each line in percentage points (negative: below), and whether it clears the line. The 70 % line
is judged on the items from 2022 on only (`n_since_2022`); it is not evaluable without any.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

PASS_LINE = 0.60
ORAL_EXEMPTION_LINE = 0.70
ORAL_EXEMPTION_SINCE = 2022
CONDITIONS = ("C", "C+Q", "C+I", "C+Q+I")
SETS = {"vqa": "VQA", "qa": "QA"}


def evaluate(records: list[dict]) -> list[dict]:
    rows = []
    for key, label in SETS.items():
        for cond in CONDITIONS:
            rs = [r for r in records if r.get("set") == key and r.get("condition") == cond]
            if not rs:
                continue
            acc = sum(bool(r.get("correct")) for r in rs) / len(rs)
            recent = [r for r in rs if (r.get("year") or 0) >= ORAL_EXEMPTION_SINCE]
            recent_acc = sum(bool(r.get("correct")) for r in recent) / len(recent) if recent else None
            rows.append({
                "set": label, "condition": cond, "n": len(rs), "accuracy": acc,
                "pass_line": PASS_LINE, "pass_margin_pt": round(100 * (acc - PASS_LINE), 2), "passes": acc >= PASS_LINE,
                "n_since_2022": len(recent), "accuracy_since_2022": recent_acc,
                "oral_exemption_line": ORAL_EXEMPTION_LINE,
                "oral_exemption_margin_pt": None if recent_acc is None else round(100 * (recent_acc - ORAL_EXEMPTION_LINE), 2),
                "oral_exemption": None if recent_acc is None else recent_acc >= ORAL_EXEMPTION_LINE,
            })
    return rows


@dataclass
class PassReport:
    rows: list[dict]

    def as_json(self) -> dict:
        return {"pass_line": PASS_LINE, "oral_exemption_line": ORAL_EXEMPTION_LINE,
                "oral_exemption_since": ORAL_EXEMPTION_SINCE, "rows": json.loads(json.dumps(self.rows))}

    def text(self) -> str:
        lines = [f"PES pass line {PASS_LINE:.0%}; oral exemption at {ORAL_EXEMPTION_LINE:.0%} "
                 f"(sessions since {ORAL_EXEMPTION_SINCE})"]
        for r in self.rows:
            verdict = "pass" if r["passes"] else "fail"
            if r["oral_exemption"] is None:
                oral = "oral exemption not evaluable (no items since 2022)"
            else:
                oral = (f"{'exempt' if r['oral_exemption'] else 'not exempt'} from the oral part "
                        f"({r['oral_exemption_margin_pt']:+.1f} pt on {r['n_since_2022']} items)")
            lines.append(f"{r['set']} {r['condition']}: {100 * r['accuracy']:.1f} % of {r['n']} → {verdict} "
                         f"({r['pass_margin_pt']:+.1f} pt); {oral}")
        return "\n".join(lines) + "\n"

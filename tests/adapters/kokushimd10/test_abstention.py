"""Abstention under MHLW's rules on IgakuQA 2022 (`../shared/data/igakuqa`): a planted model
right everywhere but on four general questions, where it picks a 禁忌肢 option at low stated
confidence. Four 禁忌肢 choices fail the exam however many points it has (the pass lines of
`report --pass`, `medvqa.mhlw`; tests/adapters/kokushimd10/test_igakuqa.py's four-choice case);
leaving those four blank keeps the points far above the lines and passes."""

from __future__ import annotations

import json

import pytest

import medvqa
from medvqa.core import plugins
from medvqa.core.audit.summary import summary_markdown
from tests.conftest import shared_data


@pytest.fixture(scope="module")
def items():
    return medvqa.load("igakuqa", shared_data("igakuqa"), years=[2022])


def test_leaving_the_kinki_choices_blank_turns_fail_into_pass(tmp_path, items):
    bench = plugins.get_benchmark("igakuqa")
    scored = [it for it in items if not it.meta["withdrawn"]]
    kinki = [it for it in scored if it.meta["kinki"] and not it.meta["hisshu"]][:4]
    chosen = {it.id: it.meta["kinki"][0] for it in kinki}
    answers = []
    for it in items:
        picked = [chosen[it.id]] if it.id in chosen else list(it.gold.alternatives[0])
        labels = [next(o.label for o in it.options if o.key == k) for k in picked] if it.options else picked
        confidence = 0.3 if it.id in chosen else 0.95
        fields = {"confidence": confidence, "confidence_method": "stated"}
        answers.append((it, "C+Q", json.dumps({"answer": labels, "confidence": round(100 * confidence)}), fields))
    run_dir = tmp_path / "run"
    load = {"data": str(shared_data("igakuqa")), "years": [2022]}
    medvqa.write_run(bench, items, answers, run_dir, model="planted", load=load, saved=False)
    doc = medvqa.audit(str(run_dir), resamples=200)
    a = doc["confidence"]["conditions"]["C+Q"]["abstention"]

    def overall(sheet):
        (row,) = [r for r in sheet["verdict"] if r["criterion"] == "overall"]
        kinki_row = next(r for r in sheet["verdict"] if r["criterion"] == "kinki")
        return row["status"], kinki_row["points"]

    # answering everything: four 禁忌肢 choices, fail; blank below 0.95: none, pass
    assert a["answer_all"]["prohibited"] == 4 and overall(a["answer_all"]) == ("fail", 4)
    rows = {r["threshold"]: r for r in a["by_threshold"]}
    assert overall(rows[0.3]) == ("fail", 4) and overall(rows[0.95]) == ("pass", 0)
    # a blank scores as a wrong answer: leaving the four wrong answers blank costs no point, so
    # of equal points the threshold with fewer 禁忌肢 choices is chosen, in-sample and on each
    # half that holds one of them (each seeded half holds some here: both choose 0.95)
    assert a["answer_all"]["points"] == a["in_sample"]["points"] and a["in_sample"]["threshold"] == 0.95
    assert [h["threshold"] for h in a["cross_fitted"]["halves"]] == [0.95, 0.95]
    assert a["cross_fitted"]["prohibited"] == 0 and overall(a["cross_fitted"]) == ("pass", 0)
    assert a["cross_fitted"]["gain"] == 0
    # and in words, as `medvqa audit` prints it
    line = next(x for x in summary_markdown(doc).splitlines() if x.startswith("Abstention, C+Q"))
    assert line.endswith("Exam verdict: answering everything Physician 2022 fail; cross-fitted Physician 2022 pass.")

"""Points and pass lines against real external figures, replayed through the real pipeline."""

import csv
import json
import re

import pytest

import medvqa
from medvqa.core.items import Gold, Item, Option
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.saved import load_run
from medvqa.mhlw import CRITERIA_FILE, Rule, evaluate, load_rules, scoring_record
from tests.conftest import shared_data


def replay(tmp_path, year, answers):
    """Run the sample's `year` cell with `answers` (item id → answer list) under C+Q and C+Q+I;
    returns (items, records) read back from the run directory."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "replay.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for item_id, answer in answers.items():
            for condition in ("C+Q", "C+Q+I"):
                fh.write(
                    json.dumps({"item_id": item_id, "condition": condition, "response": json.dumps({"answer": answer})})
                    + "\n"
                )
    run(
        RunOptions(
            benchmark="jmed48k",
            model=f"replay:{path}",
            data=str(shared_data("jmed48k-sample")),
            select={"year": [str(year)]},
            conditions="C+Q,C+Q+I",
            run_dir=str(tmp_path / "run"),
        ),
        progress=False,
    )
    _, records, _, items = load_run(tmp_path / "run")
    return list(items.values()), records


def sample_item_id(question_id):
    """'120A-1' / '119A1' → 'Physician_2026_A_Q1' / 'Physician_2025_A_Q1'."""
    rnd, block, number = question_id[:3], question_id[3], question_id[4:].lstrip("-")
    return f"Physician_{int(rnd) + 1906}_{block}_Q{number}"


def by_id(cells):
    return {(c.profession, c.year): {k.id: k for k in c.criteria} | {"result": c.result} for c in cells}


def test_gpt52_on_the_120th_exam_reproduces_its_own_points(tmp_path):
    source = json.loads(shared_data("jmle2026", "results", "openai_gpt-5.2.json").read_text(encoding="utf-8"))
    answers = {sample_item_id(r["question_id"]): r["predicted"] for r in source["results"]}
    items, records = replay(tmp_path, 2026, answers)
    counted = scoring_record(records)
    differ = [
        r["question_id"]
        for r in source["results"]
        if bool(counted[sample_item_id(r["question_id"])]["correct"]) != r["correct"]
    ]
    assert differ == []
    cell = by_id(evaluate(items, records))[("Physician", 2026)]
    summary = source["summary"]
    assert (cell["hisshu"].points, cell["hisshu"].max) == (summary["required_score"], summary["required_score_max"])
    assert (cell["general"].points, cell["general"].max) == (summary["general_score"], summary["general_score_max"])
    assert (cell["hisshu"].points, cell["general"].points) == (198, 290)
    # no official criterion for the 120th exam in the criteria file: points only
    assert cell["result"] == "not evaluable" and cell["hisshu"].required is None


def test_qwen_on_the_119th_exam_gets_the_files_points_and_passes_on_the_evaluable_criteria(tmp_path):
    path = shared_data("igakuqa119", "results", "demo", "119_qwen2_5-72b_grading_results.csv")
    rows = list(csv.DictReader(path.open(encoding="utf-8-sig")))
    items, records = replay(
        tmp_path, 2025, {sample_item_id(r["question_number"]): list(r["model_answer"]) for r in rows}
    )
    counted = scoring_record(records)
    assert [
        r["question_number"]
        for r in rows
        if bool(counted[sample_item_id(r["question_number"])]["correct"]) != (r["is_correct"] == "True")
    ] == []
    expected = {
        flag: (
            sum(int(r["score"]) for r in rows if r["is_required"] == flag),
            sum(int(r["possible"]) for r in rows if r["is_required"] == flag),
        )
        for flag in ("True", "False")
    }
    [cell] = evaluate(items, records)
    c = by_id([cell])[("Physician", 2025)]
    assert (c["hisshu"].points, c["hisshu"].max) == expected["True"] == (168, 200)
    assert (c["general"].points, c["general"].max) == expected["False"] == (230, 300)
    assert (c["hisshu"].required, c["general"].required) == (160, 221)
    assert (c["hisshu"].status, c["general"].status) == ("pass", "pass")
    assert (c["kinki"].status, c["kinki"].required) == ("not evaluable", "<=3")
    # both lines met, 禁忌肢 never counted (the data does not mark them): a pass on the evaluable
    # criteria only, naming what it did not weigh
    assert cell.result == "pass on the evaluable criteria" and cell.margin == 8 and cell.not_evaluated == ("kinki",)
    overall, *rows = cell.verdicts()
    assert (overall.exam, overall.criterion, overall.status, overall.margin) == (
        "Physician 2025",
        "overall",
        "pass on the evaluable criteria",
        8,
    )
    assert overall.not_evaluated == ("kinki",) and overall.note == "not evaluated: kinki (see their rows)"
    assert rows[2].model_dump(exclude={"note"}) == {
        "exam": "Physician 2025",
        "criterion": "kinki",
        "status": "not evaluable",
        "points": None,
        "required": "<=3",
        "maximum": None,
        "margin": None,
        "unit": "points",
        "treatments": (),
        "not_evaluated": (),
        "scope": {},
    }
    assert rows[2].note == "which options are 禁忌肢 is not published, so selections cannot be counted"


def gold_answer(item):
    keys = item.gold.alternatives[0]
    if not item.options:
        return list(keys)
    label = {o.key: o.label for o in item.options}
    return [label[k] for k in keys]


def wrong_answer(item):
    return [next(o.label for o in item.options if o.key not in item.gold.keys)]


def test_all_gold_passes_the_lines_with_full_marks_and_one_hisshu_point_under_the_line_fails(tmp_path):
    items = medvqa.load("jmed48k", path=shared_data("jmed48k-sample"), split="full", years=[2025])
    answers = {it.id: gold_answer(it) for it in items}
    full = by_id(evaluate(*replay(tmp_path / "gold", 2025, answers)))[("Physician", 2025)]
    assert full["result"] == "pass on the evaluable criteria" and full["kinki"].status == "not evaluable"
    assert (full["hisshu"].points, full["general"].points) == (200, 300)
    # 13 clinical (3 points) and 2 general (1 point) 必修 questions wrong: 200 - 41 = 159 < 160
    hisshu = [it for it in items if it.meta["section"] in ("B", "E")]
    clinical = [it for it in hisshu if it.meta["number"] > 25][:13]
    general = [it for it in hisshu if it.meta["number"] <= 25][:2]
    answers.update({it.id: wrong_answer(it) for it in clinical + general})
    [cell] = evaluate(*replay(tmp_path / "under", 2025, answers))
    c = by_id([cell])[("Physician", 2025)]
    assert (c["hisshu"].points, c["hisshu"].status) == (159, "fail")
    assert (c["general"].points, c["general"].status) == (300, "pass")
    assert cell.result == "fail" and cell.margin == -1


def toy_items(n, excluded=()):
    options = (Option(key="A", label="a", text="x"), Option(key="B", label="b", text="y"))
    return [
        Item(
            id=f"T_2030_X_Q{i}",
            benchmark="jmed48k",
            question="q",
            options=options,
            gold=None if i in excluded else Gold(alternatives=(("A",),)),
            meta={"profession": "Nurse", "year": 2030, "section": "X", "number": i},
        )
        for i in range(1, n + 1)
    ]


def rule(kind, criterion_id="T-c", **fields):
    base = dict(
        profession="Nurse",
        year=2030,
        exam_round="",
        criterion_id=criterion_id,
        kind=kind,
        parts="p",
        sections="X",
        numbers="*",
        points_each="",
        required="",
        max="",
        scaling="",
        text_ja="",
        source="https://example.org",
        secondary="yes",
    )
    return Rule(**(base | fields))


def correct_records(items, wrong=()):
    return [{"item_id": it.id, "condition": "C+Q", "correct": it.id not in wrong} for it in items if not it.excluded]


@pytest.mark.parametrize("scaling, status, line", [("5=3", "pass", 3), ("", "not evaluable", 4), ("80%", "fail", 4)])
def test_a_reduced_maximum_is_scaled_only_as_the_source_states(scaling, status, line):
    items = toy_items(6, excluded={6})  # data maximum 5, the source's 6
    rules = [rule("weight", "T-w", points_each="1"), rule("min_points", required="4", max="6", scaling=scaling)]
    [cell] = evaluate(items, correct_records(items, wrong={"T_2030_X_Q1", "T_2030_X_Q2"}), rules)
    [c] = cell.criteria
    assert (c.points, c.max, c.status, c.required) == (3, 5, status, line)
    assert cell.result == status


def test_missing_weights_records_or_parts_are_not_evaluable():
    items = toy_items(4)
    criterion = rule("min_points", required="2", max="4")
    [no_weights] = evaluate(items, correct_records(items), [criterion])
    assert no_weights.result == "not evaluable" and "no point weights" in no_weights.criteria[0].note
    partial = [rule("weight", "T-w", points_each="1", numbers="1-3"), criterion]
    assert "match no weight row" in evaluate(items, correct_records(items), partial)[0].criteria[0].note
    weights = [rule("weight", "T-w", points_each="2"), rule("min_percent", required="60%", parts="p+q")]
    assert "part q" in evaluate(items, correct_records(items), weights)[0].criteria[0].note
    [short] = evaluate(items, correct_records(items)[:3], [rule("weight", "T-w", points_each="1"), criterion])
    assert "no C+Q or C+Q+I record" in short.criteria[0].note and short.result == "not evaluable"


def test_criteria_file_keeps_every_shared_row_with_its_source():
    shipped = {r.criterion_id: r for r in load_rules()}
    source = shared_data("mhlw-pass-criteria", "mhlw_pass_criteria.csv")
    kept = 0
    for row in csv.DictReader(source.open(encoding="utf-8")):
        if row["criterion_id"].endswith(("_exempt",)):
            continue  # lines for candidates exempt from some subjects
        r = shipped[row["criterion_id"]]
        assert (r.year, r.exam_round, r.text_ja, r.source) == (
            int(row["exam_year"]),
            row["exam_round"],
            row["criterion_ja"],
            row["source"],
        )
        if r.kind == "min_percent" and r.parts == "hisshu":  # pharmacist: 70% overall, 30% per subject
            sub = shipped[row["criterion_id"] + "-subjects"]
            assert f"{r.required}; each subject {sub.required}" == row["points_required"]
        elif r.kind in ("min_points", "min_percent"):
            assert (r.required, r.max) == (row["points_required"], row["points_max"])
        kept += 1
    assert kept == 110
    for r in load_rules():
        assert r.source.startswith("http"), r.criterion_id
        assert (r.secondary == "no") == all("mhlw.go.jp" in s for s in r.source.split(" ; ")), r.criterion_id
    assert sum(r.secondary == "no" for r in load_rules() if r.kind != "weight") == 6
    assert CRITERIA_FILE.name == "pass_criteria.csv"


def test_a_partial_exam_gets_no_verdict_and_says_why():
    # A verdict needs the whole exam (../shared/papers/kokushimd10-review.txt: pass criteria are
    # those of the whole exam, 禁忌肢 included). Four questions, one run on the first two only:
    # 0 禁忌肢 answers among two asked questions is no "pass" of "at most 3" — the other two
    # could hold any number — and the points line needs all four.
    items = toy_items(4)
    rules = [
        rule("weight", "T-w", points_each="1"),
        rule("min_points", required="2", max="4"),
        rule("max_kinki", "T-k", required="<=3"),
    ]
    [whole] = evaluate(items, correct_records(items), rules, kinki={("Nurse", 2030): 0})
    assert whole.result == "pass" and [c.status for c in whole.criteria] == ["pass", "pass"]
    [part] = evaluate(items, correct_records(items)[:2], rules, kinki={("Nurse", 2030): 0})
    assert part.result == "not evaluable"
    points, kinki = part.criteria
    assert points.status == kinki.status == "not evaluable"
    assert kinki.note == "2 of the exam's 4 questions have no record: a verdict needs the whole exam"
    assert points.note.endswith("a verdict needs the whole exam")
    # an exam the run never sat is not reported at all
    other = toy_items(2)
    other = [
        Item(
            id=f"U{it.id}",
            benchmark=it.benchmark,
            question=it.question,
            options=it.options,
            gold=it.gold,
            meta={**it.meta, "year": 2031},
        )
        for it in other
    ]
    assert [(c.profession, c.year) for c in evaluate(items + other, correct_records(items), rules)] == [("Nurse", 2030)]


def block_a_replay(tmp_path):
    """The 119th exam's items, and a replay of the gold answers to its block A under C+Q and C+Q+I."""
    items = medvqa.load("jmed48k", path=shared_data("jmed48k-sample"), split="full", years=[2025])
    block = [it for it in items if it.meta["section"] == "A"]
    path = tmp_path / "replay.jsonl"
    path.write_text(
        "".join(
            json.dumps({"item_id": it.id, "condition": c, "response": json.dumps({"answer": gold_answer(it)})}) + "\n"
            for it in block
            for c in ("C+Q", "C+Q+I")
        ),
        encoding="utf-8",
    )
    return items, path


def test_pass_on_one_block_of_the_119th_exam_is_not_evaluable(tmp_path):
    # a run of block A alone (--select section=A): the verdict is asked of the whole 119th exam
    # (the run's data without its selection), whose other blocks have no record
    items, path = block_a_replay(tmp_path)
    run(
        RunOptions(
            benchmark="jmed48k",
            model=f"replay:{path}",
            data=str(shared_data("jmed48k-sample")),
            select={"year": ["2025"], "section": ["A"]},
            conditions="C+Q,C+Q+I",
            run_dir=str(tmp_path / "run"),
        ),
        progress=False,
    )
    rows = medvqa.report(tmp_path / "run", pass_lines=True, fmt="json")["rows"]
    assert {r["exam"] for r in rows} == {"Physician 2025"}
    overall = next(r for r in rows if r["criterion"] == "overall")
    assert overall["status"] == "not evaluable"
    hisshu = [it for it in items if it.meta["section"] in ("B", "E")]  # 必修 is blocks B and E: none asked
    assert all(r["status"] == "not evaluable" for r in rows)
    by = {r["criterion"]: r for r in rows}
    assert by["hisshu"]["note"].startswith(f"{len(hisshu)} item(s) have no C+Q or C+Q+I record")
    assert by["hisshu"]["note"].endswith("a verdict needs the whole exam")


def test_criteria_names_follow_one_scheme_across_professions_and_years():
    # A criterion is named by what it judges, not by its row in the file (PHY119-hisshu, PHA108-hissu):
    # one name for the same criterion in every year and profession (see medvqa/mhlw.py)
    names: dict[tuple[str, int], list[str]] = {}
    for r in load_rules():
        if r.kind not in ("weight", "scoring"):
            names.setdefault((r.profession, r.year), []).append(r.name)
    for cell, ns in names.items():
        assert len(ns) == len(set(ns)), cell
        assert all(re.fullmatch(r"[a-zA-Z]+(\+[a-zA-Z]+)*(-subjects)?", n) for n in ns), (cell, ns)
    assert {tuple(ns) for (p, _), ns in names.items() if p == "Physician"} == {("hisshu", "general", "kinki")}
    assert names[("Pharmacist", 2023)] == ["total", "hisshu", "hisshu-subjects", "kinki"]
    assert names[("Nurse", 2024)] == ["hisshu", "general+situational"]
    assert names[("Dentist", 2021)] == ["areaA", "areaB", "areaC", "hisshu"]
    assert names[("Radiological_Technologist", 2023)] == ["total", "zero-subjects"]


def test_an_undecided_criterion_qualifies_a_pass_and_never_a_fail():
    # ../shared/papers/kokushimd10-review.txt, major comment [§3.3, Table 1]: a pass claim must say
    # how 禁忌肢 (forbidden options) are handled, and be restricted where a rule cannot be applied.
    items = toy_items(4)
    rules = [
        rule("weight", "T-wp", parts="p", numbers="1-2", points_each="1"),
        rule("weight", "T-wq", parts="q", numbers="3-4", points_each="1"),
        rule("min_points", "T-p", parts="p", required="2", max="2"),
        rule("min_points", "T-q", parts="q", required="1", max="2"),
        rule("max_kinki", "T-k", required="<=3"),
    ]
    [qualified] = evaluate(items, correct_records(items), rules)  # 禁忌肢 selections not counted
    assert [(c.id, c.status) for c in qualified.criteria] == [("p", "pass"), ("q", "pass"), ("kinki", "not evaluable")]
    assert qualified.result == "pass on the evaluable criteria" and qualified.not_evaluated == ("kinki",)
    assert qualified.margin == 0
    [counted] = evaluate(items, correct_records(items), rules, kinki={("Nurse", 2030): 1})
    assert counted.result == "pass" and counted.not_evaluated == ()
    assert counted.verdicts()[0].note == "" and counted.verdicts()[0].not_evaluated == ()
    # a failed line is decisive, whatever could not be evaluated
    [failed] = evaluate(items, correct_records(items, wrong={"T_2030_X_Q1"}), rules)
    assert failed.result == "fail" and failed.not_evaluated == ()
    # part p whole and passed, part q never asked: no verdict at all, not a qualified pass
    [partial] = evaluate(items, correct_records(items)[:2], rules)
    assert [c.status for c in partial.criteria] == ["pass", "not evaluable", "not evaluable"]
    assert partial.result == "not evaluable" and partial.not_evaluated == ()


def test_compare_of_runs_joined_into_one_experiment_gives_report_passs_verdicts(tmp_path):
    # block A of the 119th exam asked in two runs, one per condition, joined by `compare` into one
    # experiment: its verdict is asked of the whole exam, as `report --pass` asks it of each run
    # (compare judged a joined entry on the items it selected: block A alone, as if it were the exam)
    items, path = block_a_replay(tmp_path)
    for condition in ("C+Q", "C+Q+I"):
        run(
            RunOptions(
                benchmark="jmed48k",
                model=f"replay:{path}",
                data=str(shared_data("jmed48k-sample")),
                select={"year": ["2025"], "section": ["A"]},
                conditions=condition,
                run_dir=str(tmp_path / condition),
            ),
            progress=False,
        )
    compared = medvqa.compare([tmp_path / "C+Q", tmp_path / "C+Q+I"]).attrs["pass_lines"]
    reported = medvqa.report(tmp_path / "C+Q", pass_lines=True, fmt="json")["rows"]
    assert [{k: v for k, v in r.items() if k not in ("model", "benchmark")} for r in compared] == reported
    assert {r["status"] for r in compared} == {"not evaluable"}

"""IgakuQA on the real data: all 2,000 items, a run, its tables, the audit, the authors' GPT-4
predictions imported and scored as IgakuQA's script scores them, and the pass lines."""

import json

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from tests.conftest import shared_data


def invoke(*args, code=0):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def items():
    return medvqa.load("igakuqa", shared_data("igakuqa"))


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_all_2000_items_load_with_their_quirks(items):
    assert len(items) == 2000 and not any(it.excluded for it in items)
    by_id = {it.id: it for it in items}
    assert sum(it.meta["withdrawn"] for it in items) == 11  # points "0"
    assert {it.meta["points"] for it in items} == {0, 1, 3}
    assert by_id["112B30"].gold.alternatives == (("A",), ("D",))  # "a or d"
    numeric = [it for it in items if it.answer_format == "numeric"]
    assert len(numeric) == 12 and by_id["112F84"].gold.alternatives == (("1.2",),)
    assert by_id["116A71"].meta["credited_to_all"]
    assert by_id["116A1"].options[2].label == "c" and by_id["116A1"].gold.alternatives == (("C",),)
    assert by_id["116B1"].meta["hisshu"] and not by_id["116A1"].meta["hisshu"]
    assert by_id["116A1"].meta["human_accuracy"] == 87.8 and by_id["116A1"].meta["category"] == "呼吸器"
    assert len({it.meta["block"] for it in items}) == 30
    kinki = [it for it in items if it.meta["kinki"]]
    assert len(kinki) == 135 and all(set(it.meta["kinki"]) <= set(it.keys) for it in kinki)


def test_select_is_the_benchmark_selection_case_blind_and_an_unknown_field_is_named():
    data = shared_data("igakuqa")
    with pytest.raises(ValueError, match=r"--select yaer: igakuqa items have no field 'yaer'; fields: .*\byear\b"):
        medvqa.load("igakuqa", data, select={"yaer": ["2020"]})
    year = medvqa.load("igakuqa", data, select={"year": ["2022"]})
    assert len(year) == 400 and {it.meta["year"] for it in year} == {2022}
    block = medvqa.load("igakuqa", data, select={"block": ["116a"]})  # values compare case-blind
    assert block and {it.meta["block"] for it in block} == {"116A"}
    # the keywords add to select as --years and --professions add to --select, professions under any alias
    assert [it.id for it in medvqa.load("igakuqa", data, years=[2022], professions=["医師"])] == [it.id for it in year]
    assert len(medvqa.load("igakuqa", data, select={"year": ["2021"]}, years=[2022])) == 800


def test_run_random_reports_blocks_and_years_and_audits(tmp_path):
    run_dir = tmp_path / "run"
    summary = json.loads(
        invoke(
            "run",
            "igakuqa",
            "--data",
            shared_data("igakuqa"),
            "--model",
            "random",
            "--no-cache",
            "--run-dir",
            run_dir,
            "--json",
        )
    )
    # mhlw convention: the 11 withdrawn items (採点除外, 0 points) are in no denominator, in any output
    assert summary["n_records"] == 2000 and summary["conditions"]["C+Q"]["n"] == 1989
    assert summary["conditions"]["C+Q"]["uncounted"] == 11
    assert summary["n_image_fallback"] == 529  # text_only: false, no images in the repository
    tables = json.loads(invoke("report", run_dir, "--table", "igakuqa", "--json"))
    blocks, years = tables["by_block"]["rows"], tables["by_year"]["rows"]
    assert len(blocks) == 30 and [r["year"] for r in years] == ["2018", "2019", "2020", "2021", "2022"]
    # mhlw convention: withdrawn items leave accuracy and points
    assert sum(r["n"] for r in years) == 1989 and sum(r["withdrawn"] for r in years) == 11
    row = next(r for r in years if r["year"] == "2022")
    assert row["total"] == 197 + 297
    records = read_jsonl(run_dir / "records.jsonl")
    kept = [r for r in records if r["year"] == 2022 and not r["withdrawn"]]
    assert row["correct"] == sum(r["correct"] for r in kept)
    assert row["score"] == sum(r["points"] for r in kept if r["correct"])
    human = [r["human_accuracy"] / 100 for r in kept if r["human_accuracy"] is not None]
    assert row["human_mean"] == pytest.approx(sum(human) / len(human), abs=1e-4)
    audit = json.loads(invoke("audit", run_dir, "--json"))
    assert audit["paired"]["overall"]["n"] == 0  # no images: nothing to pair


def script_accuracy(golds, preds):
    """IgakuQA's scripts/evaluate_main.py, by hand."""
    count = correct = total = score = 0
    for pred, ans in zip(preds, golds):
        prediction = sorted(pred["prediction"].split(","))
        points = int(ans["points"])
        if (
            ans["problem_id"] == "116A71"
            or (ans["problem_id"] == "112B30" and prediction in (["a"], ["d"]))
            or prediction == sorted(ans["answer"])
        ):
            correct += 1
            score += points
        count += 1
        total += points
    return correct / count, score, total


def test_imported_gpt4_predictions_score_as_the_authors_script(tmp_path):
    data = shared_data("igakuqa")
    pred_file = data / "baseline_results" / "2022" / "116-A_gpt4.jsonl"
    golds, preds = read_jsonl(data / "data" / "2022" / "116-A.jsonl"), read_jsonl(pred_file)
    accuracy, score, total = script_accuracy(golds, preds)
    assert (accuracy, score, total) == (0.8, 60, 74)  # the hand computation above, on the real file
    run_dir = tmp_path / "gpt4"
    out = json.loads(
        invoke(
            "import", "igakuqa", pred_file, "--data", data, "--run-dir", run_dir, "--convention", "igakuqa", "--json"
        )
    )
    assert out["model"] == "gpt4" and out["n_records"] == 75 and out["convention"] == "igakuqa"
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["convention"] == "igakuqa" and manifest["model"] == "gpt4" and manifest["conditions"] == ["C+Q"]
    records = read_jsonl(run_dir / "records.jsonl")
    assert {r["item_id"] for r in records} == {g["problem_id"] for g in golds}
    assert all(r["saved"] and r["condition"] == "C+Q" for r in records)
    invoke("score", run_dir)  # re-scoring under the recorded convention changes nothing
    block = json.loads(invoke("report", run_dir, "--table", "igakuqa", "--json"))["by_block"]["rows"]
    assert [(r["block"], r["n"], r["accuracy"], r["score"], r["total"]) for r in block] == [
        ("116A", 75, accuracy, score, total)
    ]
    # the same file under MHLW's handling: "b, e" is the set {b, e}, the withdrawn 116A34 leaves
    changed = json.loads(invoke("score", run_dir, "--convention", "mhlw", "--json"))
    assert changed["changed"] > 0
    mhlw = 0
    for pred, ans in zip(preds, golds):
        keys = sorted(p.strip() for p in pred["prediction"].split(",") if p.strip())
        if ans["points"] != "0" and (ans["problem_id"] == "116A71" or keys == sorted(ans["answer"])):
            mhlw += 1
    block = json.loads(invoke("report", run_dir, "--table", "igakuqa", "--json"))["by_block"]["rows"][0]
    assert (block["n"], block["correct"]) == (74, mhlw)
    assert json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["convention"] == "mhlw"


def test_student_majority_imports_and_compares(tmp_path):
    data = shared_data("igakuqa")
    pred_file = data / "baseline_results" / "2022" / "116-A_student-majority.jsonl"
    golds, preds = read_jsonl(data / "data" / "2022" / "116-A.jsonl"), read_jsonl(pred_file)
    out = json.loads(
        invoke(
            "import",
            "igakuqa",
            pred_file,
            "--data",
            data,
            "--run-dir",
            tmp_path / "s",
            "--convention",
            "igakuqa",
            "--json",
        )
    )
    assert out["model"] == "student-majority"
    assert out["accuracy"]["C+Q"] == script_accuracy(golds, preds)[0]


def test_import_prints_the_summary_a_run_prints(tmp_path):
    import click

    from medvqa.commands import print_run_summary

    data = shared_data("igakuqa")
    pred_file = data / "baseline_results" / "2022" / "116-A_student-majority.jsonl"
    text = invoke(
        "import", "igakuqa", pred_file, "--data", data, "--run-dir", tmp_path / "text", "--convention", "igakuqa"
    )
    doc = json.loads(
        invoke(
            "import",
            "igakuqa",
            pred_file,
            "--data",
            data,
            "--run-dir",
            tmp_path / "text-json",
            "--convention",
            "igakuqa",
            "--json",
        )
    )
    doc["run_dir"] = str(tmp_path / "text")
    printed = CliRunner().invoke(click.command()(lambda: print_run_summary(doc)), []).output
    assert text.startswith(printed)
    cell = doc["conditions"]["C+Q"]
    row = next(line.split() for line in text.splitlines() if line.startswith("  C+Q "))
    assert row[:4] == [
        "C+Q",
        str(cell["n"]),
        f"{100 * cell['accuracy']:.1f}%",
        f"{100 * cell['ci'][0]:.1f}–{100 * cell['ci'][1]:.1f}%",
    ]
    assert "95% CI" in text and "requested" not in text and "--max-error-rate" not in text
    assert text.endswith(
        f"items without a prediction: 0 (recorded as missing); the benchmark's tables: "
        f"medvqa report {tmp_path / 'text'} --table igakuqa\n"
    )


def replay_run(tmp_path, items, year, answers, name):
    """A replay of `answers` (item id -> keys) for every item of `year`, and its pass report."""
    lines = [
        json.dumps({"item_id": it.id, "condition": "C+Q", "response": json.dumps({"answer": list(keys)})})
        for it in items
        if it.meta["year"] == year
        for keys in [answers[it.id]]
    ]
    replay = tmp_path / f"{name}.jsonl"
    replay.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_dir = tmp_path / name
    invoke(
        "run",
        "igakuqa",
        "--data",
        shared_data("igakuqa"),
        "--years",
        year,
        "--model",
        f"replay:{replay}",
        "--conditions",
        "C+Q",
        "--no-cache",
        "--run-dir",
        run_dir,
        "--json",
    )
    rows = json.loads(invoke("report", run_dir, "--pass", "--json"))["rows"]
    (cell,) = [r for r in rows if r["criterion"] == "overall"]
    return cell, {r["criterion"]: r for r in rows if r["criterion"] != "overall"}


def gold_answers(items):
    return {it.id: it.gold.alternatives[0] for it in items}


LINES = {2020: (158, 217, 197, 299), 2021: (160, 209, 200, 300), 2022: (158, 214, 197, 297)}  # sourced; maxima


@pytest.mark.parametrize("year", [2020, 2021, 2022])
def test_all_gold_passes_each_year_with_a_sourced_line(tmp_path, items, year):
    hisshu_line, general_line, _, _ = LINES[year]
    scored = [it for it in items if it.meta["year"] == year and not it.meta["withdrawn"]]
    hisshu_max = sum(it.meta["points"] for it in scored if it.meta["hisshu"])
    general_max = sum(it.meta["points"] for it in scored if not it.meta["hisshu"])
    assert (hisshu_max, general_max) == LINES[year][2:]
    cell, criteria = replay_run(tmp_path, items, year, gold_answers(items), "gold")
    assert cell["status"] == "pass" and cell["not_evaluated"] == []  # IgakuQA marks 禁忌肢: all decided
    assert criteria["hisshu"]["points"] == hisshu_max
    assert cell["margin"] == min(hisshu_max - hisshu_line, general_max - general_line)
    assert criteria["kinki"]["points"] == 0 and criteria["kinki"]["status"] == "pass"


@pytest.mark.slow  # real processes or servers: seconds each
def test_one_hisshu_point_short_fails_and_four_kinki_selections_fail(tmp_path, items):
    year = [it for it in items if it.meta["year"] == 2022 and not it.meta["withdrawn"]]
    answers = gold_answers(items)

    def wrong(it):
        return tuple(k for k in it.keys if (k,) not in it.gold.alternatives and k not in it.meta["kinki"])[:1]

    # 197 - 158 + 1 = 40 points lost: 13 clinical items (3 points) and one general one (1 point)
    clinical = [it for it in year if it.meta["hisshu"] and it.meta["points"] == 3 and not it.meta["kinki"]][:13]
    general = [it for it in year if it.meta["hisshu"] and it.meta["points"] == 1 and not it.meta["kinki"]][:1]
    short = {**answers, **{it.id: wrong(it) for it in clinical + general}}
    cell, criteria = replay_run(tmp_path, items, 2022, short, "short")
    assert criteria["hisshu"]["points"] == 157 and criteria["hisshu"]["status"] == "fail"
    assert cell["status"] == "fail" and cell["margin"] == -1
    # four questions answered with a 禁忌肢 option (general items: points stay far above the line)
    kinki = [it for it in year if it.meta["kinki"] and not it.meta["hisshu"]][:4]
    four = {**answers, **{it.id: (it.meta["kinki"][0],) for it in kinki}}
    cell, criteria = replay_run(tmp_path, items, 2022, four, "kinki4")
    assert criteria["kinki"]["points"] == 4 and criteria["kinki"]["status"] == "fail"
    assert criteria["general"]["status"] == "pass" and cell["status"] == "fail"
    three = {**answers, **{it.id: (it.meta["kinki"][0],) for it in kinki[:3]}}
    cell, _ = replay_run(tmp_path, items, 2022, three, "kinki3")
    assert cell["status"] == "pass"


def test_years_without_a_sourced_line_are_not_evaluable(tmp_path, items):
    cell, _ = replay_run(tmp_path, items, 2018, gold_answers(items), "gold2018")
    assert cell["status"] == "not evaluable"
    text = invoke("report", tmp_path / "gold2018", "--pass")
    assert "112A43: withdrawn" in text and "112B30: multiply accepted" in text


def test_a_repeated_prediction_names_both_lines_and_writes_nothing(tmp_path):
    """The authors' GPT-4 file with its first prediction given again after a blank line: refused
    naming both lines as an editor numbers them (1 and 77), where it replaced the first."""
    data = shared_data("igakuqa")
    real = (data / "baseline_results" / "2022" / "116-A_gpt4.jsonl").read_text(encoding="utf-8")
    pred_file = tmp_path / "116-A_gpt4.jsonl"
    pred_file.write_text(real + "\n" + real.splitlines()[0].replace('"c"', '"b"', 1) + "\n", encoding="utf-8")
    out = invoke("import", "igakuqa", pred_file, "--data", data, "--run-dir", tmp_path / "run", code=1)
    assert out.count("\n") == 1 and f"{pred_file}: record line 1 and line 77: two predictions for 116A1" in out
    assert not (tmp_path / "run").exists()


def test_model_name_lets_two_imports_of_one_model_pair_as_one(tmp_path):
    # two deployments of one model (GPT-4's file and the student-majority one standing in for a
    # second deployment) go by the name given, with each model string kept beside it; compare keeps
    # two runs of one model on the same items apart by their folder
    data = shared_data("igakuqa")
    runs = []
    for name in ("gpt4", "student-majority"):
        pred_file = data / "baseline_results" / "2022" / f"116-A_{name}.jsonl"
        run_dir = tmp_path / name
        invoke(
            "import",
            "igakuqa",
            pred_file,
            "--data",
            data,
            "--run-dir",
            run_dir,
            "--model-name",
            "one",
            "--convention",
            "igakuqa",
            "--json",
        )
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        assert (manifest["model"], manifest["model_name"]) == (name, "one")
        runs.append(run_dir)
    table = medvqa.compare(runs, resamples=20)
    assert {(r["model_name"], r["model_string"]) for r in table.attrs["runs"]} == {
        ("one", "gpt4"),
        ("one", "student-majority"),
    }
    assert set(table["model"]) == {"one@gpt4", "one@student-majority"}

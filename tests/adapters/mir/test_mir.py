"""MIR against its published data (`../shared/data/mir`, SOURCE.txt): the exam's rules worked by
hand, the nine 2026 models and GPT-4 / GPT-4 Vision 2024 reproduced item by item, and GPT-5.2 on
MIR 2026 beside the 120th Japanese exam (`../shared/data/jmle2026`)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.adapters.mir import rules
from medvqa.cli.main import cli
from tests.conftest import REPO, shared_data

# SOURCE.txt, "The exam's rules": the seven questions annulled in 2026
ANNULLED_2026 = (13, 50, 64, 139, 142, 161, 208)
# SOURCE.txt, "Published results": right answers of the 203 valid 2026 items
PUBLISHED_2026 = {
    "gpt5mini": 198,
    "o3": 199,
    "gemini3pro": 188,
    "claude45sonnet": 189,
    "claude45opus": 186,
    "gpt52": 200,
    "deepseek": 146,
    "deepseekr1": 192,
    "OE": 199,
}


def invoke(*args, code=0):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


@pytest.fixture(scope="module")
def data():
    return shared_data("mir")


@pytest.fixture(scope="module")
def items(data):
    return {it.id: it for it in medvqa.load("mir", path=data)}


@pytest.fixture(scope="module")
def runs_2026(data, tmp_path_factory):
    """`medvqa import mir 2026/MIR26.xlsx`: one run per answer_<model> column."""
    out = tmp_path_factory.mktemp("mir26")
    doc = json.loads(
        invoke("import", "mir", data / "2026" / "MIR26.xlsx", "--data", data, "--run-dir", out, "--json").stdout
    )
    assert [s["model"] for s in doc] == list(PUBLISHED_2026)
    return out


@pytest.fixture(scope="module")
def runs_2024(data, tmp_path_factory):
    """GPT-4 (asked without images, C+Q on all 210) and GPT-4 Vision (C+Q+I on 1-25) under one name."""
    out = tmp_path_factory.mktemp("mir24")
    invoke(
        "import",
        "mir",
        data / "2024" / "MIR24GPT_final.xlsx",
        "--data",
        data,
        "--run-dir",
        out / "gpt4",
        "--response-column",
        " GPT-4",
        "--condition",
        "C+Q",
        "--model",
        "gpt-4",
    )
    invoke(
        "import",
        "mir",
        data / "2024" / "MIR24GPT_vision_answered_v2.xlsx",
        "--data",
        data,
        "--run-dir",
        out / "vision",
        "--response-column",
        " GPT-4 Vision",
        "--model",
        "gpt-4-vision",
        "--model-name",
        "gpt-4",
    )
    return out / "gpt4", out / "vision"


def exam_row(run_dir) -> dict:
    [row] = medvqa.report(run_dir, table="mir")["exam"].to_dict("records")
    return row


# ---------------------------------------------------------------- the items


def test_items_ids_options_images_and_the_quirks(items):
    assert len(items) == 420 and sum(it.excluded for it in items.values()) == 7
    # 2024 prints 70 twice and 71 never (SOURCE.txt, Quirks): the second 70 is question 71
    second = items["mir-2024-71"]
    assert second.meta["printed_number"] == "70" and second.question.startswith("Acude al servicio de urgencias")
    # options 1-4 parsed from the stem; 141 and 157 lack option 3's text, their key
    assert [o.text for o in items["mir-2024-141"].options] == [
        "Resonancia magnética.",
        "Urografía intravenosa.",
        "",
        "Repetir la ecografía abdominal.",
    ]
    assert items["mir-2024-141"].gold.raw == items["mir-2024-157"].gold.raw == "3"
    assert items["mir-2024-165"].options[2].text == "Osmolalidad urinaria >100 moms/Kg."  # "3 ." as printed
    assert (
        items["mir-2026-1"].question.endswith("(IMAGEN 1)?:") and items["mir-2026-1"].options[0].text == "Osteosarcoma."
    )
    for year in (2024, 2026):  # questions 1-25 with their image: all four conditions apply
        with_image = [it for it in items.values() if it.meta["year"] == year and it.image_available]
        assert [it.meta["number"] for it in with_image] == list(range(1, 26))
    academy = items["mir-2026-208"].meta
    assert (academy["block"], academy["difficulty"], academy["impugnable"]) == ("RESERVA", 4, "dudosa")
    assert (
        items["mir-2026-1"].meta["subjects"] == ["TM", "RX"]
        and items["mir-2024-1"].meta["specialty"] == "Endocrinología"
    )


def test_validate_names_each_quirk(data):
    out = invoke("validate", "mir", "--data", data).output
    for line in ("repeated-number", "missing-option-text", "spaced-option-label", "annulled"):
        assert line in out
    assert "record mir-2024-71: [repeated-number] printed as question 70; numbered 71 by its position" in out
    assert out.count("[annulled]") == 7 and out.count("[missing-option-text]") == 2


def test_spanish_answers_and_refusals_are_read(items):
    item = items["mir-2024-12"]  # key 1
    assert medvqa.score(item, "La respuesta correcta es la 1").predicted == ("1",)
    assert medvqa.score(item, "Respuesta: opción 1").predicted == ("1",)
    # GPT-4's own replies (SOURCE.txt, Quirks): free text that opens with the option, a refusal
    assert medvqa.score(item, "1. Estenosis valvular aórtica grave con indicación de recambio valvular.").correct
    refusal = medvqa.score(
        item, "Como asistente de inteligencia artificial, lamento informar que no puedo ver ni analizar imágenes."
    )
    assert refusal.status == "refusal" and refusal.predicted is None


# ---------------------------------------------------------------- the exam's rules, by hand


def test_reserve_substitution_the_official_200_of_2026(items):
    """SOURCE.txt: each annulled question is replaced by the next reserve, in order. Six of 1-200
    are annulled (13, 50, 64, 139, 142, 161), so reserves 201-206 come in; 208, annulled too, was
    never needed; 207, 209 and 210 stay out."""
    official = rules.official_numbers(210, ANNULLED_2026)
    expected = [n for n in range(1, 201) if n not in {13, 50, 64, 139, 142, 161}] + [201, 202, 203, 204, 205, 206]
    assert official == expected and len(official) == 200
    # the loader marks the same 200 on the 2026 items
    marked = sorted(it.meta["number"] for it in items.values() if it.meta["year"] == 2026 and it.meta["official"])
    assert marked == expected
    # an annulled reserve is skipped: 5 annulled, 201 annulled too -> 202 replaces 5
    assert rules.official_numbers(210, {5, 201})[-1] == 202 and 5 not in rules.official_numbers(210, {5, 201})
    # 2024: none annulled in the Ministry's provisional key -> 1-200
    assert sorted(
        it.meta["number"] for it in items.values() if it.meta["year"] == 2024 and it.meta["official"]
    ) == list(range(1, 201))


def test_net_score_worked_by_hand(runs_2026, runs_2024):
    # SOURCE.txt's own example: 183 right, 17 wrong, 0 blank -> 177.33
    assert round(rules.net_score(183, 17), 2) == 177.33
    # GPT-5.2 2026: wrong on 3, 77 and 132 (all official), right elsewhere: 197 right, 3 wrong -> 196
    gpt52 = exam_row(runs_2026 / "gpt52")
    assert (gpt52["official_right"], gpt52["official_wrong"], gpt52["official_blank"], gpt52["net_score"]) == (
        197,
        3,
        0,
        196.0,
    )
    # claude45opus: 186 of 203 valid, three of them reserves 207, 209, 210 -> 183 right, 17 wrong, as the example
    assert (
        exam_row(runs_2026 / "claude45opus")["official_right"],
        exam_row(runs_2026 / "claude45opus")["net_score"],
    ) == (183, 177.33)
    # GPT-4 2024: 183 of 210; wrong on reserves 205, 209, 210 -> 7 right reserves, 176 right of 1-200;
    # 25 wrong - 3 = 22 wrong; the two refusals (18, 23) are blanks, 0 points: 176 - 22/3 = 168.67
    gpt4 = exam_row(runs_2024[0])
    assert (
        gpt4["sheet"],
        gpt4["official_right"],
        gpt4["official_wrong"],
        gpt4["official_blank"],
        gpt4["net_score"],
    ) == ("without images", 176, 22, 2, 168.67)


def test_annulled_items_are_in_no_denominator(runs_2026, items):
    annulled = {f"mir-2026-{n}" for n in ANNULLED_2026}
    assert {i for i, it in items.items() if it.excluded} == annulled
    for model in PUBLISHED_2026:
        run = medvqa.read_run(runs_2026 / model)
        assert not annulled & {r["item_id"] for r in run.records}  # answered, yet no record
        assert {x["item_id"] for x in run.manifest["excluded"]} == annulled
        assert sorted(run.manifest["imported"]["annulled_answers"]) == sorted(annulled)
        row = exam_row(runs_2026 / model)
        assert row["valid"] == 203 and row["official"] == 200
        overall = medvqa.report(runs_2026 / model).query("year.isna()")
        assert overall["n"].tolist() == [179, 24]  # C+Q and C+Q+I: 203 in all, never 210


# ---------------------------------------------------------------- published numbers


def test_2026_each_models_right_answers_of_203_are_the_published_ones(runs_2026):
    for model, right in PUBLISHED_2026.items():
        row = exam_row(runs_2026 / model)
        assert (row["right"], row["valid"]) == (right, 203), model
        assert row["margin_to_best"] == row["official_right"] - 188 and row["best_candidate"] == 188
        assert row["scaled_to_200"] == round(right * 200 / 203, 2)


def test_2024_gpt4_gpt4_vision_and_delta_img(runs_2024):
    gpt4, vision = runs_2024
    assert (exam_row(gpt4)["right"], exam_row(gpt4)["valid"]) == (183, 210)  # 87.14 %
    [cell] = medvqa.report(vision).query("year.isna()").to_dict("records")  # 76 %
    assert (cell["condition"], cell["correct"], cell["n"]) == ("C+Q+I", 19, 25)
    audit = json.loads(invoke("audit", gpt4, vision, "--json", "--resamples", "20").stdout)
    overall = audit["paired"]["overall"]
    assert (overall["n"], round(overall["a_with"] * 25), round(overall["a_removed"] * 25)) == (25, 19, 16)
    assert round(overall["delta_img"], 2) == 0.12
    # n10 = 5, n01 = 2: exact p = 2 P(X <= 2 | 7, 1/2) = 2 * 29/128 = 0.453; mid-p = 0.453 - P(X = 2) = 0.289
    assert (overall["counts"]["n10"], overall["counts"]["n01"]) == (5, 2)
    assert overall["mcnemar_exact_p"] == pytest.approx(58 / 128) and overall["mcnemar_p"] == pytest.approx(37 / 128)
    # docs/benchmarks/mir.md quotes what every output prints: the mid-p, the interval
    low, high = (f"{100 * x:+.1f}".replace("-", "−") for x in overall["ci"])
    quoted = f"Tango 95 % CI {low.lstrip('+')} to {high}, McNemar mid-p {overall['mcnemar_p']:.3f}"
    assert quoted in (REPO / "docs" / "benchmarks" / "mir.md").read_text(encoding="utf-8")
    # two deployments joined under one --model-name: the audit says so
    assert any("different deployments under one model name" in n and "'gpt-4-vision'" in n for n in audit["notes"])


def test_n_excluded_counts_the_annulled_questions_each_condition_would_ask(runs_2026):
    """MIR 2026 annulled 7 questions, one of them an image question (13): sat as printed, 13 would
    have been asked with its image (C+Q+I) and the other six without (C+Q), so the C+Q rows show
    6 and the C+Q+I rows 1 (they showed 7 each), in report and compare alike."""
    run = runs_2026 / "gpt52"
    excluded = medvqa.read_run(run).manifest["excluded"]
    assert sorted(int(e["item_id"].rsplit("-", 1)[1]) for e in excluded) == [13, 50, 64, 139, 142, 161, 208]
    rows = medvqa.report(run, by="year").to_dict("records")
    assert [(r["condition"], r["n"], r["n_excluded"]) for r in rows] == [("C+Q", 179, 6), ("C+Q+I", 24, 1)]
    compared = medvqa.compare([run]).to_dict("records")
    assert [(r["condition"], r["stratum"], r["n_excluded"]) for r in compared] == [
        ("C+Q", "overall", 6),
        ("C+Q", "year", 6),
        ("C+Q+I", "overall", 1),
        ("C+Q+I", "year", 1),
    ]


def test_reference_line_per_model(runs_2026):
    lines = medvqa.report(runs_2026 / "gemini3pro", pass_lines=True).to_dict("records")
    assert [(r["exam"], r["status"], r["points"], r["required"], r["margin"]) for r in lines] == [
        ("MIR 2026 (with images)", "fail", 185, 188, -3)
    ]


def test_every_stratum_table_counts_every_question_and_names_those_without_a_value(runs_2026):
    tables = medvqa.report(runs_2026 / "gpt52", table="mir")
    for name in ("by_block", "by_difficulty", "by_impugnable", "by_image"):  # one level per question
        frame = tables[name]
        assert frame.groupby("condition")["n"].sum().to_dict() == {"C+Q": 179, "C+Q+I": 24}, name
    # the academy's table leaves 77 impugnable cells empty (74 text, 3 image questions) beside dudosa 3,
    # no 101 and sí 1 of the text ones (105), and 23 difficulties (all text questions): 179 - 156
    unknown = {
        (name, r["condition"]): r["n"]
        for name in ("by_difficulty", "by_impugnable")
        for r in tables[name].to_dict("records")
        if r[name.removeprefix("by_")] == "unknown"
    }
    assert unknown == {("by_impugnable", "C+Q"): 74, ("by_impugnable", "C+Q+I"): 3, ("by_difficulty", "C+Q"): 23}
    assert any(
        n.startswith("`unknown` (`none` for subjects): questions whose source gives no impugnable")
        for n in tables["by_impugnable"].attrs["notes"]
    )
    assert not any("`unknown`" in n for n in tables["by_block"].attrs["notes"])  # every question has its block
    assert "| C+Q | unknown | 74 |" in invoke("report", runs_2026 / "gpt52", "--table", "mir").output


# ---------------------------------------------------------------- the commands, the neighbours


def test_medvqa_list_shows_mir():
    assert re.search(r"^  mir +MIR: Spain's residency entrance exam", invoke("list").output, re.M)


def test_a_workbook_in_another_order_or_year_is_refused_naming_the_row(data, tmp_path):
    import openpyxl

    rows = medvqa.read_table(data / "2026" / "MIR26.xlsx")
    book = openpyxl.Workbook()
    book.active.append(["qnum", "Description", "answer_x"])
    for row in (rows[1], rows[0]):  # questions 2 and 1, swapped
        book.active.append([row["qnum"], row["Description"], row["Solucion"]])
    book.save(tmp_path / "MIR26_swapped.xlsx")
    result = invoke(
        "import", "mir", tmp_path / "MIR26_swapped.xlsx", "--data", data, "--run-dir", tmp_path / "run", code=1
    )
    assert "MIR26_swapped.xlsx: record row 2: the stem differs from the data's question mir-2026-1" in result.output
    assert not (tmp_path / "run").exists()
    other = invoke(
        "import",
        "mir",
        data / "2024" / "MIR24GPT_final.xlsx",
        "--data",
        data,
        "--year",
        "2026",
        "--response-column",
        " GPT-4",
        "--run-dir",
        tmp_path / "other",
        code=1,
    )
    assert "MIR24GPT_final.xlsx" in other.output and "qnum" in other.output and not (tmp_path / "other").exists()
    many = invoke(
        "import",
        "mir",
        data / "2026" / "MIR26.xlsx",
        "--data",
        data,
        "--model-name",
        "x",
        "--run-dir",
        tmp_path / "many",
        code=1,
    )
    assert "give --response-column too" in many.output and not (tmp_path / "many").exists()


def test_gpt52_on_mir_2026_and_on_the_120th_japanese_exam_in_one_compare(data, tmp_path):
    """The published answers of one model on two countries' 2026 exams, each asked as printed
    (image questions with the image): one table, each exam's own headline and lines."""
    source = json.loads(shared_data("jmle2026", "results", "openai_gpt-5.2.json").read_text(encoding="utf-8"))
    answers = tmp_path / "jmle.jsonl"
    with answers.open("w", encoding="utf-8") as fh:
        for row in source["results"]:  # replayed as JSON answers, as tests/adapters/jmed48k replay them
            block, number = re.fullmatch(r"120([A-F])-(\d+)", row["question_id"]).groups()
            fh.write(
                json.dumps(
                    {
                        "item_id": f"Physician_2026_{block}_Q{number}",
                        "response": json.dumps({"answer": row["predicted"]}),
                    }
                )
                + "\n"
            )
    invoke(
        "import",
        "jmed48k",
        answers,
        "--data",
        shared_data("jmed48k-sample"),
        "--select",
        "year=2026",
        "--as-printed",
        "--model",
        "openai/gpt-5.2",
        "--model-name",
        "gpt-5.2",
        "--run-dir",
        tmp_path / "jmle",
    )
    invoke(
        "import",
        "mir",
        data / "2026" / "MIR26.xlsx",
        "--data",
        data,
        "--response-column",
        "answer_gpt52",
        "--model-name",
        "gpt-5.2",
        "--run-dir",
        tmp_path / "mir",
    )
    doc = json.loads(invoke("compare", tmp_path / "mir", tmp_path / "jmle", "--json", "--resamples", "20").stdout)
    cells = {
        (r["benchmark"], r["condition"]): (r["n"], round(r["value"] * r["n"]))
        for r in doc["table"]
        if r["stratum"] == "overall"
    }
    # MIR: 179 text and 24 image questions, 200 right; the 120th: 302 and 98, 388 right (its file's 97.0 %)
    assert cells == {
        ("mir", "C+Q"): (179, 177),
        ("mir", "C+Q+I"): (24, 23),
        ("jmed48k", "C+Q"): (302, 295),
        ("jmed48k", "C+Q+I"): (98, 93),
    }
    assert {r["model"] for r in doc["table"]} == {"gpt-5.2"}
    lines = {(r["benchmark"], r["criterion"]): (r["status"], r["points"], r["required"]) for r in doc["pass_lines"]}
    assert lines[("mir", "best candidate (reference)")] == ("pass", 197, 188)
    # the 120th exam's points are its file's (required 198/200, general 290/300); no official line known
    assert lines[("jmed48k", "hisshu")] == ("not evaluable", 198, None)
    assert lines[("jmed48k", "general")] == ("not evaluable", 290, None)
    # one model name on two exams: each run's cells carry its own exam's language
    assert {r["benchmark"]: r["language"] for r in doc["runs"]} == {"mir": "es", "jmed48k": "ja"}
    assert {p["benchmark"]: sorted({(c["level"], c["language"]) for c in p["cells"]}) for p in doc["panels"]} == {
        "mir": [("2026", "es")],
        "jmed48k": [("Physician", "ja")],
    }
    text = invoke("compare", tmp_path / "mir", tmp_path / "jmle", "--resamples", "20").output
    assert "| model | 2026 es |" in text and "| model | Physician ja |" in text


def test_a_stem_whose_options_cannot_be_read_names_the_file_and_the_item(tmp_path):
    from medvqa.adapters.mir import loader

    with pytest.raises(medvqa.DataError) as caught:
        loader.split_options(
            "¿Cuál es el diagnóstico?: 1. Uno. 2. Dos.", file=tmp_path / "MIR26.xlsx", record="mir-2026-9"
        )
    assert (
        str(caught.value)
        == f"{tmp_path / 'MIR26.xlsx'}: record mir-2026-9: the options 1-4 cannot be read from the stem"
    )
    stem, options, quirks = loader.split_options("Tipo 2. ¿Cuál?: 1. A. 2. B. 3. C. 4. D.", file=tmp_path, record="x")
    assert (stem, list(options.values()), quirks) == ("Tipo 2. ¿Cuál?:", ["A.", "B.", "C.", "D."], [])

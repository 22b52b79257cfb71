"""`medvqa import worldmedqa_v` without `--data`: the items a VLMEvalKit table carries, a folder of
tables at once, repeated indices kept, and medvqa's reading reconciled with the published
verdicts (`hit`, `extracted`, `_acc.csv`). Small tables written here, in the layout of the authors'
published result tables (shared data worldmedqa-v-outputs/SOURCE.txt: columns index, question,
A-D, answer (empty), correct_option, split, prediction, then extracted + hit, or hit + log)."""

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from tests.conftest import shared_data

# a reply VLMEvalKit's matching reads as the authors ran it: the one letter, at most three words after it
READ = "The findings point to {letter}"
# a reply the study's blind runs read (their log repeats it) and medvqa's matching does not: the letter,
# then five words and more (as "The correct answer is D.\n\nThe partogram shows ...", Yi_VL_34B, brazil-6)
EARLY = "The answer is A. The rash and the fever point there"
QUESTIONS = {  # index -> (English question, local question, gold)
    1: ("A man with chest pain.", "גבר עם כאב בחזה.", "B"),
    2: ("A woman with fever.", "אישה עם חום.", "D"),
    84: ("A 56-year-old male complains of palpitations.", "בן 56 מתלונן על פלפיטציות.", "C"),
    85: ("A child with a rash.", "ילד עם פריחה.", "A"),
}
SECOND_84 = ("A 44-year-old man with shortness of breath.", "בן 44 עם קוצר נשימה.", "A")


def rows(language: str, replies: dict, *, extractor: bool = True, order=(1, 2, 84, "84b", 85), hits=None) -> list[dict]:
    """Rows of an Israel table: index 84 twice (the ECG question first, gold C, as 11 of the 42
    published Israel tables list it), `answer` empty, the gold in `correct_option`."""
    out = []
    for key in order:
        index, (en, local, gold) = (84, SECOND_84) if key == "84b" else (key, QUESTIONS[key])
        reply = replies.get(key, READ.format(letter=gold))
        row = {
            "index": index,
            "question": en if language == "english" else local,
            **{k: f"{k} option {index} {language}" for k in "ABCD"},
            "answer": "",
            "correct_option": gold,
            "split": "test",
            "prediction": reply,
        }
        hit = (hits or {}).get(key, 0 if not extractor else int(reply == READ.format(letter=gold)))
        row.update(
            {"extracted": gold if hit else "A" if gold != "A" else "B", "hit": hit}
            if extractor
            else {"hit": hit, "log": f"Match Log: {reply}. "}
        )
        out.append(row)
    return out


def write(path: Path, table: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(table).to_excel(path, index=False)
    return path


def invoke(*args, code=0):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A model's Israel tables in both languages, with the image (an extractor ran) and blind
    (no extractor column: hit + log, hit 0 everywhere, as the open models' published blind tables)."""
    root = tmp_path_factory.mktemp("visuals")
    for language in ("local", "english"):
        write(
            root / "outputs_w_images" / "M" / f"M_israel_{language}_gpt-4o-mini_result.xlsx",
            rows(language, {2: "I would not choose", "84b": "Cannot tell"}),
        )
        write(
            root / "outputs_blind" / "M" / f"M_israel_{language}_openai_result.xlsx",
            rows(language, {85: EARLY}, extractor=False, order=(1, 2, "84b", 84, 85)),
        )
    acc = root / "outputs_w_images" / "M" / "M_israel_local_acc.csv"
    acc.write_text('"split","Overall"\n"test","0.4"\n', encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def imported(folder, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("runs")
    doc = json.loads(invoke("import", "worldmedqa_v", folder, "--run-dir", out, "--json").stdout)
    return out, doc


def summary_of(doc, language, condition):
    return next(s for s in doc["runs"] if (s["language"], s["condition"]) == (language, condition))


def test_a_folder_imports_every_table_one_run_each_with_items_from_the_tables(imported, folder):
    out, doc = imported
    assert sorted(str(Path(s["run_dir"]).relative_to(out)) for s in doc["runs"]) == [
        "M/israel_english_blind",
        "M/israel_english_image",
        "M/israel_local_blind",
        "M/israel_local_image",
    ]
    run = medvqa.read_run(out / "M" / "israel_local_image")  # re-read: its items from the table again
    table = folder / "outputs_w_images" / "M" / "M_israel_local_gpt-4o-mini_result.xlsx"
    assert run.manifest["imported"]["items_from"] == {"file": str(table.resolve()), "rows": 5}
    assert run.manifest["model"] == "M" and run.manifest["language"] == "local"
    assert {r["language"] for r in run.records} == {"he"}
    assert {r["language"] for r in medvqa.read_run(out / "M" / "israel_english_blind").records} == {"en"}


def test_a_repeated_index_is_two_items_named_alike_in_every_table_and_both_count(imported):
    """The blind tables list index 84's questions in the other order: numbered by gold letter,
    israel-84 is the same question (gold A) in all four runs, so runs pair."""
    out, doc = imported
    for name in ("israel_local_image", "israel_english_image", "israel_local_blind", "israel_english_blind"):
        items = medvqa.read_run(out / "M" / name).items
        assert sorted(items) == ["israel-1", "israel-2", "israel-84", "israel-84#2", "israel-85"], name
        assert items["israel-84"].gold.raw == "A" and items["israel-84#2"].gold.raw == "C"
        assert items["israel-84"].question in SECOND_84
    local = summary_of(doc, "local", "C+Q+I")
    assert local["conditions"]["C+Q+I"]["n"] == 5  # both questions of index 84 count
    [finding] = local["findings"]
    assert finding["rule"] == "repeated-index" and finding["items"] == ["israel-84", "israel-84#2"]
    assert "listed here in the other order" in finding["message"]  # the ECG question (#2) comes first here
    blind = summary_of(doc, "local", "C+Q")
    assert "other order" not in blind["findings"][0]["message"]


def test_validate_reports_the_repeat_as_a_warning(folder):
    table = folder / "outputs_w_images" / "M" / "M_israel_english_gpt-4o-mini_result.xlsx"
    doc = json.loads(invoke("validate", "worldmedqa_v", "--data", table, "--json").stdout)
    assert doc["errors"] == 0
    [f] = [f for f in doc["findings"] if f["rule"] == "repeated-index"]
    assert f["level"] == "warning" and "israel-84 (gold A), israel-84#2 (gold C)" in f["message"]


def test_the_published_accuracy_is_reproduced_and_report_shows_it_beside_both_readings(imported):
    """With the image: 3 replies read by matching, 2 by the published extractor (its option the
    assisted reading). _acc.csv says 0.4 (2 of 5): the local table's hits agree with it."""
    out, doc = imported
    s = summary_of(doc, "local", "C+Q+I")
    assert s["published"]["source"] == "M_israel_local_acc.csv" and s["published"]["correct"] == 2
    assert s["n_extractor"] == 2 and s["differences"] == [
        {
            "cause": "acc-csv",
            "n": 1,
            "items": [],
            "verdicts_differ": False,
            "message": "the published M_israel_local_acc.csv counts 2 correct, the table's `hit` column 3",
        }
    ]
    english = summary_of(doc, "en", "C+Q+I")
    assert english["published"] == {**english["published"], "source": "hit", "correct": 3, "accuracy": 0.6}
    assert english["published"]["medvqa_assisted_correct"] == 3 and english["differences"] == []
    row = next(r for r in json.loads(invoke("report", out / "M" / "israel_english_image", "--by", "", "--json").stdout))
    assert (row["reading"], row["correct"], row["strict_correct"]) == ("assisted", 3, 3)
    assert (row["published_accuracy"], row["published_correct"]) == (0.6, 3)


def test_an_empty_answer_column_is_named_as_the_cause_of_published_zeros(imported):
    """The blind tables: hit 0 on every row (VLMEvalKit compared with the empty `answer`);
    medvqa reads 4 of 5 replies as the gold option. The "A" with eight words after it (gold A) is a
    reply VLMEvalKit's matching read (its log repeats it) that medvqa's rule leaves unread: named
    beside."""
    out, doc = imported
    s = summary_of(doc, "en", "C+Q")
    assert s["published"]["accuracy"] == 0.0 and s["published"]["medvqa_assisted_correct"] == 4
    causes = {d["cause"]: d for d in s["differences"]}
    assert causes["empty-answer-column"]["n"] == 4
    assert causes["empty-answer-column"]["message"].startswith(
        "published `hit` 0 on 4 rows whose reply names the gold option: the published verdicts compare with the "
        "empty `answer` column"
    )
    assert (
        causes["vlmevalkit-matched"]["items"] == ["israel-85"]
        and "1 of them naming the gold" in causes["vlmevalkit-matched"]["message"]
    )
    manifest = medvqa.read_run(out / "M" / "israel_english_blind").manifest
    assert manifest["imported"]["differences"] == s["differences"]
    assert manifest["imported"]["published"]["C+Q"]["accuracy"] == 0.0


def test_a_table_without_an_extractor_column_has_no_assisted_reading(imported):
    out, doc = imported
    s = summary_of(doc, "local", "C+Q")
    cell = s["conditions"]["C+Q"]
    assert s["n_extractor"] == 0 and cell["parse_failure"] == 1 and cell["correct"] == 4
    assert all(r.get("assisted") is None for r in medvqa.read_run(out / "M" / "israel_local_blind").records)


def test_running_again_skips_what_is_imported(imported, folder):
    out, _ = imported
    again = json.loads(invoke("import", "worldmedqa_v", folder, "--run-dir", out, "--json").stdout)
    assert again["runs"] == [] and len(again["skipped"]) == 4
    text = invoke("import", "worldmedqa_v", folder, "--run-dir", out).output
    assert "0 imported, 4 already imported (skipped)" in text


def test_tables_that_disagree_on_their_items_are_refused_naming_both_files_and_the_row(folder, tmp_path):
    root = tmp_path / "visuals"
    first = write(root / "outputs_w_images" / "M" / "M_israel_english_gpt-4o-mini_result.xlsx", rows("english", {}))
    changed = rows("english", {})
    changed[1]["question"] = "A woman with a fever of 39."
    second = write(root / "outputs_w_images" / "N" / "N_israel_english_gpt-4o-mini_result.xlsx", changed)
    result = invoke("import", "worldmedqa_v", root, "--run-dir", tmp_path / "out", code=1)
    assert str(second) in result.output and str(first) in result.output
    assert "row 3 (israel-2) and row 3 (israel-2): the question differs" in result.output
    assert not (tmp_path / "out").exists()  # nothing written


def test_one_table_with_its_parts_overridden(folder, tmp_path):
    table = folder / "outputs_w_images" / "M" / "M_israel_english_gpt-4o-mini_result.xlsx"
    doc = json.loads(
        invoke(
            "import",
            "worldmedqa_v",
            table,
            "--run-dir",
            tmp_path / "r",
            "--model",
            "gpt-4o",
            "--model-name",
            "GPT-4o",
            "--condition",
            "C+Q",
            "--json",
        ).stdout
    )
    assert (doc["model"], doc["condition"], doc["items_from"]["rows"]) == ("gpt-4o", "C+Q", 5)
    manifest = medvqa.read_run(tmp_path / "r").manifest
    assert manifest["model_name"] == "GPT-4o" and manifest["imported"]["condition"] == "C+Q"
    text = invoke("import", "worldmedqa_v", table, "--run-dir", tmp_path / "t").output
    assert "items: from the table (5 rows)" in text and "published: 0.6000 (3 of 5, hit)" in text
    assert "[repeated-index] index 84 holds 2 different questions" in text


def test_items_from_a_published_table_are_the_hub_loaders_items():
    """The same ids, questions, options and gold as the loader of WorldMedQA-V's own tables gives
    (here the derived CSV of the same Japan output), so earlier runs and pairing keep working."""
    from medvqa.adapters.worldmedqa_v.loader import load_table

    data = shared_data("worldmedqa-v-japan")
    table = data / "visuals" / "outputs_w_images" / "GPT4o" / "GPT4o_japan_local_gpt-4o-mini_result.xlsx"
    assert load_table(table, "local") == medvqa.load("worldmedqa_v", data)


def test_the_hubs_tables_number_a_repeated_index_as_the_published_outputs_do(tmp_path, folder):
    """WorldMedQA-V's own tables (`<country>_<local|english>.tsv`) with Israel's index 84 twice,
    listed in one order in Hebrew and the other in English: the same ids and golds in both
    languages, as the output tables give them, so runs of either source pair."""
    for language, order in (("local", (1, 2, 84, "84b", 85)), ("english", (1, 2, "84b", 84, 85))):
        table = pd.DataFrame(rows(language, {}, order=order))[
            ["index", "question", "A", "B", "C", "D", "answer", "correct_option"]
        ]
        table.to_csv(tmp_path / f"israel_{language}.tsv", sep="\t", index=False)
    local, english = (medvqa.load("worldmedqa_v", tmp_path, language=lang) for lang in ("local", "en"))
    assert (
        [it.id for it in local]
        == [it.id for it in english]
        == ["israel-1", "israel-2", "israel-84", "israel-84#2", "israel-85"]
    )
    assert [it.gold.raw for it in local] == [it.gold.raw for it in english] == ["B", "D", "A", "C", "A"]
    doc = json.loads(invoke("validate", "worldmedqa_v", "--data", tmp_path, "--json").stdout)
    assert [f["number"] for f in doc["findings"] if f["rule"] == "repeated-index"] == ["israel-84"]
    # a published table checked against them (--data): each row meets the item of the same id
    blind = folder / "outputs_blind" / "M" / "M_israel_local_openai_result.xlsx"
    imported = json.loads(
        invoke("import", "worldmedqa_v", blind, "--data", tmp_path, "--run-dir", tmp_path / "r", "--json").stdout
    )
    assert imported["items_from"] == {"data": str(tmp_path.resolve())} and imported["conditions"]["C+Q"]["n"] == 5
    assert medvqa.read_run(tmp_path / "r").items["israel-84#2"].gold.raw == "C"


def test_a_run_of_a_chosen_sheet_or_an_unnamed_country_reads_back_its_items(tmp_path):
    """The run's items are reloaded from the table as they were read: at the sheet chosen, with
    the country given where the file name does not say it."""
    book = tmp_path / "M_israel_english_gpt-4o-mini_result.xlsx"
    with pd.ExcelWriter(book) as writer:
        pd.DataFrame({"note": ["not the answers"]}).to_excel(writer, sheet_name="readme", index=False)
        pd.DataFrame(rows("english", {})).to_excel(writer, sheet_name="results", index=False)
    invoke("import", "worldmedqa_v", book, "--sheet", "results", "--run-dir", tmp_path / "s")
    assert len(medvqa.read_run(tmp_path / "s").items) == 5
    unnamed = write(tmp_path / "predictions.xlsx", rows("local", {}))
    invoke("import", "worldmedqa_v", unnamed, "--country", "israel", "--run-dir", tmp_path / "c")
    run = medvqa.read_run(tmp_path / "c")
    assert "israel-84#2" in run.items and {r["language"] for r in run.records} == {"he"}
    row = json.loads(invoke("report", tmp_path / "c", "--by", "", "--json").stdout)[0]
    assert row["n"] == 5 and row["published_correct"] == 5


def test_a_published_zero_the_import_names_an_artifact_is_flagged_wherever_it_is_shown(imported):
    """The blind tables' published 0.0 is VLMEvalKit comparing with the empty `answer` column: the
    import names the cause, and the number carries the flag in the manifest, `report`, `compare`'s
    JSON and its text, where it stood as the model's published accuracy; the image tables' numbers
    (reproduced) carry none."""
    out, _ = imported
    blind, image = out / "M" / "israel_english_blind", out / "M" / "israel_english_image"
    assert medvqa.read_run(blind).manifest["imported"]["published"]["C+Q"]["artifact"] == "empty-answer-column"
    assert "artifact" not in medvqa.read_run(image).manifest["imported"]["published"]["C+Q+I"]
    [row] = json.loads(invoke("report", blind, "--by", "", "--json").stdout)
    assert (row["published_accuracy"], row["published_correct"], row["published_artifact"]) == (
        0.0,
        0,
        "empty-answer-column",
    )
    [other] = json.loads(invoke("report", image, "--by", "", "--json").stdout)
    assert "published_artifact" not in other and other["published_accuracy"] == 0.6
    doc = json.loads(invoke("compare", blind, image, "--json").stdout)
    overall = {r["condition"]: r for r in doc["table"] if r["stratum"] == "overall"}
    assert overall["C+Q"]["published_artifact"] == "empty-answer-column"
    assert overall["C+Q+I"]["published_artifact"] is None and overall["C+Q+I"]["published_accuracy"] == 0.6
    assert "published 60.0 |" in invoke("compare", blind, image).stdout  # the panel shows C+Q+I
    assert "| M | 80.0 (n=5) · published 0.0 (artifact: empty-answer-column) |" in invoke("compare", blind).stdout

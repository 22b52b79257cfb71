"""WorldMedQA-V: its Japan tables, VLMEvalKit's matching, the Hub loader's offline message, and
the authors' published GPT-4o outputs imported and audited (Δlang and Δimg)."""

import json

import huggingface_hub
import pytest
from click.testing import CliRunner

import medvqa
from medvqa.adapters.worldmedqa_v.matching import can_infer
from medvqa.cli.main import cli
from tests.conftest import shared_data

CHOICES = {"A": "赤血球輸血", "B": "自宅で経過観察", "C": "新鮮凍結血漿投与", "D": "凝固第Ⅷ因子製剤投与"}


def test_both_languages_hold_the_same_items_with_the_gold_from_correct_option():
    data = shared_data("worldmedqa-v-japan")
    local, english = (medvqa.load("worldmedqa_v", data, language=lang) for lang in ("local", "en"))
    assert [it.id for it in local] == [it.id for it in english] and len(local) == 168
    first = local[0]
    assert first.id == "japan-1" and first.language == "ja" and english[0].language == "en"
    # the published tables leave `answer` empty: the gold letter is in correct_option (D for index 1)
    assert first.gold.alternatives == (("D",),) and english[0].gold.alternatives == (("D",),)
    # the quirk SOURCE.txt lists: a number lost from the Japanese stem, kept as published
    assert first.question.startswith("か月の男児") and "体重 kg" in first.question
    assert {it.meta["country"] for it in local} == {"japan"}


def test_validate_lists_stems_that_lost_a_number():
    from medvqa.core.plugins import get_benchmark

    findings = get_benchmark("worldmedqa_v").validate(shared_data("worldmedqa-v-japan"))
    assert findings and all(f.level == "warning" and f.rule == "lost-number" for f in findings)
    assert "japan-1" in {f.record for f in findings}


@pytest.mark.parametrize("reply, expected", [
    ("(B). This is right because the image shows it", "B"),  # brackets and full stop separate words
    ("The answer is (B).", None),  # a lone letter needs at least five words after it (VLMEvalKit 134b4ea)
    ("A or C would both fit the history and the image", None),  # two letters: no match
    ("D. 凝固第Ⅷ因子製剤投与", "D"),  # too few words for the letter rule: the option's text
    ("凝固第Ⅷ因子製剤投与", "D"),  # no letter: the one option text it contains
    ("正解はDです", None),  # Japanese around the letter: no whitespace word, no option text
    ("Cannot determine the answer", "Z"),  # VLMEvalKit's refusal
])
def test_vlmevalkit_matching_rules(reply, expected):
    assert (can_infer(reply, CHOICES) or None) == expected


def test_convention_falls_back_to_the_chain_where_matching_fails():
    item = medvqa.load("worldmedqa_v", shared_data("worldmedqa-v-japan"))[0]
    assert medvqa.score(item, "D. 凝固第Ⅷ因子製剤投与").rule == "vlmevalkit-text"
    s = medvqa.score(item, "D 凝固第Ⅷ因子製剤投与 is given first , then observe")
    assert s.rule == "vlmevalkit-option" and s.correct
    s = medvqa.score(item, "正解はDです")  # no match: medvqa's chain reads the Japanese answer phrase
    assert s.predicted == ("D",) and s.rule.startswith("rule")
    assert medvqa.score(item, '{"answer": ["D"]}').rule == "json"  # medvqa's requested format first
    s = medvqa.score(item, "Cannot determine the answer")
    assert s.status == "refusal" and not s.correct


def test_the_exact_convention_is_matching_alone():
    """`vlmevalkit-exact` (the import's default): what VLMEvalKit's matching cannot read is a parse
    failure, even where medvqa's chain would read it; matching, JSON and refusals as in `vlmevalkit`."""
    from medvqa.core.plugins import get_benchmark
    from medvqa.core.scoring.score import score

    exact = get_benchmark("worldmedqa_v").with_convention("vlmevalkit-exact").answer_conventions()
    item = medvqa.load("worldmedqa_v", shared_data("worldmedqa-v-japan"))[0]
    s = score(item, "正解はDです", conventions=exact)  # the chain reads it under `vlmevalkit` (above)
    assert (s.status, s.predicted, s.correct) == ("parse_failure", None, False)
    assert score(item, "D. 凝固第Ⅷ因子製剤投与", conventions=exact).rule == "vlmevalkit-text"
    assert score(item, '{"answer": ["D"]}', conventions=exact).rule == "json"
    assert score(item, "Cannot determine the answer", conventions=exact).status == "refusal"


def test_hub_offline_message_names_both_ways(monkeypatch):
    def offline(**kwargs):
        raise OSError("Cannot reach huggingface.co")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(medvqa.DataError) as exc:
        medvqa.load("worldmedqa_v")
    text = str(exc.value)
    assert "WorldMedQA/V" in text and "--data" in text and "Cannot reach huggingface.co" in text


TABLES = {  # (folder, language) -> published accuracy on 168 items (the authors' _acc.csv)
    ("outputs_w_images", "local"): 0.8809523809523809,
    ("outputs_w_images", "english"): 0.7202380952380952,
    ("outputs_blind", "local"): 0.8571428571428571,
    ("outputs_blind", "english"): 0.6904761904761905,
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    data = shared_data("worldmedqa-v-japan")
    out = tmp_path_factory.mktemp("imported")
    runs = {}
    for folder, version in TABLES:
        table = data / "visuals" / folder / "GPT4o" / f"GPT4o_japan_{version}_gpt-4o-mini_result.xlsx"
        run_dir = out / f"{folder}-{version}"
        result = CliRunner().invoke(cli, ["import", "worldmedqa_v", str(table), "--data", str(data),
                                          "--run-dir", str(run_dir), "--json"])
        assert result.exit_code == 0, result.output
        runs[(folder, version)] = (run_dir, json.loads(result.output))
    return runs


ORDER = (("outputs_w_images", "local"), ("outputs_w_images", "english"), ("outputs_blind", "local"),
         ("outputs_blind", "english"))


def test_imports_land_within_two_items_of_the_published_accuracy(imported):
    """The published accuracy is VLMEvalKit's exact matching, with its extractor model's answer where
    matching fails: medvqa's assisted accuracy, the headline of WorldMedQA-V (its protocol's
    reading, `Benchmark.reading`). The strict one, beside it, is the exact matching alone."""
    for (folder, version), (_, summary) in imported.items():
        condition = "C+Q" if folder == "outputs_blind" else "C+Q+I"
        cell = summary["conditions"][condition]
        published = round(TABLES[(folder, version)] * 168)
        assert summary["reading"] == "assisted"
        assert cell["n"] == 168 and abs(cell["correct"] - published) <= 2, (folder, version, cell)
        # every reply matching could not read is a parse failure, read by the published extractor
        assert cell["extracted"] == summary["n_extractor"]
        assert summary["language"] == ("en" if version == "english" else "local")
        assert summary["convention"] == "vlmevalkit-exact"
    cells = [imported[k][1]["conditions"]["C+Q" if k[0] == "outputs_blind" else "C+Q+I"] for k in ORDER]
    # measured: 148, 122, 144, 116 of 168 against the published 148, 121, 144, 116; the one item
    # where VLMEvalKit's matching reads another option than the published extraction is named
    # (a lone "A": VLMEvalKit's VERBOSE quantifier check sent it to the extractor model)
    assert [c["correct"] for c in cells] == [148, 122, 144, 116]
    # exact matching alone (the strict reading): most Japanese replies are explanations it cannot match
    assert [c["strict_correct"] for c in cells] == [23, 67, 7, 46]
    assert [c["extracted"] for c in cells] == [141, 76, 159, 96]
    # what neither matching nor the published extractor could read (its "I", "申"): parse failures still
    assert all(0 < c["parse_failure"] < c["extracted"] for c in cells)
    w_en = imported[("outputs_w_images", "english")][1]
    assert w_en["differs_from_published"] == [{"item_id": "japan-84", "matching": "A", "published": "B"}]
    assert all(s["differs_from_published"] == [] for k, (_, s) in imported.items() if k != ("outputs_w_images", "english"))


def test_audit_of_the_published_outputs_gives_delta_lang_and_delta_img(imported):
    """Audited under the assisted reading (the published extractor's answers), the pairing's
    marginals are the runs' assisted accuracies."""
    doc = medvqa.audit(*[str(run_dir) for run_dir, _ in imported.values()], reading="assisted")
    assert doc["reading"] == "assisted"
    # one experiment per language (with-image and blind joined), paired with each other by language
    lang = doc["paired_language"]["ja vs en"]
    assert lang["languages"] == ["ja", "en"] and set(lang["conditions"]) == {"C+Q", "C+Q+I"}
    for cond, folder in (("C+Q+I", "outputs_w_images"), ("C+Q", "outputs_blind")):
        row = lang["conditions"][cond]["overall"]
        local = imported[(folder, "local")][1]["conditions"][cond]
        english = imported[(folder, "english")][1]["conditions"][cond]
        # the marginals of the pairing are the runs' own (assisted) accuracies: same items, same records
        assert row["n"] == 168 and row["a_local"] == pytest.approx(local["correct"] / 168)
        assert row["a_other"] == pytest.approx(english["correct"] / 168)
        counts = row["counts"]
        assert sum(counts.values()) == 168
        assert counts["n11"] + counts["n10"] == local["correct"]
        assert counts["n11"] + counts["n01"] == english["correct"]
        assert row["delta_lang"] == pytest.approx((counts["n10"] - counts["n01"]) / 168)
        assert row["ci"][0] < row["delta_lang"] < row["ci"][1]
    models = doc["models"]
    assert len(models) == 2  # each language's with-image and blind runs, joined
    for m in models.values():
        overall = m["paired"]["overall"]
        assert overall["n"] == 168 and overall["ci"] is not None and overall["mcnemar_p"] is not None


def test_the_one_differing_item_is_vlmevalkits_quantifier_check():
    import pandas as pd

    from medvqa.adapters.worldmedqa_v.matching import match_option

    table = (shared_data("worldmedqa-v-japan") / "visuals" / "outputs_w_images" / "GPT4o"
             / "GPT4o_japan_english_gpt-4o-mini_result.xlsx")
    row = pd.read_excel(table, dtype=str, keep_default_na=False).set_index("index").loc["84"]
    choices = {k: row[k] for k in "ABCD"}
    # a lone "A" read by matching; with VLMEvalKit's VERBOSE check it is taken for an article
    assert match_option(row["prediction"], choices) == "A"
    assert match_option(row["prediction"], choices, quantifier_check=True) is None
    assert row["extracted"] == "B" and row["correct_option"] == "A"


def test_extractor_answers_are_the_records_assisted_reading(imported):
    """The reply stays the record's response, read strictly (a parse failure); the published
    extractor's option is its typed assisted reading, its source and extractor named."""
    import pandas as pd

    run_dir, summary = imported[("outputs_blind", "local")]
    saved = medvqa.read_run(run_dir)
    manifest_items = saved.manifest["imported"]["extractor_items"]
    assert summary["n_extractor"] == len(manifest_items) == 159
    table = saved.manifest["imported"]["files"][0]
    published = pd.read_excel(table, dtype=str, keep_default_na=False).set_index("index")
    by_id = {r["item_id"]: medvqa.Record.model_validate(r) for r in saved.records}
    for item_id in manifest_items:
        record, row = by_id[item_id], published.loc[item_id.split("-")[1]]
        assert record.response == row["prediction"] and record.status == "parse_failure" and not record.correct
        assert record.assisted.source == "vlmevalkit-result" and record.assisted.extractor == "gpt-4o-mini"
        named = row["extracted"] if row["extracted"] in ("A", "B", "C", "D") else None
        assert record.assisted.predicted == ([named] if named else None)
        assert record.assisted.correct == (row["hit"] == "1")  # VLMEvalKit's own verdict
    # the published extractor's outputs that name no option ("I", "申") are readings that could not tell
    assert sum(by_id[i].assisted.predicted is None for i in manifest_items) > 0


def test_csv_and_xlsx_of_one_output_table_import_alike(tmp_path):
    data = shared_data("worldmedqa-v-japan")
    xlsx = data / "visuals" / "outputs_w_images" / "GPT4o" / "GPT4o_japan_local.xlsx"
    csv = data / "derived_GPT4o_japan_local.csv"  # the same table, derived by a stdlib read of the xlsx
    docs = []
    for table, name in ((xlsx, "x"), (csv, "c")):
        result = CliRunner().invoke(cli, ["import", "worldmedqa_v", str(table), "--data", str(data),
                                          "--run-dir", str(tmp_path / name), "--model", "GPT4o", "--json"])
        assert result.exit_code == 0, result.output
        docs.append(json.loads(result.output))
    assert docs[0]["conditions"] == docs[1]["conditions"] and docs[0]["condition"] == "C+Q+I"
    # without the published extractor: exact matching alone (23 of 168, as from the result table), no
    # assisted reading; medvqa's chain (--convention vlmevalkit) reads 14 more of the long replies
    cell = docs[0]["conditions"]["C+Q+I"]
    assert docs[0]["n_extractor"] == 0 and cell["correct"] == 23 and "assisted_accuracy" not in cell and "strict_accuracy" not in cell
    result = CliRunner().invoke(cli, ["import", "worldmedqa_v", str(xlsx), "--data", str(data), "--run-dir",
                                      str(tmp_path / "chain"), "--convention", "vlmevalkit", "--json"])
    chain = json.loads(result.output)
    assert chain["convention"] == "vlmevalkit" and chain["conditions"]["C+Q+I"]["correct"] == 37


def test_a_table_of_the_other_language_is_refused_naming_the_row(tmp_path):
    data = shared_data("worldmedqa-v-japan")
    table = data / "visuals" / "outputs_blind" / "GPT4o" / "GPT4o_japan_english.xlsx"
    result = CliRunner().invoke(cli, ["import", "worldmedqa_v", str(table), "--data", str(data), "--language", "local",
                                      "--run-dir", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "GPT4o_japan_english.xlsx" in result.output and "index 1" in result.output
    assert "the question differs from the data's japan item in language 'local'" in result.output
    assert not (tmp_path / "r").exists()  # nothing written


def test_the_audit_page_shows_the_language_pairing(imported):
    import html
    import re

    from medvqa.core.audit.html import render_html

    doc = medvqa.audit(*[str(run_dir) for run_dir, _ in imported.values()], resamples=50)
    page = render_html(doc, svgs={})
    cells = {tuple(json.loads(html.unescape(path))): text for path, text in
             re.findall(r'data-path="([^"]+)" data-format="[a-z]+">([^<]*)<', page)}
    for cond in ("C+Q", "C+Q+I"):
        row = doc["paired_language"]["ja vs en"]["conditions"][cond]["overall"]
        key = ("paired_language", "ja vs en", "conditions", cond, "overall")
        assert cells[(*key, "delta_lang")] == f"{100 * row['delta_lang']:+.1f}"  # signed points, as Δimg
        assert cells[(*key, "n")] == "168"


def test_list_shows_it_and_both_languages_run(tmp_path):
    listing = CliRunner().invoke(cli, ["list"]).output
    assert any(line.split()[:1] == ["worldmedqa_v"] and "[--language local|en]" in line for line in listing.splitlines())
    data = str(shared_data("worldmedqa-v-japan"))
    for language in ("local", "en"):
        result = CliRunner().invoke(cli, ["run", "worldmedqa_v", "--data", data, "--language", language, "--model",
                                          "random", "--run-dir", str(tmp_path / language), "--json"])
        # every item's image is missing here: the run asks C+Q only, and says so
        assert result.exit_code == 0, result.output
        summary = json.loads(result.output)
        assert summary["n_items"] == 168 and list(summary["conditions"]) == ["C+Q"]
        assert summary["n_image_fallback"] == 168
        saved = medvqa.read_run(tmp_path / language)
        assert {r["language"] for r in saved.records} == {"ja" if language == "local" else "en"}
        assert saved.manifest["language"] == language


def test_a_workbook_of_two_sheets_is_read_at_the_one_chosen_and_a_repeated_index_names_both_rows(tmp_path):
    """The authors' GPT-4o table twice in one workbook: first with its index 1 repeated at the end
    (row 170), then as published. Read at its first sheet (said on stderr) the repeat is refused
    naming both rows and nothing is written; `--sheet` reads the published one, as the table
    alone imports (23 of 168 by exact matching)."""
    import pandas as pd

    data = shared_data("worldmedqa-v-japan")
    published = pd.read_excel(data / "visuals" / "outputs_w_images" / "GPT4o" / "GPT4o_japan_local.xlsx", dtype=str)
    book = tmp_path / "GPT4o_japan_local.xlsx"
    with pd.ExcelWriter(book) as writer:
        pd.concat([published, published.iloc[[0]]]).to_excel(writer, sheet_name="edited", index=False)
        published.to_excel(writer, sheet_name="published", index=False)
    args = ["import", "worldmedqa_v", str(book), "--data", str(data)]
    refused = CliRunner().invoke(cli, [*args, "--run-dir", str(tmp_path / "r")])
    assert refused.exit_code == 1, refused.output
    assert refused.stderr.splitlines() == [
        f"{book}: read the sheet 'edited', the first of 2; the others are 'published' (--sheet NAME chooses)",
        f"Error: {book}: record row 2 and row 170: two rows for index 1"]
    assert not (tmp_path / "r").exists()
    result = CliRunner().invoke(cli, [*args, "--sheet", "published", "--run-dir", str(tmp_path / "p"), "--json"])
    assert result.exit_code == 0 and result.stderr == "", result.output
    cell = json.loads(result.stdout)["conditions"]["C+Q+I"]
    assert (cell["n"], cell["correct"]) == (168, 23)
    absent = CliRunner().invoke(cli, [*args, "--sheet", "GPT4o", "--run-dir", str(tmp_path / "a")])
    assert absent.exit_code == 1 and "no sheet 'GPT4o' (--sheet); the sheets are 'edited', 'published'" in absent.output
    assert not (tmp_path / "a").exists()

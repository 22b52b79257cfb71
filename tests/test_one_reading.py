"""One reading everywhere: the benchmark's protocol names the headline reading, and `report`,
`report --table`, `compare` (Markdown, JSON, HTML), `audit`, `view` and the Python API show the
same headline accuracies, Δimg and Δlang under it, and under `--reading` switched.

The four runs are the published GPT-4o WorldMedQA-V Japan outputs (VLMEvalKit result tables in
`../shared/data/worldmedqa-v-japan/`, SOURCE.txt): Japanese and English, with the image and
blind. WorldMedQA-V's protocol reads replies with VLMEvalKit's exact matching, then its extractor
model's option where matching fails (the assisted reading, docs/scoring.md "One reading
everywhere"); under it Japanese beats English, as published: Δlang +16.7 points with the image and
without it (149 against 121 of 168, and 144 against 116). The strict reading (matching alone)
leaves 83-96 % of the pairs unreadable (48, 57, 16 and 25 of 168 read right: ja and en, without and
with the image), reads Δlang +19.0 points, and says so beside every Δ."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from tests.conftest import shared_data

pytestmark = pytest.mark.slow  # four imports, then every command twice over them

TABLES = (
    ("outputs_w_images", "local"),
    ("outputs_w_images", "english"),
    ("outputs_blind", "local"),
    ("outputs_blind", "english"),
)
CONDITION = {"outputs_w_images": "C+Q+I", "outputs_blind": "C+Q"}
LANGUAGE = {"local": "ja", "english": "en"}


def invoke(*args, codes=(0,)) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code in codes, result.output
    return result.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, str], Path]:
    data = shared_data("worldmedqa-v-japan")
    out = tmp_path_factory.mktemp("one-reading")
    dirs = {}
    for folder, version in TABLES:
        table = data / "visuals" / folder / "GPT4o" / f"GPT4o_japan_{version}_gpt-4o-mini_result.xlsx"
        dirs[(folder, version)] = out / f"{folder}-{version}"
        invoke("import", "worldmedqa_v", table, "--data", data, "--run-dir", dirs[(folder, version)], "--json")
    return dirs


def expected(runs, reading: str) -> dict:
    """The headline accuracy of each (language, condition), counted here from the records: the
    strict reading is the record's `correct`; the assisted one the published extractor's verdict
    where matching could not read the reply."""
    out = {}
    for (folder, version), run_dir in runs.items():
        records = medvqa.read_run(run_dir).records
        correct = [
            (
                r["assisted"]["correct"]
                if reading == "assisted" and r.get("assisted") and r["status"] == "parse_failure"
                else r["correct"]
            )
            for r in records
        ]
        out[(LANGUAGE[version], CONDITION[folder])] = sum(map(bool, correct)) / len(records)
    return out


def deltas(acc: dict) -> dict:
    return {
        "img": {lang: acc[(lang, "C+Q+I")] - acc[(lang, "C+Q")] for lang in ("ja", "en")},
        "lang": {cond: acc[("ja", cond)] - acc[("en", cond)] for cond in ("C+Q", "C+Q+I")},
    }


def pp(d: float) -> str:
    """A difference in signed points as shown, escaped for a pattern."""
    return re.escape(f"{100 * d:+.1f}")


def page_cells(page: str) -> dict[tuple, str]:
    return {
        tuple(json.loads(html_lib.unescape(path))): text
        for path, text in re.findall(r'data-path="([^"]+)" data-format="[a-z_]+">([^<]*)<', page)
    }


@pytest.mark.parametrize("reading", [None, "strict", "assisted"])
def test_every_output_shows_one_headline_and_one_delta_under_each_reading(runs, reading, tmp_path):
    used = reading or "assisted"  # WorldMedQA-V's protocol: VLMEvalKit's matching, then its extractor
    flag = ["--reading", reading] if reading else []
    acc = expected(runs, used)
    want = deltas(acc)
    # the published conclusion, under either reading; its size is the reading's (measured)
    assert want["lang"] == pytest.approx(
        {"C+Q": (28 if used == "assisted" else 32) / 168, "C+Q+I": (28 if used == "assisted" else 32) / 168}, abs=1e-12
    ), want
    dirs = list(runs.values())

    # report, report --table, the Python API's report: each run's headline accuracy
    for (folder, version), run_dir in runs.items():
        key = (LANGUAGE[version], CONDITION[folder])
        rows = json.loads(invoke("report", run_dir, "--by", "", "--json", *flag))
        assert [(r["condition"], r["reading"]) for r in rows] == [(CONDITION[folder], used)]
        assert rows[0]["accuracy"] == pytest.approx(acc[key], abs=1e-12)
        other = "strict" if used == "assisted" else "assisted"
        other_acc = expected(runs, other)[key]
        assert rows[0][f"{other}_accuracy"] == pytest.approx(other_acc, abs=1e-12)  # the other reading beside
        tables = json.loads(invoke("report", run_dir, "--table", "worldmedqa_v", "--json", *flag))
        assert tables["by_country"]["reading"] == used
        assert tables["by_country"]["rows"][0]["accuracy"] == pytest.approx(acc[key], abs=1e-12)
        api = medvqa.report(run_dir, by="", reading=reading)
        assert api.accuracy[0] == pytest.approx(acc[key], abs=1e-12)
        assert api[f"{other}_accuracy"][0] == pytest.approx(other_acc, abs=1e-12)

    # compare: JSON, the Python API, Markdown, the page
    doc = json.loads(invoke("compare", *dirs, "--json", "--resamples", "50", *flag))
    assert doc["reading"] == used and doc["readings"] == {"worldmedqa_v": used}
    model = {"ja": "GPT4o [ja]", "en": "GPT4o [en]"}
    overall = {(r["model"], r["condition"]): r for r in doc["table"] if r["stratum"] == "overall"}
    for (lang, cond), a in acc.items():
        assert overall[(model[lang], cond)]["value"] == pytest.approx(a, abs=1e-12)
    img = {r["model"]: r for r in doc["delta_img"]}
    lang_rows = {r["condition"]: r for r in doc["delta_lang"]}
    for lang, d in want["img"].items():
        assert img[model[lang]]["delta_img"] == pytest.approx(d, abs=1e-12)
    for cond, d in want["lang"].items():
        assert lang_rows[cond]["delta_lang"] == pytest.approx(d, abs=1e-12)
        assert lang_rows[cond]["ci_method"] == "tango-score"
    frame = medvqa.compare(dirs, resamples=50, reading=reading)
    assert frame.attrs["reading"] == used
    assert [r["delta_lang"] for r in frame.attrs["delta_lang"]] == [r["delta_lang"] for r in doc["delta_lang"]]
    assert [r["delta_img"] for r in frame.attrs["delta_img"]] == [r["delta_img"] for r in doc["delta_img"]]

    md = invoke("compare", *dirs, "--resamples", "50", *flag)
    assert md.startswith(f"Reading: {used}.")
    for cond, d in want["lang"].items():
        assert re.search(rf"\| GPT4o \| worldmedqa_v \| {re.escape(cond)} \| ja vs en \| 168 \| .*\| {pp(d)} \|", md)
    for lang, d in want["img"].items():
        assert re.search(rf"\| {re.escape(model[lang])} \| worldmedqa_v \| 168 \| .*\| {pp(d)} \|", md)

    invoke("compare", *dirs, "--resamples", "50", "--html", tmp_path / "compare.html", *flag)
    page = (tmp_path / "compare.html").read_text(encoding="utf-8")
    cells = page_cells(page)
    assert f'data-reading="{used}"' in page
    for i, r in enumerate(doc["delta_lang"]):  # the page carries Δlang, as the Markdown does
        assert cells[("delta_lang", i, "delta_lang")] == f"{100 * r['delta_lang']:+.1f}"
    for i, r in enumerate(doc["delta_img"]):
        assert cells[("delta_img", i, "delta_img")] == f"{100 * r['delta_img']:+.1f}"
    for i, r in enumerate(doc["table"]):  # both readings in the headline cells
        other = "strict" if used == "assisted" else "assisted"
        if r["stratum"] == "overall":
            assert cells[("table", i, "value")] == f"{100 * r['value']:.1f}"
            assert cells[("table", i, f"{other}_accuracy")] == f"{100 * r[f'{other}_accuracy']:.1f}"

    # the audit: JSON, the Python API, its text
    audit = json.loads(invoke("audit", *dirs, "--json", "--resamples", "50", *flag))
    assert audit["reading"] == used
    api_audit = medvqa.audit(*dirs, resamples=50, reading=reading)
    for a_doc in (audit, api_audit):
        language = a_doc["paired_language"]["ja vs en"]["conditions"]
        for cond, d in want["lang"].items():
            assert language[cond]["overall"]["delta_lang"] == pytest.approx(d, abs=1e-12)
        by_lang = {("ja" if "local" in m["source"] else "en"): m for m in a_doc["models"].values()}
        for lang, d in want["img"].items():
            m = by_lang[lang]
            assert m["paired"]["overall"]["delta_img"] == pytest.approx(d, abs=1e-12)
            for cond in ("C+Q", "C+Q+I"):
                assert m["marginals"]["overall"][cond]["accuracy"] == pytest.approx(acc[(lang, cond)], abs=1e-12)
            # one picture of the same records: the ablation's image items are the pairing's
            assert m["ablation"]["image"]["n"] == m["paired"]["overall"]["n"] == 168
            assert m["ablation"]["image_unavailable"]["n"] == 0
            for cond in ("C+Q", "C+Q+I"):
                assert m["ablation"]["image"]["conditions"][cond]["accuracy"] == pytest.approx(acc[(lang, cond)])
    text = invoke("audit", *dirs, "--resamples", "50", *flag)
    assert text.startswith(f"Reading: {used}:")
    for d in want["lang"].values():
        assert "| overall | 168 |" in text and f"| {100 * d:+.1f} |" in text

    # the item browser: statuses and verdicts under the same reading
    path = medvqa.view(*dirs, html=tmp_path / "view.html", reading=reading)
    view_doc = json.loads(
        re.search(
            r'<script type="application/json" id="view-data">(.*?)</script>', path.read_text(encoding="utf-8"), re.S
        ).group(1)
    )
    assert view_doc["reading"] == used
    for gi, run in enumerate(view_doc["runs"]):
        lang = "ja" if any("local" in p for p in run["paths"]) else "en"
        for cond in ("C+Q", "C+Q+I"):
            verdicts = [e["runs"][str(gi)][cond]["c"] for e in view_doc["items"] if cond in e["runs"].get(str(gi), {})]
            assert len(verdicts) == 168 and sum(map(bool, verdicts)) / 168 == pytest.approx(acc[(lang, cond)])


def test_a_delta_over_unreadable_answers_warns_in_its_own_row(runs, tmp_path):
    dirs = list(runs.values())
    strict = json.loads(invoke("compare", *dirs, "--json", "--resamples", "20", "--reading", "strict"))
    assisted = json.loads(invoke("compare", *dirs, "--json", "--resamples", "20"))
    for section in ("delta_img", "delta_lang", "tests"):
        for row in strict[section]:  # 83-96 % of the strict pairs hold a reply matching could not read
            assert row["unreadable_pairs"] / row["n"] > 0.10 and "pairs" in row["warning"], (section, row)
        for row in assisted[section]:  # the extractor read nearly all of them
            assert row["unreadable_pairs"] / row["n"] <= 0.10 and row["warning"] is None, (section, row)
    md = invoke("compare", *dirs, "--resamples", "20", "--reading", "strict")
    for row in strict["delta_lang"]:
        assert re.search(rf"\| {re.escape(row['condition'])} \| ja vs en \| .*{re.escape(row['warning'])} \|", md)
    assert "warning" not in invoke("compare", *dirs, "--resamples", "20").split("## By country")[0]
    invoke("compare", *dirs, "--resamples", "20", "--reading", "strict", "--html", tmp_path / "c.html")
    cells = page_cells((tmp_path / "c.html").read_text(encoding="utf-8"))
    for i, row in enumerate(strict["delta_lang"]):
        assert cells[("delta_lang", i, "warning")] == html_lib.escape(row["warning"])

    audit = medvqa.audit(*dirs, resamples=20, reading="strict")
    for m in audit["models"].values():
        assert m["paired"]["overall"]["warning"] and m["paired"]["overall"]["unreadable_pairs"] > 16
    for sec in audit["paired_language"]["ja vs en"]["conditions"].values():
        assert sec["overall"]["warning"]
    assert all(c["warning"] for c in audit["comparisons"])
    text = invoke("audit", *dirs, "--resamples", "20", "--reading", "strict")
    assert text.count("this Δ may measure the reader, not the model") >= 4
    invoke("audit", *dirs, "--resamples", "20", "--reading", "strict", "--html", tmp_path / "a.html")
    page = (tmp_path / "a.html").read_text(encoding="utf-8")
    assert 'data-reading="strict"' in page and "this Δ may measure the reader" in page


def test_one_label_per_experiment_in_audit_compare_and_the_browser(runs, tmp_path):
    """Observed: the audit named an experiment `GPT4o@gpt4o-en-image` where compare named it
    `GPT4o [en]`. One function labels experiments for every output."""
    dirs = list(runs.values())
    audit = json.loads(invoke("audit", *dirs, "--json", "--resamples", "20"))
    compare = json.loads(invoke("compare", *dirs, "--json", "--resamples", "20"))
    page = medvqa.view(*dirs, html=tmp_path / "view.html")
    doc = json.loads(
        re.search(
            r'<script type="application/json" id="view-data">(.*?)</script>', page.read_text(encoding="utf-8"), re.S
        ).group(1)
    )
    expected = {"GPT4o [ja]", "GPT4o [en]"}
    assert set(audit["models"]) == expected
    assert {r["model"] for r in compare["table"]} == expected
    assert {r["label"] for r in doc["runs"]} == expected

"""Rough edges of the text summaries: a condition whose records are not all counted shows
`uncounted` beside n (IgakuQA 2018 holds an item MHLW withdrew: 400 records, n 399), and the audit
of a text-only run prints no empty image-removal table and no image-as-options control of n 0; a
table without rows is its explanation, never an empty grid; every table has its heading."""

from __future__ import annotations

import json

from click.testing import CliRunner

from medvqa.cli.main import cli
from tests.conftest import shared_data


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_run_summary_shows_uncounted_where_records_differ_from_n(tmp_path):
    out = invoke(
        "run",
        "igakuqa",
        "--data",
        shared_data("igakuqa"),
        "--select",
        "year=2018",
        "--model",
        "random",
        "--run-dir",
        tmp_path / "r",
        "--no-cache",
    )
    head, row = [
        line.replace("95% CI", "95%CI").split()
        for line in out.splitlines()
        if line.strip().startswith(("condition", "C+Q "))
    ]
    assert "uncounted" in head
    cells = dict(zip(head, row))
    assert int(cells["n"]) + int(cells["uncounted"]) == 400 and int(cells["uncounted"]) > 0


def test_the_audit_of_a_text_only_run_has_no_empty_image_sections(tmp_path):
    invoke(
        "run",
        "jmed48k",
        "--sample",
        "--select",
        "has_image=false",
        "--model",
        "random",
        "--run-dir",
        tmp_path / "r",
        "--no-cache",
    )
    text = invoke("audit", tmp_path / "r", "--resamples", "20")
    assert "Image removal: no image items in these records, so no pairs." in text
    assert "| overall | 0 |" not in text and "Image-as-options control" not in text


def test_after_an_extraction_the_warning_points_at_the_reading_not_at_an_extractor(tmp_path):
    data = shared_data("worldmedqa-v-japan")
    table = data / "visuals" / "outputs_w_images" / "GPT4o" / "GPT4o_japan_local_gpt-4o-mini_result.xlsx"
    invoke("import", "worldmedqa_v", table, "--data", data, "--run-dir", tmp_path / "r", "--json")
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "r"), "--reading", "strict"])
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning: C+Q+I")]
    assert len(warning) == 1 and "101 read by the extractor" in warning[0]
    assert "--reading assisted" in warning[0] and "--extractor MODEL" not in warning[0]


def test_constant_a_on_items_numbered_1_to_4_hints_the_label_is_not_an_option(tmp_path):
    """Observed: `constant:A` on the sample's Nurse items (options 1–4) warned that the replies
    could not be read and suggested an extractor model, which would read the same 'A'."""
    import medvqa

    out = CliRunner().invoke(
        cli, ["run", "jmed48k", "--sample", "--model", "constant:A", "--run-dir", str(tmp_path / "r"), "--no-cache"]
    )
    assert out.exit_code == 0, out.output
    numbered = {
        (r["item_id"], r["condition"])
        for r in medvqa.read_run(tmp_path / "r").records
        if r["status"] == "parse_failure"
    }
    items = {it.id: it for it in medvqa.load("jmed48k", split="sample")}
    assert numbered and all(items[i].options[0].label == "1" for i, _ in numbered)  # every failure: a 1–n item
    for cond in ("C+Q", "C+Q+I"):
        k = sum(c == cond for _, c in numbered)
        [line] = [x for x in out.output.splitlines() if x.startswith(f"warning: {cond}:")]
        assert line.endswith(
            f"; {k} of them are well-formed answers naming a label not among their item's options "
            "('A'): the model (or a baseline such as constant:LABEL) answers in labels these items "
            "do not use"
        )
        assert "--extractor" not in line


def test_the_audit_refusal_rates_count_the_items_of_the_table_they_sit_under(tmp_path):
    """Observed: the refusal rates under the image-removal table (5 paired items on the sample)
    counted all 17 C+Q records. Every C+Q reply here is a refusal: over the paired items, 5 of 5."""
    import json

    import medvqa

    items = [it for it in medvqa.load("jmed48k", split="sample") if not it.excluded]
    with_image = [it for it in items if it.has_images and it.image_available]
    lines = [{"item_id": it.id, "condition": "C+Q", "response": "I cannot answer this question."} for it in items]
    lines += [
        {"item_id": it.id, "condition": "C+Q+I", "response": json.dumps({"answer": [it.options[0].label]})}
        for it in with_image
    ]
    replay = tmp_path / "replies.jsonl"
    replay.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    invoke("run", "jmed48k", "--sample", "--model", f"replay:{replay}", "--run-dir", tmp_path / "r", "--no-cache")
    doc = json.loads(invoke("audit", tmp_path / "r", "--resamples", "20", "--json"))
    k = len(with_image)
    assert 0 < k < len(items)
    assert doc["refusals"]["rates"]["C+Q"] == {"n": k, "refusals": k, "rate": 1.0}
    assert doc["refusals"]["rates_over"] == {"items": k, "scope": "paired"}
    text = invoke("audit", tmp_path / "r", "--resamples", "20")
    assert f"Refusal rates (over the {k} paired items of the table above): C+Q 100.0 %, C+Q+I 0.0 %." in text


def mir_vision_run(tmp_path):
    """GPT-4 Vision's 25 answers of MIR 2024 (the image questions 1-25, C+Q+I): no exam sheet."""
    data = shared_data("mir")
    invoke(
        "import",
        "mir",
        data / "2024" / "MIR24GPT_vision_answered_v2.xlsx",
        "--data",
        data,
        "--run-dir",
        tmp_path / "vision",
        "--response-column",
        " GPT-4 Vision",
        "--model",
        "gpt-4-vision",
    )
    return tmp_path / "vision"


def test_a_table_without_rows_says_why_instead_of_printing_an_empty_grid(tmp_path):
    run = mir_vision_run(tmp_path)
    out = invoke("report", run, "--table", "mir")
    first = out.split("### Accuracy by specialty")[0].strip().splitlines()
    assert [line for line in first if line][:3] == [
        "### MIR per year and answer sheet: valid questions, official 200, net score",
        "No rows.",
        "MIR 2024 with images: answers to 25 of the 210 valid questions; not an exam sheet, not shown",
    ]
    assert "| year | sheet |" not in out
    assert json.loads(invoke("report", run, "--table", "mir", "--json"))["exam"]["rows"] == []
    for fmt in ("text", "html"):
        text = invoke("report", run, "--table", "mir", "--format", fmt)
        assert "No rows." in text and "net_score" not in text.split("Accuracy by specialty")[0], fmt


def test_report_judges_of_a_run_never_judged_is_an_error(tmp_path):
    run = mir_vision_run(tmp_path)
    result = CliRunner().invoke(cli, ["report", str(run), "--judges"])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert (
        f"Error: {run}: no record was judged, so no judge has an accuracy or an agreement; "
        f"`medvqa judge {run} --judge MODEL`" in result.output
    )


def test_plain_report_gives_each_table_its_heading(tmp_path):
    """`medvqa report RUN`: by condition, then by each default stratum, each under a heading that
    names its grouping (25 records of C+Q+I, 19 right: one row each)."""
    run = mir_vision_run(tmp_path)
    out = invoke("report", run)
    headings = [line for line in out.splitlines() if line.startswith("### ")]
    assert headings == ["### Accuracy by condition", "### Accuracy by condition and year"]
    rows = [line for line in out.splitlines() if line.startswith("| C+Q+I")]
    assert [row.split(" | ")[:5] for row in rows] == [
        ["| C+Q+I", "25", "0", "0", "19"],
        ["| C+Q+I", "2024", "25", "0", "0"],
    ]
    text = invoke("report", run, "--format", "text", "--by", "year")
    assert text.splitlines()[0] == "Accuracy by condition and year"

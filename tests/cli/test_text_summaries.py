"""Rough edges of the text summaries: a condition whose records are not all counted shows
`uncounted` beside n (IgakuQA 2018 holds an item MHLW withdrew: 400 records, n 399), and the audit
of a text-only run prints no empty image-removal table and no image-as-options control of n 0."""

from __future__ import annotations

from click.testing import CliRunner

from medvqa.cli.main import cli
from tests.conftest import shared_data


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_run_summary_shows_uncounted_where_records_differ_from_n(tmp_path):
    out = invoke("run", "igakuqa", "--data", shared_data("igakuqa"), "--select", "year=2018", "--model", "random",
                 "--run-dir", tmp_path / "r", "--no-cache")
    head, row = [line.replace("95% CI", "95%CI").split() for line in out.splitlines()
                 if line.strip().startswith(("condition", "C+Q "))]
    assert "uncounted" in head
    cells = dict(zip(head, row))
    assert int(cells["n"]) + int(cells["uncounted"]) == 400 and int(cells["uncounted"]) > 0


def test_the_audit_of_a_text_only_run_has_no_empty_image_sections(tmp_path):
    invoke("run", "jmed48k", "--sample", "--select", "has_image=false", "--model", "random", "--run-dir",
           tmp_path / "r", "--no-cache")
    text = invoke("audit", tmp_path / "r", "--resamples", "20")
    assert "Image removal: no image items in these records, so no pairs." in text
    assert "| overall | 0 |" not in text and "Image-as-options control" not in text


def test_after_an_extraction_the_warning_points_at_the_reading_not_at_an_extractor(tmp_path):
    data = shared_data("worldmedqa-v-japan")
    table = data / "visuals" / "outputs_w_images" / "GPT4o" / "GPT4o_japan_local_gpt-4o-mini_result.xlsx"
    invoke("import", "worldmedqa_v", table, "--data", data, "--run-dir", tmp_path / "r", "--json")
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "r"), "--reading", "strict"])
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning: C+Q+I")]
    assert len(warning) == 1 and "141 read by the extractor" in warning[0]
    assert "--reading assisted" in warning[0] and "--extractor MODEL" not in warning[0]


def test_constant_a_on_items_numbered_1_to_4_hints_the_label_is_not_an_option(tmp_path):
    """Observed: `constant:A` on the sample's Nurse items (options 1–4) warned that the replies
    could not be read and suggested an extractor model, which would read the same 'A'."""
    import medvqa

    out = CliRunner().invoke(cli, ["run", "jmed48k", "--sample", "--model", "constant:A", "--run-dir",
                                   str(tmp_path / "r"), "--no-cache"])
    assert out.exit_code == 0, out.output
    numbered = {(r["item_id"], r["condition"]) for r in medvqa.read_run(tmp_path / "r").records
                if r["status"] == "parse_failure"}
    items = {it.id: it for it in medvqa.load("jmed48k", split="sample")}
    assert numbered and all(items[i].options[0].label == "1" for i, _ in numbered)  # every failure: a 1–n item
    for cond in ("C+Q", "C+Q+I"):
        k = sum(c == cond for _, c in numbered)
        [line] = [x for x in out.output.splitlines() if x.startswith(f"warning: {cond}:")]
        assert line.endswith(f"; {k} of them are well-formed answers naming a label not among their item's options "
                             "('A'): the model (or a baseline such as constant:LABEL) answers in labels these items "
                             "do not use")
        assert "--extractor" not in line

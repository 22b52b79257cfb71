"""Tests between models in `audit` and `compare`: one family per quantity compared, Holm's
adjustment beside each raw p, and an interval that disagrees with its test explained in every
rendering, not only in --json."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.run.options import RunOptions, run


def pattern_run(tmp_path, name: str, wrong_images: int, wrong_texts: int):
    """A replay run of the bundled JMed48k sample (17 items counted, 5 of them with images), wrong
    on the last `wrong_images` image items and the first `wrong_texts` text-only items, right on
    the rest, with and without the image alike (so its Δimg is 0 on every item)."""
    items = [it for it in medvqa.load("jmed48k", split="sample") if not it.excluded]
    images, texts = [it for it in items if it.images], [it for it in items if not it.images]
    wrong = {it.id for it in images[len(images) - wrong_images :]} | {it.id for it in texts[:wrong_texts]}
    lines = []
    for it in items:
        gold = list(it.gold.alternatives[0])
        if it.id not in wrong:
            said = [{o.key: o.label for o in it.options}.get(k, k) for k in gold] if it.options else gold
        else:
            said = [next(o.label for o in it.options if o.key not in it.gold.keys)] if it.options else ["987654"]
        lines += [
            {"item_id": it.id, "condition": c, "response": json.dumps({"answer": said})} for c in ("C+Q+I", "C+Q")
        ]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run_dir = tmp_path / name
    run(
        RunOptions(
            benchmark="jmed48k",
            model=f"replay:{path}",
            model_name=name,
            sample=True,
            conditions="C+Q,C+Q+I",
            run_dir=str(run_dir),
        ),
        progress=False,
    )
    return run_dir


def invoke(*args) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("three")
    return [pattern_run(tmp, "all", 0, 0), pattern_run(tmp, "b", 4, 1), pattern_run(tmp, "c", 3, 1)]


# "all" is right on every item; "b" wrong on the last 4 of the 6 image items and one text item, "c" on
# the last 3 and the same text item; B_Q1 is asked without C+Q+I (the sample holds no C+Q+I record of
# it), so C+Q+I pairs 5 items, b wrong on 3 of them, c on 2. McNemar's mid-p = 2·P(X ≤ k) − P(X = k),
# X ~ Binomial(discordant, 1/2), k = 0: (d, 0) gives 1/2^d.
# C+Q, all 17 items: all − b (5, 0): 1/32; all − c (4, 0): 1/16; b − c (0, 1): 1/2.
#   Holm (sorted 1/32, 1/16, 1/2): 3/32 = 0.09375; max(0.09375, 2/16) = 0.125; max(0.125, 1/2) = 0.5.
# C+Q+I, 5 items: (3, 0): 1/8; (2, 0): 1/4; (0, 1): 1/2.
#   Holm (sorted 1/8, 1/4, 1/2): 3/8 = 0.375; max(0.375, 2/4) = 0.5; max(0.5, 1/2) = 0.5.
RAW = {
    "C+Q": {("all", "b"): 1 / 32, ("all", "c"): 1 / 16, ("b", "c"): 1 / 2},
    "C+Q+I": {("all", "b"): 1 / 8, ("all", "c"): 1 / 4, ("b", "c"): 1 / 2},
}
HOLM = {
    "C+Q": {("all", "b"): 0.09375, ("all", "c"): 0.125, ("b", "c"): 0.5},
    "C+Q+I": {("all", "b"): 0.375, ("all", "c"): 0.5, ("b", "c"): 0.5},
}


def test_holm_over_the_model_pairs_of_one_quantity_in_audit_and_compare(three):
    audited = json.loads(invoke("audit", *three, "--json"))
    compared = json.loads(invoke("compare", *three, "--json"))
    for condition in ("C+Q", "C+Q+I"):
        got = {(c["a"], c["b"]): c for c in audited["comparisons"] if c["measure"] == f"accuracy {condition}"}
        assert {k: c["p"] for k, c in got.items()} == pytest.approx(RAW[condition], rel=1e-12)
        assert {k: c["p_holm"] for k, c in got.items()} == pytest.approx(HOLM[condition], rel=1e-12)
        got = {(t["a"], t["b"]): t for t in compared["tests"] if t["condition"] == condition}
        assert {k: t["p"] for k, t in got.items()} == pytest.approx(RAW[condition], rel=1e-12)
        assert {k: t["p_holm"] for k, t in got.items()} == pytest.approx(HOLM[condition], rel=1e-12)
    # each model's Δimg is 0 on every item, so every contrast of two is 0: p = 1, and Holm keeps 1
    deltas = [c for c in audited["comparisons"] if c["measure"] == "delta_img"]
    assert [(c["n"], c["p"], c["p_holm"]) for c in deltas] == [(5, 1.0, 1.0)] * 3
    # the tables say what the adjusted column is, in every rendering
    for text in (invoke("audit", *three), invoke("compare", *three), invoke("compare", *three, "--format", "html")):
        assert "Holm p" in text and "one family of tests" in text
    row = next(line for line in invoke("audit", *three).splitlines() if line.startswith("| all | c | accuracy C+Q |"))
    assert [x.strip() for x in row.split("|")[8:10]] == ["0.0625", "0.125"]


def test_an_interval_that_disagrees_with_its_test_says_so_in_every_rendering(three, tmp_path):
    # all − c in compare, C+Q: 4 of 17 discordant pairs, all one way. Tango's interval inverts the
    # asymptotic score test (z = 4/√4 = 2.0 > 1.96): it excludes 0, while the mid-p 1/16 = 0.0625
    # does not reject
    compared = json.loads(invoke("compare", *three, "--json"))
    [row] = [t for t in compared["tests"] if (t["a"], t["b"], t["condition"]) == ("all", "c", "C+Q")]
    assert row["ci_low"] > 0 and row["p"] == pytest.approx(0.0625)
    note = row["note"]
    assert "asymptotic McNemar" in note
    markdown = invoke("compare", *three)
    line = next(x for x in markdown.splitlines() if x.startswith("| jmed48k | C+Q | all | c |"))
    assert note in line
    assert note in invoke("compare", *three, "--format", "html").replace("&#x27;", "'")
    # the audit's row of the same pair is the same table: it says it too, in Markdown and on the page
    line = next(x for x in invoke("audit", *three).splitlines() if x.startswith("| all | c | accuracy C+Q |"))
    assert note in line
    invoke("audit", *three, "--html", tmp_path / "audit.html")
    assert note in (tmp_path / "audit.html").read_text(encoding="utf-8").replace("&#x27;", "'")

"""`medvqa audit` without --json prints every section its --help names: the paired tables, the
input ablation, the selection bias and, with several models, the paired tests between them."""

import json

from click.testing import CliRunner

from medvqa.cli.main import cli


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_terminal_audit_shows_ablation_selection_bias_and_between_model_tests(tmp_path):
    for name, model in (("random", "random"), ("constant", "constant:A")):
        invoke("run", "jmed48k", "--sample", "--model", model, "--run-dir", tmp_path / name, "--no-cache", "--json")
    runs = [tmp_path / "random", tmp_path / "constant"]
    doc = json.loads(invoke("audit", *runs, "--json"))
    text = invoke("audit", *runs)
    assert "Image removal (C+Q+I vs C+Q)" in text  # the paired tables come first, as before
    for heading in ("## Input ablation", "## Selection bias", "## Between models"):
        assert heading in text, heading
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| ")
    ]
    for model, section in doc["models"].items():
        image = section["ablation"]["image"]
        row = next(r for r in rows if r[:2] == [model, "image items"])
        with_image = image["conditions"]["C+Q+I"]
        assert row[2] == str(image["n"]) and row[6] == (
            f"{100 * with_image['accuracy']:.1f} [{100 * with_image['ci'][0]:.1f}, {100 * with_image['ci'][1]:.1f}]"
        )
        assert row[3] == "–" and row[7] == f"{100 * image['baseline']:.1f}"  # no C records: a dash
        for cond, bias in section["selection_bias"].items():
            line = next(r for r in rows if r[:2] == [model, cond])
            assert line[2] == str(bias["n"]) and line[4].startswith(str(bias["n_outside"]))
    # the constant answers A everywhere: on the letter-labelled items A is over-selected
    constant = next(r for r in rows if r[:2] == ["constant:A", "C+Q"])
    assert constant[3].startswith("A +")
    between = [r for r in rows if r[:2] == ["random", "constant:A"]]
    assert [r[2] for r in between] == [c["measure"] for c in doc["comparisons"]] and len(between) == 3
    assert all(r[3] == str(c["n"]) for r, c in zip(between, doc["comparisons"]))


def test_one_model_has_no_between_model_section(tmp_path):
    invoke("run", "jmed48k", "--sample", "--model", "random", "--run-dir", tmp_path / "r", "--no-cache", "--json")
    text = invoke("audit", tmp_path / "r")
    assert "## Input ablation" in text and "## Selection bias" in text and "## Between models" not in text

"""An eval set that asks for the exam-date curves (`[contamination]`, a model's `cutoff`) writes
them after the compare, per run and pooled per model, into contamination.json and .md: the
same numbers `medvqa contamination RUN_DIR... -M cutoff=... --json` prints of the same runs,
read from the records with no request; `--dry-run` says it will; a bad cutoff is one error
naming the file, the entry and the key."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from medvqa.cli.contamination_cmd import command as contamination_command
from medvqa.cli.main import cli
from medvqa.core import stats
from tests.cli.test_audit_exam_dates import early_replay
from tests.conftest import shared_data


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A set of two models on those blocks in Japanese and English (two experiments each): `early`,
    planted (right on every 2018 item and on every second 2022 item, in both languages), declares
    a cutoff of 2020-06; `constant:A` declares none."""
    tmp = tmp_path_factory.mktemp("study")
    replay = early_replay(tmp / "early.jsonl")
    path = tmp / "set.toml"
    path.write_text(
        'study_dir = "study"\n'
        f'[[models]]\nmodel = "replay:{replay}"\nname = "early"\ncutoff = "2020-06"\n'
        '[[models]]\nmodel = "constant:A"\n'
        f'[[benchmarks]]\nbenchmark = "igakuqa"\ndata = "{shared_data("igakuqa")}"\nconditions = "C+Q"\n'
        'languages = ["ja", "en"]\nselect = { block = ["112A", "116A"], withdrawn = ["false"], '
        'credited_to_all = ["false"] }\n'
        "[contamination]\nexam_dates = true\n",
        encoding="utf-8",
    )
    return path


def test_the_dry_run_says_the_curves_will_be_written_at_no_request(study):
    plan = CliRunner().invoke(cli, ["eval", str(study), "--dry-run"])
    assert plan.exit_code == 0, plan.output
    assert "then the exam-date curves of every experiment, from its records (no request)" in plan.output
    assert "cutoffs: early at 2020-06" in plan.output
    planned = json.loads(CliRunner().invoke(cli, ["eval", str(study), "--dry-run", "--json"]).stdout)
    assert planned["contamination"]["requests"] == 0 and planned["contamination"]["cutoffs"] == {
        "early": "2020-06",
        "constant:A": None,
    }


@pytest.mark.slow  # four runs of 147 items, then the set resumed: about 12 s here
def test_the_set_writes_every_experiments_curves_split_at_each_models_cutoff(study):
    result = CliRunner().invoke(cli, ["eval", str(study)])
    assert result.exit_code == 0, result.output
    folder = study.parent / "study"
    assert "exam-date curves of the set: " in result.output
    doc = json.loads((folder / "contamination.json").read_text(encoding="utf-8"))["exam_dates"]
    assert doc["cutoffs"] == {"early": "2020-06", "constant:A": None}
    runs = {(r["model"], r["run_dir"].split("/")[-2]): r["conditions"]["C+Q"] for r in doc["runs"]}
    assert set(runs) == {(m, b) for m in ("early", "constant:A") for b in ("igakuqa", "igakuqa-en")}

    # early, per run: 2018 all 74 right; 2022 the items 0, 2, ..., 72 of 73 right: 37.
    # Before the cutoff 74/74 = 100 %, after 37/73 = 50.7 %, difference 36/73 = +49.3 pp.
    for language in ("igakuqa", "igakuqa-en"):
        c = runs["early", language]
        assert [(y, v["n"], v["correct"]) for y, v in c["years"].items()] == [("2018", 74, 74), ("2022", 73, 37)]
        assert (c["before"]["correct"], c["before"]["n"], c["after"]["correct"], c["after"]["n"]) == (74, 74, 37, 73)
        assert c["difference"] == pytest.approx(36 / 73) and c["straddles"] == []
    # pooled over its two runs: 148/148 before, 74/146 after, the same difference with a narrower
    # interval (twice the items). MOVER by hand from the Wilson (boundary-corrected) intervals:
    # L = d - sqrt((p1 - l1)^2 + (u2 - p2)^2), U = d + sqrt((u1 - p1)^2 + (p2 - l2)^2)
    pooled = doc["pooled"]["early"]["C+Q"]
    assert (pooled["before"]["n"], pooled["after"]["n"], pooled["after"]["correct"]) == (148, 146, 74)
    (l1, u1), (l2, u2) = stats.binomial_ci(148, 148), stats.binomial_ci(74, 146)
    d = 1 - 74 / 146
    low, high = d - math.sqrt((1 - l1) ** 2 + (u2 - 74 / 146) ** 2), d + math.sqrt((u1 - 1) ** 2 + (74 / 146 - l2) ** 2)
    assert pooled["difference_ci"] == [pytest.approx(low), pytest.approx(high)]
    one = runs["early", "igakuqa"]["difference_ci"]
    assert one[0] < low < d < high < one[1]  # the pooled interval lies inside one run's
    # constant:A declared no cutoff: its curves are whole
    assert set(runs["constant:A", "igakuqa"]) == {"years", "no_year"}
    assert set(doc["pooled"]["constant:A"]["C+Q"]) == {"years", "no_year"}

    # one number, one computation: `medvqa contamination` prints the same curves of the same runs
    early_dirs = [r["run_dir"] for r in doc["runs"] if r["model"] == "early"]
    alone = CliRunner().invoke(contamination_command, [*early_dirs, "-M", "cutoff=2020-06", "--json"])
    assert json.loads(alone.stdout)["exam_dates"]["pooled"]["early"] == doc["pooled"]["early"]

    text = (folder / "contamination.md").read_text(encoding="utf-8")
    assert "## early, pooled over its runs" in text and "Knowledge cutoff: 2020-06." in text
    assert "## early on igakuqa (ja)" in text and "## early on igakuqa (en)" in text
    assert "| 2022 | 73 | 50.7 |" in text and "before − after: +49.3 pp" in text
    assert "| before the cutoff | 148 | 100.0 |" in text

    # resumed, the set sends nothing and writes the same curves again
    again = CliRunner().invoke(cli, ["eval", str(study), "--json"])
    assert json.loads(again.stdout)["contamination"]["exam_dates"] == doc


@pytest.mark.parametrize(
    "models, tail, message",
    [
        ('[[models]]\nmodel = "random"\ncutoff = "2024-13"\n', "[contamination]\n", "cutoff '2024-13': write it"),
        ('[[models]]\nmodel = "random"\ncutoff = "2024-06"\n', "", "cutoff: the set asks for no exam-date curves"),
        ('[[models]]\nmodel = "random"\n', "[contamination]\nquiz = true\n", "contamination.quiz: not a key"),
    ],
)
def test_a_bad_cutoff_or_contamination_table_is_one_error_naming_the_file_the_entry_and_the_key(
    tmp_path, models, tail, message
):
    path = tmp_path / "set.toml"
    path.write_text(
        f'study_dir = "s"\n{models}[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n{tail}', encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["eval", str(path)])
    assert result.exit_code == 1, result.output
    line = " ".join(result.output.split())
    assert f"{path}: " in line and message in line, line
    if "models" in message or "cutoff" in message:
        assert "record models[0] (random): " in line
    assert not (tmp_path / "s").exists()

"""`medvqa audit rA rB` when one run holds C+Q+I and another C+Q of the same model and data:
the runs are paired as one, or a note says why not."""

import json

import pytest
from click.testing import CliRunner

from medvqa.cli.audit_cmd import command
from medvqa.core.run.options import RunOptions, run
from tests.conftest import shared_data

MODELS = ("random", "constant:A")
SECTIONS = ("n_records", "paired", "ablation", "refusals", "io_control", "selection_bias", "examples")


def baseline_run(run_dir, model, conditions, **options):
    run(
        RunOptions(
            benchmark="jmed48k",
            model=model,
            data=str(shared_data("jmed48k-sample")),
            conditions=conditions,
            run_dir=str(run_dir),
            cache=False,
            **options,
        ),
        progress=False,
    )
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Per baseline: one run with both image-removal conditions, and the same two conditions in
    two runs."""
    tmp = tmp_path_factory.mktemp("split")
    out = {}
    for model in MODELS:
        slug = model.replace(":", "_")
        out[model] = {cond: baseline_run(tmp / f"{slug}-{cond}", model, cond) for cond in ("C+Q,C+Q+I", "C+Q+I", "C+Q")}
    return out


def audit_json(*args):
    result = CliRunner().invoke(command, [*map(str, args), "--json", "--resamples", "200"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("model", MODELS)
def test_split_condition_runs_give_the_paired_table_of_one_run(runs, model):
    whole = audit_json(runs[model]["C+Q,C+Q+I"])
    split = audit_json(runs[model]["C+Q+I"], runs[model]["C+Q"])
    assert whole["paired"]["overall"]["n"] == 17
    for section in SECTIONS:
        assert split[section] == whole[section], section
    assert split["source"] == f"{runs[model]['C+Q+I']} + {runs[model]['C+Q']}"
    assert whole["notes"] == []
    assert split["notes"] == [
        f"joined {runs[model]['C+Q+I']} + {runs[model]['C+Q']}: one experiment of {model} "
        f"on the same data, conditions C+Q+I | C+Q"
    ]
    # given the other way round, the same pairs
    assert audit_json(runs[model]["C+Q"], runs[model]["C+Q+I"])["paired"] == whole["paired"]


def test_runs_of_other_models_are_not_paired_and_the_note_says_why(runs):
    doc = audit_json(runs["random"]["C+Q+I"], runs["constant:A"]["C+Q"])
    assert set(doc["models"]) == {"random", "constant:A"}
    assert doc["models"]["random"]["paired"]["overall"]["n"] == 0
    assert doc["models"]["random"]["paired"]["unpaired"]["no C+Q record"]["n"] == 17
    assert doc["notes"] == [
        f"{runs['random']['C+Q+I']} (C+Q+I) is not paired with {runs['constant:A']['C+Q']} (C+Q): "
        "models differ (random vs constant:A); generation parameters differ ({'seed': 0} vs {})"
    ]
    alone = audit_json(runs["random"]["C+Q+I"])
    assert alone["notes"] == [
        f"{runs['random']['C+Q+I']}: C+Q+I records without C+Q: no image-removal pairs, "
        "and no other run given has C+Q records"
    ]


def test_other_data_or_overlapping_conditions_are_not_joined(runs, tmp_path):
    fewer = baseline_run(tmp_path / "fewer", "random", "C+Q", limit=10)
    doc = audit_json(runs["random"]["C+Q+I"], fewer)
    note = next(n for n in doc["notes"] if "is not paired with" in n)
    assert "data fingerprints differ" in note and "models" not in note
    both_c = baseline_run(tmp_path / "c-and-with", "random", "C,C+Q+I")
    c_and_removed = baseline_run(tmp_path / "c-and-removed", "random", "C,C+Q")
    doc = audit_json(both_c, c_and_removed)
    assert len(doc["models"]) == 2  # two experiments that both asked C: kept apart
    assert f"{both_c} (C+Q+I) is not paired with {c_and_removed} (C+Q): both have C records" in doc["notes"]


@pytest.mark.filterwarnings("error")  # no figure of strata without pairs (an empty heatmap warns)
def test_the_text_summary_and_the_page_say_how_runs_were_paired(runs, tmp_path):
    page = tmp_path / "audit.html"
    result = CliRunner().invoke(command, [str(runs["random"]["C+Q+I"]), "--resamples", "50", "--html", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert f'<p dir="auto" class="note">{runs["random"]["C+Q+I"]}: C+Q+I records without C+Q' in html
    assert 'id="fig-states_overall"' in html and 'id="fig-heatmap_' not in html
    first, _, rest = result.stdout.partition("\n\n")  # the reading, then the notes
    assert first.startswith("Reading: strict:")
    assert rest.startswith(f"Note: {runs['random']['C+Q+I']}: C+Q+I records without C+Q")
    assert "| overall | 0 |" in result.stdout
    assert "Unpaired image items: 17 no C+Q record, 184 image not available." in result.stdout


def test_without_by_the_benchmarks_default_strata_are_shown(runs):
    doc = audit_json(runs["random"]["C+Q,C+Q+I"])
    assert set(doc["paired"]["by"]) == {"profession", "dominant_type"}
    assert doc["settings"]["by"] == ["profession", "dominant_type"]
    assert sum(row["n"] for row in doc["paired"]["by"]["profession"].values()) == 17

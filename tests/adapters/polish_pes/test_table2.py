"""The Polish PES paper's Table 2 (§5, "Data Contamination Analysis"): per model and dataset the
DCQ level as (min contamination, max contamination), from results files in the DCQ authors'
layout, estimated as they estimate them. The numbers are pinned to the authors' own reports
(`../shared/data/dcq/`, from github.com/shahriargolchin/DCQ, results/our_dcq/**/
data_contamination_report_for_*.txt, "Detected Contamination Level")."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from medvqa.adapters.polish_pes.contamination import labelled, table2
from medvqa.cli.main import cli
from tests.conftest import shared_data


def reported(folder) -> str:
    """The level line of the authors' report in `folder`, as printed there."""
    (report,) = folder.glob("data_contamination_report_for_*.txt")
    return re.search(r"Detected Contamination Level: \[([^\]]+)\]", report.read_text(encoding="utf-8")).group(1)


def test_table_2_lays_out_each_models_level_per_dataset_as_the_dcq_reports_print_it():
    dcq = shared_data("dcq")
    gsm8k, drop = dcq / "reported_contamination" / "gsm8k", dcq / "reported_contamination" / "drop"
    args = ["polish-pes-dcq", "--dcq-results", f"GPT-4@QA={gsm8k / 'gsm8k_train.csv'}"]
    args += ["--dcq-results", f"GPT-4@VQA={drop / 'drop_valid.csv'}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    # gsm8k by hand (SOURCE.txt): the BCQ with the original at D is right 79 times in 100, the BDQ
    # picked D once: kappa = (79 − 1) / (100 − 1) = 78/99 = 78.79 %; the second-best BCQ 69 %;
    # min = max(78.79 %, 69 %) = 78.79 %, max = 79/100 = 79.00 %: the report's [78.79%, 79.00%]
    assert reported(gsm8k) == "78.79%, 79.00%"
    assert f"| GPT-4 | ({reported(gsm8k)}) | ({reported(drop)}) |" in result.output
    assert "| model | QA | VQA |" in result.output

    doc = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    assert doc["table"]["rows"] == [{"model": "GPT-4", "QA": "(78.79%, 79.00%)", "VQA": f"({reported(drop)})"}]
    qa = doc["estimates"][0]
    assert (qa["model"], qa["dataset"], qa["best"], qa["bcq"]["D"]["counts"]["D"], qa["bdq"]["counts"]["D"]) == (
        "GPT-4",
        "QA",
        "D",
        79,
        1,
    )
    assert qa["level"]["lower"] == 78 / 99 and qa["level"]["upper"] == 79 / 100


def test_a_model_missing_on_a_dataset_has_an_empty_cell_and_a_bad_label_is_refused():
    tables = table2({("a", "QA"): {"lower": 0.0, "upper": 0.024}, ("b", "VQA"): {"lower": 0.01, "upper": 0.5}})
    assert tables.render("csv").splitlines()[1:4] == [
        "model,QA,VQA",
        'a,"(0.00%, 2.40%)",',
        'b,,"(1.00%, 50.00%)"',
    ]
    assert labelled("org/model@x@VQA=f.csv") == ("org/model@x", "VQA", "f.csv")
    assert labelled("m=dir/a=b.csv") == ("m", "DCQ", "dir/a=b.csv")
    for bad in ("nolabel.csv", "@QA=f.csv", "m@=f.csv", "m="):
        result = CliRunner().invoke(cli, ["polish-pes-dcq", "--dcq-results", bad])
        assert result.exit_code == 2 and "write it MODEL=FILE or MODEL@DATASET=FILE" in result.output, bad
    missing = CliRunner().invoke(cli, ["polish-pes-dcq", "--dcq-results", "m@QA=nowhere.csv"])
    assert missing.exit_code == 1 and "nowhere.csv: no such file" in missing.output
    twice = CliRunner().invoke(cli, ["polish-pes-dcq", "--dcq-results", "m@QA=a.csv", "--dcq-results", "m@QA=b.csv"])
    assert twice.exit_code == 2 and "m on QA is given twice (a.csv and b.csv)" in twice.output

"""Auditing saved run directories."""

import json

from click.testing import CliRunner

from medvqa.cli.audit_cmd import command
from medvqa.core.session import RunOptions, run

from tests.conftest import shared_data


def audit_json(*args):
    result = CliRunner().invoke(command, [*map(str, args), "--json", "--resamples", "200"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_without_by_the_benchmarks_default_strata_are_shown(tmp_path):
    run(RunOptions(benchmark="jmed48k", model="random", data=str(shared_data("jmed48k-sample")),
                   conditions="C+Q,C+Q+I", run_dir=str(tmp_path / "run"), cache=False), progress=False)
    doc = audit_json(tmp_path / "run")
    assert set(doc["paired"]["by"]) == {"profession", "dominant_type"}
    assert doc["settings"]["by"] == ["profession", "dominant_type"]
    assert sum(row["n"] for row in doc["paired"]["by"]["profession"].values()) == 17

"""A model keeps its name: `--model-name` is the name a run's model goes by in pairing, compare,
the audit and the browser, with the model string kept beside it in the manifest. Two model strings
(two deployments of one model) under one name are one experiment: their C+Q+I and C+Q runs pair."""

from __future__ import annotations

import json

from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def runs(tmp_path, name: str | None):
    named = ["--model-name", name] if name else []
    for model, cond in (("constant:A", "C+Q+I"), ("constant:B", "C+Q")):
        invoke(
            "run",
            "jmed48k",
            "--sample",
            "--model",
            model,
            "--conditions",
            cond,
            "--no-cache",
            "--run-dir",
            tmp_path / cond,
            "--json",
            *named,
        )
    return [tmp_path / "C+Q+I", tmp_path / "C+Q"]


def test_two_model_strings_under_one_name_pair_and_compare_as_one(tmp_path):
    dirs = runs(tmp_path / "named", "deployment")
    manifest = medvqa.read_run(dirs[0]).manifest
    assert (manifest["model"], manifest["model_name"]) == ("constant:A", "deployment")
    audit = json.loads(invoke("audit", *dirs, "--json", "--resamples", "20"))
    assert audit["model"] == "deployment" and audit["paired"]["overall"]["n"] > 0  # one experiment, paired
    # ... whose two sides are two deployments, and the audit says so beside its Δimg
    assert any(
        "different deployments under one model name: C+Q+I from 'constant:A'" in n and "'constant:B'" in n
        for n in audit["notes"]
    )
    compare = json.loads(invoke("compare", *dirs, "--json", "--resamples", "20"))
    assert [(r["model"], r["n"] > 0) for r in compare["delta_img"]] == [("deployment", True)]
    assert compare["delta_img"][0]["delta_img"] == audit["paired"]["overall"]["delta_img"]
    assert [(r["model"], r["model_string"]) for r in compare["runs"]] == [("deployment", "constant:A")]
    page = medvqa.view(*dirs, html=tmp_path / "view.html").read_text(encoding="utf-8")
    assert '"model":"deployment","model_string":"constant:A"' in page


def test_without_a_name_two_model_strings_never_pair(tmp_path):
    dirs = runs(tmp_path / "unnamed", None)
    audit = json.loads(invoke("audit", *dirs, "--json", "--resamples", "20"))
    assert set(audit["models"]) == {"constant:A", "constant:B"}
    assert any("models differ (constant:A vs constant:B)" in n for n in audit["notes"])
    assert json.loads(invoke("compare", *dirs, "--json", "--resamples", "20"))["delta_img"] == []

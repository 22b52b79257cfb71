"""An eval set that names a quiz model (`[contamination] quiz_model`) writes each benchmark's Data
Contamination Quiz once and has every model of the set take it, over real HTTP against the local
test server: a generator that paraphrases deterministically and a model that memorised the exam
(tests/core/test_contamination_quiz.py has both, and the authors' formula worked by hand)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from medvqa.cli.contamination_cmd import command as contamination_command
from medvqa.cli.main import cli
from tests.conftest import shared_data
from tests.core.test_contamination_quiz import memoriser
from tests.openai_server import OpenAIServer


@pytest.mark.slow  # a set run twice over HTTP, a model's server down: about 10 s here
def test_the_set_writes_each_benchmarks_quiz_once_and_every_model_takes_it(tmp_path):
    with OpenAIServer(reply=memoriser) as server:
        path = tmp_path / "set.toml"
        path.write_text(
            'study_dir = "study"\n'
            f'[[models]]\nmodel = "hosted_vllm/memoriser"\nname = "mem"\noptions = {{ api_base = "{server.url}" }}\n'
            '[[models]]\nmodel = "hosted_vllm/test"\nname = "down"\n'
            'options = { api_base = "http://127.0.0.1:9/v1", timeout = 2, max_retries = 0 }\n'
            f'[[benchmarks]]\nbenchmark = "igakuqa"\ndata = "{shared_data("igakuqa")}"\nconditions = "C+Q"\n'
            'select = { block = ["112A"] }\nlimit = 10\n'
            '[contamination]\nexam_dates = false\nquiz_model = "hosted_vllm/generator"\n'
            f'quiz_options = {{ api_base = "{server.url}" }}\n',
            encoding="utf-8",
        )
        plan = json.loads(CliRunner().invoke(cli, ["eval", str(path), "--dry-run", "--json"]).stdout)
        # 10 items: the generator asked once each; the model 5 quizzes (BDQ, BCQ A-D) each: 50
        q = plan["contamination"]["dcq"]["igakuqa"]
        assert (q["n_items"], q["generator"]["requests"], q["examinations"]["mem"]["requests"]) == (10, 10, 50)
        assert plan["contamination"]["requests"] == 10 + 50 + 50 and sum(server.counts.values()) == 0
        text = CliRunner().invoke(cli, ["eval", str(path), "--dry-run"]).output
        assert "then the Data Contamination Quiz of igakuqa" in text and "writing it (hosted_vllm/generator) 10" in text

        result = CliRunner().invoke(cli, ["eval", str(path), "--json"])
        assert result.exit_code == 4, result.output  # the model whose server is down fails its run
        done = json.loads(result.stdout)
        # ... and its examination, a note of its own: the other model's stands
        assert any(n.startswith("down did not take the Data Contamination Quiz of igakuqa: ") for n in done["notes"])
        doc = done["contamination"]
        assert set(doc["dcq"]["igakuqa"]["examinations"]) == {"mem"}
        assert "exam_dates" not in doc
        dcq = doc["dcq"]["igakuqa"]
        # as the memoriser test works it out: 112A3's quiz is dropped (a variant that changes a
        # number, three times), 9 items; the BDQ shows paraphrases only, so E 9 of 9; every BCQ
        # finds the original 9 of 9: upper 9/9 = 1, kappa (9 − 0) / (9 − 0) = 1, lower 1
        assert dcq["quiz"]["created"] and (dcq["quiz"]["n_items"], dcq["quiz"]["n_dropped"]) == (9, 1)
        overall = dcq["examinations"]["mem"]["overall"]
        assert overall["n"] == 9 and overall["level"] == {"lower": 1.0, "upper": 1.0}
        quiz = tmp_path / "study" / "quizzes" / "igakuqa.json"
        assert dcq["quiz"]["file"] == str(quiz) and quiz.is_file()
        saved = json.loads((tmp_path / "study" / "contamination.json").read_text(encoding="utf-8"))
        assert saved == doc
        assert "| mem | 9 | 100.00% | 100.00% |" in (tmp_path / "study" / "contamination.md").read_text("utf-8")

        # one computation: the same quiz taken by `medvqa contamination` gives the same level
        alone = CliRunner().invoke(
            contamination_command,
            ["igakuqa", "--quiz", str(quiz), "--model", "hosted_vllm/memoriser", "--api-base", server.url, "--json"],
        )
        assert json.loads(alone.stdout)["examinations"]["hosted_vllm/memoriser"]["overall"] == overall

        # resumed: the quiz is read, not written again, and every answer is in the cache
        asked = sum(server.counts.values())
        again = json.loads(CliRunner().invoke(cli, ["eval", str(path), "--json"]).stdout)["contamination"]
        assert sum(server.counts.values()) == asked
        assert not again["dcq"]["igakuqa"]["quiz"]["created"]
        assert again["dcq"]["igakuqa"]["examinations"]["mem"]["overall"] == overall


def test_quiz_options_without_a_quiz_model_are_refused_naming_the_key(tmp_path):
    path = tmp_path / "set.toml"
    path.write_text(
        'study_dir = "s"\n[[models]]\nmodel = "random"\n[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n'
        "[contamination]\nquiz_options = { max_tokens = 10 }\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["eval", str(path)])
    line = " ".join(result.output.split())
    assert result.exit_code == 1 and "record contamination: quiz_options: give the quiz_model they are for" in line


def test_a_quiz_that_cannot_be_planned_is_named_and_the_runs_are_planned(tmp_path):
    path = tmp_path / "set.toml"
    path.write_text(
        'study_dir = "study"\n[[models]]\nmodel = "hosted_vllm/m"\noptions = { api_base = "http://127.0.0.1:9/v1" }\n'
        f'[[benchmarks]]\nbenchmark = "igakuqa"\ndata = "{shared_data("igakuqa")}"\nconditions = "C+Q"\n'
        'select = { block = ["112A"] }\nlimit = 3\n[contamination]\nquiz_model = "hosted_vllm/generator"\n',
        encoding="utf-8",
    )
    bad = tmp_path / "study" / "quizzes" / "igakuqa.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("not a quiz", encoding="utf-8")
    plan = json.loads(CliRunner().invoke(cli, ["eval", str(path), "--dry-run", "--json"]).stdout)
    assert plan["total"]["requests"] == 3  # the runs' plan stands
    (failed,) = plan["failed"]
    assert failed["experiment"] == "the Data Contamination Quiz of igakuqa" and str(bad) in failed["failure"]
    assert plan["contamination"]["dcq"] == {} and plan["contamination"]["requests"] == 0

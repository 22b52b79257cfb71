"""`--dry-run` plans a run without sending anything or writing a file: its request count is what
the run then sends (the cache and the records already written taken off), with the tokens and
the cost estimated through litellm; every summary, `report` and `compare` show the tokens and
cost per condition, the same sums in each."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.compare.comparison import compare_runs
from medvqa.core.run.store import read_records
from tests.openai_server import OpenAIServer

MODEL = "hosted_vllm/test"


def medvqa_json(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_plan_counts_what_the_run_then_sends_and_writes_nothing(tmp_path):
    with OpenAIServer() as server:
        common = ("--sample", "--model", MODEL, "--api-base", server.url, "--price", "1,2", "--max-tokens", "50")
        # 5 items under C+Q answered before: in the cache, not in the new run's directory
        medvqa_json(
            "run", "jmed48k", *common, "--limit", "5", "--conditions", "C+Q", "--run-dir", tmp_path / "first", "--json"
        )
        before = sum(server.counts.values())
        plan = medvqa_json(
            "run", "jmed48k", *common, "--conditions", "C+Q,C+Q+I", "--run-dir", tmp_path / "run", "--dry-run", "--json"
        )
        assert sum(server.counts.values()) == before and not (tmp_path / "run").exists()  # nothing sent or written
        assert (plan["pairs"], plan["recorded"], plan["to_ask"], plan["cached"]) == (22, 0, 22, 5)
        assert (plan["requests"], plan["preflight"]) == (17, 1)
        assert plan["conditions"] == {"C+Q": {"to_ask": 17, "cached": 5}, "C+Q+I": {"to_ask": 5, "cached": 0}}
        t = plan["tokens"]
        assert (t["output"], t["output_max"], t["typical_reply_tokens"]) == (17 * 20, 17 * 50, 20)
        assert t["input"] > 17 * 50  # a question, its options and the instructions: more than 50 tokens each
        assert plan["cost_usd"] == pytest.approx((t["input"] * 1 + t["output"] * 2) / 1e6)
        assert plan["cost_usd_max"] == pytest.approx((t["input"] * 1 + t["output_max"] * 2) / 1e6)
        assert plan["price_source"] == "--price" and "litellm does not know hosted_vllm/test" in plan["tokenizer"]

        summary = medvqa_json(
            "run", "jmed48k", *common, "--conditions", "C+Q,C+Q+I", "--run-dir", tmp_path / "run", "--json"
        )
        assert sum(server.counts.values()) - before == plan["requests"] + plan["preflight"]
        again = medvqa_json(
            "run", "jmed48k", *common, "--conditions", "C+Q,C+Q+I", "--run-dir", tmp_path / "run", "--dry-run", "--json"
        )
        assert (again["recorded"], again["requests"], again["preflight"]) == (22, 0, 0)

    # tokens and cost per condition: the records' sums, the same in the summary, report and compare
    records = read_records(tmp_path / "run")
    by_cond = summary["usage_by_condition"]
    for cond in ("C+Q", "C+Q+I"):
        mine = [r for r in records if r["condition"] == cond]
        assert by_cond[cond]["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in mine) > 0
        assert by_cond[cond]["cost_usd"] == pytest.approx(sum(r["usage"]["cost_usd"] for r in mine))
        assert by_cond[cond]["cost_usd"] == pytest.approx(
            sum(r["usage"]["prompt_tokens"] * 1 + r["usage"]["completion_tokens"] * 2 for r in mine) / 1e6
        )
    assert by_cond["C+Q"]["cached"] == 5
    rows = medvqa.report(tmp_path / "run", by="", fmt="json")
    assert {r["condition"]: (r["prompt_tokens"], r["cost_usd"]) for r in rows} == {
        c: (u["prompt_tokens"], pytest.approx(u["cost_usd"])) for c, u in by_cond.items()
    }
    usage = compare_runs([tmp_path / "run"]).as_json()["usage"]
    assert {u["condition"]: u["prompt_tokens"] for u in usage} == {c: u["prompt_tokens"] for c, u in by_cond.items()}


def test_a_plan_on_a_new_cache_folder_makes_no_response_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    with OpenAIServer() as server:
        plan = medvqa_json(
            "run",
            "jmed48k",
            "--sample",
            "--model",
            MODEL,
            "--api-base",
            server.url,
            "--price",
            "1,2",
            "--run-dir",
            tmp_path / "run",
            "--dry-run",
            "--json",
        )
        assert sum(server.counts.values()) == 0
    assert (plan["to_ask"], plan["cached"], plan["requests"]) == (22, 0, 22)
    assert not (tmp_path / "cache" / "responses.sqlite3").exists() and not (tmp_path / "run").exists()


def test_a_baseline_plan_says_nothing_is_spent_and_the_text_names_the_counts(tmp_path):
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "random",
            "--conditions",
            "C+Q",
            "--run-dir",
            str(tmp_path / "run"),
            "--dry-run",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "pairs 17: 0 already recorded, 17 to ask, of which 0 in the cache: 17 requests to send" in result.output
    assert "random is a baseline: no model is asked, nothing is spent" in result.output
    assert not (tmp_path / "run").exists()


def test_eval_dry_run_totals_what_the_set_then_sends(tmp_path):
    with OpenAIServer() as a, OpenAIServer() as b:
        path = tmp_path / "set.toml"
        path.write_text(
            'study_dir = "s"\n'
            + "".join(
                f'[[models]]\nmodel = "{MODEL}"\nname = "m{i}"\noptions = {{ api_base = "{s.url}" }}\n'
                for i, s in enumerate((a, b))
            )
            + '[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n',
            encoding="utf-8",
        )
        doc = medvqa_json("eval", path, "--dry-run", "--json")
        assert (doc["total"]["requests"], doc["total"]["preflight"], doc["failed"]) == (44, 2, [])
        assert sum(a.counts.values()) + sum(b.counts.values()) == 0 and not (tmp_path / "s").exists()
        text = CliRunner().invoke(cli, ["eval", str(path), "--dry-run"]).output
        assert "set: 2 experiments, 44 pairs, 0 recorded, 0 cached: 44 requests to send (and 2 preflight)" in text
        medvqa_json("eval", path, "--json")
        assert sum(a.counts.values()) + sum(b.counts.values()) == 44 + 2

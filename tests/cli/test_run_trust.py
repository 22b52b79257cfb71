"""Runs you can trust, through `medvqa run` against the local OpenAI-compatible server: defaults
each model accepts, summaries that count every status with n and a 95 % CI, exit statuses past
the error threshold, errors retried on a re-run, and a cache that never mixes servers."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from medvqa.cli.common import EXIT_UNTRUSTED
from medvqa.cli.main import cli
from medvqa.core import plugins
from medvqa.core.conditions import Condition
from medvqa.core.inference.base import request_key
from medvqa.core.inference.images import to_openai
from medvqa.core.run.store import read_all_records, read_manifest, read_records
from tests.conftest import shared_data
from tests.openai_server import Faults, OpenAIServer, content_key


def medvqa(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def run_json(*args) -> tuple[int, dict]:
    result = medvqa("run", "jmed48k", *args, "--json")
    return result.exit_code, json.loads(result.stdout)


def lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()]


# -- 1. defaults each model accepts ------------------------------------------------------------


def test_gpt5_runs_end_to_end_without_the_temperature_it_refuses(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-medvqa-test-key-000000")  # the local server ignores it
    with OpenAIServer(keep_bodies=True) as server:
        code, out = run_json(
            "--sample", "--model", "openai/gpt-5", "--api-base", server.url, "--run-dir", tmp_path / "run"
        )
        bodies = server.bodies
    assert code == 0 and out["failure"] is None
    assert {c: s["answered"] for c, s in out["conditions"].items()} == {"C+Q": 17, "C+Q+I": 5}
    assert len(bodies) == 22 + 1  # every pair, and the preflight request
    assert all(b["model"] == "gpt-5" and "temperature" not in b and b["seed"] == 0 for b in bodies)
    manifest = read_manifest(tmp_path / "run")
    assert "temperature" not in manifest["params"] and manifest["params"]["seed"] == 0
    assert manifest["params"]["response_format"]["type"] == "json_schema"
    assert manifest["params_left_out"]["temperature"].startswith(
        "litellm: gpt-5 doesn't support temperature=0 while reasoning is active."
    )


def test_each_default_is_sent_where_litellm_accepts_it_and_the_manifest_says_why_not(tmp_path):
    from medvqa.core.inference.litellm_backend import LiteLLMBackend

    assert LiteLLMBackend("hosted_vllm/test").params_left_out == {}
    claude = LiteLLMBackend("anthropic/claude-sonnet-4-5")
    assert claude.params["temperature"] == 0 and "seed" not in claude.params
    assert claude.params_left_out == {
        "seed": "not among the parameters litellm supports for anthropic/claude-sonnet-4-5"
    }
    o3 = LiteLLMBackend("openai/o3")
    assert "temperature" not in o3.params and o3.params_left_out["temperature"].startswith("litellm: O-series")
    assert LiteLLMBackend("openai/gpt-5", temperature=1).params["temperature"] == 1  # given: sent as given
    removed = LiteLLMBackend("hosted_vllm/test", params={"seed": None})
    assert "seed" not in removed.params and removed.params_left_out == {"seed": "removed with --param seed=null"}


# -- 2. the summary counts every status; the exit status says when not to trust the numbers ---


def test_errors_above_the_threshold_exit_4_with_every_status_counted(tmp_path):
    data = shared_data("jmed48k-sample")
    args = [
        "--data",
        data,
        "--limit",
        "200",
        "--model",
        "hosted_vllm/test",
        "--max-retries",
        "0",
        "--conditions",
        "C+Q",
    ]
    with OpenAIServer(faults=Faults(server_error=0.1), seed=11) as server:
        result = medvqa("run", "jmed48k", *args, "--api-base", server.url, "--run-dir", tmp_path / "run")
        faults = server.outcomes["server_error"]
    records = read_records(tmp_path / "run")
    errors = sum(r["status"] == "error" for r in records)
    assert 10 < errors < 40 and errors <= faults  # about 10 % of 200 (the probe may have met one too)
    assert result.exit_code == EXIT_UNTRUSTED
    assert result.output.splitlines()[-1] == (
        f"Error: {errors} of 200 records are errors ({errors / 2:.1f}%), above --max-error-rate 5%"
    )
    table = result.output.splitlines()
    header = next(line for line in table if line.strip().startswith("condition"))
    assert header.split() == [
        "condition",
        "n",
        "accuracy",
        "95%",
        "CI",
        "answered",
        "refusal",
        "parse_failure",
        "error",
        "missing",
    ]
    row = table[table.index(header) + 1].split()
    assert row[0] == "C+Q" and row[1] == "200" and row[-5:] == [str(200 - errors), "0", "0", str(errors), "0"]
    # the same run, with a threshold above its error rate, is trusted
    code, out = run_json(
        *args,
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--run-dir",
        tmp_path / "run",
        "--no-retry-errors",
        "--max-error-rate",
        "0.2",
    )
    assert code == 0 and out["failure"] is None and out["errors"] == errors
    assert out["conditions"]["C+Q"]["error"] == errors and out["error_rate"] == errors / 200


def test_a_run_in_which_no_request_succeeded_fails_whatever_the_threshold(tmp_path):
    from medvqa import load

    items = load("jmed48k", path=shared_data("jmed48k-sample"), years=[2025])
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps(
                {"item_id": it.id, "condition": "C+Q", "response": None, "error": "RateLimitError: quota exhausted"}
            )
            + "\n"
            for it in items
        )
    )
    result = medvqa(
        "run",
        "jmed48k",
        "--data",
        shared_data("jmed48k-sample"),
        "--years",
        "2025",
        "--conditions",
        "C+Q",
        "--model",
        f"replay:{replay}",
        "--max-error-rate",
        "1",
        "--run-dir",
        tmp_path / "run",
        "--json",
    )
    assert result.exit_code == EXIT_UNTRUSTED
    doc = json.loads(result.stdout)  # --json still prints its one document on stdout
    n = len([it for it in items if not it.excluded])
    assert doc["failure"] == f"no request succeeded ({n} errors, 0 missing of {n} records)"
    assert doc["conditions"]["C+Q"]["error"] == n and doc["conditions"]["C+Q"]["accuracy"] == 0


# -- 4. a re-run retries error and missing records ---------------------------------------------


@pytest.mark.slow  # a real server or whole-data runs: seconds
def test_rerun_retries_errors_keeps_the_superseded_lines_and_readers_take_the_newest(tmp_path):
    data = shared_data("jmed48k-sample")
    run_dir = tmp_path / "run"
    args = [
        "--data",
        data,
        "--limit",
        "120",
        "--model",
        "hosted_vllm/test",
        "--max-retries",
        "0",
        "--conditions",
        "C+Q,C+Q+I",
        "--run-dir",
        run_dir,
        "--max-error-rate",
        "1",
    ]
    bench = plugins.get_benchmark("jmed48k")
    items = {it.id: it for it in bench.load(data, None)}

    def server_key(record):
        return content_key(to_openai(bench.render(items[record["item_id"]], Condition(record["condition"]))))

    with OpenAIServer(faults=Faults(server_error=0.25), seed=4) as server:
        first = read_after(run_json(*args, "--api-base", server.url), run_dir)
        failed = [r for r in first if r["status"] == "error"]
        assert len(failed) > 10
        kept = read_after(run_json(*args, "--api-base", server.url, "--no-retry-errors"), run_dir)
        assert kept == first and len(lines(run_dir)) == len(first)  # nothing asked again
        second = read_after(run_json(*args, "--api-base", server.url), run_dir)
        counts = dict(server.counts)
    # every failed pair was asked once more, every answered pair never again
    assert {counts[server_key(r)] for r in failed} == {2}
    assert {counts[server_key(r)] for r in first if r["status"] == "answered"} == {1}
    assert len(second) == len(first)
    still = [r for r in second if r["status"] == "error"]
    assert len(still) < len(failed)  # the server's faults are drawn anew for each attempt
    all_lines = lines(run_dir)
    assert len(all_lines) == len(first) + len(failed)  # the superseded records stay in the file
    # report and audit read the newest record of each pair
    report = json.loads(medvqa("report", run_dir, "--by", "", "--json").stdout)  # by condition only
    by_cond = Counter(r["condition"] for r in second)
    assert {row["condition"]: row["n"] for row in report} == dict(by_cond)
    assert sum(row["error"] for row in report) == len(still)
    audit = json.loads(medvqa("audit", run_dir, "--json").stdout)
    assert audit["paired"]["overall"]["n"] == by_cond["C+Q+I"]
    # re-scoring keeps the superseded lines too: the file is the run's whole history
    score = json.loads(medvqa("score", run_dir, "--json").stdout)
    assert score["n_records"] == len(all_lines) and len(read_all_records(run_dir)) == len(all_lines)
    assert read_records(run_dir) == second


def read_after(result: tuple[int, dict], run_dir: Path) -> list[dict]:
    code, out = result
    assert code == 0, out
    return read_records(run_dir)


def test_rerun_asks_missing_replay_pairs_again(tmp_path):
    from medvqa import load

    items = [it for it in load("jmed48k", path=shared_data("jmed48k-sample"), years=[2025]) if not it.excluded]
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"item_id": it.id, "condition": "C+Q", "response": '{"answer": ["a"]}'}) + "\n"
            for it in items[:-3]
        )
    )
    args = [
        "--data",
        shared_data("jmed48k-sample"),
        "--years",
        "2025",
        "--conditions",
        "C+Q",
        "--model",
        f"replay:{replay}",
        "--run-dir",
        tmp_path / "run",
    ]
    code, out = run_json(*args)
    assert out["conditions"]["C+Q"]["missing"] == 3 and code == 0  # missing is not an error
    run_json(*args)
    assert len(lines(tmp_path / "run")) == len(items) + 3
    run_json(*args, "--no-retry-errors")
    assert len(lines(tmp_path / "run")) == len(items) + 3


# -- 5. the cache key names the server ---------------------------------------------------------


def test_two_servers_serving_one_model_name_never_share_answers(tmp_path):
    args = ["--sample", "--model", "hosted_vllm/test", "--conditions", "C+Q"]
    with OpenAIServer() as one, OpenAIServer() as two:
        code, first = run_json(*args, "--api-base", one.url, "--run-dir", tmp_path / "one")
        code2, second = run_json(*args, "--api-base", two.url, "--run-dir", tmp_path / "two")
        code3, third = run_json(*args, "--api-base", one.url + "/", "--run-dir", tmp_path / "three")
        assert (code, code2, code3) == (0, 0, 0)
        assert sum(one.counts.values()) == sum(two.counts.values()) == first["n_records"] + 1
    keys = [{r["key"] for r in read_records(tmp_path / d)} for d in ("one", "two", "three")]
    assert not keys[0] & keys[1]  # a different server: other keys, so its own requests
    assert keys[0] == keys[2]  # the same server (a trailing slash changes nothing): cached answers


def test_cache_entries_of_the_old_key_schema_are_not_reused(tmp_path):
    """An entry written under the old key (model, parameters and messages only) must not be
    served to a run, even where its key would have matched."""
    from medvqa.core.files import default_cache_path
    from medvqa.core.inference.cache import ResponseCache
    from medvqa.core.inference.litellm_backend import LiteLLMBackend
    from medvqa.core.messages import messages_for_key

    bench = plugins.get_benchmark("jmed48k")
    items = [it for it in bench.load(None, "sample") if not it.excluded]
    backend = LiteLLMBackend("hosted_vllm/test")
    cache = default_cache_path()  # the test's own cache (see conftest)
    cache.parent.mkdir(parents=True, exist_ok=True)

    def old_key(messages) -> str:
        payload = json.dumps({"model": backend.model, "params": backend.params}, sort_keys=True, separators=(",", ":"))
        h = hashlib.sha256(payload.encode())
        h.update(b"\x00")
        h.update(messages_for_key(messages).encode())
        return h.hexdigest()

    db = sqlite3.connect(cache)
    db.execute(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT, text TEXT NOT NULL, usage TEXT, latency_s REAL)"
    )
    for it in items:
        db.execute(
            "INSERT INTO responses VALUES (?, ?, ?, '{}', 0)",
            (old_key(bench.render(it, Condition.CQ)), backend.model, '{"answer": ["poisoned"]}'),
        )
    db.commit()
    db.close()
    stored = ResponseCache(cache)
    assert stored.get(old_key(bench.render(items[0], Condition.CQ))).text == '{"answer": ["poisoned"]}'
    stored.close()
    assert request_key(backend.model, backend.params, bench.render(items[0], Condition.CQ)) != old_key(
        bench.render(items[0], Condition.CQ)
    )
    with OpenAIServer() as server:
        code, out = run_json(
            "--sample",
            "--model",
            "hosted_vllm/test",
            "--conditions",
            "C+Q",
            "--api-base",
            server.url,
            "--run-dir",
            tmp_path / "run",
        )
        assert code == 0 and sum(server.counts.values()) == len(items) + 1
    assert not any("poisoned" in (r["response"] or "") for r in read_records(tmp_path / "run"))


# -- 6. every accuracy with n and a 95 % CI; image fallbacks counted ---------------------------


def test_run_and_report_give_n_and_a_ci_for_every_accuracy_and_count_image_fallbacks(tmp_path):
    data = shared_data("jmed48k-sample")
    code, out = run_json("--data", data, "--model", "constant:a", "--run-dir", tmp_path / "run")
    assert code == 0 and out["n_image_fallback"] == 184  # image items whose files are absent
    cqi = out["conditions"]["C+Q+I"]
    assert cqi["n"] == 17 and cqi["accuracy"] == cqi["correct"] / 17
    low, high = cqi["ci"]
    assert low < cqi["accuracy"] < high and high - low > 0.3  # 17 items: a wide interval
    human = medvqa("run", "jmed48k", "--data", data, "--model", "constant:a", "--run-dir", tmp_path / "run")
    assert "image items without a usable image file: 184" in human.output
    row = next(line for line in human.output.splitlines() if line.strip().startswith("C+Q+I"))
    assert row.split()[1:4] == ["17", f"{100 * cqi['accuracy']:.1f}%", f"{100 * low:.1f}–{100 * high:.1f}%"]
    report = medvqa("report", tmp_path / "run")
    heading, _, head, _, *rows = report.output.splitlines()
    assert heading == "### Accuracy by condition"
    assert head.startswith("| condition | n | n_excluded | uncounted | correct | accuracy % | CI low % | CI high % |")
    cells = next(r for r in rows if r.startswith("| C+Q+I |")).split(" | ")
    assert cells[1] == "17" and cells[6:8] == [f"{100 * low:.1f}", f"{100 * high:.1f}"]

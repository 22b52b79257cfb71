"""The preflight: a misspelled model, an unknown backend, missing or refused credentials and an
unreachable server end `medvqa run` in seconds with one line and exit status 3, before any
record is written; baselines and runs with nothing left to ask need no network."""

from __future__ import annotations

import json
import os
import time

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.cli.run_cmd import EXIT_PREFLIGHT
from medvqa.core.inference.litellm_backend import import_litellm
from medvqa.core.inference.preflight import PROBE_MESSAGES
from medvqa.core.run.store import read_records
from tests.core.inference.test_retry import closed_port_url
from tests.openai_server import Faults, OpenAIServer, content_key


@pytest.fixture(autouse=True, scope="module")
def _litellm_loaded():
    """The times below are the checks' own, not litellm's import (about 5 s, once per process)."""
    import_litellm()


def run(tmp_path, *args: str):
    """`medvqa run jmed48k --sample ...` in-process: (result, seconds)."""
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["run", "jmed48k", "--sample", "--run-dir", str(tmp_path / "run"), *args])
    return result, time.monotonic() - started


def one_line(result) -> str:
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_a_misspelled_provider_names_the_nearest_one(tmp_path):
    result, seconds = run(tmp_path, "--model", "opnai/gpt-5")
    assert result.exit_code == EXIT_PREFLIGHT and seconds < 5
    assert one_line(result) == (
        "Error: unknown model 'opnai/gpt-5': litellm knows no provider 'opnai'; "
        "did you mean 'openai'? (providers: https://docs.litellm.ai/docs/providers)"
    )
    assert not (tmp_path / "run").exists()


def test_an_unknown_backend_names_the_nearest_one(tmp_path):
    result, _ = run(tmp_path, "--model", "randm")
    assert result.exit_code == EXIT_PREFLIGHT
    line = one_line(result)
    assert line.startswith("Error: unknown model 'randm': neither a medvqa backend (constant, litellm, random,")
    assert line.endswith("did you mean 'random'?")
    assert not (tmp_path / "run").exists()


def test_an_unreachable_server_fails_at_once(tmp_path):
    url = closed_port_url()
    result, seconds = run(tmp_path, "--model", "hosted_vllm/test", "--api-base", url, "--max-retries", "6")
    assert result.exit_code == EXIT_PREFLIGHT and seconds < 5
    line = one_line(result)
    port = url.split(":")[2].split("/")[0]
    assert line == (
        f"Error: preflight request to hosted_vllm/test at {url} failed: cannot connect to the "
        f"server (127.0.0.1:{port}: Connection refused)"
    )
    assert read_records(tmp_path / "run") == []


def test_a_dead_port_ends_the_command_in_seconds_naming_the_address(tmp_path):
    """Observed: 16.5 s to learn that nothing listens, and a message holding aiohttp's
    `ssl:<ssl.SSLContext object at 0x…>`. A TCP connection settles it before any request."""
    import subprocess
    import sys

    url = closed_port_url()
    argv = [
        sys.executable,
        "-m",
        "medvqa.cli",
        "run",
        "jmed48k",
        "--sample",
        "--model",
        "hosted_vllm/test",
        "--api-base",
        url,
        "--run-dir",
        str(tmp_path / "run"),
    ]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    # the first command on a new cache folder imports litellm once (~5 s) to cache what it knows of
    # model names; the second shows what a dead port itself costs
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    seconds = time.monotonic() - started
    assert first.stderr == done.stderr
    assert done.returncode == EXIT_PREFLIGHT, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: preflight request to hosted_vllm/test at {url} failed: cannot connect to the server "
        f"(127.0.0.1:{url.split(':')[2].split('/')[0]}: Connection refused)"
    ]
    assert seconds < 10  # the interpreter's start and the imports: no request, no wait for a connection


def test_no_memory_address_reaches_a_preflight_message():
    from medvqa.core.inference.preflight import explain_failure

    exc = ConnectionError(
        "Cannot connect to host 10.0.0.7:8000 ssl:<ssl.SSLContext object at 0x7f3c5aef34a0> "
        "[Connect call failed ('10.0.0.7', 8000)]"
    )
    line = explain_failure(
        None, "hosted_vllm/m at http://10.0.0.7:8000/v1", {"model": "hosted_vllm/m"}, "connection", exc, 1
    )
    assert line == (
        "preflight request to hosted_vllm/m at http://10.0.0.7:8000/v1 failed: cannot connect to the "
        "server (ConnectionError: Cannot connect to host 10.0.0.7:8000 [Connect call failed "
        "('10.0.0.7', 8000)])"
    )


def test_missing_credentials_name_the_variable_and_send_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer() as server:
        result, seconds = run(tmp_path, "--model", "openai/test", "--api-base", server.url)
        assert sum(server.counts.values()) == 0
    assert result.exit_code == EXIT_PREFLIGHT and seconds < 5
    assert (
        "the request could not be sent (missing credentials or settings); set OPENAI_API_KEY in the "
        "environment" in one_line(result)
    )


def test_refused_credentials_stop_the_run_after_one_request(tmp_path, monkeypatch):
    secret = "sk-medvqa-preflight-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with OpenAIServer(faults=Faults(auth_error=1.0)) as server:
        result, _ = run(tmp_path, "--model", "openai/test", "--api-base", server.url)
        assert dict(server.counts) == {content_key(PROBE_MESSAGES): 1}
    assert result.exit_code == EXIT_PREFLIGHT
    line = one_line(result)
    assert "the credentials were refused" in line and "AuthenticationError" in line and secret not in line
    assert read_records(tmp_path / "run") == []


def test_the_probe_carries_the_run_parameters_and_is_neither_recorded_nor_cached(tmp_path):
    with OpenAIServer(keep_bodies=True) as server:
        result, _ = run(tmp_path, "--model", "hosted_vllm/test", "--api-base", server.url, "--seed", "5", "--json")
        assert result.exit_code == 0, result.output
        probe = server.bodies[0]
        assert probe["messages"] == PROBE_MESSAGES
        assert (probe["temperature"], probe["seed"], probe["response_format"]) == (0, 5, {"type": "json_object"})
        assert server.counts[content_key(PROBE_MESSAGES)] == 1
        n = json.loads(result.stdout)["n_records"]
        assert sum(server.counts.values()) == n + 1
        # the same run again, on another run directory: every answer from the cache, so no preflight
        again = CliRunner().invoke(
            cli,
            [
                "run",
                "jmed48k",
                "--sample",
                "--run-dir",
                str(tmp_path / "again"),
                "--model",
                "hosted_vllm/test",
                "--api-base",
                server.url,
                "--seed",
                "5",
            ],
        )
        assert again.exit_code == 0 and f"(requested 0, from cache {n})" in again.output
        assert sum(server.counts.values()) == n + 1


def test_baselines_and_finished_runs_need_no_server(tmp_path):
    with OpenAIServer() as server:
        url = server.url
        args = ["--model", "hosted_vllm/test", "--api-base", url]
        assert run(tmp_path, *args)[0].exit_code == 0
    finished, _ = run(tmp_path, *args)  # the server is gone, but nothing is left to ask
    assert finished.exit_code == 0 and "requested 0" in finished.output
    for model in ("random", "constant:A"):
        result = CliRunner().invoke(
            cli, ["run", "jmed48k", "--sample", "--model", model, "--run-dir", str(tmp_path / model)]
        )
        assert result.exit_code == 0, result.output


def test_score_with_an_unreachable_extractor_exits_as_run_does(tmp_path, jmed_sample):
    """`score --extractor` asks a model as `run` does: an extractor server nothing listens on
    fails its preflight with the same one line and the same exit status 3 (it exited 1), and
    the run's records are as they were."""
    from medvqa.core.plugins import get_benchmark

    item = next(it for it in get_benchmark("jmed48k").load(jmed_sample, "sample") if not it.excluded)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"item_id": item.id, "response": "Perhaps the second one, or not."}) + "\n")
    imported = CliRunner().invoke(
        cli,
        [
            "import",
            "jmed48k",
            str(answers),
            "--data",
            str(jmed_sample),
            "--split",
            "sample",
            "--run-dir",
            str(tmp_path / "run"),
        ],
    )
    assert imported.exit_code == 0, imported.output
    before = read_records(tmp_path / "run")
    assert [r["status"] for r in before if r["item_id"] == item.id] == ["parse_failure"]
    url = closed_port_url()
    result = CliRunner().invoke(
        cli, ["score", str(tmp_path / "run"), "--extractor", "hosted_vllm/test", "--extractor-api-base", url]
    )
    assert result.exit_code == EXIT_PREFLIGHT, result.output
    port = url.split(":")[2].split("/")[0]
    assert one_line(result) == (
        f"Error: preflight request to hosted_vllm/test at {url} failed: cannot connect to the "
        f"server (127.0.0.1:{port}: Connection refused)"
    )
    assert read_records(tmp_path / "run") == before


UNREADABLE_USAGE = {"prompt_tokens": float("nan"), "completion_tokens": 5, "total_tokens": 5}


def test_an_answer_whose_usage_cannot_be_read_is_said_so_not_blamed_on_credentials(tmp_path):
    """A server whose every answer holds `prompt_tokens: NaN`: litellm cannot read the probe's
    answer. The preflight tries it 3 times (an unreadable answer may be transient), then says the
    server's answers could not be read, naming the field: not missing credentials, not litellm's
    traceback. Nothing is written."""
    with OpenAIServer(usage=UNREADABLE_USAGE) as server:
        result, _ = run(tmp_path, "--model", "hosted_vllm/test", "--api-base", server.url, "--retry-wait", "0.01")
        assert dict(server.counts) == {content_key(PROBE_MESSAGES): 3}
    assert result.exit_code == EXIT_PREFLIGHT
    assert one_line(result) == (
        f"Error: preflight request to hosted_vllm/test at {server.url} failed: the server's "
        "answers could not be read (APIConnectionError: Hosted_vllmException - Invalid "
        "response object: Usage.prompt_tokens: Input should be a finite number (after 3 tries))"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.slow  # a real process: litellm's import, seconds
def test_an_unreadable_answer_prints_one_line_and_no_warning(tmp_path):
    """The same in its own process, where Python's warnings reach stderr: the one line is all
    (litellm's copy of the NaN makes pydantic warn; medvqa says what went wrong instead)."""
    import subprocess
    import sys

    from tests.conftest import REPO

    with OpenAIServer(usage=UNREADABLE_USAGE) as server:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "medvqa.cli",
                "run",
                "jmed48k",
                "--sample",
                "--model",
                "hosted_vllm/test",
                "--api-base",
                server.url,
                "--retry-wait",
                "0.01",
                "--run-dir",
                str(tmp_path / "run"),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            env={**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache")},
            timeout=120,
        )
    assert result.returncode == EXIT_PREFLIGHT and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: preflight request to ")
    assert "the server's answers could not be read" in result.stderr

"""`medvqa eval SET`: an eval set of models × benchmarks × languages in one resumable command,
against local test servers: killed midway and resumed, it holds the records an uninterrupted
set holds, and a second run sends nothing; a failing experiment does not stop the others; a bad
set is one error naming the file, the entry and the key, before anything runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.run.store import read_records
from tests.conftest import REPO, shared_data, study_records
from tests.openai_server import OpenAIServer

COMPARED = ("response", "error", "predicted", "status", "correct")
# IgakuQA 116-A, its first 4 items, in Japanese and English (C+Q); WorldMedQA-V Japan, 3 items,
# local and English (its default condition, C+Q): 14 requests per model
PER_MODEL = 4 + 4 + 3 + 3


def models_toml(servers: list[OpenAIServer]) -> str:
    """An eval set's models: one test server each, named m0, m1, ..."""
    return "".join(
        f'[[models]]\nmodel = "hosted_vllm/test"\nname = "m{i}"\n'
        f'options = {{ api_base = "{s.url}", concurrency = 2 }}\n'
        for i, s in enumerate(servers)
    )


def kill_midway(set_file: Path, env: dict, servers: list[OpenAIServer], after: int) -> int:
    """Start `medvqa eval SET` in a process, SIGKILL it once the servers have answered `after`
    requests, and return how many they had answered by then."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "medvqa.cli", "eval", str(set_file)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and sent(servers) < after:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return sent(servers)


def write_set(path: Path, study: str, servers: list[OpenAIServer], *, extra_model: str = "") -> Path:
    models = models_toml(servers)
    path.write_text(
        f'study_dir = "{study}"\n{models}{extra_model}'
        f'[[benchmarks]]\nbenchmark = "igakuqa"\ndata = "{shared_data("igakuqa")}"\n'
        'select = { block = ["116A"] }\nlimit = 4\nlanguages = ["ja", "en"]\nconditions = "C+Q"\n'
        f'[[benchmarks]]\nbenchmark = "worldmedqa_v"\ndata = "{shared_data("worldmedqa-v-japan")}"\n'
        'limit = 3\nlanguages = ["local", "en"]\n',
        encoding="utf-8",
    )
    return path


def written(study: Path) -> bool:
    """Whether a run of the set has written a whole record line."""
    return any(b"\n" in p.read_bytes() for p in study.glob("*/*/records.jsonl"))


def sent(servers) -> int:
    return sum(sum(s.counts.values()) for s in servers)


@pytest.mark.slow
def test_a_set_killed_midway_resumes_to_the_records_of_an_uninterrupted_set_then_sends_nothing(tmp_path, monkeypatch):
    servers = [OpenAIServer(latency=0.15).start() for _ in range(3)]
    try:
        killed = write_set(tmp_path / "killed.toml", "killed", servers)
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache-killed")}
        before = kill_midway(killed, env, servers, 12)
        assert 12 <= before < 3 * PER_MODEL  # killed midway
        partial = study_records(tmp_path / "killed", COMPARED)
        assert 0 < len(partial) < 3 * PER_MODEL

        monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache-killed"))
        planned = CliRunner().invoke(cli, ["eval", str(killed), "--dry-run", "--json"])
        assert planned.exit_code == 0, planned.output
        plan = json.loads(planned.stdout)["total"]
        assert sent(servers) == before and plan["recorded"] == len(partial) and plan["pairs"] == 3 * PER_MODEL
        resumed = CliRunner().invoke(cli, ["eval", str(killed), "--json"])
        assert resumed.exit_code == 0, resumed.output
        doc = json.loads(resumed.stdout)
        assert len(doc["experiments"]) == 12 and doc["failed"] == []
        asked = [e["requested"] for e in doc["experiments"]]
        # what the kill left unanswered, and one preflight request per experiment that asks anything
        assert sum(asked) + sum(n > 0 for n in asked) == sent(servers) - before
        assert sum(asked) >= 3 * PER_MODEL - len(partial)
        # the plan made before the resume counted exactly what the resume then sent
        assert (plan["requests"], plan["preflight"]) == (sum(asked), sum(n > 0 for n in asked))
        assert len(doc["compare"]["table"]) > 0 and (tmp_path / "killed" / "compare.md").is_file()

        monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache-whole"))
        whole = CliRunner().invoke(cli, ["eval", str(write_set(tmp_path / "whole.toml", "whole", servers)), "--json"])
        assert whole.exit_code == 0, whole.output
        assert study_records(tmp_path / "killed", COMPARED) == study_records(tmp_path / "whole", COMPARED)
        assert len(study_records(tmp_path / "whole", COMPARED)) == 3 * PER_MODEL

        monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache-killed"))
        before = sent(servers)
        again = CliRunner().invoke(cli, ["eval", str(killed), "--json"])
        assert again.exit_code == 0, again.output
        assert sent(servers) == before  # nothing asked: every experiment is complete
        assert all(e["requested"] == 0 for e in json.loads(again.stdout)["experiments"])
    finally:
        for s in servers:
            s.stop()


@pytest.mark.slow
def test_a_background_set_stops_on_kill_int_with_status_130_as_run_does(tmp_path):
    """`medvqa eval SET &` then `kill -INT`: a shell starts a background job with SIGINT ignored
    (as the preexec below does), so the set went on to its end; it stops, says how to resume,
    and exits 130, and what it wrote is kept."""
    with OpenAIServer(latency=0.3) as server:
        path = write_set(tmp_path / "set.toml", "study", [server])
        env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "medvqa.cli", "eval", str(path)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        # once a record is written (requests sent are not yet records: under load the first four can
        # all still be in flight)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not written(tmp_path / "study") and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err[-3000:]
        assert (
            err.strip().splitlines()[-1]
            == f"interrupted; every record written is kept: resume with: medvqa eval {path}"
        )
        assert 0 < len(study_records(tmp_path / "study", COMPARED)) < PER_MODEL  # stopped midway, its records kept


def test_a_failing_experiment_does_not_stop_the_others_and_is_named(tmp_path):
    with OpenAIServer() as server:
        path = tmp_path / "set.toml"
        path.write_text(
            f'study_dir = "study"\n'
            f'[[models]]\nmodel = "hosted_vllm/test"\nname = "up"\noptions = {{ api_base = "{server.url}" }}\n'
            '[[models]]\nmodel = "hosted_vllm/test"\nname = "down"\n'
            'options = { api_base = "http://127.0.0.1:9/v1", timeout = 2, max_retries = 0 }\n'
            f'[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\nconditions = "C+Q"\n',
            encoding="utf-8",
        )
        result = CliRunner().invoke(cli, ["eval", str(path)])
    assert result.exit_code == 4, result.output
    assert "experiments: 1 of 2 done, 1 failed:" in result.output
    assert "jmed48k × down" in result.output and "cannot connect to the server" in result.output
    assert len(read_records(tmp_path / "study" / "jmed48k" / "up")) == 17


def test_eval_set_in_python_does_what_the_command_does(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = medvqa.eval_set(
        {
            "study_dir": "s",
            "models": [{"model": "constant:A"}, {"model": "random", "name": "r"}],
            "benchmarks": [{"benchmark": "jmed48k", "sample": True, "conditions": ["C+Q"]}],
        },
        progress=False,
    )
    assert [e["model"] for e in doc["experiments"]] == ["constant:A", "r"] and doc["failed"] == [], [
        e["failure"] for e in doc["experiments"]
    ]
    assert {r["model"] for r in doc["compare"]["table"]} == {"constant:A", "r"}
    assert (tmp_path / "s" / "jmed48k" / "constant_A" / "records.jsonl").is_file()


BAD = [
    ("models = 3", "the set", None, "study_dir: Field required"),
    (
        'study_dir = "s"\nmodel = "x"\n[[models]]\nmodel = "random"\n'
        '[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n',
        "the set",
        None,
        "model: not a key of an eval set",
    ),
    (
        'study_dir = "s"\n[[models]]\nmodel = "random"\ntemperature = 1\n'
        '[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n',
        "models",
        "models[0] (random)",
        "temperature: not a key of this entry",
    ),
    (
        'study_dir = "s"\n[[models]]\nmodel = "hosted_vllm/m"\noptions = { temprature = 1 }\n'
        '[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n',
        "models",
        "models[0] (hosted_vllm/m)",
        "options.temprature: not an option of litellm models",
    ),
    (
        'study_dir = "s"\n[[models]]\nmodel = "random"\n[[benchmarks]]\nbenchmark = "igakuqa"\ndata = "."\n'
        'languages = ["fr"]\n',
        "benchmarks",
        "benchmarks[0] (igakuqa)",
        "languages: 'fr' is not one of igakuqa's (ja, en)",
    ),
    (
        'study_dir = "s"\n[[models]]\nmodel = "random"\n[[benchmarks]]\nbenchmark = "igakuqa"\nsample = true\n',
        "benchmarks",
        "benchmarks[0] (igakuqa)",
        "sample: igakuqa has no split 'sample' (it has full); give its data",
    ),
    (
        'study_dir = "s"\n[[models]]\nmodel = "random"\n[[benchmarks]]\nbenchmark = "nonesuch"\nsample = true\n',
        "benchmarks",
        "benchmarks[0] (nonesuch)",
        "benchmark: ",
    ),
    (
        'study_dir = "s"\n[[models]]\nmodel = "random"\n[[benchmarks]]\nbenchmark = "jmed48k"\ndata = "missing"\n',
        "benchmarks",
        "benchmarks[0] (jmed48k)",
        "data: ",
    ),
    (
        'study_dir = "s"\n[[models]]\nmodel = "random"\n[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n'
        'conditions = "C+X"\n',
        "benchmarks",
        "benchmarks[0] (jmed48k)",
        "conditions: ",
    ),
]


@pytest.mark.parametrize("text, section, entry, message", BAD)
def test_a_bad_set_is_one_error_naming_the_file_the_entry_and_the_key_and_nothing_runs(
    tmp_path, text, section, entry, message
):
    path = tmp_path / "set.toml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", str(path)])
    assert result.exit_code == 1, result.output
    line = " ".join(result.output.split())
    assert f"{path}: " in line and message in line
    if entry:
        assert f"record {entry}: " in line
    assert not (tmp_path / "s").exists()


def test_yaml_and_json_sets_read_as_toml_does(tmp_path):
    from medvqa.core.run.evalset import read_set

    doc = {
        "study_dir": "s",
        "models": [{"model": "random"}],
        "benchmarks": [{"benchmark": "igakuqa", "data": ".", "languages": ["ja", "en"]}],
    }
    (tmp_path / "set.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "set.yaml").write_text(
        "study_dir: s\nmodels:\n  - model: random\nbenchmarks:\n"
        "  - {benchmark: igakuqa, data: ., languages: [ja, en]}\n",
        encoding="utf-8",
    )
    dirs = [
        [e.run_dir.relative_to(tmp_path) for e in read_set(tmp_path / name).experiments]
        for name in ("set.json", "set.yaml")
    ]
    assert dirs[0] == dirs[1] == [Path("s/igakuqa/random"), Path("s/igakuqa-en/random")]


@pytest.mark.slow
def test_a_set_of_two_baselines_on_jmed48k_and_mir_finishes_with_progress_on_ten_times_in_ten(tmp_path):
    # the two baselines run at the same time (a lane each), and both read the MIR workbooks first
    # when they reach mir: each process imports the Excel engine while two threads wait on it
    path = tmp_path / "set.toml"
    path.write_text(
        'study_dir = "study"\n[[models]]\nmodel = "random"\n[[models]]\nmodel = "constant:A"\n'
        f'[[benchmarks]]\nbenchmark = "jmed48k"\ndata = "{shared_data("jmed48k-sample")}"\n'
        f'[[benchmarks]]\nbenchmark = "mir"\ndata = "{shared_data("mir")}"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache")}
    for attempt in range(10):
        done = subprocess.run(
            [sys.executable, "-m", "medvqa.cli", "eval", str(path)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (attempt, done.stdout[-2000:], done.stderr[-2000:])
        assert "experiments: 4 of 4 done" in done.stdout and "[4/4]" in done.stderr  # the progress lines
    # MIR: 210 questions a year, 25 of them with an image (C+Q and C+Q+I), less 2026's 7 annulled
    # (one an image question): 2 * (210 + 25) - (7 + 1)
    assert len(read_records(tmp_path / "study" / "mir" / "constant_A")) == 462
    # the set's compare: each model's jmed48k cells in Japanese, its mir cells in Spanish
    panels = json.loads((tmp_path / "study" / "compare.json").read_text(encoding="utf-8"))["panels"]
    assert {(p["benchmark"], c["model"], c["language"]) for p in panels for c in p["cells"]} == {
        (b, m, lang) for b, lang in (("jmed48k", "ja"), ("mir", "es")) for m in ("random", "constant:A")
    }

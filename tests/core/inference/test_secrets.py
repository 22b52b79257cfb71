import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from medvqa.core.inference import secrets
from medvqa.core.inference.preflight import PROBE_MESSAGES
from medvqa.core.inference.secrets import MASK, Scrubber, scrub
from medvqa.core.run.store import read_manifest, read_records
from tests.conftest import REPO
from tests.openai_server import Faults, OpenAIServer, ServerProcess, content_key


def test_scrub_removes_secret_environment_values_and_bearer_tokens(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-0123456789abcdef")
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijkl")
    monkeypatch.setenv("HOME_DIR_NAME", "ant-0123456789")  # not secret-looking: left alone
    text = (
        "401: Incorrect API key provided: ant-0123456789abcdef; token hf_abcdefghijkl; "
        "header Authorization: Bearer xyz.123-abc; key sk-proj-AAAABBBBCCCCDDDD"
    )
    out = scrub(text)
    for secret in ("ant-0123456789abcdef", "hf_abcdefghijkl", "xyz.123-abc", "sk-proj-AAAABBBBCCCCDDDD"):
        assert secret not in out
    assert out.count(MASK) == 4
    assert scrub("nothing to hide") == "nothing to hide"


def test_url_user_information_basic_auth_and_remembered_credentials_are_scrubbed(monkeypatch):
    monkeypatch.setattr(secrets, "remembered", set())
    text = (
        "POST http://alice:pa55-w0rd-123@gpu1:8000/v1 failed; proxy https://tok-abcdef123456@proxy/x; "
        "Authorization: Basic YWxpY2U6cGE1NS13MHJk; echo lab-value-42x"
    )
    out = scrub(text)
    assert "pa55-w0rd-123" not in out and "alice" not in out and "tok-abcdef123456" not in out
    assert "http://***@gpu1:8000/v1" in out and "https://***@proxy/x" in out and "YWxpY2U6" not in out
    assert "lab-value-42x" in out  # not known as a credential yet
    secrets.remember("lab-value-42x")
    secrets.remember("short")  # a credential however short: scrubbed where it stands alone, not inside words
    assert "lab-value-42x" not in scrub(text) and scrub("a short answer, shortly") == f"a {MASK} answer, shortly"
    secrets.remember_url("http://bob:hunter2-hunter2@host/v1")
    assert scrub("quoted hunter2-hunter2 back") == f"quoted {MASK} back"
    assert secrets.redact_url("http://bob:hunter2-hunter2@host:8000/v1") == "http://host:8000/v1"
    assert Scrubber().data({"a": ["http://u:p@h/v1", 3, None]}) == {"a": ["http://***@h/v1", 3, None]}
    prose = "By basic physiology the bearer heterozygote is unaffected; risk-assessment-procedure applies."
    assert scrub(prose) == prose  # answers are scrubbed too: ordinary words stay


def _files_and_output(root: Path, *outputs: str) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file()) + "".join(outputs).encode()


def _seed_sparing_the_preflight(faults: Faults) -> int:
    """A server seed whose faults leave the preflight request alone (it would end the run)."""
    key = content_key(PROBE_MESSAGES)
    return next(seed for seed in range(100) if faults.pick(random.Random(f"{seed}:{key}:0")) != "auth_error")


@pytest.mark.slow  # real processes or servers: seconds each
def test_a_credential_the_server_quotes_back_never_reaches_a_file(tmp_path, monkeypatch):
    """The key is named in the model list by a variable whose name looks like nothing secret;
    the server quotes it back in answers and in 401 errors (of requests, and of the preflight)."""
    monkeypatch.setattr(secrets, "remembered", set())
    key = "pool-credential-8f3a9c1d2e7b"
    models = tmp_path / "models.yaml"
    faults = Faults(echo_key=0.5, auth_error=0.25)
    seed = str(_seed_sparing_the_preflight(faults))
    with (
        ServerProcess("--echo-key", "0.5", "--auth-error", "0.25", "--seed", seed) as quoting,
        ServerProcess("--auth-error", "1.0") as refusing,
    ):
        outputs = {}
        for name, server in (("quoting", quoting), ("refusing", refusing)):
            env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / f"cache-{name}"), "GPU_POOL_ACCESS": key}
            models.write_text(
                "model_list:\n  - model_name: pool\n    litellm_params: {model: hosted_vllm/test, "
                f"api_base: '{server.url}', api_key: os.environ/GPU_POOL_ACCESS}}\n"
            )
            outputs[name] = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "medvqa.cli",
                    "run",
                    "jmed48k",
                    "--sample",
                    "--model",
                    "pool",
                    "--model-list",
                    str(models),
                    "--run-dir",
                    str(tmp_path / name),
                    "--max-retries",
                    "0",
                    "--max-error-rate",
                    "1",
                ],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
    assert outputs["quoting"].returncode == 0, outputs["quoting"].stderr[-3000:]
    records = read_records(tmp_path / "quoting")
    echoed = [r["response"] for r in records if "authorised by" in (r["response"] or "")]
    assert echoed and all(text.endswith(f"(authorised by {MASK})") for text in echoed)
    assert any(f"Incorrect API key provided: {MASK}" in (r["error"] or "") for r in records)
    refused = outputs["refusing"]  # the preflight fails with one line
    assert refused.returncode == 3 and f"Incorrect API key provided: {MASK}" in refused.stderr
    texts = [out for result in outputs.values() for out in (result.stdout, result.stderr)]
    assert key.encode() not in _files_and_output(tmp_path, *texts)  # records, manifests, caches, output


@pytest.mark.slow  # real processes or servers: seconds each
def test_a_key_in_the_api_base_url_is_written_nowhere(tmp_path):
    key = "urlpass-5c6d7e8f9a0b"
    env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / "cache")}
    with ServerProcess() as server:
        url = server.url.replace("http://", f"http://user:{key}@")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "medvqa.cli",
                "run",
                "jmed48k",
                "--sample",
                "--limit",
                "3",
                "--model",
                "hosted_vllm/test",
                "--api-base",
                url,
                "--run-dir",
                str(tmp_path / "run"),
                "--max-retries",
                "0",
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    # litellm's HTTP client refuses credentials in a URL: the preflight says so, with the URL redacted
    assert result.returncode == 3 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert server.url.replace("http://", "") in result.stderr
    assert not (tmp_path / "run").exists()  # a run that failed its preflight writes nothing
    assert key.encode() not in _files_and_output(tmp_path, result.stdout, result.stderr)


def test_header_and_query_values_are_masked_by_position():
    assert (
        secrets.redact_url("http://u:pw@h:8000/v1?key=abc&api-version=2024-10-21")
        == f"http://h:8000/v1?key={MASK}&api-version={MASK}"
    )
    assert secrets.redact_params(
        {"extra_headers": {"api-key": "k", "X-Title": "mine"}, "temperature": 0, "extra_query": {"sig": "s"}}
    ) == {"extra_headers": {"api-key": MASK, "X-Title": MASK}, "temperature": 0, "extra_query": {"sig": MASK}}
    line = [
        "medvqa",
        "run",
        "--param",
        'extra_headers={"Authorization": "Bearer t0k"}',
        "--param=top_p=0.5",
        '--param=extra_query={"key": "q"}',
        "--param",
        'logit_bias={"1": 2}',
    ]
    assert secrets.redact_command_line(line) == [
        "medvqa",
        "run",
        "--param",
        f'extra_headers={{"Authorization": "{MASK}"}}',
        "--param=top_p=0.5",
        f'--param=extra_query={{"key": "{MASK}"}}',
        "--param",
        'logit_bias={"1": 2}',
    ]
    # and in any text: the query values of every URL, whatever they look like
    assert (
        scrub("404 for url http://h/v1?key=abc/chat/completions, see docs")
        == f"404 for url http://h/v1?key={MASK}, see docs"
    )


def test_the_resume_line_after_ctrl_c_shows_no_credential(monkeypatch):
    from medvqa.core.run.options import resume_line

    monkeypatch.setattr(secrets, "remembered", set())
    line = [
        "medvqa",
        "run",
        "jmed48k",
        "--param",
        'extra_headers={"Authorization": "Bearer tok"}',
        "--api-base",
        "http://h/v1?key=k3y",
    ]
    out = resume_line(7, line, Path("runs/x"))
    assert out == (
        f"7 records saved; resume with: medvqa run jmed48k --param "
        f"'extra_headers={{\"Authorization\": \"{MASK}\"}}' --api-base 'http://h/v1?key={MASK}' "
        "--run-dir runs/x"
    )


def test_a_header_and_a_url_key_given_to_a_run_are_masked_in_its_manifest(tmp_path, monkeypatch):
    """A run's manifest (parameters, settings, command line) holds header and query values only
    masked, whatever their length; the request key still tells them apart."""
    from medvqa.core import plugins
    from medvqa.core.conditions import Condition
    from medvqa.core.inference.litellm_backend import LiteLLMBackend
    from medvqa.core.run.runner import RunSpec, build_manifest
    from medvqa.core.run.store import RunStore

    monkeypatch.setattr(secrets, "remembered", set())
    url = "http://127.0.0.1:9/v1?key=qk7"
    backend = LiteLLMBackend("hosted_vllm/test", api_base=url, params={"extra_headers": {"api-key": "h9"}})
    bench = plugins.get_benchmark("jmed48k")
    items = bench.load(None, "sample")[:2]
    line = ["medvqa", "run", "jmed48k", "--api-base", url, "--param", 'extra_headers={"api-key": "h9"}']
    spec = RunSpec(
        benchmark=bench,
        items=items,
        backend=backend,
        conditions=(Condition.CQ,),
        run_dir=tmp_path / "run",
        command_line=line,
        extra_manifest={"backend": backend.settings},
    )
    with RunStore(tmp_path / "run") as store:
        store.open(build_manifest(spec))
        store.append(
            {"item_id": items[0].id, "condition": "C+Q", "status": "answered", "response": "key qk7, header h9"}
        )
    manifest = read_manifest(tmp_path / "run")
    assert manifest["params"]["extra_headers"] == {"api-key": MASK}
    assert manifest["backend"]["api_base"] == f"http://127.0.0.1:9/v1?key={MASK}"
    assert manifest["command_line"] == [
        "medvqa",
        "run",
        "jmed48k",
        "--api-base",
        f"http://127.0.0.1:9/v1?key={MASK}",
        "--param",
        f'extra_headers={{"api-key": "{MASK}"}}',
    ]
    assert read_records(tmp_path / "run")[0]["response"] == f"key {MASK}, header {MASK}"
    assert b"qk7" not in _files_and_output(tmp_path) and b"h9" not in _files_and_output(tmp_path)


def test_a_short_model_list_key_quoted_back_reaches_no_record_and_no_cache(tmp_path, monkeypatch):
    import sqlite3

    from medvqa.core.run.options import RunOptions, run

    monkeypatch.setattr(secrets, "remembered", set())
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPU_POOL_ACCESS", "k3y-5")
    with OpenAIServer(faults=Faults(echo_key=1.0)) as server:
        models = tmp_path / "models.yaml"
        models.write_text(
            "model_list:\n  - model_name: pool\n    litellm_params: {model: hosted_vllm/test, "
            f"api_base: '{server.url}', api_key: os.environ/GPU_POOL_ACCESS}}\n"
        )
        run(
            RunOptions(
                benchmark="jmed48k",
                model="pool",
                sample=True,
                conditions="C+Q",
                run_dir=str(tmp_path / "run"),
                backend_options={"model_list": str(models)},
            ),
            progress=False,
        )
    records = read_records(tmp_path / "run")
    assert len(records) == 17 and all(r["response"].endswith(f"(authorised by {MASK})") for r in records)
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite3") as db:
        cached = [text for (text,) in db.execute("SELECT text FROM responses")]
    assert len(cached) == 17 and all(f"(authorised by {MASK})" in text for text in cached)
    assert b"k3y-5" not in _files_and_output(tmp_path)


def test_header_and_credential_values_given_with_dash_m_are_masked_in_a_command_line():
    """`-M` (`--model-option`) takes backend options as KEY=VALUE: header and query values, and
    values of credential-named keys, are masked by position as `--param`'s are, in every spelling."""
    from medvqa.core.inference.secrets import redact_command_line

    line = [
        "medvqa",
        "run",
        "jmed48k",
        "-M",
        'params.extra_headers={"X-Trace": "t1", "api-key": "k2"}',
        '-Mparams={"extra_query": {"sig": "q3"}, "top_p": 0.9}',
        "--model-option=token=v4",
        "--model-option",
        "params.api_key=v5",
        "-M",
        "temperature=0",
        "-M",
        "api_base=http://h/v1",
    ]
    assert redact_command_line(line) == [
        "medvqa",
        "run",
        "jmed48k",
        "-M",
        f'params.extra_headers={{"X-Trace": "{MASK}", "api-key": "{MASK}"}}',
        f'-Mparams={{"extra_query": {{"sig": "{MASK}"}}, "top_p": 0.9}}',
        f"--model-option=token={MASK}",
        "--model-option",
        f"params.api_key={MASK}",
        "-M",
        "temperature=0",
        "-M",
        "api_base=http://h/v1",
    ]


NESTED_SECRET = "sk-gateway-nested-0123456789"


def test_a_credential_nested_at_any_depth_of_params_is_refused_naming_where_it_stands(tmp_path, monkeypatch):
    """Gateways take a key inside the body (`extra_body`): a credential-named entry anywhere in
    the parameters, under mappings and lists, is refused before anything is written, and the
    message names its path, never its value. A headers mapping at depth keeps its values (sent,
    masked by position)."""
    from click.testing import CliRunner

    from medvqa.cli.main import cli

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    config = tmp_path / "model.yaml"
    config.write_text(
        "params:\n  extra_body:\n    routes:\n      - {name: a}\n"
        f"      - {{name: b, auth: {{bearer_token: {NESTED_SECRET}}}}}\n",
        encoding="utf-8",
    )
    cases = [
        (
            ["--param", f'extra_body={{"gateway": {{"api_key": "{NESTED_SECRET}"}}}}'],
            1,
            "--param extra_body.gateway.api_key: secrets are read from the environment",
        ),
        (
            ["-M", f'params.extra_body={{"gateway": {{"api_key": "{NESTED_SECRET}"}}}}'],
            2,
            "params.extra_body.gateway.api_key names a credential",
        ),
        (["--model-config", str(config)], 1, f"{config}: params: params.extra_body.routes[1].auth names a credential"),
    ]
    for args, status, message in cases:
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "jmed48k",
                "--sample",
                "--model",
                "hosted_vllm/test",
                "--api-base",
                "http://127.0.0.1:9/v1",
                "--run-dir",
                str(tmp_path / "run"),
                *args,
            ],
        )
        assert result.exit_code == status and message in " ".join(result.output.split()), (args, result.output)
        assert NESTED_SECRET not in result.output and isinstance(result.exception, SystemExit)
    assert not (tmp_path / "run").exists()
    headers_at_depth = {"extra_body": {"gateway": {"extra_headers": {"X-Team": "t"}}}}
    assert [(p, by_name) for p, _, by_name in secrets.credential_entries(headers_at_depth)] == [
        ("extra_body.gateway.extra_headers.X-Team", False)
    ]


def test_a_credential_nested_in_params_is_masked_in_the_manifest_and_command_line(tmp_path, monkeypatch):
    """What a run writes about itself masks a credential at any depth of its parameters, as it
    masks a top-level one: a backend of a plugin may carry one that medvqa never checked."""
    from medvqa.core import plugins
    from medvqa.core.conditions import Condition
    from medvqa.core.inference.base import Backend
    from medvqa.core.run.runner import RunSpec, build_manifest
    from medvqa.core.run.store import RunStore

    class Gateway(Backend):
        model = "gateway/test"
        params = {
            "temperature": 0,
            "extra_body": {
                "routes": [{"name": "a"}, {"auth": {"token": NESTED_SECRET}}],
                "meta": {"extra_headers": {"X-Team": "t9"}},
            },
        }

        def generate(self, requests):
            return iter(())

    monkeypatch.setattr(secrets, "remembered", set())
    bench = plugins.get_benchmark("jmed48k")
    items = bench.load(None, "sample")[:1]
    line = [
        "medvqa",
        "run",
        "jmed48k",
        "--param",
        f'extra_body={{"auth": {{"token": "{NESTED_SECRET}"}}}}',
        "-M",
        f'params={{"extra_body": {{"x": [{{"api_key": "{NESTED_SECRET}"}}]}}}}',
    ]
    spec = RunSpec(
        benchmark=bench,
        items=items,
        backend=Gateway(),
        conditions=(Condition.CQ,),
        run_dir=tmp_path / "run",
        command_line=line,
    )
    with RunStore(tmp_path / "run") as store:
        store.open(build_manifest(spec))
        store.append({"item_id": items[0].id, "condition": "C+Q", "status": "answered", "response": "a"})
    manifest = read_manifest(tmp_path / "run")
    assert manifest["params"] == {
        "temperature": 0,
        "extra_body": {"routes": [{"name": "a"}, {"auth": MASK}], "meta": {"extra_headers": {"X-Team": MASK}}},
    }
    assert manifest["command_line"][3:] == [
        "--param",
        f'extra_body={{"auth": "{MASK}"}}',
        "-M",
        f'params={{"extra_body": {{"x": [{{"api_key": "{MASK}"}}]}}}}',
    ]
    assert NESTED_SECRET.encode() not in _files_and_output(tmp_path)

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
from tests.openai_server import Faults, ServerProcess, content_key


def test_scrub_removes_secret_environment_values_and_bearer_tokens(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-0123456789abcdef")
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijkl")
    monkeypatch.setenv("HOME_DIR_NAME", "ant-0123456789")  # not secret-looking: left alone
    text = ("401: Incorrect API key provided: ant-0123456789abcdef; token hf_abcdefghijkl; "
            "header Authorization: Bearer xyz.123-abc; key sk-proj-AAAABBBBCCCCDDDD")
    out = scrub(text)
    for secret in ("ant-0123456789abcdef", "hf_abcdefghijkl", "xyz.123-abc", "sk-proj-AAAABBBBCCCCDDDD"):
        assert secret not in out
    assert out.count(MASK) == 4
    assert scrub("nothing to hide") == "nothing to hide"


def test_url_user_information_basic_auth_and_remembered_credentials_are_scrubbed(monkeypatch):
    monkeypatch.setattr(secrets, "_given", set())
    text = ("POST http://alice:pa55-w0rd-123@gpu1:8000/v1 failed; proxy https://tok-abcdef123456@proxy/x; "
            "Authorization: Basic YWxpY2U6cGE1NS13MHJk; echo lab-value-42x")
    out = scrub(text)
    assert "pa55-w0rd-123" not in out and "alice" not in out and "tok-abcdef123456" not in out
    assert "http://***@gpu1:8000/v1" in out and "https://***@proxy/x" in out and "YWxpY2U6" not in out
    assert "lab-value-42x" in out  # not known as a credential yet
    secrets.remember("lab-value-42x")
    secrets.remember("short")  # too short to scrub without mangling ordinary text
    assert "lab-value-42x" not in scrub(text) and scrub("a short answer") == "a short answer"
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
    monkeypatch.setattr(secrets, "_given", set())
    key = "pool-credential-8f3a9c1d2e7b"
    models = tmp_path / "models.yaml"
    faults = Faults(echo_key=0.5, auth_error=0.25)
    seed = str(_seed_sparing_the_preflight(faults))
    with ServerProcess("--echo-key", "0.5", "--auth-error", "0.25", "--seed", seed) as quoting, \
            ServerProcess("--auth-error", "1.0") as refusing:
        outputs = {}
        for name, server in (("quoting", quoting), ("refusing", refusing)):
            env = {**os.environ, "MEDVQA_CACHE_DIR": str(tmp_path / f"cache-{name}"), "GPU_POOL_ACCESS": key}
            models.write_text("model_list:\n  - model_name: pool\n    litellm_params: {model: hosted_vllm/test, "
                              f"api_base: '{server.url}', api_key: os.environ/GPU_POOL_ACCESS}}\n")
            outputs[name] = subprocess.run([sys.executable, "-m", "medvqa.cli", "run", "jmed48k", "--sample", "--model",
                                            "pool", "--model-list", str(models), "--run-dir", str(tmp_path / name),
                                            "--max-retries", "0", "--max-error-rate", "1"],
                                           cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
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
        result = subprocess.run([sys.executable, "-m", "medvqa.cli", "run", "jmed48k", "--sample", "--limit", "3",
                                 "--model", "hosted_vllm/test", "--api-base", url, "--run-dir", str(tmp_path / "run"),
                                 "--max-retries", "0"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    # litellm's HTTP client refuses credentials in a URL: the preflight says so, with the URL redacted
    assert result.returncode == 3 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert server.url.replace("http://", "") in result.stderr
    assert not (tmp_path / "run").exists()  # a run that failed its preflight writes nothing
    assert key.encode() not in _files_and_output(tmp_path, result.stdout, result.stderr)

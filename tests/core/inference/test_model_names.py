"""What is checked of a litellm model string before litellm is imported: a misspelt provider
or backend (once litellm's names are remembered) and a provider key missing from the
environment end the run with the same one line, without importing litellm."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from medvqa.core import plugins
from medvqa.core.inference.litellm_backend import import_litellm
from medvqa.core.inference.model_names import PROVIDER_KEYS, litellm_version, names_path, remember_names
from medvqa.core.inference.preflight import PreflightError, check_provider
from tests.conftest import REPO

ALL_KEYS = sorted({v for variables in PROVIDER_KEYS.values() for v in variables})


@pytest.fixture
def remembered(monkeypatch, tmp_path):
    """litellm's names remembered in a fresh cache folder (as the first run's import leaves them)."""
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    remember_names(import_litellm())
    return tmp_path / "cache"


def test_the_key_table_is_what_litellm_checks(monkeypatch):
    litellm = import_litellm()
    for provider, variables in PROVIDER_KEYS.items():
        for name in ALL_KEYS:
            monkeypatch.delenv(name, raising=False)
        found = litellm.validate_environment(model=f"{provider}/some-model")
        assert not found["keys_in_environment"] and set(found["missing_keys"]) <= set(variables), provider
        for name in variables:  # any one of them will do
            monkeypatch.setenv(name, "k")
            assert litellm.validate_environment(model=f"{provider}/some-model")["keys_in_environment"], (provider, name)
            monkeypatch.delenv(name)


def test_remembered_names_are_litellms_for_this_version(remembered):
    litellm = import_litellm()
    path = names_path(litellm_version())
    names = json.loads(path.read_text(encoding="utf-8"))
    assert path == remembered / f"litellm-{litellm_version()}.json"
    assert names["litellm"] == litellm_version()
    assert set(names["providers"]) == {str(getattr(p, "value", p)) for p in litellm.provider_list}
    assert "openai" in names["providers"] and "gpt-5" in names["models"]


def test_a_misspelling_is_refused_with_litellms_own_message(remembered, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    litellm = import_litellm()
    for model, nearest in (("opnai/gpt-5", "openai"), ("randm", "random")):
        with pytest.raises(PreflightError) as before:
            plugins.check_backend(model)
        with pytest.raises(PreflightError) as after:
            check_provider(litellm, model)
        assert str(before.value) == str(after.value) and f"did you mean {nearest!r}?" in str(before.value)
    # names litellm places are never refused here: a provider, a known model, a far-off prefix
    for model in ("openai/gpt-5", "gpt-5", "meta-llama/Llama-2-70b-chat-hf", "hosted_vllm/anything", "Qwen/Qwen9"):
        plugins.check_backend(model)


def test_without_remembered_names_only_the_key_is_checked_here(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "empty"))
    plugins.check_backend("opnai/gpt-5")  # litellm decides, once imported
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(
        PreflightError,
        match=r"^model openai/gpt-5: no openai credentials: set OPENAI_API_KEY in the "
        r"environment \(nothing was requested\)$",
    ):
        plugins.check_backend("openai/gpt-5")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(PreflightError, match="set GEMINI_API_KEY or GOOGLE_API_KEY"):
        plugins.check_backend("gemini/gemini-2.5-pro")
    # a server of one's own may take any key (the probe asks it); a model list is litellm's to check
    plugins.check_backend("openai/gpt-5", api_base=["http://127.0.0.1:9/v1"])
    plugins.check_backend("openai/gpt-5", model_list="models.yaml")
    plugins.check_backend("random")  # baselines check nothing


def python(code: str, env: dict) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_a_run_refused_before_the_import_never_imports_litellm(remembered, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ALL_KEYS} | {"MEDVQA_CACHE_DIR": str(remembered)}
    code = (
        "import sys, medvqa\n"
        "for model in ('opnai/gpt-5', 'randm', 'openai/gpt-5'):\n"
        "    try:\n"
        f"        medvqa.run('jmed48k', model, sample=True, run_dir={str(tmp_path / 'run')!r}, progress=False)\n"
        "    except medvqa.PreflightError as exc:\n"
        "        print(exc)\n"
        "print('litellm' in sys.modules)\n"
    )
    typo, backend, key, imported = python(code, env)
    assert typo.startswith("unknown model 'opnai/gpt-5': litellm knows no provider 'opnai'; did you mean 'openai'?")
    assert backend.startswith("unknown model 'randm': neither a medvqa backend") and backend.endswith("'random'?")
    assert key.startswith("model openai/gpt-5: no openai credentials: set OPENAI_API_KEY")
    assert imported == "False" and not (tmp_path / "run").exists()

"""Backend settings as data: `medvqa run -M KEY=VALUE` and `--model-config FILE` give the same
options as the flags (same request keys, so the same cache), checked against a typed options
model per backend kind, and never carry a credential into a run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.errors import UsageError
from medvqa.core.inference.backend_options import parse_model_options, read_model_config, resolve
from medvqa.core.items import DataError
from medvqa.core.run.store import read_manifest, read_records
from tests.openai_server import OpenAIServer

MODEL = "hosted_vllm/test"


def medvqa(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def run(run_dir: Path, *args) -> dict:
    result = medvqa("run", "jmed48k", "--sample", "--model", MODEL, "--run-dir", run_dir, "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def keys(run_dir: Path) -> dict[tuple[str, str], str]:
    return {(r["item_id"], r["condition"]): r["key"] for r in read_records(run_dir)}


def test_flags_dash_m_and_a_model_config_send_the_same_requests_and_share_the_cache(tmp_path):
    """The jmed48k sample asks 22 requests (17 items under C+Q, 5 image items under C+Q+I). Asked
    with flags they reach the server (with one preflight request); the same settings given as
    -M, as a TOML, a YAML and a JSON file have the same 22 request keys, so each of those runs
    is answered from the cache and sends 0 requests. `temperature 0` is the float 0.0 each way
    (the JSON and TOML integer 0 would otherwise hash differently)."""
    with OpenAIServer() as server:
        flags = run(
            tmp_path / "flags",
            "--api-base",
            server.url,
            "--temperature",
            "0",
            "--max-tokens",
            "64",
            "--param",
            "top_p=0.9",
            "--concurrency",
            "4",
            "--timeout",
            "30",
            "--max-retries",
            "2",
        )
        assert sum(server.counts.values()) == 22 + 1
        assert flags["n_records"] == 22 and flags["errors"] == 0
        expected = keys(tmp_path / "flags")
        assert len(set(expected.values())) == 22

        dash_m = run(
            tmp_path / "dash_m",
            "-M",
            f"api_base={server.url}",
            "-M",
            "temperature=0",
            "-M",
            "max_tokens=64",
            "-M",
            "params.top_p=0.9",
            "-M",
            "concurrency=4",
            "-M",
            "timeout=30",
            "-M",
            "max-retries=2",
        )
        toml = tmp_path / "model.toml"
        toml.write_text(
            f'api_base = "{server.url}"\ntemperature = 0\nmax_tokens = 64\nconcurrency = 4\n'
            "timeout = 30\nmax_retries = 2\n[params]\ntop_p = 0.9\n",
            encoding="utf-8",
        )
        from_toml = run(tmp_path / "toml", "--model-config", toml)
        yaml = tmp_path / "model.yaml"
        yaml.write_text(
            f"api_base: [{server.url}]\ntemperature: 0\nmax_tokens: 64\nparams: {{top_p: 0.9}}\n"
            "concurrency: 4\ntimeout: 30\nmax_retries: 2\n",
            encoding="utf-8",
        )
        from_yaml = run(tmp_path / "yaml", "--model-config", yaml)
        as_json = tmp_path / "model.json"  # part in the file, part as -M, part as flags
        as_json.write_text(json.dumps({"temperature": 0, "params": {"top_p": 0.9}, "timeout": 30}), encoding="utf-8")
        mixed = run(
            tmp_path / "mixed",
            "--model-config",
            as_json,
            "-M",
            "max_tokens=64",
            "--api-base",
            server.url,
            "--concurrency",
            "4",
            "--max-retries",
            "2",
        )
        assert sum(server.counts.values()) == 22 + 1  # not one request more
    for name, summary in (("dash_m", dash_m), ("toml", from_toml), ("yaml", from_yaml), ("mixed", mixed)):
        assert summary["n_records"] == 22 and summary["accuracy"] == flags["accuracy"], name
        assert keys(tmp_path / name) == expected, name
        manifest = read_manifest(tmp_path / name)
        assert manifest["params"] == read_manifest(tmp_path / "flags")["params"], name
        assert manifest["params"]["temperature"] == 0.0 and manifest["params"]["top_p"] == 0.9
        assert manifest["backend"]["concurrency"] == 4 and manifest["backend"]["timeout_s"] == 30.0
        assert manifest["backend"]["max_retries"] == 2


def test_a_different_value_is_a_different_request(tmp_path):
    with OpenAIServer() as server:
        run(tmp_path / "a", "-M", f"api_base={server.url}", "-M", "max_tokens=64")
        run(tmp_path / "b", "-M", f"api_base={server.url}", "-M", "max_tokens=65")
        assert sum(server.counts.values()) == 2 * (22 + 1)
    assert not set(keys(tmp_path / "a").values()) & set(keys(tmp_path / "b").values())


def test_the_file_then_dash_m_then_the_flags():
    config = {"temperature": 0.7, "max_tokens": 10, "params": {"top_p": 0.5, "seed": None}}
    out = resolve(
        MODEL,
        {"temperature": 0.0, "params": {"presence_penalty": 1}},
        parse_model_options(["max_tokens=64", "params.top_p=0.9"]),
        config,
        "m.json",
    )
    assert out == {"temperature": 0.0, "max_tokens": 64, "params": {"top_p": 0.9, "seed": None, "presence_penalty": 1}}
    assert type(resolve(MODEL, {}, {"temperature": 1})["temperature"]) is float
    assert resolve(MODEL, {}, {"api_base": "http://h:1/v1", "price": "1.5,6"}) == {
        "api_base": ["http://h:1/v1"],
        "price": (1.5, 6.0),
    }
    assert resolve("vllm/m", {}, parse_model_options(["engine_options.max_model_len=8192", "batch_size=64"])) == {
        "engine_options": {"max_model_len": 8192},
        "batch_size": 64,
    }


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["-M", "temprature=0"],
            "-M temprature: not an option of litellm models (hosted_vllm/test); valid: api_base, "
            "concurrency, max_image_side, max_retries, max_retry_wait, max_tokens, model_list, params, "
            "price, "
            "reasoning_effort, response_format, retry_wait, rpm, temperature, timeout, workers",
        ),
        (
            ["-M", "temperature=hot"],
            "-M temperature: expected a number (float): Input should be a valid number, "
            'unable to parse string as a number (got "hot")',
        ),
        (
            ["-M", "max_tokens=0"],
            "-M max_tokens: expected a whole number (int): Input should be greater than or equal to 1 (got 0)",
        ),
        (["-M", "concurrency=true"], "-M concurrency: expected a whole number (int)"),
        (["-M", "response_format=xml"], "-M response_format: expected one of auto, json_schema, json_object, none"),
        (["-M", "api_base=ftp://h"], "-M api_base: expected a URL or a list of URLs (list): 'ftp://h' is not a URL"),
        (["-M", "seed=3"], "-M seed: not an option of litellm models (hosted_vllm/test) (use --seed)"),
        (["-M", "temperature"], "-M: expected KEY=VALUE, got 'temperature'"),
        (["-M", "max_tokens=1", "-M", "max_tokens=2"], "-M max_tokens is given twice"),
        (
            ["--temperature", "0", "-M", "temperature=0"],
            "--temperature and -M temperature both set temperature; give one",
        ),
        (["--param", "top_p=1", "-M", "params.top_p=1"], "--param top_p=... and -M params.top_p both set params.top_p"),
    ],
)
def test_a_bad_dash_m_is_a_usage_error_naming_the_key_and_nothing_is_written(tmp_path, args, message):
    result = medvqa("run", "jmed48k", "--sample", "--model", MODEL, "--run-dir", tmp_path / "run", *args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "run").exists()


def test_the_baselines_take_no_options_and_a_vllm_model_has_its_own():
    with pytest.raises(UsageError, match=r"-M temperature: not an option of random models \(random\); valid: none"):
        resolve("random", {}, {"temperature": 0})
    with pytest.raises(
        UsageError,
        match="-M api_base: not an option of vllm models .* "
        "valid: batch_size, data_parallel_size, engine_options, max_image_side",
    ):
        resolve("vllm/m", {}, {"api_base": "http://h/v1"})
    with pytest.raises(UsageError, match="-M response_format: expected one of auto, json_schema, none"):
        resolve("vllm/m", {}, {"response_format": "json_object"})


def test_a_bad_model_config_is_an_error_naming_the_file(tmp_path):
    cases = {
        "broken.json": ('{"temperature": ', "not a JSON model config (Expecting value: line 1 column 17"),
        "broken.toml": ("temperature = ", "not a TOML model config"),
        "list.yaml": ("- temperature\n", "a model config holds a mapping of options, not list"),
        "typo.json": ('{"temprature": 0}', "temprature: not an option of litellm models"),
        "bad.toml": ('max_tokens = "many"\n', "max_tokens: expected a whole number (int)"),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = medvqa(
            "run", "jmed48k", "--sample", "--model", MODEL, "--run-dir", tmp_path / "run", "--model-config", path
        )
        assert result.exit_code == 1, (name, result.output)
        assert f"Error: {path}: {message}" in " ".join(result.output.split()), name
    missing = medvqa("run", "jmed48k", "--sample", "--model", MODEL, "--model-config", tmp_path / "absent.json")
    assert missing.exit_code == 1 and f"{tmp_path / 'absent.json'}: cannot read the model config" in missing.output
    assert not (tmp_path / "run").exists()
    with pytest.raises(DataError, match="not a YAML model config"):
        (tmp_path / "m.yml").write_text("a: [", encoding="utf-8")
        read_model_config(tmp_path / "m.yml")


def test_a_credential_given_as_an_option_is_refused_without_repeating_it(tmp_path):
    secret = "sk-medvqa-never-written-0123"
    for args in (
        ["-M", f"api_key={secret}"],
        ["-M", f"params.api_key={secret}"],
        ["-M", f'params={{"azure_ad_token": "{secret}"}}'],
    ):
        result = medvqa("run", "jmed48k", "--sample", "--model", MODEL, "--run-dir", tmp_path / "run", *args)
        assert result.exit_code == 2 and "credential" in result.output and secret not in result.output, result.output
    config = tmp_path / "model.json"
    config.write_text(json.dumps({"api_key": secret}), encoding="utf-8")
    result = medvqa(
        "run", "jmed48k", "--sample", "--model", MODEL, "--run-dir", tmp_path / "run", "--model-config", config
    )
    assert result.exit_code == 1 and f"{config}: api_key: credentials are read from the environment" in result.output
    assert secret not in result.output
    assert not (tmp_path / "run").exists()


def test_header_values_given_with_dash_m_or_a_model_config_never_reach_the_run_directory(tmp_path):
    """Header values (which may carry a key) are sent, and masked by position in the manifest's
    parameters and command line, as `--param extra_headers` is."""
    from_m, from_file = "tr4ce-from-dash-m-991", "h3ader-from-config-772"
    config = tmp_path / "model.yaml"
    config.write_text(f"params:\n  extra_headers: {{X-Team: {from_file}}}\n", encoding="utf-8")
    with OpenAIServer() as server:
        run(tmp_path / "m", "-M", f"api_base={server.url}", "-M", f'params.extra_headers={{"X-Trace": "{from_m}"}}')
        run(tmp_path / "file", "--api-base", server.url, "--model-config", config)
        assert sum(server.counts.values()) == 2 * (22 + 1)  # headers are parameters: part of the request key
    assert read_manifest(tmp_path / "m")["params"]["extra_headers"] == {"X-Trace": "***"}
    assert read_manifest(tmp_path / "file")["params"]["extra_headers"] == {"X-Team": "***"}
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != config:
            data = path.read_bytes()
            assert from_m.encode() not in data and from_file.encode() not in data, path


def test_the_python_api_types_backend_options_as_dash_m_does(tmp_path):
    import medvqa

    with pytest.raises(UsageError, match=r"backend_options\['temprature'\]: not an option of litellm models"):
        medvqa.run(
            "jmed48k", MODEL, sample=True, run_dir=tmp_path / "typo", backend_options={"temprature": 0}, progress=False
        )
    assert not (tmp_path / "typo").exists()
    with OpenAIServer() as server:
        run(tmp_path / "cli", "--api-base", server.url, "--temperature", "0", "--price", "3,15")
        run_dir, summary = medvqa.run(
            "jmed48k",
            MODEL,
            sample=True,
            run_dir=tmp_path / "api",
            progress=False,
            backend_options={"api_base": server.url, "temperature": 0, "price": [3, 15]},
        )
        assert sum(server.counts.values()) == 22 + 1  # the integer 0 is the float 0.0: all from the cache
    assert keys(run_dir) == keys(tmp_path / "cli") and summary["n_records"] == 22
    assert read_manifest(run_dir)["backend"]["price_per_million"] == [3.0, 15.0]

"""A real third-party adapter package, installed with pip, is discovered through its entry
point and then listed, run, scored and reported exactly like a built-in benchmark."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

# the example package is pip-installed into a fresh folder: tens of seconds for the module
pytestmark = pytest.mark.slow

PACKAGE = REPO / "tests" / "plugin_package"


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(PACKAGE)],
        check=True,
        capture_output=True,
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target), env.get("PYTHONPATH", "")])
    return env


def medvqa(env, *args, cwd=None):
    out = subprocess.run([sys.executable, "-m", "medvqa.cli", *args], env=env, cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_installed_plugin_is_listed_with_its_plugin_name(plugin_env):
    listing = medvqa(plugin_env, "list")
    assert "kmle_demo" in listing and "[plugin: kmle_demo] (medvqa-kmle-demo 0.1.0)" in listing
    assert "[plugin: medvqa.adapters.jmed48k.plugin]" in listing  # built-ins through the same manager
    only = medvqa({**plugin_env, "MEDVQA_LOAD_PLUGINS": "kmle_demo"}, "list")
    assert "[plugin: kmle_demo]" in only and "jmed48k" in only and "random" in only  # built-ins stay
    assert "kmle_demo" not in medvqa({**plugin_env, "MEDVQA_LOAD_PLUGINS": ""}, "list")


def test_installed_plugin_runs_scores_and_reports_like_a_builtin(plugin_env, tmp_path):
    replay = tmp_path / "answers.jsonl"
    rows = [
        ("kmle-1", "C+Q", "정답은 1"),
        ("kmle-2", "C+Q", '{"answer": ["3"]}'),
        ("kmle-3", "C+Q", '{"answer": ["2"]}'),
        ("kmle-3", "C+Q+I", "답할 수 없습니다"),
        ("kmle-4", "C+Q", '{"answer": ["4"]}'),
        ("kmle-4", "C+Q+I", '{"answer": ["4"]}'),
        ("kmle-5", "C+Q", '{"answer": ["2", "1"]}'),
    ]
    replay.write_text(
        "".join(
            json.dumps({"item_id": i, "condition": c, "response": r}, ensure_ascii=False) + "\n" for i, c, r in rows
        ),
        encoding="utf-8",
    )
    run_dir = tmp_path / "run"
    out = json.loads(
        medvqa(plugin_env, "run", "kmle_demo", "--model", f"replay:{replay}", "--run-dir", str(run_dir), "--json")
    )
    assert out["n_items"] == 5 and out["n_records"] == 7
    assert out["accuracy"] == {"C+Q": 4 / 5, "C+Q+I": 1 / 2}  # the Korean phrase "정답은 1" is read
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["plugins"]["kmle_demo"] == {"distribution": "medvqa-kmle-demo", "version": "0.1.0"}
    assert manifest["plugins"]["medvqa.adapters.jmed48k.plugin"]["distribution"] == "medvqa"
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    refusal = next(r for r in records if r["item_id"] == "kmle-3" and r["condition"] == "C+Q+I")
    assert refusal["status"] == "refusal" and refusal["correct"] is False
    assert {r["subject"] for r in records} == {"내과", "소아과", "영상의학과", "예방의학과"}
    assert json.loads(medvqa(plugin_env, "score", str(run_dir), "--json"))["changed"] == 0
    table = json.loads(medvqa(plugin_env, "report", str(run_dir), "--by", "subject", "--json"))
    inner = next(r for r in table if r["condition"] == "C+Q" and r["subject"] == "내과")
    assert (inner["n"], inner["correct"]) == (2, 2)


def test_installed_plugin_keeps_every_contract_of_the_kit(plugin_env, tmp_path):
    code = (
        "from pathlib import Path; import medvqa_kmle_demo; from medvqa.testing import check_benchmark; "
        f"r = check_benchmark('kmle_demo', Path(medvqa_kmle_demo.__file__).parent, work_dir={str(tmp_path)!r}); "
        "print(r.text()); print(r.n_records)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=plugin_env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # five items in C and C+Q; the two with images also in C+I and C+Q+I
    assert out.stdout.splitlines() == ["kmle_demo: 11 checks passed on 5 items", "{'random': 14, 'gold': 14}"]

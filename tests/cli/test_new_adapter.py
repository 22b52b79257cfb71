"""`medvqa new-adapter NAME`: the package it writes installs, passes its own tests and the
conformance kit without edits, and runs with `medvqa run NAME --model random`."""

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import medvqa
from medvqa._phrasebook import PHRASES
from medvqa.cli.main import cli
from medvqa.core.benchmark import AnswerConventions
from medvqa.core.scoring.patterns import ENGLISH
from medvqa.core.scoring.score import score
from medvqa.testing import check_benchmark

from tests.conftest import REPO


def scaffold(tmp_path, name, *args):
    result = CliRunner().invoke(cli, ["new-adapter", name, "--out", str(tmp_path), *args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return tmp_path / name, result


def import_generated(root, module):
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(f"{module}.benchmark"), importlib.import_module(f"{module}.prompts")
    finally:
        sys.path.remove(str(root))


@pytest.fixture
def forget_modules():
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("medvqa_"):
            del sys.modules[name]


@pytest.mark.parametrize("language", sorted(PHRASES))
def test_every_language_writes_python_whose_answer_phrases_read_its_reply(tmp_path, language, forget_modules):
    name = f"exam_{language}"
    root, _ = scaffold(tmp_path, name, "--language", language)
    for path in root.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), str(path))
    bench_mod, prompts = import_generated(root, f"medvqa_{name}")
    bench = getattr(bench_mod, "".join(p.capitalize() for p in name.split("_")))()
    assert bench.language == language and bench.name == name
    items = bench.load(root / f"medvqa_{name}" / "fixture")
    patterns = (ENGLISH, prompts.PATTERNS) if hasattr(prompts, "PATTERNS") else (ENGLISH,)
    read = score(items[0], PHRASES[language]["sample_reply"], patterns=patterns, conventions=AnswerConventions())
    assert (read.predicted, read.correct) == (("B",), True)  # q1's answer is B
    rendered = bench.render(items[0], medvqa.Condition.CQ)[-1]["content"]
    assert PHRASES[language]["question_header"].strip() in rendered


def test_the_english_adapter_passes_the_kit_in_process(tmp_path, forget_modules):
    root, _ = scaffold(tmp_path, "tiny_board")
    bench_mod, _ = import_generated(root, "medvqa_tiny_board")
    report = check_benchmark(bench_mod.TinyBoard(), root / "medvqa_tiny_board" / "fixture", work_dir=tmp_path / "kit")
    assert report.ok and report.n_items == 3 and report.n_records == {"random": 8, "gold": 8}
    fixture = root / "medvqa_tiny_board" / "fixture"
    bench = bench_mod.TinyBoard()
    assert [it.id for it in bench.load(fixture, select={"subject": ["cardiology", "haematology"]})] == ["q2", "q3"]
    assert [it.id for it in bench.load(fixture, subjects=["endocrinology"], years=None)] == ["q1"]  # older keywords
    with pytest.raises(ValueError, match="tiny_board cannot select by 'year'; its strata: subject, has_image"):
        bench.load(fixture, years=[2024])
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "medvqa run tiny_board --model random" in readme
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points.medvqa]\ntiny_board = "medvqa_tiny_board.plugin"' in pyproject


def test_bad_names_taken_names_full_folders_and_unknown_languages(tmp_path):
    for bad in ("Bad-Name", "1exam", "x", "class"):
        result = CliRunner().invoke(cli, ["new-adapter", bad, "--out", str(tmp_path)])
        assert result.exit_code == 1 and "lower-case letters, digits and underscores" in result.output, bad
    taken = CliRunner().invoke(cli, ["new-adapter", "jmed48k", "--out", str(tmp_path)])
    assert taken.exit_code == 1 and "a benchmark named 'jmed48k' is already installed" in taken.output
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    full = CliRunner().invoke(cli, ["new-adapter", "full", "--out", str(tmp_path)])
    assert full.exit_code == 1 and "exists and is not empty" in full.output
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
    root, result = scaffold(tmp_path, "swedish_exam", "--language", "sv")
    assert "no phrasebook for language 'sv': the prompts are in English" in result.stderr
    assert "in English (no phrasebook for 'sv' yet: translate them)" in (root / "medvqa_swedish_exam" / "prompts.py").read_text()
    bad_lang = CliRunner().invoke(cli, ["new-adapter", "other", "--out", str(tmp_path), "--language", "Korean"])
    assert bad_lang.exit_code == 1 and "give an ISO 639 code" in bad_lang.output


@pytest.mark.slow
def test_the_scaffolded_package_installs_passes_its_tests_and_runs(tmp_path):
    """What docs/adding-an-exam.md promises: new-adapter, install, its own tests (the kit), run."""
    start = time.monotonic()
    root, _ = scaffold(tmp_path, "kdemo_exam", "--language", "ko", "--title", "Korean demo exam")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(root)],
                   check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / "tests")],
                           env=env, cwd=root, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert "3 passed" in tests.stdout
    run = subprocess.run([sys.executable, "-m", "medvqa.cli", "run", "kdemo_exam", "--model", "random", "--run-dir",
                          str(tmp_path / "run"), "--json"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert (summary["n_items"], summary["n_records"]) == (3, 4)  # C+Q for 3 items, C+Q+I for the image item
    listing = subprocess.run([sys.executable, "-m", "medvqa.cli", "list"], env=env, capture_output=True, text=True)
    assert "Korean demo exam" in listing.stdout and "[plugin: kdemo_exam]" in listing.stdout
    print(f"scaffold, install, its tests and a run: {time.monotonic() - start:.1f} s")
    guide = (REPO / "docs" / "adding-an-exam.md").read_text(encoding="utf-8")
    first = re.search(r"^```bash\n(.*?)^```$", guide, re.M | re.S).group(1)
    # the guide's first commands are the ones this test ran (there with an installed copy)
    assert first.split("\n")[:2] == ['medvqa new-adapter kmle --language ko --title "Korean Medical Licensing Examination"',
                                     "cd kmle && pip install -e . && python -m pytest -q && medvqa run kmle --model random"]


def test_scaffold_offers_a_translation_as_a_second_language(tmp_path, forget_modules):
    root, _ = scaffold(tmp_path, "exam_lang", "--language", "pl")
    module = root / "medvqa_exam_lang"
    source = (module / "benchmark.py").read_text(encoding="utf-8")
    assert 'languages = ("pl",)' in source
    (module / "benchmark.py").write_text(source.replace('languages = ("pl",)', 'languages = ("pl", "en")'),
                                         encoding="utf-8")
    fixture = module / "fixture"
    rows = [json.loads(line) for line in (fixture / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    (fixture / "items.en.jsonl").write_text("".join(json.dumps({**r, "question": "EN " + r["question"]}) + "\n"
                                                    for r in rows), encoding="utf-8")
    bench_mod, _ = import_generated(root, "medvqa_exam_lang")
    bench = bench_mod.ExamLang()
    local, english = bench.load(fixture), bench.with_language("en").load(fixture)
    assert [it.id for it in local] == [it.id for it in english]
    assert {it.language for it in local} == {"pl"} and {it.language for it in english} == {"en"}
    assert all(e.question == "EN " + p.question for p, e in zip(local, english))
    assert bench.with_language("en").record_fields(english[0])["language"] == "en"

"""`medvqa new-adapter NAME`: the package it writes installs, passes its own tests and the
conformance kit without edits, and runs with `medvqa run NAME --model random`."""

import ast
import csv
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.scaffold.phrasebook import PHRASES
from medvqa.core.scoring.conventions import AnswerConventions
from medvqa.core.scoring.patterns import ENGLISH
from medvqa.core.scoring.score import score
from medvqa.testing import check_benchmark
from tests.conftest import REPO, shared_data

# The word each phrasebook's instruction uses for a numbered and for a lettered option label.
NUMBER_WORD = {
    "en": "number",
    "ja": "番号",
    "ko": "번호",
    "pl": "numer",
    "de": "Nummer",
    "fr": "numéro",
    "es": "número",
    "pt": "número",
    "it": "numero",
    "zh": "编号",
}
LETTER_WORD = {
    "en": "letter",
    "ja": "記号",
    "ko": "기호",
    "pl": "liter",
    "de": "Buchstab",
    "fr": "lettre",
    "es": "letra",
    "pt": "letra",
    "it": "letter",
    "zh": "字母",
}


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


@pytest.mark.parametrize("labels", ["1-5", "A-E"])
@pytest.mark.parametrize("language", sorted(PHRASES))
def test_every_language_writes_python_whose_answer_phrases_read_its_reply(tmp_path, language, labels, forget_modules):
    """Numbered options are asked for by their number, lettered ones by their letter, in each
    language: a prompt asking for "the letter" of options 1-5 invites "B" for option 2."""
    name = f"exam_{language}_{labels[0].lower()}"
    root, _ = scaffold(tmp_path, name, "--language", language, "--labels", labels)
    for path in root.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), str(path))
    bench_mod, prompts = import_generated(root, f"medvqa_{name}")
    bench = getattr(bench_mod, "".join(p.capitalize() for p in name.split("_")))()
    assert bench.language == language and bench.name == name
    items = bench.load(root / f"medvqa_{name}" / "fixture")
    expected = ["1", "2", "3", "4", "5"] if labels == "1-5" else ["A", "B", "C", "D", "E"]
    assert all([o.key for o in it.options] == expected for it in items)
    assert [sorted(it.gold.keys) for it in items] == [[expected[1]], [expected[0], expected[2]], [expected[2]]]
    patterns = (ENGLISH, prompts.PATTERNS) if hasattr(prompts, "PATTERNS") else (ENGLISH,)
    reply = PHRASES[language]["sample_reply"].format(label=expected[1])  # q1's answer: the second option
    read = score(items[0], reply, patterns=patterns, conventions=AnswerConventions())
    assert (read.predicted, read.correct) == ((expected[1],), True)
    rendered = bench.render(items[0], medvqa.Condition.CQ)[-1]["content"]
    assert PHRASES[language]["question_header"].strip() in rendered
    asked, not_asked = (NUMBER_WORD, LETTER_WORD) if labels == "1-5" else (LETTER_WORD, NUMBER_WORD)
    assert asked[language] in rendered and not_asked[language] not in rendered, rendered
    assert ", ".join(expected) in rendered  # the valid labels, as the options carry them


@pytest.mark.parametrize("labels", [(), ("--labels", "1-4")])
def test_the_english_adapter_passes_the_kit_in_process(tmp_path, labels, forget_modules):
    root, _ = scaffold(tmp_path, "tiny_board", *labels)
    bench_mod, _ = import_generated(root, "medvqa_tiny_board")
    report = check_benchmark(bench_mod.TinyBoard(), root / "medvqa_tiny_board" / "fixture", work_dir=tmp_path / "kit")
    assert report.ok and report.n_items == 3 and report.n_records == {"random": 8, "gold": 8}
    assert bench_mod.LABELS == (("1", "2", "3", "4") if labels else ("A", "B", "C", "D", "E"))
    fixture = root / "medvqa_tiny_board" / "fixture"
    bench = bench_mod.TinyBoard()
    assert [it.id for it in bench.load(fixture, select={"subject": ["cardiology", "haematology"]})] == ["q2", "q3"]
    # its declared keyword adds to select; a keyword it does not declare is named with those it does
    assert [it.id for it in bench.load(fixture, subjects=["endocrinology"], years=None)] == ["q1"]
    assert [
        it.id for it in bench.load(fixture, select={"has_image": ["False"]}, subjects="haematology,cardiology")
    ] == ["q2"]  # q3, the haematology item, has the image
    with pytest.raises(
        ValueError,
        match=r"tiny_board takes no option 'years'; its selection keywords: "
        r"subjects \(--subjects, field subject\)",
    ):
        bench.load(fixture, years=[2024])
    with pytest.raises(
        ValueError, match="--select year: tiny_board items have no field 'year'; fields: has_image, subject"
    ):
        bench.load(fixture, select={"year": ["2024"]})
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
    assert (
        "in English (no phrasebook for 'sv' yet: translate them)"
        in (root / "medvqa_swedish_exam" / "prompts.py").read_text()
    )
    bad_lang = CliRunner().invoke(cli, ["new-adapter", "other", "--out", str(tmp_path), "--language", "Korean"])
    assert bad_lang.exit_code == 1 and "give an ISO 639 code" in bad_lang.output


def fresh_venv(folder):
    """A new virtual environment that sees this one's packages (medvqa under test, pytest) as a
    newcomer's environment holds them installed; `--system-site-packages` alone would reach only
    the base interpreter's. Returns its bin folder."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(folder)], check=True, capture_output=True
    )
    python = folder / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "medvqa-0.1.0.dist-info").exists())
    Path(site, "outer_env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return python.parent


@pytest.mark.slow
def test_the_scaffolded_package_installs_passes_its_tests_and_runs(tmp_path):
    """What new-adapter prints, run as printed in a fresh environment: `cd NAME && pip install -e
    '.[test]' && python -m pytest -q`, then the run; and what docs/adding-an-exam.md promises."""
    start = time.monotonic()
    bin_dir = fresh_venv(tmp_path / "venv")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(bin_dir), os.environ["PATH"]]),
        "VIRTUAL_ENV": str(bin_dir.parent),
    }
    made = subprocess.run(
        [
            str(bin_dir / "python"),
            "-m",
            "medvqa.cli",
            "new-adapter",
            "kdemo_exam",
            "--language",
            "ko",
            "--title",
            "Korean demo exam",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    printed = made.stdout.strip().splitlines()[-1]
    steps = printed.split(" && ")
    assert steps == [
        "cd kdemo_exam",
        "pip install -e '.[test]'",
        "python -m pytest -q",
        "medvqa run kdemo_exam --model random",
    ]
    root = tmp_path / "kdemo_exam"
    install = subprocess.run(" && ".join(steps[:2]), shell=True, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    assert "does not provide the extra" not in install.stderr, install.stderr
    tests = subprocess.run(
        " && ".join(steps[:1] + steps[2:3]), shell=True, env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert "3 passed" in tests.stdout
    run = subprocess.run(
        [
            str(bin_dir / "python"),
            "-m",
            "medvqa.cli",
            "run",
            "kdemo_exam",
            "--model",
            "random",
            "--run-dir",
            str(tmp_path / "run"),
            "--json",
        ],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert (summary["n_items"], summary["n_records"]) == (3, 4)  # C+Q for 3 items, C+Q+I for the image item
    listing = subprocess.run(
        [str(bin_dir / "python"), "-m", "medvqa.cli", "list"], env=env, capture_output=True, text=True
    )
    assert "Korean demo exam" in listing.stdout and "[plugin: kdemo_exam]" in listing.stdout
    print(f"a fresh environment, scaffold, install, its tests and a run: {time.monotonic() - start:.1f} s")
    guide = (REPO / "docs" / "adding-an-exam.md").read_text(encoding="utf-8")
    first = re.search(r"^```bash\n(.*?)^```$", guide, re.M | re.S).group(1)
    # the guide's first commands are the ones this test ran (there with an installed copy)
    assert first.split("\n")[:2] == [
        'medvqa new-adapter kmle --language ko --title "Korean Medical Licensing Examination"',
        "cd kmle && pip install -e '.[test]' && python -m pytest -q && medvqa run kmle --model random",
    ]


def test_scaffold_offers_a_translation_as_a_second_language(tmp_path, forget_modules):
    root, _ = scaffold(tmp_path, "exam_lang", "--language", "pl")
    module = root / "medvqa_exam_lang"
    source = (module / "benchmark.py").read_text(encoding="utf-8")
    assert 'languages = ("pl",)' in source
    (module / "benchmark.py").write_text(
        source.replace('languages = ("pl",)', 'languages = ("pl", "en")'), encoding="utf-8"
    )
    fixture = module / "fixture"
    rows = [json.loads(line) for line in (fixture / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    (fixture / "items.en.jsonl").write_text(
        "".join(json.dumps({**r, "question": "EN " + r["question"]}) + "\n" for r in rows), encoding="utf-8"
    )
    bench_mod, _ = import_generated(root, "medvqa_exam_lang")
    bench = bench_mod.ExamLang()
    local, english = bench.load(fixture), bench.with_language("en").load(fixture)
    assert [it.id for it in local] == [it.id for it in english]
    assert {it.language for it in local} == {"pl"} and {it.language for it in english} == {"en"}
    assert all(e.question == "EN " + p.question for p, e in zip(local, english))
    assert bench.with_language("en").record_fields(english[0])["language"] == "en"


def test_labels_default_from_the_language_and_a_bad_range_is_a_usage_error(tmp_path, forget_modules):
    """Japanese licensing exams mostly number their options 1-5, Spain's MIR 1-4; the others
    letter them A-E. `--labels` overrides the default; a range it cannot write writes nothing."""
    for language, expected in (("ja", "12345"), ("es", "1234"), ("ko", "ABCDE"), ("en", "ABCDE"), ("sv", "ABCDE")):
        root, _ = scaffold(tmp_path, f"default_{language}", "--language", language)
        fixture = root / f"medvqa_default_{language}" / "fixture"
        first = json.loads((fixture / "items.jsonl").read_text(encoding="utf-8").splitlines()[0])
        assert "".join(first["options"]) == expected and first["answer"] == expected[1], language
    root, _ = scaffold(tmp_path, "physician", "--language", "ja", "--labels", "a-e")  # the physician's exam
    first = json.loads((root / "medvqa_physician" / "fixture" / "items.jsonl").read_text().splitlines()[0])
    assert list(first["options"]) == ["a", "b", "c", "d", "e"] and first["answer"] == "b"
    assert "--labels a-e" in (root / "README.md").read_text(encoding="utf-8")
    for bad in ("A-Z", "B-E", "1-11", "1-9a", "0-4", "A-B", "A–E", "abc", ""):
        result = CliRunner().invoke(cli, ["new-adapter", "bad_labels", "--out", str(tmp_path), "--labels", bad])
        assert result.exit_code == 2, (bad, result.output)
        assert f"--labels {bad!r}: give a range of option labels" in result.output
        assert "A-E (capital letters" in result.output and "1-5 (numbers, 1-3 to 1-10)" in result.output
        assert not (tmp_path / "bad_labels").exists(), bad
    helped = CliRunner().invoke(cli, ["new-adapter", "--help"])
    assert "ja 1-5" in helped.output and "es 1-4" in helped.output


def yakugakuqa_items(n_single=3, n_double=3):
    """Real items of the 108th pharmacist exam (YakugakuQA, numbered 1-5), in the scaffold's layout."""
    folder = shared_data("yakugakuqa", "data", "2023")
    category = {r["problem_id"]: r["category"] for r in medvqa.read_jsonl(folder / "metadata_108.jsonl")}
    # five options as a list: an item whose options are images holds the string "IMAGES" there
    rows = [
        r for r in medvqa.read_jsonl(folder / "108.jsonl") if isinstance(r["choices"], list) and len(r["choices"]) == 5
    ]
    picked = [r for r in rows if len(r["answer"]) == 1][:n_single] + [r for r in rows if len(r["answer"]) == 2][
        :n_double
    ]
    return [
        {
            "id": r["problem_id"],
            "question": r["problem_text"],
            "options": {str(i): text for i, text in enumerate(r["choices"], 1)},
            "answer": r["answer"][0] if len(r["answer"]) == 1 else r["answer"],
            "subject": category[r["problem_id"]],
        }
        for r in picked
    ]


def igakuqa119_items(ids=("119A1", "119A2", "119A11", "119A12")):
    """Real items of the 119th physician exam (IgakuQA119, lettered a-e, 119A11 with its image)."""
    folder = shared_data("igakuqa119")
    key = dict(csv.reader((folder / "results" / "correct_answers.csv").open(encoding="utf-8")))
    block = json.loads((folder / "questions" / "119A_json.json").read_text(encoding="utf-8"))
    questions = {q["number"]: q for q in block}
    out = []
    for qid in ids:
        q = questions[qid]
        options = dict(choice.split(". ", 1) for choice in q["choices"])  # "a. 膵の萎縮を認める。"
        answer = list(key[qid]) if len(key[qid]) > 1 else key[qid]  # "ce": both
        row = {"id": qid, "question": q["question"].strip(), "options": options, "answer": answer, "subject": "119A"}
        out.append({**row, "images": [f"images/{qid}.png"]} if q["has_image"] else row)
    return out, folder / "images"


def replace_fixture(fixture, rows, images=None):
    shutil.rmtree(fixture, ignore_errors=True)
    (fixture / "images").mkdir(parents=True)
    (fixture / "items.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    for row in rows:
        for ref in row.get("images", []):
            shutil.copy(images / Path(ref).name, fixture / ref)


def as_if_installed(root, name, module):
    """The package's entry point, declared as pip would (a dist-info folder beside the package),
    without the five seconds of a build; the slow test installs one for real."""
    info = root / f"medvqa_{name}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: medvqa-{name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[medvqa]\n{name} = {module}.plugin\n")
    return root


def test_the_generated_tests_take_the_fixture_as_it_is_so_real_items_replace_it(tmp_path, forget_modules):
    """A contributor replaces the three made-up items with real ones and runs the package's tests:
    they take ids, labels and answers from the fixture, so they pass on 6 pharmacist items
    numbered 1-5 and on 4 physician items lettered a-e with a real image (they hard-coded q1-q3
    and "B": all three failed on the pharmacist items)."""
    pharm, _ = scaffold(tmp_path, "pharm_exam", "--language", "ja")  # 1-5 by default
    physician, _ = scaffold(tmp_path, "physician_exam", "--language", "ja", "--labels", "a-e")
    pharm_rows = yakugakuqa_items()
    physician_rows, images = igakuqa119_items()
    replace_fixture(pharm / "medvqa_pharm_exam" / "fixture", pharm_rows)
    replace_fixture(physician / "medvqa_physician_exam" / "fixture", physician_rows, images)
    assert [r["id"] for r in pharm_rows] == ["108001", "108002", "108003", "108091", "108093", "108094"]
    assert [r["answer"] for r in pharm_rows] == ["2", "3", "1", ["1", "5"], ["4", "5"], ["4", "5"]]
    assert [r["answer"] for r in physician_rows] == ["a", "a", "b", ["c", "e"]]
    paths = [
        as_if_installed(pharm, "pharm_exam", "medvqa_pharm_exam"),
        as_if_installed(physician, "physician_exam", "medvqa_physician_exam"),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), os.environ.get("PYTHONPATH", "")])}
    tests = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            str(pharm / "tests"),
            str(physician / "tests"),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert re.search(r"\b6 passed", tests.stdout), tests.stdout[-500:]
    # what the kit ran on: 6 text items (C, C+Q), 4 items of which one with its image (+ C+I, C+Q+I)
    bench_mod, _ = import_generated(physician, "medvqa_physician_exam")
    fixture = physician / "medvqa_physician_exam" / "fixture"
    report = check_benchmark(bench_mod.PhysicianExam(), fixture, work_dir=tmp_path / "kit")
    assert report.ok and report.n_items == 4 and report.n_records == {"random": 10, "gold": 10}


def test_validate_flags_options_labelled_otherwise_than_the_exam(tmp_path, forget_modules):
    """A release lettered a-e read by an adapter scaffolded for options numbered 1-5 (or the
    other way round) is an error per item, naming the file, the item and its options; `medvqa
    validate` says so and exits 1."""
    root, _ = scaffold(tmp_path, "numbered_exam", "--language", "ja")
    release = tmp_path / "release"
    rows, images = igakuqa119_items(("119A1", "119A2"))
    replace_fixture(release, [*rows, {**yakugakuqa_items(1, 0)[0]}])  # the last one numbered, as it should be
    bench_mod, _ = import_generated(root, "medvqa_numbered_exam")
    findings = bench_mod.NumberedExam().validate(release)
    labels = [(f.number, f.rule, f.level, f.message) for f in findings]
    message = "option(s) a, b, c, d, e not among the exam's labels (1, 2, 3, 4, 5)"
    assert labels == [(qid, "option-labels", "error", message) for qid in ("119A1", "119A2")]
    assert {f.file for f in findings} == {str(release / "items.jsonl")}
    assert not bench_mod.NumberedExam().validate(root / "medvqa_numbered_exam" / "fixture")
    site = as_if_installed(root, "numbered_exam", "medvqa_numbered_exam")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    validate = subprocess.run(
        [sys.executable, "-m", "medvqa.cli", "validate", "numbered_exam", "--data", str(release)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert validate.returncode == 1, validate.stdout + validate.stderr
    out = validate.stdout + validate.stderr
    assert f"error: {release / 'items.jsonl'}: record 119A2: [option-labels] {message}" in out
    assert "numbered_exam: 2 error(s), 0 warning(s)" in out


def test_ten_numbered_options_pass_the_kit_and_their_answers_read(tmp_path, forget_modules):
    """Exams with ten options exist (a Korean one, multi-answer): `--labels 1-10` writes them, the
    kit passes, and "10" is read as option 10, not 1."""
    root, _ = scaffold(tmp_path, "ten_board", "--labels", "1-10")
    bench_mod, _ = import_generated(root, "medvqa_ten_board")
    fixture = root / "medvqa_ten_board" / "fixture"
    assert bench_mod.LABELS == tuple(str(n) for n in range(1, 11))
    items = bench_mod.TenBoard().load(fixture)
    assert [[o.key for o in it.options] for it in items] == [list(bench_mod.LABELS)] * 3
    assert [sorted(it.gold.keys) for it in items] == [["2"], ["1", "3"], ["3"]]
    assert medvqa.score(items[0], '{"answer": ["10"]}').predicted == ("10",)
    assert medvqa.score(items[1], '{"answer": ["1", "3"]}').correct
    report = check_benchmark(bench_mod.TenBoard(), fixture, work_dir=tmp_path / "kit")
    assert report.ok and report.n_items == 3 and report.n_records == {"random": 8, "gold": 8}
    assert "--labels 1-10" in (root / "README.md").read_text(encoding="utf-8")


def test_validate_reports_every_line_the_loader_refuses(tmp_path, forget_modules):
    """The validator reads each line with the loader's own code: a line `load` refuses (no
    question, options as a list, an image path outside the folder) is an error of `validate`
    with the loader's words, naming the file and the record; it once parsed the lines a second
    way and passed the first two."""
    root, _ = scaffold(tmp_path, "strict_exam")
    bench_mod, _ = import_generated(root, "medvqa_strict_exam")
    bench = bench_mod.StrictExam()
    release = tmp_path / "release"
    rows = [
        json.loads(line)
        for line in (root / "medvqa_strict_exam" / "fixture" / "items.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    broken = [
        {k: v for k, v in rows[0].items() if k != "question"},
        {**rows[1], "options": list(rows[1]["options"].values())},
        {**rows[2], "images": ["../outside.png"]},
    ]
    release.mkdir()
    file = release / "items.jsonl"
    for row in broken:  # the loader refuses each line alone
        (release / "items.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
        with pytest.raises(medvqa.DataError, match=f"record {row['id']}"):
            bench.load(release)
    (release / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in broken), encoding="utf-8")
    found = [(f.file, f.number, f.rule, f.level, f.message) for f in bench.validate(release)]
    assert found == [
        (str(file), "q1", "item", "error", "question must be a string"),
        (str(file), "q2", "item", "error", "options must be a non-empty object {key: text}"),
        (str(file), "q3", "item", "error", f"image reference '../outside.png' escapes the dataset folder {release}"),
    ]
    assert {f.rule for f in bench.validate(release)} <= set(bench.validation_rules)


def test_the_package_declares_the_test_extra_the_next_step_needs(tmp_path):
    """The printed next step installs `.[test]` and runs pytest: the package's pyproject names
    pytest in a `test` extra (the kit's `medvqa_check` fixture comes with medvqa itself)."""
    import tomllib

    root, result = scaffold(tmp_path, "extra_exam")
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert [r.split(">")[0] for r in pyproject["project"]["optional-dependencies"]["test"]] == ["pytest"]
    assert result.stdout.strip().splitlines()[-1] == (
        f"cd {root} && pip install -e '.[test]' && python -m pytest -q && medvqa run extra_exam --model random"
    )
    assert "pip install -e '.[test]'" in (root / "README.md").read_text(encoding="utf-8")

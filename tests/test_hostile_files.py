"""Hostile files: workbooks, config files, names and answers taken from data that try to write
outside their place, exhaust memory, wedge a plan, flood a record or run as a spreadsheet
formula. Each test builds its attack in a temporary folder (the workbook with openpyxl and
zipfile, the YAML as text) and runs the real command line, in its own process with its memory
capped where an attack could exhaust it; each guards one line of docs/runs.md's "What is
guaranteed"."""

from __future__ import annotations

import csv
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa as medvqa_api
from medvqa import read_table
from medvqa.cli.main import cli
from medvqa.core.run.names import path_part
from tests.conftest import shared_data

MEMORY_LIMIT = 2 * 1024**3  # a command that reads a hostile file stays far below this


def medvqa(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real command line in its own process, its address space capped (an attack that gets
    through fails there instead of taking the machine's memory)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = {**os.environ, "MEDVQA_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "medvqa.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=timeout,
        preexec_fn=cap,
    )


def in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The same command line run in this process (faster, where nothing can exhaust memory): its
    status, stdout and stderr, an exception that escaped it written to stderr as a traceback."""
    import contextlib
    import traceback

    with contextlib.chdir(cwd):
        result = CliRunner().invoke(cli, list(args))
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback:\n" + "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, stderr)


def assert_clean_failure(result: subprocess.CompletedProcess, status: int = 1) -> str:
    """One short error line, no traceback; returns stderr."""
    assert result.returncode == status, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(result.stderr) < 2000, result.stderr[:2000]
    return result.stderr


# -- CSV outputs: a cell from data never runs as a formula -----------------------------------------


def test_csv_cells_that_start_like_a_formula_are_prefixed_and_numbers_are_not(tmp_path):
    names = ['=HYPERLINK("http://example.com","x")', "+1+1", "@SUM(A1)", "-2+3"]
    for n, name in enumerate(names):
        run = in_process(
            "run",
            "jmed48k",
            "--sample",
            "--model",
            f"constant:{n}",
            "--model-name",
            name,
            "--conditions",
            "C+Q",
            "--run-dir",
            f"run{n}",
            cwd=tmp_path,
        )
        assert run.returncode == 0, run.stderr[-2000:]
    out = in_process("compare", *(f"run{n}" for n in range(len(names))), "--format", "csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["model"] for r in rows} == {"'" + name for name in names}
    overall = [r for r in rows if r["stratum"] == "overall"]
    # the sample's 17 C+Q items with a gold answer, as numbers: nothing else was prefixed
    assert [int(r["n"]) for r in overall] == [17] * len(names)
    assert all(0 <= float(r["value"]) <= 1 for r in overall)


# -- workbooks and config files: bounded before they are expanded ----------------------------------


def workbook(path: Path, response: str = "2", edit=None, item_id: str = "Nurse_2023_AM_Q1") -> Path:
    """A one-answer workbook as openpyxl saves it (header `item_id, response`), its members
    then rewritten by `edit(members)` (name → bytes; a value may be a callable writing a
    member as a stream)."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["item_id", "response"])
    book.active.append([item_id, response])
    plain = path.with_suffix(".plain.xlsx")
    book.save(plain)
    with zipfile.ZipFile(plain) as z:
        members = {m.filename: z.read(m) for m in z.infolist()}
    plain.unlink()
    if edit is not None:
        edit(members)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name, data in members.items():
            if callable(data):
                with z.open(name, "w", force_zip64=True) as fh:
                    data(fh)
            else:
                z.writestr(name, data)
    return path


SHEET = "xl/worksheets/sheet1.xml"


def zip_bomb(members: dict) -> None:
    """The answer cell holds 300 MiB of "a" (1.4 MB on disk)."""
    head, tail = members[SHEET].split(b"<t>2</t>")

    def write(fh) -> None:
        fh.write(head + b"<t>")
        block = b"a" * 2**20
        for _ in range(300):
            fh.write(block)
        fh.write(b"</t>" + tail)

    members[SHEET] = write


def shared_string_out_of_range(members: dict) -> None:
    members[SHEET] = (
        members[SHEET].replace(b"<is><t>2</t></is>", b"<v>99</v>").replace(b't="inlineStr"><v>99', b't="s"><v>99')
    )
    members["xl/sharedStrings.xml"] = (
        b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        b'count="1" uniqueCount="1"><si><t>a</t></si></sst>'
    )
    members["[Content_Types].xml"] = members["[Content_Types].xml"].replace(
        b"</Types>",
        (
            b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.'
            b'spreadsheetml.sharedStrings+xml"/></Types>'
        ),
    )


def doctype(members: dict) -> None:
    members[SHEET] = (
        b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
        + members[SHEET].replace(b"<t>2</t>", b"<t>&b;</t>")
    )


def cut_xml(members: dict) -> None:
    members[SHEET] = members[SHEET][:300]


@pytest.mark.parametrize(
    "edit, says",
    [
        (zip_bomb, "uncompressed, more than a table is read from (268,435,456): a zip bomb?"),
        (shared_string_out_of_range, "unreadable workbook (IndexError"),
        (doctype, "declares a document type"),
        (cut_xml, "unreadable workbook (ParseError: unclosed token"),
    ],
    ids=["zip-bomb", "shared-string-index", "doctype", "bad-xml"],
)
def test_a_hostile_workbook_is_one_line_naming_it_and_nothing_is_written(edit, says, jmed_sample, tmp_path):
    book = workbook(tmp_path / "answers.xlsx", edit=edit)
    result = medvqa(
        "import",
        "jmed48k",
        str(book),
        "--data",
        str(jmed_sample),
        "--split",
        "sample",
        "--run-dir",
        "run",
        cwd=tmp_path,
    )
    err = assert_clean_failure(result)
    assert err.startswith(f"Error: {book}: ") and says in err, err
    assert not (tmp_path / "run").exists()


def test_the_same_workbook_unharmed_is_imported(jmed_sample, tmp_path):
    book = workbook(tmp_path / "answers.xlsx")
    result = in_process(
        "import",
        "jmed48k",
        str(book),
        "--data",
        str(jmed_sample),
        "--split",
        "sample",
        "--run-dir",
        "run",
        "--json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["conditions"]["C+Q"]["answered"] == 1


def test_a_huge_value_from_a_workbook_is_cut_in_the_message(jmed_sample, tmp_path):
    book = workbook(tmp_path / "answers.xlsx", item_id="x" * 30_000)
    result = in_process(
        "import",
        "jmed48k",
        str(book),
        "--data",
        str(jmed_sample),
        "--split",
        "sample",
        "--run-dir",
        "run",
        cwd=tmp_path,
    )
    err = assert_clean_failure(result)  # under 2,000 characters
    assert f"{book}: record row 2: item 'xxxx" in err and "is not in the data" in err


def alias_bomb(indent: str) -> str:
    """Generation parameters `a` to `i`, each nine aliases of the one before: 9^9 strings once
    expanded, from under a kilobyte."""
    lines = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    lines += [f"{k}: &{k} [{', '.join([f'*{p}'] * 9)}]" for p, k in zip("abcdefgh", "bcdefghi")]
    return "".join(f"{indent}{line}\n" for line in lines)


def test_a_yaml_alias_bomb_is_refused_in_a_model_config_and_an_eval_set(tmp_path):
    config = tmp_path / "model.yaml"
    config.write_text("temperature: 0\nparams:\n" + alias_bomb("  "))
    assert len(config.read_bytes()) < 1024
    run = medvqa(
        "run",
        "jmed48k",
        "--sample",
        "--model",
        "hosted_vllm/m",
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--model-config",
        str(config),
        "--dry-run",
        cwd=tmp_path,
        timeout=60,
    )
    err = assert_clean_failure(run)
    assert f"{config}: record line 3: YAML anchors and aliases (&a, *...) are not read" in err, err
    study = tmp_path / "set.yaml"
    study.write_text(
        "study_dir: out\nmodels:\n  - model: hosted_vllm/m\n    options:\n"
        "      api_base: http://127.0.0.1:9/v1\n      params:\n"
        + alias_bomb("        ")
        + "benchmarks:\n  - benchmark: jmed48k\n    sample: true\n"
    )
    planned = medvqa("eval", str(study), "--dry-run", cwd=tmp_path, timeout=60)
    err = assert_clean_failure(planned)
    assert f"{study}: record line 7: YAML anchors and aliases" in err, err
    assert not (tmp_path / "out").exists()


# -- run directories named after data stay under --run-dir -----------------------------------------

MIR26 = ("mir", "2026", "MIR26.xlsx")


def mir_workbook(path: Path, models: list[str], answer: str = "1") -> Path:
    """The first three questions of the real MIR 2026 workbook, with an answer column per model
    (`answer_<model>`) answering each `answer`."""
    import openpyxl

    rows = read_table(shared_data(*MIR26))[:3]
    book = openpyxl.Workbook()
    book.active.append(["qnum", "Description", "image_refs", *(f"answer_{m}" for m in models)])
    for row in rows:
        book.active.append([row["qnum"], row["Description"], row["image_refs"], *([answer] * len(models))])
    book.save(path)
    return path


def test_a_workbooks_model_names_cannot_place_a_run_outside_run_dir(tmp_path):
    outside = tmp_path / "outside"
    book = mir_workbook(tmp_path / "MIR26_answers.xlsx", ["../escaped", f"{outside}", "gpt52"])
    result = in_process(
        "import", "mir", str(book), "--data", str(shared_data("mir")), "--run-dir", "out", "--json", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr[-2000:]
    written = sorted(str(p.parent.relative_to(tmp_path)) for p in tmp_path.rglob("manifest.json"))
    assert written == sorted(["out/escaped", f"out/{path_part(str(outside))}", "out/gpt52"])
    assert path_part(str(outside)) == str(outside).lstrip("/").replace("/", "_")[:60].rstrip("_")
    # each keeps the model's own name; 3 answered of the 3 questions the workbook holds
    summaries = {s["model"]: s for s in json.loads(result.stdout)}
    assert set(summaries) == {"../escaped", str(outside), "gpt52"}
    assert sum(r["answered"] for r in summaries["gpt52"]["conditions"].values()) == 3


def test_two_columns_naming_one_folder_are_refused_naming_both(tmp_path):
    book = mir_workbook(tmp_path / "MIR26_answers.xlsx", ["x/y", "x_y"])
    result = in_process("import", "mir", str(book), "--data", str(shared_data("mir")), "--run-dir", "out", cwd=tmp_path)
    err = assert_clean_failure(result)
    assert (
        f"{book}: column 'answer_x/y' and column 'answer_x_y' both name the run directory out/x_y: rename one of them"
    ) in err
    assert not (tmp_path / "out").exists()


def test_a_table_named_dot_dot_is_imported_under_run_dir(tmp_path):
    table = shared_data("worldmedqa-v-japan", "visuals", "outputs_w_images", "GPT4o", "GPT4o_japan_local.xlsx")
    folder = tmp_path / "tables" / "outputs_w_images"
    folder.mkdir(parents=True)
    shutil.copyfile(table, folder / ".._japan_local.xlsx")
    result = in_process("import", "worldmedqa_v", str(tmp_path / "tables"), "--run-dir", "out", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    written = [str(p.parent.relative_to(tmp_path)) for p in tmp_path.rglob("manifest.json")]
    assert written == ["out/model/japan_local_image"]  # ".." leaves nothing of itself
    shutil.copyfile(table, folder / "x y_japan_local.xlsx")
    shutil.copyfile(table, folder / "x_y_japan_local.xlsx")
    again = in_process("import", "worldmedqa_v", str(tmp_path / "tables"), "--run-dir", "out", cwd=tmp_path)
    err = assert_clean_failure(again)
    assert f"{folder / 'x y_japan_local.xlsx'} and {folder / 'x_y_japan_local.xlsx'} both name" in err, err
    assert len(list(tmp_path.rglob("manifest.json"))) == 1


def test_eval_set_models_whose_folders_collide_are_refused_naming_both(tmp_path):
    study = tmp_path / "set.toml"
    study.write_text(
        'study_dir = "out"\n[[models]]\nmodel = "random"\nname = "x/y"\n[[models]]\n'
        'model = "constant:1"\nname = "x_y"\n[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n'
    )
    result = in_process("eval", str(study), cwd=tmp_path)
    err = assert_clean_failure(result)
    assert err == (
        f"Error: {study}: benchmarks[0] (jmed48k) × models[0] (x/y) and benchmarks[0] (jmed48k) × "
        f"models[1] (x_y) both name the run directory {tmp_path / 'out' / 'jmed48k' / 'x_y'}: "
        "rename one of them\n"
    )
    assert not (tmp_path / "out").exists()


# -- repeats: whole numbers within a bound, and a plan that counts them -----------------------------


def test_repeats_are_whole_numbers_within_the_bound(tmp_path):
    over = in_process(
        "run", "jmed48k", "--sample", "--model", "random", "--repeats", "100000000", "--dry-run", cwd=tmp_path
    )
    assert over.returncode == 2 and "Invalid value for '--repeats': 100000000 is not from 1 to 1000" in over.stderr
    for value, says in (
        ("1e9", "repeats: Input should be a valid integer"),
        ("2.0", "repeats: Input should be a valid integer"),
        ("1001", "repeats: Input should be less than or equal to 1000"),
    ):
        study = tmp_path / "set.toml"
        study.write_text(
            f'study_dir = "out"\nrepeats = {value}\n[[models]]\nmodel = "random"\n'
            '[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n'
        )
        result = in_process("eval", str(study), "--dry-run", cwd=tmp_path)
        assert result.returncode == 1 and result.stderr == f"Error: {study}: {says}\n", result.stderr
    with pytest.raises(ValueError, match="repeats must be a whole number from 1 to 1000, not 1001"):
        medvqa_api.run("jmed48k", "random", sample=True, repeats=1001, run_dir=str(tmp_path / "api"), progress=False)


@pytest.mark.slow  # litellm's import and a real server: over 10 s
def test_a_plan_of_a_thousand_repeats_counts_the_repeats_nothing_holds(tmp_path, monkeypatch):
    """Two repeats of 5 items are in the cache; the plan of 1,000 repeats over the sample's 22 pairs
    looks those up and counts the 996 repeats after them, each pair's tokens counted once."""
    from medvqa.core.inference.litellm_backend import import_litellm
    from tests.openai_server import OpenAIServer

    litellm = import_litellm()
    counted = []
    real = litellm.token_counter
    monkeypatch.setattr(litellm, "token_counter", lambda **kw: counted.append(kw) or real(**kw))

    def plan(*args) -> dict:
        result = CliRunner().invoke(cli, [str(a) for a in args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    with OpenAIServer() as server:
        common = (
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "hosted_vllm/test",
            "--api-base",
            server.url,
            "--price",
            "1,2",
        )
        plan(
            *common, "--limit", "5", "--conditions", "C+Q", "--repeats", "2", "--run-dir", tmp_path / "first", "--json"
        )
        one = plan(
            *common, "--conditions", "C+Q,C+Q+I", "--run-dir", tmp_path / "run", "--no-cache", "--dry-run", "--json"
        )
        five = plan(
            *common,
            "--limit",
            "5",
            "--conditions",
            "C+Q",
            "--run-dir",
            tmp_path / "run",
            "--no-cache",
            "--dry-run",
            "--json",
        )
        counted.clear()
        many = plan(
            *common,
            "--conditions",
            "C+Q,C+Q+I",
            "--run-dir",
            tmp_path / "run",
            "--repeats",
            "1000",
            "--dry-run",
            "--json",
        )
    assert (one["pairs"], one["requests"], five["requests"]) == (22, 22, 5)
    assert (many["pairs"], many["cached"], many["requests"], many["preflight"]) == (22_000, 10, 21_990, 1)
    assert many["conditions"] == {"C+Q": {"to_ask": 17_000, "cached": 10}, "C+Q+I": {"to_ask": 5_000, "cached": 0}}
    assert len(counted) == 22  # one count per pair, not one per request
    tokens = many["tokens"]
    # 1,000 times every pair's input, less the two cached repeats of the five C+Q pairs
    assert tokens["input"] == 1000 * one["tokens"]["input"] - 2 * five["tokens"]["input"]
    assert tokens["output"] == 21_990 * 20
    assert many["cost_usd"] == pytest.approx((tokens["input"] * 1 + tokens["output"] * 2) / 1e6)


# -- --max-response-bytes: replies, reasoning and imports cut alike ---------------------------------


def test_an_imported_answer_is_cut_as_a_reply_is(jmed_sample, tmp_path):
    first, second = [it for it in medvqa_api.load("jmed48k", split="sample") if not it.excluded][:2]
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps({"item_id": first.id, "response": "あ" * 100_000})
        + "\n"  # 300,000 bytes
        + json.dumps({"item_id": second.id, "response": "2"})
        + "\n",
        encoding="utf-8",
    )
    for run, more in (("default", ()), ("ten", ("--max-response-bytes", "10"))):
        result = CliRunner().invoke(
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
                str(tmp_path / run),
                *more,
            ],
        )
        assert result.exit_code == 0, result.output
    default = {r["item_id"]: r for r in medvqa_api.read_run(tmp_path / "default").records}
    # 262,144 bytes hold 87,381 whole characters of three bytes (262,143 bytes)
    assert (len(default[first.id]["response"]), default[first.id]["truncated"]) == (87_381, True)
    assert default[second.id]["response"] == "2" and "truncated" not in default[second.id]
    ten = {r["item_id"]: r for r in medvqa_api.read_run(tmp_path / "ten").records}
    assert (ten[first.id]["response"], ten[first.id]["truncated"]) == ("あああ", True)
    mir = mir_workbook(tmp_path / "MIR26_answers.xlsx", ["long"], answer="1. " + "x" * 1000)
    result = CliRunner().invoke(
        cli,
        [
            "import",
            "mir",
            str(mir),
            "--data",
            str(shared_data("mir")),
            "--run-dir",
            str(tmp_path / "mir"),
            "--max-response-bytes",
            "100",
        ],
    )
    assert result.exit_code == 0, result.output
    answered = [r for r in medvqa_api.read_run(tmp_path / "mir" / "long").records if r["response"]]
    assert [(len(r["response"]), r["truncated"]) for r in answered] == [(100, True)] * 3


def test_a_reply_whose_reasoning_is_cut_is_not_cached(tmp_path):
    from tests.openai_server import OpenAIServer

    with OpenAIServer(think=lambda prompt: "r" * 2000, reasoning_form="reasoning_content") as server:
        args = (
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "hosted_vllm/test",
            "--api-base",
            server.url,
            "--conditions",
            "C+Q",
            "--max-tokens",
            "1000",
            "--max-response-bytes",
            "300",
        )
        for run in ("first", "second"):  # in this process: litellm is imported once
            result = CliRunner().invoke(cli, [*args, "--run-dir", str(tmp_path / run)])
            assert result.exit_code == 0, result.output
        assert sum(server.counts.values()) == 2 * (17 + 1)  # each run asks all 17 pairs, after its preflight
    for run in ("first", "second"):
        records = medvqa_api.read_run(tmp_path / run).records
        assert {(len(r["reasoning"]), r["reasoning_truncated"], r["cached"]) for r in records} == {(300, True, False)}

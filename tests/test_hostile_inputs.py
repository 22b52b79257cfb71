"""Hostile inputs: bad data of every kind must end in a validation finding or a clean error.

Each row of `VARIANTS` breaks one thing in a small, otherwise valid JMed48k release (the release
JSON, the taxonomy file, images, answers, options, ids, encodings, sizes, types) and names the
rule `medvqa validate` must report and the file it must name. For every row the real CLI runs
in its own process, three times:

- `medvqa validate jmed48k --data X --json` exits 1 with that finding (naming file, record and
  rule), and nothing on stderr;
- `medvqa run jmed48k --data X` refuses the data: exit status 1, a clean message, no traceback,
  and no run directory;
- `medvqa run ... --allow-invalid` either refuses it just as cleanly or completes the run with
  every planned record written.

`ANSWERS` does the same for hostile answers of the test server (over real HTTP): each ends in
a record status, never a crash, and only readable answers are cached. A later bad-input finding
is one more line in `VARIANTS`, a later hostile answer one more line in `ANSWERS`.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from medvqa.core.inference.preflight import PROBE_MESSAGES
from tests.conftest import REPO

YEAR = 2031
CELL = Path("JMed48k") / "Physician" / f"Physician_{YEAR}"
QUESTIONS = f"{YEAR}_CORRECTED.json"
TAXONOMY = f"{YEAR}_taxonomy.json"
IMAGE = f"{YEAR}_images/A2.png"
OPTIONS = {"a": "心臓", "b": "肺", "c": "肝臓", "d": "腎臓", "e": "脳"}
CLEAN_ERROR = None  # the data cannot even be searched for findings: a one-line error instead


def base_questions() -> list[dict]:
    """Three valid records: a text item, an image item, a numeric-slot item."""
    common = {
        "options": OPTIONS,
        "text_only": True,
        "img": {"content_img": "", "answer_img": ""},
        "text_reference": None,
    }
    return [
        {
            **common,
            "question_number": 1,
            "section": "A",
            "question_text": "最も大きい臓器はどれか。",
            "correct_answer": ["C"],
        },
        {
            **common,
            "question_number": 2,
            "section": "A",
            "question_text": "画像の臓器はどれか。",
            "correct_answer": ["B"],
            "text_only": False,
            "img": {"content_img": IMAGE, "answer_img": ""},
        },
        {
            **common,
            "question_number": 3,
            "section": "B",
            "question_text": "値を求めよ。解答欄は2つ",
            "options": {},
            "correct_answer": ["4", "2"],
        },
    ]


def base_taxonomy() -> dict:
    return {"A2": {"image_types": ["Radiology"], "dominant_type": "Radiology", "image_as_options": False}}


@dataclass
class Release:
    """A release folder being built: edit `questions`, `taxonomy` or the raw bytes, then write."""

    root: Path
    questions: list = field(default_factory=base_questions)
    taxonomy: Any = field(default_factory=base_taxonomy)
    questions_bytes: bytes | None = None
    taxonomy_bytes: bytes | None = None
    after: Callable[[Path], None] | None = None  # an edit of the written folder

    @property
    def cell(self) -> Path:
        return self.root / CELL

    def write(self) -> Path:
        (self.cell / IMAGE).parent.mkdir(parents=True, exist_ok=True)
        if not (self.cell / IMAGE).exists():
            Image.new("RGB", (32, 32), (200, 30, 30)).save(self.cell / IMAGE)
        if not (self.cell / QUESTIONS).is_dir():
            (self.cell / QUESTIONS).write_bytes(
                self.questions_bytes
                if self.questions_bytes is not None
                else json.dumps({"questions": self.questions}).encode()
            )
        if self.taxonomy is not None or self.taxonomy_bytes is not None:
            (self.cell / TAXONOMY).write_bytes(
                self.taxonomy_bytes if self.taxonomy_bytes is not None else json.dumps(self.taxonomy).encode()
            )
        return self.root


# -- one-line edits ---------------------------------------------------------------------------


def setq(index: int, name: str, value: Any) -> Callable[[Release], None]:
    """Set field `name` of question `index`."""
    return lambda r: r.questions[index].__setitem__(name, value)


def delq(index: int, name: str) -> Callable[[Release], None]:
    return lambda r: r.questions[index].pop(name)


def replace_q(index: int, value: Any) -> Callable[[Release], None]:
    return lambda r: r.questions.__setitem__(index, value)


def option(index: int, label: str, text: Any) -> Callable[[Release], None]:
    return lambda r: r.questions[index].__setitem__("options", {**r.questions[index]["options"], label: text})


def content_img(value: Any) -> Callable[[Release], None]:
    return lambda r: r.questions[1]["img"].__setitem__("content_img", value)


def raw_questions(data: bytes | Callable[[Release], bytes]) -> Callable[[Release], None]:
    return lambda r: setattr(r, "questions_bytes", data(r) if callable(data) else data)


def raw_taxonomy(data: bytes) -> Callable[[Release], None]:
    return lambda r: setattr(r, "taxonomy_bytes", data)


def tax(name: str, value: Any) -> Callable[[Release], None]:
    return lambda r: r.taxonomy["A2"].__setitem__(name, value)


def image_bytes(data: bytes | Callable[[], bytes]) -> Callable[[Release], None]:
    def edit(r: Release) -> None:
        (r.cell / IMAGE).parent.mkdir(parents=True, exist_ok=True)
        (r.cell / IMAGE).write_bytes(data() if callable(data) else data)

    return edit


def symlink_image(target: str) -> Callable[[Release], None]:
    def edit(r: Release) -> None:
        (r.cell / IMAGE).parent.mkdir(parents=True, exist_ok=True)
        (r.cell / f"{YEAR}_images/link.png").symlink_to(target)
        r.questions[1]["img"]["content_img"] = f"{YEAR}_images/link.png"

    return edit


def questions_as(encoding: str) -> Callable[[Release], None]:
    """The questions file written in another encoding than UTF-8."""
    return raw_questions(lambda r: json.dumps({"questions": r.questions}, ensure_ascii=False).encode(encoding))


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def png_bomb(width: int = 12_000, height: int = 12_000) -> bytes:
    """A valid one-bit PNG of `width` x `height` white pixels, a few kilobytes compressed."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    row = b"\x00" + b"\xff" * ((width + 7) // 8)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(row * height, 9))
        + chunk(b"IEND", b"")
    )


def afterwards(edit: Callable[[Path], None]) -> Callable[[Release], None]:
    """An edit of the release folder itself, made once it is written."""
    return lambda r: setattr(r, "after", edit)


@dataclass(frozen=True)
class Variant:
    name: str
    edit: Callable[[Release], None]
    rule: str | None  # the finding `medvqa validate` must report, or CLEAN_ERROR
    file: str = QUESTIONS  # the file the finding names


DEEP = b"[" * 200_000 + b"]" * 200_000

VARIANTS = [
    # the release JSON
    Variant("questions-not-json", raw_questions(b'{"questions": ['), "file"),
    Variant("questions-empty-file", raw_questions(b""), "file"),
    Variant("questions-top-level-list", raw_questions(b"[]"), "file"),
    Variant("questions-not-a-list", raw_questions(b'{"questions": {"A1": {}}}'), "file"),
    Variant("questions-200000-deep", raw_questions(b'{"questions": ' + DEEP + b"}"), "file"),
    Variant("questions-in-shift-jis", questions_as("shift_jis"), "file"),
    Variant("questions-in-utf-16", questions_as("utf-16"), "file"),
    Variant("questions-invalid-utf-8", raw_questions(b'{"questions": ["\xff\xfe"]}'), "file"),
    Variant(
        "number-of-5000-digits", raw_questions(b'{"questions": [{"question_number": ' + b"9" * 5000 + b"}]}"), "file"
    ),
    Variant("questions-file-missing", afterwards(lambda root: (root / CELL / QUESTIONS).unlink()), "file"),
    Variant("questions-file-is-a-folder", lambda r: (r.cell / QUESTIONS).mkdir(parents=True), "file"),
    Variant("record-not-an-object", replace_q(1, "not a record"), "record"),
    # ids
    Variant("question-number-object", setq(0, "question_number", {"n": 1}), "record-id"),
    Variant("question-number-10**400", setq(0, "question_number", 10**400), "record-id"),
    Variant("question-number-negative", setq(0, "question_number", -3), "record-id"),
    Variant("question-number-true", setq(0, "question_number", True), "record-id"),
    Variant("question-number-nan", setq(0, "question_number", float("nan")), "record-id"),
    Variant("question-number-null", setq(0, "question_number", None), "record-id"),
    Variant("section-null", setq(0, "section", None), "record-id"),
    Variant("section-a-number", setq(0, "section", 1), "record-id"),
    Variant("section-a-list", setq(0, "section", ["A"]), "record-id"),
    Variant("section-with-a-path", setq(0, "section", "A/../B"), "record-id"),
    Variant("section-missing", delq(0, "section"), "required-field"),
    Variant("duplicate-record", lambda r: r.questions.append(copy.deepcopy(r.questions[0])), "duplicate-record"),
    # texts and encodings
    Variant("question-text-lone-surrogate", setq(0, "question_text", "臓器\ud800はどれか"), "text-encoding"),
    Variant("option-text-lone-surrogate", option(0, "a", "心\udfff臓"), "text-encoding"),
    Variant("option-label-lone-surrogate", option(0, "\udc80", "x"), "text-encoding"),
    Variant("question-text-null", setq(0, "question_text", None), "text-field"),
    Variant("question-text-a-number", setq(0, "question_text", 42), "text-field"),
    Variant("question-text-500-deep", setq(0, "question_text", nested(500)), "text-field"),
    Variant("text-reference-an-object", setq(0, "text_reference", {"page": 3}), "text-field"),
    Variant("question-text-2-million-characters", setq(0, "question_text", "臓" * 2_000_000), "text-size"),
    # options
    Variant("option-text-null", option(0, "a", None), "option-keys"),
    Variant("option-text-an-object", option(0, "a", {"text": "心臓"}), "option-keys"),
    Variant("options-a-list", setq(0, "options", ["心臓", "肺"]), "option-keys"),
    Variant("options-a-string", setq(0, "options", "a. 心臓 b. 肺"), "option-keys"),
    Variant("option-labels-mixed", setq(0, "options", {"a": "心臓", "1": "肺"}), "option-keys"),
    Variant("option-label-empty", option(0, "", "空"), "option-keys"),
    # answers
    Variant("answer-an-object", setq(0, "correct_answer", {"answer": "C"}), "gold-format"),
    Variant("answer-true", setq(0, "correct_answer", True), "gold-format"),
    Variant("answer-three-deep", setq(0, "correct_answer", [[["C"]]]), "gold-format"),
    Variant("answer-empty-alternative", setq(0, "correct_answer", [[]]), "gold-format"),
    Variant("answer-with-null", setq(0, "correct_answer", ["C", None]), "gold-format"),
    Variant("answer-outside-options", setq(0, "correct_answer", ["Z"]), "gold-outside-options"),
    Variant("answer-a-float", setq(0, "correct_answer", 1.5), "gold-outside-options"),
    # images
    Variant("image-reference-nul-byte", content_img(f"{YEAR}_images/A2\x00.png"), "image-reference"),
    Variant("image-reference-absolute", content_img("/etc/hostname"), "image-escape"),
    Variant("image-reference-escapes", content_img("../../../../../etc/hostname"), "image-escape"),
    Variant("image-symlink-escapes", symlink_image("/etc/hostname"), "image-escape"),
    Variant("image-reference-5000-characters", content_img("a" * 5000 + ".png"), "image-reference"),
    Variant("image-reference-a-number", content_img(7), "image-reference"),
    Variant("img-a-list", setq(1, "img", [IMAGE]), "image-reference"),
    Variant("image-reference-a-folder", content_img(f"{YEAR}_images"), "image-missing"),
    Variant("image-not-an-image", image_bytes(b"GIF89a? no, plain text"), "image-unreadable"),
    Variant("image-truncated-png", image_bytes(lambda: png_bomb(64, 64)[:70]), "image-unreadable"),
    Variant("image-12000x12000", image_bytes(png_bomb), "image-size"),
    # the taxonomy file
    Variant("taxonomy-not-json", raw_taxonomy(b"{A2: Radiology}"), "file", TAXONOMY),
    Variant("taxonomy-a-list", raw_taxonomy(b"[]"), "file", TAXONOMY),
    Variant("taxonomy-200000-deep", raw_taxonomy(DEEP), "file", TAXONOMY),
    Variant("taxonomy-image-types-5", tax("image_types", 5), "taxonomy-format", TAXONOMY),
    Variant("taxonomy-image-types-numbers", tax("image_types", [1, 2]), "taxonomy-format", TAXONOMY),
    Variant(
        "taxonomy-entry-a-string", lambda r: r.taxonomy.__setitem__("A2", "Radiology"), "taxonomy-format", TAXONOMY
    ),
    Variant("taxonomy-dominant-type-a-list", tax("dominant_type", ["Radiology"]), "taxonomy-format", TAXONOMY),
    Variant("taxonomy-image-as-options-yes", tax("image_as_options", "yes"), "taxonomy-format", TAXONOMY),
    Variant("taxonomy-lone-surrogate", tax("dominant_type", "Radio\ud800logy"), "taxonomy-format", TAXONOMY),
    # flags and layout
    Variant("text-only-a-string", setq(0, "text_only", "true"), "text-only-flag"),
    Variant("image-as-options-a-string", setq(0, "image_as_options", "yes"), "flag-type"),
    Variant("empty-data-folder", afterwards(lambda root: shutil.rmtree(root / "JMed48k")), CLEAN_ERROR),
]


def build(variant: Variant, root: Path) -> Path:
    release = Release(root)
    variant.edit(release)
    release.write()
    if release.after is not None:
        release.after(root)
    return root


def medvqa(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEDVQA_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "medvqa.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=120,
    )


def assert_clean_failure(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 1, result.stderr[-2000:]
    assert result.stderr.startswith("Error: "), result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "Warning:" not in result.stderr, result.stderr[-2000:]


def test_the_table_has_a_variant_of_every_kind():
    assert len(VARIANTS) >= 45 and len({v.name for v in VARIANTS}) == len(VARIANTS)
    rules = {v.rule for v in VARIANTS}
    assert {
        "file",
        "record-id",
        "text-encoding",
        "text-size",
        "taxonomy-format",
        "image-size",
        "gold-format",
        "option-keys",
        "image-escape",
        CLEAN_ERROR,
    } <= rules


def test_the_base_release_is_valid_and_runs(tmp_path):
    data = build(Variant("none", lambda r: None, None), tmp_path / "data")
    validate = medvqa("validate", "jmed48k", "--data", str(data), "--json", cwd=tmp_path)
    assert validate.returncode == 0 and json.loads(validate.stdout)["findings"] == []
    run = medvqa(
        "run",
        "jmed48k",
        "--data",
        str(data),
        "--model",
        "random",
        "--run-dir",
        str(tmp_path / "run"),
        "--json",
        cwd=tmp_path,
    )
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert json.loads(run.stdout)["n_records"] == 4  # three items under C+Q, the image item also under C+Q+I


@pytest.mark.slow  # three real `medvqa` processes per variant: minutes in all
@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_bad_data_ends_in_a_finding_or_a_clean_error(variant, tmp_path):
    data = build(variant, tmp_path / "data")
    validate = medvqa("validate", "jmed48k", "--data", str(data), "--json", cwd=tmp_path)
    if variant.rule is CLEAN_ERROR:
        assert_clean_failure(validate)
    else:
        assert validate.returncode == 1 and validate.stderr == "", validate.stderr[-2000:]
        findings = json.loads(validate.stdout)["findings"]
        assert all(r["description"] for r in json.loads(validate.stdout)["rules"])  # every rule found is one declared
        hits = [f for f in findings if f["rule"] == variant.rule and f["level"] == "error"]
        assert hits, findings
        assert all(Path(f["file"]).name == variant.file for f in hits)
        if variant.rule != "file":  # a finding about a record names it
            assert all(f["section"] is not None or f["number"] is not None for f in hits), hits

    run_dir = tmp_path / "run"
    refused = medvqa(
        "run", "jmed48k", "--data", str(data), "--model", "random", "--run-dir", str(run_dir), cwd=tmp_path
    )
    assert_clean_failure(refused)
    assert not run_dir.exists()

    forced = medvqa(
        "run",
        "jmed48k",
        "--data",
        str(data),
        "--model",
        "random",
        "--run-dir",
        str(run_dir),
        "--allow-invalid",
        "--json",
        cwd=tmp_path,
    )
    if forced.returncode != 0:
        assert_clean_failure(forced)
        assert len(forced.stderr.strip().splitlines()) == 1, forced.stderr
        assert not run_dir.exists()
    else:  # whatever could be run was run, and every planned record is there, whole
        assert "Traceback" not in forced.stderr and "Warning:" not in forced.stderr, forced.stderr
        lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == json.loads(forced.stdout)["n_records"] > 0
        assert all(json.loads(line)["status"] for line in lines)
        assert json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["benchmark"] == "jmed48k"


def test_an_image_past_pillows_limit_is_an_error_for_its_request_only(tmp_path, monkeypatch, recwarn):
    """Run anyway (`--allow-invalid`) against the test server: the 12,000 x 12,000 PNG is an
    `error` record naming the file and the way out, with no warning printed; downscaled, it is sent."""
    from medvqa.core.run.options import RunOptions, run
    from medvqa.core.run.store import read_records
    from tests.openai_server import OpenAIServer

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    data = build(Variant("bomb", image_bytes(png_bomb), "image-size"), tmp_path / "data")
    with OpenAIServer() as server:

        def records(run_dir: str, **backend) -> dict:
            options = RunOptions(
                benchmark="jmed48k",
                model="hosted_vllm/test",
                data=str(data),
                allow_invalid=True,
                run_dir=str(tmp_path / run_dir),
                backend_options={"api_base": [server.url], **backend},
            )
            run(options, progress=False)
            return {(r["item_id"], r["condition"]): r for r in read_records(tmp_path / run_dir)}

        refused = records("refused")
        downscaled = records("downscaled", max_image_side=256)
    bomb = ("Physician_2031_A_Q2", "C+Q+I")
    assert refused[bomb]["status"] == "error" and str(data / CELL / IMAGE) in refused[bomb]["error"]
    assert refused[bomb]["error"].endswith("pass --max-image-side to send it downscaled")
    assert all(r["status"] == "answered" for key, r in refused.items() if key != bomb) and len(refused) == 4
    assert downscaled[bomb]["status"] == "answered"
    assert not [w for w in recwarn if "decompression" in str(w.message).lower()]


# Hostile answers over real HTTP: (the test server's fault, the status of every record, whether
# the answers are cached). One more line per new kind of answer.
ANSWERS = [
    ("null_content", "error", False),
    ("refusal", "refusal", False),
    ("deep_nesting", "parse_failure", None),  # cached only if the reader reads it without raising
    ("echo_key", "answered", True),
    ("lone_surrogate", "parse_failure", True),
]


@pytest.mark.parametrize("fault,status,cached", ANSWERS, ids=[a[0] for a in ANSWERS])
def test_hostile_answers_end_in_a_status_never_a_crash(fault, status, cached, tmp_path, monkeypatch):
    import sqlite3

    from medvqa.core.run.options import RunOptions, run
    from medvqa.core.run.store import read_records
    from tests.openai_server import Faults, OpenAIServer

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hostile-0123456789abcdef")
    with OpenAIServer(faults=Faults(**{fault: 1.0})) as server:
        options = RunOptions(
            benchmark="jmed48k",
            model="openai/test",
            sample=True,
            conditions="C+Q",
            run_dir=str(tmp_path / "run"),
            backend_options={"api_base": [server.url], "max_retries": 1, "retry_wait": 0.01},
        )
        result = run(options, progress=False)
    records = read_records(tmp_path / "run")
    assert len(result.records) == len(records) == 17 and {r["status"] for r in records} == {status}
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite3") as db:
        in_cache = {key for (key,) in db.execute("SELECT key FROM responses")}
    for r in records:
        assert (r["key"] in in_cache) == (cached if cached is not None else "scoring_error" not in r)
    assert b"sk-hostile" not in (tmp_path / "run" / "records.jsonl").read_bytes()


def strict_json(text: str):
    """`text` read as JSON is, without Python's extensions: `NaN` and `Infinity` are errors."""

    def refuse(constant: str):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_a_servers_hostile_usage_is_kept_as_null_and_every_json_stays_json(tmp_path, monkeypatch):
    """A server reports 7 prompt tokens (a count: kept), `NaN` completion tokens, `Infinity` in
    total and -30 reasoning tokens for every answer (the preflight's excepted, which would
    otherwise end the run: see the preflight's own test). Each record keeps prompt_tokens 7 and
    null for the rest; the sums count 7 × 17 = 119 prompt tokens and no completion token; the
    cost, which needs both counts, is unknown (0), never NaN; `run --json`, records.jsonl,
    manifest.json, `report --json` and `compare --json` are JSON (no NaN) and agree, and the
    summary warns once. A cache
    whose usage was poisoned afterwards is read back with the same checks."""
    import sqlite3

    from click.testing import CliRunner

    from medvqa.cli.main import cli
    from tests.openai_server import OpenAIServer

    probe = PROBE_MESSAGES[0]["content"]
    hostile = {
        "prompt_tokens": 7,
        "completion_tokens": float("nan"),
        "total_tokens": float("inf"),
        "completion_tokens_details": {"reasoning_tokens": -30},
    }
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = tmp_path / "run"
    server = OpenAIServer(usage=lambda text: None if text == probe else hostile).start()
    request = [
        "run",
        "jmed48k",
        "--sample",
        "--conditions",
        "C+Q",
        "--model",
        "hosted_vllm/test",
        "--api-base",
        server.url,
        "--price",
        "1000,2000",
        "--json",
    ]
    try:
        result = CliRunner().invoke(cli, [*request, "--run-dir", str(run_dir)])
        sent = sum(server.counts.values())
        # a cache poisoned the same way afterwards is read back as warily: every answer from it
        with sqlite3.connect(tmp_path / "cache" / "responses.sqlite3") as db:
            db.execute("""UPDATE responses SET usage = '{"prompt_tokens": NaN, "completion_tokens": 5}'""")
        again = CliRunner().invoke(cli, [*request, "--run-dir", str(tmp_path / "again")])
        assert sum(server.counts.values()) == sent == 17 + 1  # the answers and the preflight, once
    finally:
        server.stop()
    assert result.exit_code == 0, result.output[-2000:]
    summary = strict_json(result.output)
    records = [strict_json(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    strict_json((run_dir / "manifest.json").read_text())
    assert len(records) == 17
    assert all(r["usage"] == {"prompt_tokens": 7, "completion_tokens": None, "reasoning_tokens": None} for r in records)
    assert summary["usage"] == {"prompt_tokens": 119, "completion_tokens": 0, "reasoning_tokens": 0}
    assert summary["cost_usd"] == 0.0
    assert summary["usage_by_condition"] == {
        "C+Q": {"prompt_tokens": 119, "completion_tokens": 0, "reasoning_tokens": 0, "cost_usd": 0.0, "cached": 0}
    }
    assert summary["warnings"] == [
        "warning: 17 answers came with usage that is no count (completion_tokens, "
        "reasoning_tokens: negative, fractional, NaN, Infinity or text); kept as null and "
        "left out of the token and cost sums"
    ]
    report = CliRunner().invoke(cli, ["report", str(run_dir), "--json"])
    assert report.exit_code == 0, report.output[-2000:]
    rows = [row for row in strict_json(report.output) if row.get("prompt_tokens") is not None]  # by condition
    assert [(row["prompt_tokens"], row["completion_tokens"], row["cost_usd"]) for row in rows] == [(119, 0, 0.0)]
    assert again.exit_code == 0, again.output[-2000:]
    assert strict_json(again.output)["usage_by_condition"]["C+Q"]["completion_tokens"] == 5 * 17
    compared = CliRunner().invoke(cli, ["compare", str(run_dir), "--json"])
    assert compared.exit_code == 0, compared.output[-2000:]
    assert [
        (u["condition"], u["prompt_tokens"], u["completion_tokens"], u["cost_usd"])
        for u in strict_json(compared.output)["usage"]
    ] == [("C+Q", 119, 0, 0.0)]
    from_cache = [strict_json(line) for line in (tmp_path / "again" / "records.jsonl").read_text().splitlines()]
    assert [(r["usage"], r["cached"]) for r in from_cache] == [
        ({"prompt_tokens": None, "completion_tokens": 5}, True)
    ] * 17


# Hostile usage of `medvqa run`: each row is a usage error (status 2) naming its option, before
# anything is loaded, requested or written. One more line per new kind of bad value.
USAGE = [
    ("limit-negative", ["--model", "random", "--limit", "-1"], "--limit"),
    ("limit-zero", ["--model", "random", "--limit", "0"], "--limit"),
    ("conditions-empty", ["--model", "random", "--conditions="], "--conditions"),
    ("conditions-blank", ["--model", "random", "--conditions", " "], "--conditions"),
    ("max-error-rate-nan", ["--model", "random", "--max-error-rate", "nan"], "--max-error-rate"),
    ("temperature-nan", ["--model", "hosted_vllm/test", "--temperature", "nan"], "--temperature"),
    ("timeout-infinite", ["--model", "hosted_vllm/test", "--timeout", "inf"], "--timeout"),
    ("rpm-nan", ["--model", "hosted_vllm/test", "--rpm", "nan"], "--rpm"),
    ("api-base-not-a-url", ["--model", "hosted_vllm/test", "--api-base", "not a url"], "--api-base"),
    ("api-base-no-scheme", ["--model", "hosted_vllm/test", "--api-base", "127.0.0.1:8000/v1"], "--api-base"),
    ("api-base-port-not-a-number", ["--model", "hosted_vllm/test", "--api-base", "http://h:port/v1"], "--api-base"),
    ("max-response-bytes-zero", ["--model", "random", "--max-response-bytes", "0"], "--max-response-bytes"),
    ("price-negative", ["--model", "hosted_vllm/test", "--price", "-1,2"], "--price"),
    ("price-nan", ["--model", "hosted_vllm/test", "--price", "nan,1"], "--price"),
    ("price-infinite", ["--model", "hosted_vllm/test", "--price", "1,inf"], "--price"),
    ("max-retry-wait-infinite", ["--model", "hosted_vllm/test", "--max-retry-wait", "inf"], "--max-retry-wait"),
    ("max-retry-wait-negative", ["--model", "hosted_vllm/test", "--max-retry-wait", "-1"], "--max-retry-wait"),
]


@pytest.mark.parametrize("args,option", [u[1:] for u in USAGE], ids=[u[0] for u in USAGE])
def test_bad_values_are_usage_errors_naming_the_option(args, option, tmp_path):
    from click.testing import CliRunner

    from medvqa.cli.main import cli

    run_dir = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", "jmed48k", "--sample", "--run-dir", str(run_dir), *args])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output and "Traceback" not in result.output
    assert not run_dir.exists()


# Hostile run directories: what is planted in (or around) a run directory, the command run on it,
# its exit status and the one line it prints. Nothing outside the run directory changes, and the
# run directory is as it was. One more line per new kind of attack.


@dataclass(frozen=True)
class RunDirCase:
    name: str
    plant: Callable[[Path, Path], None]  # (run directory of a finished run, a file outside it)
    command: Callable[[Path, Path], list[str]]  # (run directory, release folder) -> arguments
    status: int
    line: str  # a regular expression for the whole line printed, with {run_dir} filled in


def link(name: str) -> Callable[[Path, Path], None]:
    def plant(run_dir: Path, victim: Path) -> None:
        (run_dir / name).unlink(missing_ok=True)
        (run_dir / name).symlink_to(victim)

    return plant


def cut_last_record(run_dir: Path, victim: Path) -> None:
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (run_dir / "records.jsonl").write_text("".join(lines[:-1]), encoding="utf-8")


def foreign(run_dir: Path, victim: Path) -> None:
    (run_dir / "manifest.json").unlink()
    (run_dir / "run.lock").unlink()
    (run_dir / "records.jsonl").write_text('{"id": 7, "label": "cat"}\n', encoding="utf-8")


def both(*plants):
    return lambda run_dir, victim: [p(run_dir, victim) for p in plants]


def RERUN(run_dir, data):
    return [
        "run",
        "kokushimd10",
        "--data",
        str(data),
        "--model",
        "random",
        "--conditions",
        "C+Q",
        "--run-dir",
        str(run_dir),
    ]


def RESCORE(run_dir, data):
    return ["score", str(run_dir), "--convention", "kokushimd10"]


LINK = (
    r"Error: {run_dir}/{name}: is a symbolic link: files in a run directory are never written through a link; "
    r"remove it, or choose another --run-dir"
)
RUN_DIRS = [
    RunDirCase("lock-is-a-link", both(cut_last_record, link("run.lock")), RERUN, 1, LINK.replace("{name}", "run.lock")),
    RunDirCase(
        "records-tmp-is-a-link",
        both(cut_last_record, link("records.jsonl.tmp")),
        RERUN,
        1,
        LINK.replace("{name}", r"records\.jsonl\.tmp"),
    ),
    RunDirCase(
        "manifest-tmp-is-a-link-under-score",
        link("manifest.json.tmp"),
        RESCORE,
        1,
        LINK.replace("{name}", r"manifest\.json\.tmp"),
    ),
    RunDirCase(
        "records-tmp-is-a-link-under-score",
        link("records.jsonl.tmp"),
        RESCORE,
        1,
        LINK.replace("{name}", r"records\.jsonl\.tmp"),
    ),
    RunDirCase("records-are-a-link", link("records.jsonl"), RESCORE, 1, LINK.replace("{name}", r"records\.jsonl")),
    RunDirCase(
        "foreign-folder-with-records",
        foreign,
        RERUN,
        1,
        r"Error: {run_dir}: holds records\.jsonl but no readable manifest\.json: not a run medvqa wrote; "
        r"choose another --run-dir",
    ),
]


@pytest.mark.parametrize("case", RUN_DIRS, ids=[c.name for c in RUN_DIRS])
def test_hostile_run_directories_are_refused_with_one_line_and_nothing_changes(case, tmp_path):
    from click.testing import CliRunner

    from medvqa.cli.main import cli
    from tests.adapters.kokushimd10.fixtures import kokushi_release

    data = kokushi_release(tmp_path / "data")
    run_dir = tmp_path / "run"
    assert CliRunner().invoke(cli, RERUN(run_dir, data)).exit_code == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    case.plant(run_dir, victim)
    before = {
        p.name: (p.is_symlink(), p.read_bytes() if p.is_file() and not p.is_symlink() else None)
        for p in run_dir.iterdir()
    }
    result = CliRunner().invoke(cli, case.command(run_dir, data))
    assert result.exit_code == case.status, result.output
    assert re.fullmatch(case.line.replace("{run_dir}", re.escape(str(run_dir))), result.output.strip()), result.output
    assert victim.read_text() == "precious\n"
    assert {
        p.name: (p.is_symlink(), p.read_bytes() if p.is_file() and not p.is_symlink() else None)
        for p in run_dir.iterdir()
    } == before


def test_score_during_a_run_says_so_and_changes_nothing(tmp_path):
    """`score` holds the run's lock: while another writer holds it, `score` fails at once naming
    it, whether or not it had anything to change; the manifest keeps its convention."""
    from click.testing import CliRunner

    from medvqa.cli.main import cli
    from medvqa.core.run.store import RunStore, read_manifest
    from tests.adapters.kokushimd10.fixtures import kokushi_release

    data = kokushi_release(tmp_path / "data")
    run_dir = tmp_path / "run"
    assert CliRunner().invoke(cli, RERUN(run_dir, data)).exit_code == 0
    manifest = read_manifest(run_dir)
    store = RunStore(run_dir)
    store.open(manifest)  # a run in progress holds the lock
    try:
        for args in (["score", str(run_dir)], RESCORE(run_dir, data)):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 1, result.output
            assert result.output.strip() == (
                f"Error: {run_dir}: in use by process {os.getpid()} (lock run.lock): "
                "wait for it to finish, or choose another --run-dir"
            )
    finally:
        store.close()
    assert read_manifest(run_dir) == manifest
    assert CliRunner().invoke(cli, RESCORE(run_dir, data)).exit_code == 0
    assert read_manifest(run_dir)["convention"] == "kokushimd10"


def test_a_failed_preflight_leaves_no_file_and_another_run_may_use_the_directory(tmp_path):
    """Nothing is written before the first record: after a preflight that fails (nothing listens
    at the server's port) there is no run directory, so `report` says so and a run with other
    parameters is not refused as "a different run"."""
    from click.testing import CliRunner

    from medvqa.cli.main import cli

    run_dir = tmp_path / "runs" / "run"
    failed = CliRunner().invoke(
        cli,
        [
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "hosted_vllm/test",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--max-retries",
            "0",
            "--run-dir",
            str(run_dir),
        ],
    )
    assert failed.exit_code == 3 and "preflight request to hosted_vllm/test" in failed.output, failed.output
    assert not (tmp_path / "runs").exists()
    report = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert report.exit_code != 0
    other = CliRunner().invoke(
        cli, ["run", "jmed48k", "--sample", "--model", "random", "--run-dir", str(run_dir), "--json"]
    )
    assert other.exit_code == 0, other.output
    assert json.loads(other.output)["n_records"] == 22


def test_html_pages_of_a_run_whose_image_is_a_decompression_bomb_are_written_without_its_thumbnail(tmp_path):
    """A 14,000 x 14,000 PNG (more than twice Pillow's pixel limit: a DecompressionBombError
    when opened) run anyway: `audit --html` and `compare --html` write their pages, showing the
    example without its thumbnail, with no traceback and no warning."""
    from click.testing import CliRunner

    from medvqa.cli.main import cli

    data = build(Variant("bomb", image_bytes(lambda: png_bomb(14_000, 14_000)), "image-size"), tmp_path / "data")
    run_dir = tmp_path / "run"
    ran = CliRunner().invoke(
        cli,
        [
            "run",
            "jmed48k",
            "--data",
            str(data),
            "--model",
            "random",
            "--allow-invalid",
            "--run-dir",
            str(run_dir),
            "--max-error-rate",
            "1",
            "--json",
        ],
    )
    assert ran.exit_code == 0, ran.output
    audit = CliRunner().invoke(
        cli, ["audit", str(run_dir), "--html", str(tmp_path / "audit.html"), "--resamples", "20"]
    )
    assert audit.exit_code == 0 and "Warning" not in audit.output, audit.output
    page = (tmp_path / "audit.html").read_text(encoding="utf-8")
    assert 'data-item="Physician_2031_A_Q2"' in page and '<img alt="A2.png"' not in page
    compare = CliRunner().invoke(
        cli, ["compare", str(run_dir), "--html", str(tmp_path / "c.html"), "--resamples", "20"]
    )
    assert compare.exit_code == 0 and "Warning" not in compare.output, compare.output
    [audit_page] = (tmp_path / "c-audits").iterdir()
    assert 'data-item="Physician_2031_A_Q2"' in audit_page.read_text(encoding="utf-8")


def test_a_page_named_like_a_url_links_to_its_audits_relatively(tmp_path, monkeypatch):
    """`compare --html 'javascript:alert(1).html'`: the links to its audit pages and item browser are `./`
    relative, percent-encoded and HTML-escaped, never a `javascript:` URL, and they resolve."""
    from html.parser import HTMLParser
    from urllib.parse import unquote

    from click.testing import CliRunner

    from medvqa.cli.main import cli

    monkeypatch.chdir(tmp_path)
    assert (
        CliRunner().invoke(cli, ["run", "jmed48k", "--sample", "--model", "random", "--run-dir", "run"]).exit_code == 0
    )
    result = CliRunner().invoke(cli, ["compare", "run", "--html", 'javascript:alert(1)"<b>.html', "--resamples", "20"])
    assert result.exit_code == 0, result.output
    hrefs = []

    class Links(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "a":
                hrefs.append(dict(attrs)["href"])

    Links().feed((tmp_path / 'javascript:alert(1)"<b>.html').read_text(encoding="utf-8"))
    stem = "./javascript%3Aalert%281%29%22%3Cb%3E"
    assert hrefs and all(h.startswith((f"{stem}-audits/", f"{stem}-items.html#")) for h in hrefs), hrefs
    assert any(h.startswith(f"{stem}-audits/") for h in hrefs) and any(
        h.startswith(f"{stem}-items.html#") for h in hrefs
    )
    assert all((tmp_path / unquote(h.split("#")[0])).is_file() for h in hrefs)

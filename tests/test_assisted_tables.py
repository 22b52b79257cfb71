"""Both numbers, everywhere: replayed answers in prose the strict reader cannot read, read by an
extractor (`score --extractor` against the local test server), give each built-in benchmark's own
tables (`report --table BENCH --json`, and its text) the assisted accuracy beside the strict one,
with the same n and value as `report --json` on the same cell, and leave every strict number of
those tables as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.adapters.jmed48k.professions import PROFESSIONS
from medvqa.cli.main import cli
from medvqa.core.run.store import read_records
from tests.conftest import REPO, shared_data
from tests.openai_server import OpenAIServer

pytestmark = pytest.mark.slow  # six runs, each extracted over real HTTP and read by every table

MODEL = "hosted_vllm/extractor"
ASSISTED = ("assisted_correct", "assisted_accuracy", "assisted_ci_low", "assisted_ci_high", "extracted")
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
BENCHMARKS = {  # name: (data, split, selection, conditions)
    "jmed48k": (lambda: shared_data("jmed48k-sample"), "sample", {}, ("C+Q", "C+Q+I")),
    "igakuqa": (lambda: shared_data("igakuqa"), None, {"block": ["116A"]}, ("C+Q",)),
    "yakugakuqa": (lambda: shared_data("yakugakuqa"), None, {"year": ["2012"]}, ("C+Q",)),
    "polish_pes": (lambda: REPO / "tests" / "adapters" / "polish_pes" / "data", None, {}, ("C+Q", "C+Q+I")),
    "mmbu_hard": (lambda: shared_data("mmbu-proxy"), None, {}, ("C+Q", "C+Q+I")),
    "worldmedqa_v": (lambda: shared_data("worldmedqa-v-japan"), None, {}, ("C+Q",)),
}


def prose(position: int) -> str:
    """An answer naming its option by position only: no label, no option text, nothing the strict
    reader (or VLMEvalKit's matching) reads."""
    return (
        f"Weighing the findings, my choice is the {ORDINALS[position]} of the listed options, "
        "though not with full certainty."
    )


def extractor_reply(prompt: str) -> str | None:
    """A faithful extractor: the label at the position the examinee's answer names."""
    if "The examinee's answer:" not in prompt:
        return None  # the preflight: the server's default
    answer = prompt.split("The examinee's answer:\n", 1)[1].split("\n\nReply with", 1)[0]
    labels = prompt.rsplit("Valid labels: ", 1)[1].strip().rstrip(".").split(", ")
    named = [i for i, word in enumerate(ORDINALS) if f"the {word} of the listed options" in answer]
    return labels[named[0]] if len(named) == 1 else "NONE"


def answers(items: list, conditions: tuple[str, ...]) -> tuple[list[dict], dict[tuple[str, str], bool]]:
    """Replay lines for every single-answer item: one in three a bare label, the others prose; every
    other answer right. Items of several answers, and those MHLW withdrew or credits to all, get no
    line (missing). Returns (lines, {(item, condition): right} of the prose answers)."""
    lines, prose_right = [], {}
    for i, it in enumerate(items):
        if (
            it.excluded
            or not it.options
            or it.gold is None
            or it.gold.format != "single"
            or it.meta.get("withdrawn")
            or it.meta.get("credited_to_all")
        ):
            continue
        gold = it.gold.alternatives[0][0]
        for cond in conditions:
            right = (i + len(cond)) % 2 == 0
            position = next(p for p, o in enumerate(it.options) if (o.key == gold) == right)
            if i % 3 == 0:
                text = it.options[position].label
            else:
                text = prose(position)
                prose_right[(it.id, cond)] = right
            lines.append({"item_id": it.id, "condition": cond, "response": text})
    return lines, prose_right


def invoke(*args, codes=(0,)) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code in codes, result.output
    return result.stdout


def report(run_dir: Path, by: str, reading: str = "strict") -> list[dict]:
    """`report --by BY --json` under `reading` (strict: the assisted columns beside the headline)."""
    return json.loads(invoke("report", run_dir, "--by", by, "--json", "--reading", reading))


def strict(tables: dict) -> dict:
    """The tables without their assisted columns."""

    def rows(t):
        return t["rows"] if isinstance(t, dict) else t

    return {name: [{k: v for k, v in r.items() if k not in ASSISTED} for r in rows(t)] for name, t in tables.items()}


def plan(bench: str, tables: dict) -> list[tuple[list[dict], str, callable]]:
    """(rows of a benchmark's table, the `report --by` fields of the same cells, the report key of a
    row): which of its tables count the same cells as `report`."""
    rows = {name: (t["rows"] if isinstance(t, dict) else t) for name, t in tables.items()}
    if bench in ("igakuqa", "yakugakuqa"):
        return [
            (rows["by_block"], "block", lambda r: (r["condition"], r["block"])),
            (rows["by_year"], "year", lambda r: (r["condition"], r["year"])),
        ]
    if bench == "polish_pes":
        sets = {"VQA": "vqa", "QA": "qa"}
        return [
            (rows["configurations"], "set", lambda r: (r["condition"], sets[r["set"]])),
            (rows["visual_domain"], "visual_domain", lambda r: (r["condition"], r["visual_domain"])),
        ]
    if bench == "worldmedqa_v":
        return [(rows["by_country"], "country,language", lambda r: (r["condition"], r["country"], r["language"]))]
    if bench == "mmbu_hard":
        return [
            (
                [r for r in rows["micro_f1"] if r["format"] == "closed"],
                "task,format",
                lambda r: (r["condition"], r["task"], r["format"]),
            )
        ]
    names = {v: k for k, v in PROFESSIONS.items()}  # jmed48k: its tables name professions in English
    # a profession whose image items all have their images is the C+Q+I cell of report
    with_images = [r for r in rows["with_images"] if r["profession"] != "Macro average" and r["without_image"] == 0]
    assert with_images
    return [
        (
            [r for r in rows["text_only"] if r["profession"] != "Macro average"],
            "profession,has_image",
            lambda r: ("C+Q", names.get(r["profession"], r["profession"]), "false"),
        ),
        (with_images, "profession,has_image", lambda r: ("C+Q+I", names.get(r["profession"], r["profession"]), "true")),
    ]


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("assisted")
    runs = {}
    for bench, (data, split, select, conditions) in BENCHMARKS.items():
        items = medvqa.load(bench, data(), split, select=select) if select else medvqa.load(bench, data(), split)
        lines, prose_right = answers(items, conditions)
        replay = tmp / f"{bench}.jsonl"
        replay.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
        run_dir = tmp / bench
        args = [
            "run",
            bench,
            "--data",
            data(),
            "--model",
            f"replay:{replay}",
            "--conditions",
            ",".join(conditions),
            "--run-dir",
            run_dir,
            "--no-cache",
            "--json",
        ]
        args += ["--split", split] if split else []
        args += [a for field, values in select.items() for a in ("--select", f"{field}={','.join(values)}")]
        invoke(*args, codes=(0, 4))  # 4: the items left without an answer are missing
        before = json.loads(invoke("report", run_dir, "--table", bench, "--json", "--reading", "strict"))
        runs[bench] = (run_dir, prose_right, before)
    asked: list[str] = []

    def reply(prompt: str) -> str | None:
        if "The examinee's answer:" in prompt:
            asked.append(prompt)
        return extractor_reply(prompt)

    with OpenAIServer(reply=reply) as server:
        for bench, (run_dir, prose_right, _) in runs.items():
            n = len(asked)
            doc = json.loads(
                invoke("score", run_dir, "--extractor", MODEL, "--extractor-api-base", server.url, "--json")
            )
            # the prose answers of the pairs the run holds, and only those, were read (an item's prose
            # under C+Q and C+Q+I is one extractor prompt: asked once)
            held = {(r["item_id"], r["condition"]) for r in read_records(run_dir)}
            e = doc["extracted"]
            prompts = {(p[0], prose_right[p]) for p in held & set(prose_right)}
            assert e["extracted"] == len(held & set(prose_right)) and e["unread"] == 0, bench
            assert len(asked) - n == e["requested"] == len(prompts), bench
    return runs


@pytest.mark.parametrize("bench", list(BENCHMARKS))
def test_each_benchmark_table_shows_the_assisted_accuracy_of_report(extracted, bench):
    run_dir, prose_right, before = extracted[bench]
    records = {(r["item_id"], r["condition"]): r for r in read_records(run_dir)}
    overall = {r["condition"]: r for r in report(run_dir, "")}
    # by construction: the prose answers are the parse failures, each read by the extractor, and the
    # assisted reading adds the right ones to the strict count
    for cond, row in overall.items():
        pairs = [p for p in prose_right if p[1] == cond and p in records]
        assert row["parse_failure"] == row["extracted"] == len(pairs) > 0, (bench, cond)
        assert row["assisted_correct"] - row["correct"] == sum(prose_right[p] for p in pairs) > 0, (bench, cond)
        assert row["assisted_accuracy"] == row["assisted_correct"] / row["n"]

    after = json.loads(invoke("report", run_dir, "--table", bench, "--json", "--reading", "strict"))
    assert strict(after) == strict(before)  # every strict number of every table as it was
    checked = 0
    for rows, by, key in plan(bench, after):
        cells = {}
        for r in report(run_dir, by):
            cells[(r["condition"], *(r[f] for f in by.split(",")))] = r
        for row in rows:
            want = cells[key(row)]
            assert row["n"] == want["n"], (bench, key(row))
            assert {k: row.get(k) for k in ASSISTED} == {k: want.get(k) for k in ASSISTED}, (bench, key(row))
            checked += row.get("extracted") is not None and row["extracted"] > 0
    assert checked > 0  # a cell with an extraction was compared
    if bench == "jmed48k":  # the macro average: the rows' assisted accuracies (strict where none was read), averaged
        for table in ("text_only", "with_images", "dominant_type", "any_type"):
            *rows, macro = after[table]["rows"]
            assisted = [r["correct"] if r["assisted_correct"] is None else r["assisted_correct"] for r in rows]
            assert macro["assisted_correct"] == sum(assisted) and macro["extracted"] == sum(
                r["extracted"] or 0 for r in rows
            )
            assert macro["assisted_accuracy"] == pytest.approx(
                sum(a / r["n"] for a, r in zip(assisted, rows)) / len(rows)
            )
            assert macro["assisted_ci_low"] < macro["assisted_accuracy"] < macro["assisted_ci_high"]
    text = invoke("report", run_dir, "--table", bench, "--format", "text", "--reading", "strict")
    assert "assisted accuracy %" in text


def test_compare_shows_the_assisted_accuracy_of_report_beside_the_strict_one(extracted):
    doc = json.loads(
        invoke(
            "compare",
            *[run_dir for run_dir, _, _ in extracted.values()],
            "--json",
            "--resamples",
            "20",
            "--reading",
            "strict",
        )
    )
    rows = {(r["benchmark"], r["condition"]): r for r in doc["table"] if r["stratum"] == "overall"}
    for bench, (run_dir, _, _) in extracted.items():
        for want in report(run_dir, ""):
            row = rows[(bench, want["condition"])]
            assert row["n"] == want["n"] and row["extracted"] == want["extracted"] > 0, (bench, want["condition"])
            assert (row["assisted_accuracy"], row["assisted_ci_low"], row["assisted_ci_high"]) == (
                want["assisted_accuracy"],
                want["assisted_ci_low"],
                want["assisted_ci_high"],
            )


@pytest.mark.parametrize("bench", list(BENCHMARKS))
def test_each_reading_is_one_reading_in_every_output(extracted, bench):
    """The reading dimension of the results model: each benchmark's headline is its protocol's
    reading (WorldMedQA-V assisted, every other built-in benchmark strict; docs/scoring.md), and
    under either `--reading` the run summary's numbers, `report`, the benchmark's own tables,
    `compare` and the audit's marginals give each cell one n and one value, the other reading
    beside it; the assisted headline is the strict headline's assisted column, and back."""
    from medvqa.core import plugins

    run_dir, _, _ = extracted[bench]
    protocol = plugins.get_benchmark(bench).reading
    assert protocol == ("assisted" if bench == "worldmedqa_v" else "strict")
    default = json.loads(invoke("report", run_dir, "--by", "", "--json"))
    assert {r["reading"] for r in default} == {protocol}
    by_reading = {}
    for reading in ("strict", "assisted"):
        other = "assisted" if reading == "strict" else "strict"
        rows = {r["condition"]: r for r in report(run_dir, "", reading)}
        by_reading[reading] = rows
        compare = json.loads(invoke("compare", run_dir, "--json", "--resamples", "20", "--reading", reading))
        assert compare["reading"] == reading
        table = {r["condition"]: r for r in compare["table"] if r["stratum"] == "overall"}
        marginals = json.loads(invoke("audit", run_dir, "--json", "--resamples", "20", "--reading", reading))
        assert marginals["reading"] == reading
        for cond, row in rows.items():
            assert row["reading"] == reading and row[f"{other}_accuracy"] is not None, (bench, reading, cond)
            for cell in (table[cond], marginals["marginals"]["overall"][cond]):
                assert cell["n"] == row["n"] and cell["accuracy" if "accuracy" in cell else "value"] == pytest.approx(
                    row["accuracy"] if bench != "mmbu_hard" or "accuracy" in cell else cell["value"], abs=1e-12
                )
            assert table[cond][f"{other}_accuracy"] == row[f"{other}_accuracy"]
        tables = json.loads(invoke("report", run_dir, "--table", bench, "--json", "--reading", reading))
        assert all(t["reading"] == reading for t in tables.values())
    for cond, strict_row in by_reading["strict"].items():
        assisted_row = by_reading["assisted"][cond]
        assert assisted_row["n"] == strict_row["n"] and assisted_row["extracted"] == strict_row["extracted"]
        assert (
            assisted_row["correct"]
            == strict_row["assisted_correct"]
            > strict_row["correct"]
            == assisted_row["strict_correct"]
        )
        assert (assisted_row["ci_low"], assisted_row["ci_high"]) == (
            strict_row["assisted_ci_low"],
            strict_row["assisted_ci_high"],
        )
        # the extractor named an option for every prose answer: no parse failure is left under it
        assert assisted_row["parse_failure"] == 0 < strict_row["parse_failure"]

"""The assisted reading over real HTTP: a replay of 60 answers, 40 of them prose the strict reader
cannot read, warns; `score --extractor` against the local test server asks exactly the 40 parse
failures, a second pass asks nothing, strict numbers stay as they were, and the assisted accuracy
appears beside the strict one in the summary, `report`, `compare` and `audit --json`."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.plugins import get_benchmark
from medvqa.core.run.store import read_records
from medvqa.core.scoring.extract import ExtractorPrompt
from tests.conftest import shared_data
from tests.openai_server import OpenAIServer

MODEL = "hosted_vllm/extractor"
N_LETTER, N_LETTER_RIGHT, N_PROSE, N_PROSE_RIGHT = 20, 15, 40, 30
_OPTION = re.compile(r"^([a-z])\. (.+)$", re.M)


def extractor_reply(prompt: str) -> str | None:
    """A faithful extractor: the label of the option whose text the examinee's answer quotes."""
    if "The examinee's answer:" not in prompt:
        return None  # the preflight: the server's default
    options = prompt.split("Options:\n", 1)[1].split("\n\nThe examinee's answer:", 1)[0]
    answer = prompt.split("The examinee's answer:\n", 1)[1].split("\n\nReply with", 1)[0]
    quoted = [label for label, text in _OPTION.findall(options) if f"「{text}」" in answer]
    return quoted[0] if len(quoted) == 1 else "NONE"


def run_cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    """60 IgakuQA answers under C+Q: 20 labels (15 right), 40 prose sentences quoting an
    option's text (30 the right one)."""
    data = shared_data("igakuqa")
    bench = get_benchmark("igakuqa")
    select = {"block": ["116A"]}
    usable = [
        it
        for it in bench.load(data, select=select)
        if it.options
        and not it.excluded
        and it.gold.format == "single"
        and not it.meta["withdrawn"]
        and not it.meta["credited_to_all"]
    ]
    chosen = {**select, "number": [str(it.meta["number"]) for it in usable[:60]]}
    items = bench.load(data, select=chosen)
    assert len(items) == 60
    answers = []
    for i, it in enumerate(items):
        gold = it.gold.alternatives[0][0]
        right = i < N_LETTER_RIGHT or N_LETTER <= i < N_LETTER + N_PROSE_RIGHT
        option = next(o for o in it.options if (o.key == gold) == right)
        text = option.label if i < N_LETTER else f"症状と所見から考えると、「{option.text}」が最も適切と考えられます。"
        answers.append((it, "C+Q", text))
    run_dir = tmp_path_factory.mktemp("replay") / "run"
    summary = medvqa.write_run(
        bench, items, answers, run_dir, model="replayed", load={"data": str(data), "select": chosen}, saved=False
    )
    return run_dir, summary


@pytest.mark.slow
def test_a_replay_of_prose_warns_and_the_extractor_reads_only_the_parse_failures(replay, tmp_path):
    run_dir, summary = replay
    cq = summary["conditions"]["C+Q"]
    assert (cq["n"], cq["parse_failure"], cq["correct"]) == (60, N_PROSE, N_LETTER_RIGHT)
    # the loud warning: one line naming the share (40 of 60 = 66.7 %) and both remedies
    assert len(summary["warnings"]) == 1
    assert "40 of 60 answers (66.7 %)" in summary["warnings"][0]
    assert "--convention" in summary["warnings"][0] and "--extractor" in summary["warnings"][0]
    before = {(r["item_id"], r["condition"]): r for r in read_records(run_dir)}
    assert "assisted_accuracy" not in cq  # no extraction yet: the strict number only

    asked: list[str] = []

    def reply(prompt: str) -> str | None:
        if "The examinee's answer:" in prompt:
            asked.append(prompt)
        return extractor_reply(prompt)

    with OpenAIServer(reply=reply) as server:
        first = json.loads(
            run_cli("score", str(run_dir), "--extractor", MODEL, "--extractor-api-base", server.url, "--json")
        )
        assert len(asked) == N_PROSE  # exactly the parse failures, each once
        e = first["extracted"]
        assert (e["n_extractable"], e["requested"], e["extracted"], e["unread"]) == (N_PROSE, N_PROSE, N_PROSE, 0)
        assert e["prompt_hash"] == ExtractorPrompt().hash
        again = json.loads(
            run_cli("score", str(run_dir), "--extractor", MODEL, "--extractor-api-base", server.url, "--json")
        )
        assert len(asked) == N_PROSE and again["extracted"]["requested"] == 0
        assert again["extracted"]["already_extracted"] == N_PROSE
        # a copy of the run, never read, is read from the response cache: no request either
        copy = tmp_path / "copy"
        shutil.copytree(run_dir, copy)
        for rec_file in [copy / "records.jsonl"]:
            lines = [json.loads(x) for x in rec_file.read_text().splitlines()]
            rec_file.write_text(
                "".join(json.dumps({k: v for k, v in r.items() if k != "assisted"}) + "\n" for r in lines)
            )
        cached = json.loads(
            run_cli("score", str(copy), "--extractor", MODEL, "--extractor-api-base", server.url, "--json")
        )
        assert len(asked) == N_PROSE and cached["extracted"]["cache_hits"] == N_PROSE
    # the warning stays (the strict reading is the headline) and now says how many the extractor read
    assert len(first["warnings"]) == 1 and "40 read by the extractor" in first["warnings"][0]

    after = {(r["item_id"], r["condition"]): r for r in read_records(run_dir)}
    strict = ("status", "predicted", "correct", "rule", "response")
    assert all({k: after[p].get(k) for k in strict} == {k: before[p].get(k) for k in strict} for p in before)
    read = [r for r in after.values() if r.get("assisted")]
    assert len(read) == N_PROSE and all(r["status"] == "parse_failure" for r in read)
    assert all(
        r["assisted"]["source"] == "extractor"
        and r["assisted"]["extractor"] == MODEL
        and r["assisted"]["prompt_hash"] == ExtractorPrompt().hash
        for r in read
    )
    assert sum(r["assisted"]["correct"] for r in read) == N_PROSE_RIGHT

    # strict 15 / 60 = 25 %; assisted (15 + 30) / 60 = 75 %, in every command
    strict_acc, assisted_acc = N_LETTER_RIGHT / 60, (N_LETTER_RIGHT + N_PROSE_RIGHT) / 60
    cell = e["conditions"]["C+Q"]
    assert (cell["accuracy"], cell["assisted_accuracy"], cell["extracted"]) == (strict_acc, assisted_acc, N_PROSE)
    rows = json.loads(run_cli("report", str(run_dir), "--by", "", "--json"))
    assert (rows[0]["accuracy"], rows[0]["assisted_accuracy"]) == (strict_acc, assisted_acc)
    text = CliRunner().invoke(cli, ["report", str(run_dir), "--by", "", "--format", "text"])
    assert "assisted" in text.stdout and "66.7 %" in text.stderr  # the warning, off the table's stream
    compared = json.loads(run_cli("compare", str(run_dir), "--json"))
    row = next(r for r in compared["table"] if r["condition"] == "C+Q" and r["stratum"] == "overall")
    assert (row["value"], row["assisted_accuracy"]) == (strict_acc, assisted_acc)
    audited = json.loads(run_cli("audit", str(run_dir), "--json"))
    assert json.dumps(audited).count('"assisted_accuracy": 0.75') >= 1


def test_the_extractor_reads_labels_none_and_json_and_refuses_what_is_no_label():
    bench = get_benchmark("igakuqa")
    item = next(it for it in bench.load(shared_data("igakuqa"), select={"block": ["116A"]}) if len(it.options) == 5)
    p = ExtractorPrompt()
    assert p.read(item, "b") == ("B",) and p.read(item, " C. ") == ("C",)
    assert p.read(item, '{"answer": ["a"]}') == ("A",) and p.read(item, "a, e") == ("A", "E")
    assert p.read(item, "NONE") == () and p.read(item, "none") == ()
    assert p.read(item, "f") is None and p.read(item, "I think it is b") is None and p.read(item, None) is None
    text = p.messages(item, {"response": "「x」"})[0]["content"]
    assert "Valid labels: a, b, c, d, e." in text and item.question in text


@pytest.mark.slow
def test_run_with_an_extractor_reads_the_parse_failures_once_the_answers_are_in(tmp_path):
    """A model that answers in prose only: every answer is a parse failure (the run warns); an
    extractor that always reads "a" makes the assisted accuracy the share of items whose key is A."""
    data = shared_data("igakuqa")
    items = get_benchmark("igakuqa").load(data, select={"block": ["116A"]})[:20]
    gold_a = sum(it.gold.alternatives == (("A",),) for it in items)
    assert 0 < gold_a < 20
    asked: list[str] = []

    def reply(prompt: str) -> str | None:
        if "The examinee's answer:" in prompt:
            asked.append(prompt)
            return "a"
        if "Valid labels" in prompt or "選択肢" in prompt or "\na" in prompt:
            return "どれも決め手に欠けますが、臨床的には慎重な経過観察が望ましいと考えます。"
        return None

    with OpenAIServer(reply=reply) as server:
        out = json.loads(
            run_cli(
                "run",
                "igakuqa",
                "--data",
                str(data),
                "--select",
                "block=116A",
                "--limit",
                "20",
                "--conditions",
                "C+Q",
                "--model",
                "hosted_vllm/m",
                "--api-base",
                server.url,
                "--response-format",
                "none",
                "--extractor",
                MODEL,
                "--extractor-api-base",
                server.url,
                "--run-dir",
                str(tmp_path / "r"),
                "--json",
            )
        )
    cq = out["conditions"]["C+Q"]
    assert cq["n"] == 20 and cq["parse_failure"] == 20 and cq["correct"] == 0
    assert out["extracted"]["requested"] == len(asked) == 20
    assert cq["extracted"] == 20 and cq["assisted_correct"] == gold_a and cq["assisted_accuracy"] == gold_a / 20
    assert len(out["warnings"]) == 1 and "20 of 20 answers (100.0 %)" in out["warnings"][0]


def test_the_extractor_reads_numeric_labels_as_labels(jmed_sample):
    """JMed48k's nurses' items (and YakugakuQA's) are labelled 1-5: the reply "1" is JSON's number
    1, read as the label "1", never refused as no label."""
    item = next(it for it in get_benchmark("jmed48k").load(jmed_sample, "sample") if it.id == "Nurse_2023_AM_Q3")
    assert [o.label for o in item.options] == ["1", "2", "3", "4", "5"]
    p = ExtractorPrompt()
    assert p.read(item, "1") == ("1",) and p.read(item, "3.") == ("3",) and p.read(item, "2, 4") == ("2", "4")
    assert p.read(item, '{"answer": [3]}') == ("3",) and p.read(item, '{"answer": 5}') == ("5",)
    assert p.read(item, "6") is None and p.read(item, "true") is None and p.read(item, "NONE") == ()

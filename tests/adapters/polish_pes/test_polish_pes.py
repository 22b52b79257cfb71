"""Polish PES: prompts, answer reading, conditions, the loader's rules, the Hub path, structured
output over HTTP, and every report table on a replay whose accuracies are computed by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import huggingface_hub
import pytest
from click.testing import CliRunner

import medvqa
from medvqa.adapters.polish_pes import prompts
from medvqa.adapters.polish_pes.benchmark import PolishPES
from medvqa.adapters.polish_pes.tables import pes_tables
from medvqa.cli.main import cli
from medvqa.core.conditions import ALL, plan
from medvqa.core.inference.base import request_key
from medvqa.core.run.store import read_manifest, read_records

FIXTURE = Path(__file__).parent / "data"

# The two system prompts are read from the paper itself (../shared/papers/polish-pes-vqa.txt,
# Appendix A.1 and A.2, the "Polish prompt." quotes), with the text extraction's artifacts undone
# as the papers' README describes them: a backslash before punctuation is dropped, and the spaces
# lost around the inline markup `<LETTER>` and `"response"` are restored.
PAPER = Path(__file__).resolve().parents[3].parent / "shared" / "papers" / "polish-pes-vqa.txt"


def paper_prompt(section: str) -> str:
    text = PAPER.read_text(encoding="utf-8")
    body = text[text.index(f"### A\\.{section}") :]
    quote = body[body.index("##### Polish prompt") :].split("\n> ", 1)[1].split("\n", 1)[0]
    quote = re.sub(r"\\(.)", r"\1", quote)  # \. \{ \} \> -> . { } >
    quote = re.sub(r"(\w)(<LETTER>)(\w)", r"\1 \2 \3", quote)  # Zastąp<LETTER>jedną
    return re.sub(r'(\w)("response")(\w)', r"\1 \2 \3", quote)  # Pole"response"musi


SYSTEM_WITH_QUESTION = paper_prompt("1")
SYSTEM_OPTIONS_ONLY = paper_prompt("2")
A3_SCHEMA = {
    "type": "object",
    "properties": {"response": {"type": "string", "enum": ["A", "B", "C", "D", "E"]}},
    "required": ["response"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def items():
    return {it.id: it for it in medvqa.load("polish_pes", FIXTURE)}


def texts(messages):
    user = messages[1]["content"]
    return user if isinstance(user, str) else "\n\n".join(p["text"] for p in user if p["type"] == "text")


def images(messages):
    user = messages[1]["content"]
    return [] if isinstance(user, str) else [p for p in user if p["type"] == "image"]


# ------------------------------------------------------------------ prompts and schema


def test_prompts_are_appendix_a_verbatim_and_the_schema_is_a3():
    # spot checks that the paper was read and its artifacts undone, worked out by hand from A.1
    assert SYSTEM_WITH_QUESTION.startswith("Odpowiadasz na pytania jednokrotnego wyboru A–E z testu medycznego")
    assert '{"response": "<LETTER>"} Zastąp <LETTER> jedną wybraną literą' in SYSTEM_WITH_QUESTION
    assert 'Pole "response" musi być typu string.' in SYSTEM_WITH_QUESTION and "\\" not in SYSTEM_WITH_QUESTION
    assert "Nie otrzymujesz treści pytania. Masz tylko odpowiedzi A–E." in SYSTEM_OPTIONS_ONLY
    assert "treści pytania" not in SYSTEM_WITH_QUESTION
    assert prompts.SYSTEM_WITH_QUESTION.encode() == SYSTEM_WITH_QUESTION.encode()
    assert prompts.SYSTEM_OPTIONS_ONLY.encode() == SYSTEM_OPTIONS_ONLY.encode()
    assert prompts.RESPONSE_SCHEMA == A3_SCHEMA
    assert PolishPES().response_schema(None) == A3_SCHEMA
    assert PolishPES().answer_conventions().answer_key == "response"


def test_each_configuration_gets_its_system_prompt_and_the_image_never_changes_the_text(items):
    bench, item = PolishPES(), items["pes-v-kar-02"]
    msgs = {c.value: bench.render(item, c) for c in ALL}
    for cond in ("C+Q", "C+Q+I"):
        assert msgs[cond][0] == {"role": "system", "content": SYSTEM_WITH_QUESTION}
        assert item.question in texts(msgs[cond])
    for cond in ("C", "C+I"):
        assert msgs[cond][0] == {"role": "system", "content": SYSTEM_OPTIONS_ONLY}
        assert item.question not in texts(msgs[cond])
    assert texts(msgs["C+Q+I"]) == texts(msgs["C+Q"]) and texts(msgs["C+I"]) == texts(msgs["C"])
    assert texts(msgs["C"]) == "\n".join(f"{k}. {item.options['ABCDE'.index(k)].text}" for k in "ABCDE")
    assert [len(images(msgs[c])) for c in ("C", "C+Q", "C+I", "C+Q+I")] == [0, 0, 2, 2]  # ECG and the table
    for m in msgs.values():  # nothing says an image is shown or missing (A.2's "braku" is the question text's)
        assert not any(w in texts(m).lower() + m[0]["content"].lower() for w in ("obraz", "zdjęci", "rycin"))


# ------------------------------------------------------------------ answers


@pytest.mark.parametrize(
    "reply, predicted, status",
    [
        ('{"response": "C"}', ["C"], "answered"),
        ('{"response":"c"}', ["C"], "answered"),
        ('```json\n{"response": "C"}\n```', ["C"], "answered"),
        ("C", ["C"], "answered"),
        ("Odpowiedź: C", ["C"], "answered"),
        ("Po analizie zapisu prawidłowa odpowiedź to C.", ["C"], "answered"),
        ("Poprawna odpowiedź: c", ["C"], "answered"),
        ('{"response": "F"}', None, "parse_failure"),
        ("Przepraszam, ale nie mogę odpowiedzieć na to pytanie bez dodatkowych informacji.", None, "refusal"),
        ("Nie jestem w stanie jednoznacznie wskazać odpowiedzi.", None, "refusal"),
    ],
)
def test_answers_are_read_from_response_and_polish_phrases(items, reply, predicted, status):
    s = medvqa.score(items["pes-v-kar-01"], reply)  # gold C
    assert (list(s.predicted) if s.predicted else None, s.status, s.correct) == (predicted, status, predicted == ["C"])


# ------------------------------------------------------------------ items and conditions


def test_vqa_items_admit_four_configurations_qa_two_and_annulled_items_none(items):
    assert len(items) == 14
    excluded = {i for i, it in items.items() if it.excluded}
    assert excluded == {"pes-v-kar-03", "pes-q-int-02"}
    assert items["pes-v-kar-03"].exclusion_reason.startswith("annulled by CEM: Pytanie unieważnione")
    pairs = plan(list(items.values()), ALL)
    per_item = {}
    for item, cond in pairs:
        per_item.setdefault(item.id, []).append(cond.value)
    assert set(per_item) == set(items) - excluded
    assert all(per_item[i] == ["C", "C+Q", "C+I", "C+Q+I"] for i in per_item if i.startswith("pes-v"))
    assert all(per_item[i] == ["C", "C+Q"] for i in per_item if i.startswith("pes-q"))
    assert len(pairs) == 7 * 4 + 5 * 2  # 7 valid VQA items in four configurations, 5 QA items in two


def test_select_and_the_years_and_professions_keywords_are_the_same_selection():
    a = medvqa.load(
        "polish_pes", FIXTURE, select={"year": ["2026"], "specialty": ["Radiologia i diagnostyka obrazowa"]}
    )
    b = medvqa.load("polish_pes", FIXTURE, years=[2026], professions=["Radiologia i diagnostyka obrazowa"])
    assert [i.id for i in a] == [i.id for i in b] == ["pes-v-rad-01", "pes-v-rad-02", "pes-q-rad-01"]
    assert [i.id for i in medvqa.load("polish_pes", FIXTURE, "qa")][:2] == ["pes-q-kar-01", "pes-q-kar-02"]
    with pytest.raises(
        ValueError, match=r"--select colour: polish_pes items have no field 'colour'; fields: .*specialty"
    ):
        medvqa.load("polish_pes", FIXTURE, select={"colour": ["red"]})
    # the benchmark's selection: values case-blind, a stratum alias, a list-valued stratum
    assert [
        i.id
        for i in medvqa.load(
            "polish_pes", FIXTURE, select={"specialty": ["RADIOLOGIA I DIAGNOSTYKA OBRAZOWA"], "year": ["2026"]}
        )
    ] == [i.id for i in a]
    by_domain = medvqa.load("polish_pes", FIXTURE, select={"domain": ["waveform"]})
    assert by_domain and all("WAVEFORM" in i.meta["visual_domain"] for i in by_domain)


# ------------------------------------------------------------------ the loader's rules


def write(tmp_path, vqa_rows, qa_rows=()):
    (tmp_path / "images").mkdir(exist_ok=True)
    (tmp_path / "images" / "ekg.png").write_bytes((FIXTURE / "images" / "ekg.png").read_bytes())
    for name, rows in (("vqa.jsonl", vqa_rows), ("qa.jsonl", qa_rows)):
        (tmp_path / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return tmp_path


def vqa_row(**changes):
    row = {
        "id": "v1",
        "year": 2024,
        "quarter": "Spring",
        "specialty": "Kardiologia",
        "sheet": "K1",
        "question": "Pytanie?",
        "options": {k: f"odp {k}" for k in "ABCDE"},
        "answer": "A",
        "images": ["images/ekg.png"],
        "image_importance": 2,
        "visual_domains": ["WAVEFORM"],
        "invalid": None,
        "human_answers": None,
    }
    return {**row, **changes}


@pytest.mark.parametrize(
    "changes, rule",
    [
        ({"answer": "F"}, "answer"),
        ({"quarter": "Winter"}, "quarter"),
        ({"image_importance": 3}, "image-importance"),
        ({"visual_domains": ["XRAY"]}, "visual-domains"),
        ({"images": ["../secret.png"]}, "image-path"),
        ({"images": ["images/brak.png"]}, "image-missing"),
        ({"options": {"A": "a", "B": "b"}}, "options"),
        ({"human_answers": {"A": -1}}, "human-answers"),
    ],
)
def test_each_rule_names_the_file_and_the_record_and_load_refuses(tmp_path, changes, rule):
    root = write(tmp_path, [vqa_row(**changes)])
    found = PolishPES().validate(root)
    assert [(f.rule, f.level, f.file, f.record) for f in found if f.level == "error"] == [
        (rule, "error", str(root / "vqa.jsonl"), "v1")
    ]
    with pytest.raises(medvqa.DataError, match=rf"vqa.jsonl: record v1: \[{rule}\]"):
        medvqa.load("polish_pes", root)
    result = CliRunner().invoke(cli, ["validate", "polish_pes", "--data", str(root), "--json"])
    assert result.exit_code == 1 and json.loads(result.output)["errors"] == 1
    counted = {r["rule"]: (r["errors"], r["warnings"], r["description"]) for r in json.loads(result.output)["rules"]}
    assert list(counted) == list(PolishPES.validation_rules)  # the rule is one the summary lists and describes
    assert counted[rule][:2] == (1, 0) and counted[rule][2]


def test_ids_are_unique_across_both_files_and_qa_items_carry_no_images(tmp_path):
    qa = {k: v for k, v in vqa_row().items() if k not in ("images", "image_importance", "visual_domains")}
    root = write(tmp_path, [vqa_row()], [qa, {**qa, "id": "q2", "images": ["images/ekg.png"]}])
    found = [(f.rule, Path(f.file).name, f.record) for f in PolishPES().validate(root) if f.level == "error"]
    assert found == [("duplicate-id", "qa.jsonl", "v1"), ("qa-image-field", "qa.jsonl", "q2")]


# ------------------------------------------------------------------ the Hub text set


def test_offline_the_hub_loader_names_both_ways_to_get_the_data(monkeypatch):
    def offline(**kwargs):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load this file")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    with pytest.raises(medvqa.DataError) as err:
        medvqa.load("polish_pes", split="text-2018-2022")
    text = str(err.value)
    assert "amu-cai/PES-2018-2022" in text and "go online" in text and "hf download" in text and "--data PATH" in text


def test_the_hub_text_set_loads_as_qa_items_from_a_local_file(tmp_path):
    path = tmp_path / "test.json"
    path.write_text(
        json.dumps(
            [
                {
                    "question": "Lekiem z wyboru jest:",
                    "answers": ["Adenozyna", "Digoksyna", "Werapamil", "Amiodaron", "Sotalol"],
                    "correct_answer": "A",
                    "specialization": "Kardiologia",
                    "year": 2019,
                    "season": "Jesień",
                },
                {
                    "question": "Wskaż prawdziwe:",
                    "answers": {"A": "x", "B": "y", "C": "z", "D": "v", "E": "w"},
                    "correct_answer": "D. v",
                    "specialization": "Pediatria",
                    "year": 2021,
                },
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    loaded = PolishPES().load(path, "text-2018-2022")
    assert [(i.meta["set"], i.meta["specialty"], sorted(i.gold.keys)) for i in loaded] == [
        ("qa", "Kardiologia", ["A"]),
        ("qa", "Pediatria", ["D"]),
    ]
    path.write_text(json.dumps([{"pytanie_x": "?"}]), encoding="utf-8")
    with pytest.raises(medvqa.DataError, match=r"test.json: record entry 1: no question, options, answer .*pytanie_x"):
        PolishPES().load(path, "text-2018-2022")


def test_a_hub_file_that_is_neither_json_nor_json_lines_or_not_utf8_names_the_file_and_line(tmp_path):
    path = tmp_path / "test.json"
    row = {"question": "Lekiem z wyboru jest:", "answers": ["Adenozyna", "Digoksyna"], "correct_answer": "A"}
    path.write_text(f"{json.dumps(row)}\n\n{json.dumps(row)}\n", encoding="utf-8")  # JSON lines load
    assert len(PolishPES().load(path, "text-2018-2022")) == 2
    cases = [
        (f'{json.dumps(row)}\n{json.dumps(row)}\n{{"question": "Wskaż\n', "line 3"),  # a JSON line cut short
        (json.dumps([row, row], indent=1).replace('"A"\n', '"A",,\n', 1), "line 8"),  # a broken JSON list
    ]
    for text, line in cases:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(medvqa.DataError, match=rf"test.json: record {line}: neither JSON nor JSON lines"):
            PolishPES().load(path, "text-2018-2022")
    path.write_bytes(json.dumps(row).encode() + b"\n" + json.dumps(row).replace("Lekiem", "Lek\xb3").encode("latin-1"))
    with pytest.raises(medvqa.DataError, match=r"test.json: record line 2: not UTF-8 text"):
        PolishPES().load(path, "text-2018-2022")


# ------------------------------------------------------------------ structured output over HTTP


@pytest.mark.slow  # real processes or servers: seconds each
def test_the_schema_is_sent_over_http_and_is_part_of_the_request_key(tmp_path):
    from tests.openai_server import OpenAIServer

    with OpenAIServer(keep_bodies=True) as server:
        out = medvqa.run(
            "polish_pes",
            "hosted_vllm/test",
            data=str(FIXTURE),
            conditions="C+Q",
            limit=2,
            run_dir=str(tmp_path / "run"),
            progress=False,
            backend_options={"api_base": server.url, "response_format": "json_schema"},
        )
    asked = [b for b in server.bodies if b["messages"][0]["content"] == SYSTEM_WITH_QUESTION]  # not the preflight
    assert len(asked) == 2
    for body in asked:
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"] == A3_SCHEMA
    assert out.summary["conditions"]["C+Q"]["answered"] == 2  # the server answered {"response": ...}
    msgs = [{"role": "user", "content": "x"}]
    assert request_key("m", {}, msgs) != request_key("m", {}, msgs, response_schema=A3_SCHEMA)
    assert request_key("m", {}, msgs, None) == request_key("m", {}, msgs)


# ------------------------------------------------------------------ the run, the tables, the audit

REPLAY = {  # (item, condition) -> reply; hand-scored in the comments (gold in brackets)
    # C+Q+I: 4 of 7 correct, one parse failure, one refusal
    ("pes-v-kar-01", "C+Q+I"): '{"response": "C"}',  # [C] right
    ("pes-v-kar-02", "C+Q+I"): '{"response":"b"}',  # [B] right
    ("pes-v-int-01", "C+Q+I"): '```json\n{"response": "D"}\n```',  # [D] right
    ("pes-v-int-02", "C+Q+I"): "B",  # [A] wrong
    ("pes-v-rad-01", "C+Q+I"): "Odpowiedź: E",  # [E] right
    ("pes-v-rad-02", "C+Q+I"): '{"response": "F"}',  # [B] parse failure
    ("pes-v-rad-03", "C+Q+I"): "Nie mogę udzielić odpowiedzi na podstawie tego obrazu.",  # [A] refusal
    # C+Q: 2 of 7
    ("pes-v-kar-01", "C+Q"): "Prawidłowa odpowiedź to C.",  # right
    ("pes-v-kar-02", "C+Q"): '{"response": "A"}',
    ("pes-v-int-01", "C+Q"): '{"response": "A"}',
    ("pes-v-int-02", "C+Q"): '{"response": "A"}',  # right
    ("pes-v-rad-01", "C+Q"): '{"response": "A"}',
    ("pes-v-rad-02", "C+Q"): '{"response": "A"}',
    ("pes-v-rad-03", "C+Q"): '{"response": "B"}',
    # C+I: 1 of 7
    ("pes-v-kar-01", "C+I"): '{"response": "A"}',
    ("pes-v-kar-02", "C+I"): '{"response": "B"}',  # right
    ("pes-v-int-01", "C+I"): '{"response": "A"}',
    ("pes-v-int-02", "C+I"): '{"response": "E"}',
    ("pes-v-rad-01", "C+I"): '{"response": "A"}',
    ("pes-v-rad-02", "C+I"): '{"response": "A"}',
    ("pes-v-rad-03", "C+I"): '{"response": "B"}',
    # C: VQA 1 of 7, QA 1 of 5
    ("pes-v-kar-01", "C"): '{"response": "A"}',
    ("pes-v-kar-02", "C"): '{"response": "A"}',
    ("pes-v-int-01", "C"): '{"response": "A"}',
    ("pes-v-int-02", "C"): '{"response": "B"}',
    ("pes-v-rad-01", "C"): '{"response": "A"}',
    ("pes-v-rad-02", "C"): '{"response": "A"}',
    ("pes-v-rad-03", "C"): '{"response": "A"}',  # right
    ("pes-q-kar-01", "C"): '{"response": "A"}',  # right
    ("pes-q-kar-02", "C"): '{"response": "A"}',
    ("pes-q-int-01", "C"): '{"response": "A"}',
    ("pes-q-rad-01", "C"): '{"response": "A"}',
    ("pes-q-rad-02", "C"): '{"response": "A"}',
    # QA C+Q: 3 of 5, pes-q-rad-02 has no reply (missing, counted wrong)
    ("pes-q-kar-01", "C+Q"): '{"response": "A"}',  # right
    ("pes-q-kar-02", "C+Q"): '{"response": "B"}',  # right
    ("pes-q-int-01", "C+Q"): '{"response": "C"}',  # right
    ("pes-q-rad-01", "C+Q"): '{"response": "A"}',
    # the annulled items are never asked: a reply for one must stay unused
    ("pes-v-kar-03", "C+Q+I"): '{"response": "C"}',
}


@pytest.fixture(scope="module")
def replay_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pes")
    replay = tmp / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"item_id": i, "condition": c, "response": r}, ensure_ascii=False) + "\n"
            for (i, c), r in REPLAY.items()
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "polish_pes",
            "--data",
            str(FIXTURE),
            "--model",
            f"replay:{replay}",
            "--run-dir",
            str(tmp / "run"),
            "--json",
            "--max-error-rate",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    return tmp / "run", json.loads(result.output)


def rows(doc, name, **match):
    return [r for r in doc[name]["rows"] if all(r.get(k) == v for k, v in match.items())]


def acc(row):
    return (row["n"], row["correct"], round(row["accuracy"], 6))


def test_the_run_has_four_configurations_for_vqa_and_two_for_qa(replay_run):
    run_dir, summary = replay_run
    assert summary["n_items"] == 14 and summary["n_excluded"] == 2 and summary["n_records"] == 38
    assert {c: v["n"] for c, v in summary["conditions"].items()} == {"C": 12, "C+Q": 12, "C+I": 7, "C+Q+I": 7}
    assert {r["item_id"] for r in read_records(run_dir)}.isdisjoint({"pes-v-kar-03", "pes-q-int-02"})
    assert [e["item_id"] for e in read_manifest(run_dir)["excluded"]] == ["pes-v-kar-03", "pes-q-int-02"]


def test_every_table_has_the_hand_computed_accuracies(replay_run):
    run_dir, _ = replay_run
    doc = json.loads(CliRunner().invoke(cli, ["report", str(run_dir), "--table", "polish_pes", "--json"]).output)
    conf = {(r["condition"], r["set"]): acc(r) for r in doc["configurations"]["rows"]}
    assert conf == {
        ("C", "VQA"): (7, 1, round(1 / 7, 6)),
        ("C", "QA"): (5, 1, 0.2),
        ("C+Q", "VQA"): (7, 2, round(2 / 7, 6)),
        ("C+Q", "QA"): (5, 3, 0.6),
        ("C+I", "VQA"): (7, 1, round(1 / 7, 6)),
        ("C+Q+I", "VQA"): (7, 4, round(4 / 7, 6)),
    }
    cqi = rows(doc, "configurations", condition="C+Q+I")[0]
    assert (cqi["parse_failure"], cqi["refusal"]) == (1, 1)
    assert rows(doc, "configurations", condition="C+Q", set="QA")[0]["missing"] == 1
    # Table 4: importance 0 and 1 pooled (int-01: 1, int-02: 0, rad-02: 1) against 2
    imp = {(r["image_importance"], r["condition"]): acc(r) for r in doc["image_importance"]["rows"]}
    assert imp == {
        ("0-1", "C+Q"): (3, 1, round(1 / 3, 6)),
        ("0-1", "C+Q+I"): (3, 1, round(1 / 3, 6)),
        ("2", "C+Q"): (4, 1, 0.25),
        ("2", "C+Q+I"): (4, 3, 0.75),
    }
    # Table 5: kar-02 (WAVEFORM + TABLE) counts under both
    dom = {r["visual_domain"]: acc(r) for r in rows(doc, "visual_domain", condition="C+Q+I")}
    assert dom == {
        "IMAGE": (1, 1, 1.0),
        "WAVEFORM": (2, 2, 1.0),
        "PLOT": (1, 0, 0.0),
        "GRAPHIC": (1, 0, 0.0),
        "TABLE": (2, 2, 1.0),
        "COMPOSITE": (1, 0, 0.0),
    }
    assert sum(r["n"] for r in rows(doc, "visual_domain", condition="C+Q+I")) == 8  # 7 items, one counted twice
    # human reference: VQA kar-01 12/20, int-01 15/20, rad-03 6/20; QA kar-01 14/20
    human = {
        (r["set"], r["who"], r["condition"]): (r["n"], r["answers"], r["correct"], round(r["accuracy"], 6))
        for r in doc["human"]["rows"]
    }
    assert human[("VQA", "examinees", "")] == (3, 60, 33, 0.55)
    assert human[("VQA", "model", "C+Q+I")] == (3, None, 2, round(2 / 3, 6))
    assert human[("VQA", "model", "C+Q")] == (3, None, 1, round(1 / 3, 6))
    assert human[("QA", "examinees", "")] == (1, 20, 14, 0.7)
    assert human[("QA", "model", "C+Q")] == (1, None, 1, 1.0)
    # annulled items: one per file, counted on their sheets, never scored
    ex = {(r["set"], r["sheet"]): (r["items"], r["invalid"], r["scored"]) for r in doc["exclusions"]["rows"]}
    assert ex[("VQA", "KAR-2025-Autumn")] == (1, 1, 0) and ex[("QA", "INT-2023-Autumn")] == (2, 1, 1)
    assert ex[("Total", "")] == (14, 2, 12)


def test_specialties_below_the_setting_are_pooled_as_other(replay_run):
    run_dir, _ = replay_run
    manifest, recs = read_manifest(run_dir), read_records(run_dir)
    default = json.loads(pes_tables(recs, manifest["excluded"]).render("json"))
    assert [r["specialty"] for r in default["specialty_counts"]["rows"]] == ["Other specialties", "Total"]
    three = json.loads(pes_tables(recs, manifest["excluded"], other_below=3).render("json"))
    counts = {r["specialty"]: (r["vqa_items"], r["qa_items"], r["excluded"]) for r in three["specialty_counts"]["rows"]}
    assert counts == {
        "Radiologia i diagnostyka obrazowa": (3, 2, 0),
        "Other specialties": (4, 3, 2),
        "Total": (7, 5, 2),
    }
    rad = rows(three, "specialty", specialty="Radiologia i diagnostyka obrazowa", set="VQA", condition="C+Q+I")[0]
    assert acc(rad) == (3, 1, round(1 / 3, 6))
    other = rows(three, "specialty", specialty="Other specialties", set="QA", condition="C+Q")[0]
    assert acc(other) == (3, 3, 1.0)  # q-kar-01, q-kar-02, q-int-01


def test_pass_lines_with_margins(replay_run):
    run_dir, _ = replay_run
    doc = json.loads(CliRunner().invoke(cli, ["report", str(run_dir), "--pass", "--json"]).output)
    by = {(r["exam"], r["criterion"]): r for r in doc["rows"]}
    vqa = by[("VQA C+Q+I", "pass line")]
    assert (vqa["status"], vqa["points"], vqa["required"], vqa["unit"]) == ("fail", pytest.approx(4 / 7), 0.6, "share")
    assert vqa["margin"] == pytest.approx(4 / 7 - 0.6)
    qa, oral = by[("QA C+Q", "pass line")], by[("QA C+Q", "oral exemption")]
    assert (qa["status"], qa["margin"], oral["status"], oral["margin"]) == (
        "pass",
        pytest.approx(0.0),
        "fail",
        pytest.approx(-0.10),
    )
    text = CliRunner().invoke(cli, ["report", str(run_dir), "--pass"]).output
    assert "| VQA C+Q+I | pass line | fail | 57.1 % | 60.0 % | 100.0 % | -2.9 pp |" in text
    assert "PES pass line 60%; oral exemption at 70% (sessions since 2022)" in text


def test_the_audit_stratifies_image_removal_by_importance_and_domain(replay_run):
    run_dir, _ = replay_run
    out = CliRunner().invoke(cli, ["audit", str(run_dir), "--by", "image_importance,visual_domain", "--json"])
    assert out.exit_code == 0, out.output
    paired = json.loads(out.output)["paired"]
    # (with image, removed): kar-01 (1,1); kar-02, int-01, rad-01 (1,0); int-02 (0,1); rad-02, rad-03 (0,0)
    assert paired["overall"]["counts"] == {"n11": 1, "n10": 3, "n01": 1, "n00": 2}
    by_importance = {k: v["counts"] for k, v in paired["by"]["image_importance"].items()}
    assert by_importance == {
        "0": {"n11": 0, "n10": 0, "n01": 1, "n00": 0},
        "1": {"n11": 0, "n10": 1, "n01": 0, "n00": 1},
        "2": {"n11": 1, "n10": 2, "n01": 0, "n00": 1},
    }
    domains = paired["by"]["visual_domain"]
    assert domains["WAVEFORM"]["counts"] == {"n11": 1, "n10": 1, "n01": 0, "n00": 0}
    assert domains["TABLE"]["counts"] == {"n11": 0, "n10": 2, "n01": 0, "n00": 0}  # kar-02 counted here too
    default = json.loads(CliRunner().invoke(cli, ["audit", str(run_dir), "--json"]).output)
    assert set(default["paired"]["by"]) == {"specialty", "image_importance", "visual_domain"}

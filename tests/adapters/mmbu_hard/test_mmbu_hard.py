"""MMBU-hard: loading the authors' TSVs, closed scoring on the real proxy items, open answers
judged over real HTTP, boxes by IoU, micro-F1 with its bootstrap CI, two judges' kappa."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

import medvqa
from medvqa.adapters.mmbu_hard.detection import iou, match, parse_boxes
from medvqa.adapters.mmbu_hard.judge import read_verdict
from medvqa.adapters.mmbu_hard.metrics import counts, micro_f1
from medvqa.adapters.mmbu_hard.tables import MMBUTables
from medvqa.core.run.judge import judge_run
from medvqa.core.scoring.judge import cohen_kappa
from tests.adapters.mmbu_hard.cases import CASES, DETECTION, RULES, judge_reply, model_answer, write_fixture
from tests.conftest import shared_data
from tests.openai_server import OpenAIServer

PROXY_TSV = ("mmbu-proxy", "LMUData", "uBench", "uBench_classification_10.tsv")


def proxy_golds() -> dict[str, str]:
    with shared_data(*PROXY_TSV).open(encoding="utf-8") as fh:
        return {f"uBench_classification_10-{row['index']}": row["answer"] for row in csv.DictReader(fh, delimiter="\t")}


@pytest.fixture
def fixture(tmp_path):
    root = tmp_path / "hard"
    info = write_fixture(root)
    return root, info


# -- closed items on the real proxy -------------------------------------------------------


def test_proxy_items_load_with_their_real_images_and_letter_golds():
    items = medvqa.load("mmbu_hard", shared_data("mmbu-proxy"))
    golds = proxy_golds()
    assert [it.id for it in items] == [f"uBench_classification_10-{i}" for i in range(10)]
    for it in items:
        assert it.meta["task"] == "uBench_classification_10" and it.meta["format"] == "closed"
        assert it.image_available and it.images[0].path.parent.name == "images"
        assert it.keys == ("A", "B", "C", "D", "E", "F") and it.options[5].text == "none of the above"
        assert it.gold.alternatives == ((golds[it.id],),)


def test_random_and_replay_runs_on_the_proxy_score_the_closed_items(tmp_path):
    golds = proxy_golds()
    _, summary = medvqa.run(
        "mmbu_hard", "random", data=str(shared_data("mmbu-proxy")), run_dir=str(tmp_path / "r"), progress=False
    )
    records = medvqa.records(tmp_path / "r")
    assert len(records) == 20 and set(records["status"]) == {"answered"}
    for _, r in records.iterrows():  # each random answer is scored against the TSV's own letter
        assert r["correct"] == (list(r["predicted"]) == [golds[r["item_id"]]])
    # a replay with 7 right answers (items 0-6) and 3 wrong ones (7-9), in both conditions
    wrong = {"uBench_classification_10-7": "A", "uBench_classification_10-8": "A", "uBench_classification_10-9": "B"}
    replay = tmp_path / "answers.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"item_id": i, "condition": c, "response": json.dumps({"answer": [wrong.get(i, g)]})}) + "\n"
            for i, g in golds.items()
            for c in ("C+Q", "C+Q+I")
        )
    )
    _, summary = medvqa.run(
        "mmbu_hard",
        f"replay:{replay}",
        data=str(shared_data("mmbu-proxy")),
        run_dir=str(tmp_path / "replay"),
        progress=False,
    )
    assert summary["accuracy"] == {"C+Q": 0.7, "C+Q+I": 0.7}
    saved = medvqa.read_run(tmp_path / "replay")
    head = saved.benchmark.headline([r for r in saved.records if r["condition"] == "C+Q"])
    # 7 TP; each wrong answer is one FP and one FN: F1 = 14 / (14 + 3 + 3)
    assert head["metric"] == "micro_f1" and head["n"] == 10 and head["value"] == pytest.approx(0.7)
    assert head["ci"][0] < 0.7 < head["ci"][1]


# -- loading and validation ---------------------------------------------------------------


def test_fixture_layout_strata_label_sets_private_items_and_boxes(fixture):
    root, _ = fixture
    items = {it.id: it for it in medvqa.load("mmbu_hard", root, split="all")}
    assert len(items) == len(CASES) + 2 + 4 + len(DETECTION)
    first = items["cls_open-0"]
    assert first.gold.format == "text" and first.gold.text == "pneumonia" and first.answer_format == "text"
    assert first.meta["format"] == "open" and first.meta["dataset"] == "cxr" and first.meta["split"] == "public"
    assert first.images[0].path == (root / "images" / "x1.png").resolve()
    # the dataset label set: every class_label / answer of the dataset across the TSVs
    assert set(items["cls_open-24"].meta["label_set"]) == {"neutrophil", "lymphocyte", "eosinophil", "monocyte"}
    private = items["cls_open-10000"]
    assert private.excluded and private.meta["split"] == "private" and "withheld" in private.exclusion_reason
    det = items["det_grounding_open-2"]
    assert det.gold.format == "bbox" and det.gold.all_boxes == ((0, 0, 10, 10), (50, 50, 10, 10))
    assert det.images[0].path.name == "x2.png"  # a Windows path reduced to its file name
    assert {it.id for it in medvqa.load("mmbu_hard", root)} == set(items) - {"cls_open-10000", "cls_open-10001"}
    assert [it.id for it in medvqa.load("mmbu_hard", root, split="private")] == ["cls_open-10000", "cls_open-10001"]
    picked = medvqa.load("mmbu_hard", root, select={"dataset": ["derm"], "format": ["open"]})
    assert len(picked) == sum(c[0] == "derm" for c in CASES)


def test_bad_rows_are_findings_naming_file_and_record(tmp_path):
    (tmp_path / "cls_closed.tsv").write_text(
        'index\tquestion\tanswer\toptions\n1\tWhich?\tF\t["a", "b"]\n2\tWhich?\tA\tnot json\n'
    )
    (tmp_path / "det_open.tsv").write_text("index\tquestion\tanswer\tbbox\n1\tWhere?\t\t[1, 2, 3]\n")
    out = subprocess.run(
        [sys.executable, "-m", "medvqa.cli", "validate", "mmbu_hard", "--data", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    found = {(Path(f["file"]).name, f["number"]): f["message"] for f in doc["findings"]}
    assert "not one of the options A, B" in found[("cls_closed.tsv", "cls_closed-1")]
    assert "not a JSON list" in found[("cls_closed.tsv", "cls_closed-2")]
    assert "[x, y, w, h]" in found[("det_open.tsv", "det_open-1")]
    proxy = subprocess.run(
        [
            sys.executable,
            "-m",
            "medvqa.cli",
            "validate",
            "mmbu_hard",
            "--data",
            str(shared_data("mmbu-proxy")),
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert proxy.returncode == 0 and json.loads(proxy.stdout)["errors"] == 0


def test_offline_hub_loader_names_both_ways_to_get_the_data(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(medvqa.DataError) as exc:
        medvqa.load("mmbu_hard")
    text = str(exc.value)
    assert "ryandcunha/mmbu" in text and "--data PATH" in text and "go online" in text


def test_context_templates_differ_and_are_recorded(fixture, tmp_path):
    root, info = fixture
    from medvqa.core.plugins import get_benchmark

    rendered = {}
    for context in ("none", "modality", "full"):
        item = next(it for it in medvqa.load("mmbu_hard", root, context=context) if it.id == "cls_open-24")
        messages = get_benchmark("mmbu_hard").render(item, medvqa.Condition.CQ)
        rendered[context] = messages[-1]["content"]
    assert "Image modality" not in rendered["none"]
    assert rendered["modality"].startswith("Image modality: imaging\n\nQuestion: What is the finding?")
    assert rendered["full"].startswith("Image modality: imaging\nStain / contrast: Giemsa\n\nQuestion:")
    _, summary = medvqa.run(
        "mmbu_hard",
        f"replay:{info['replay']}",
        data=str(root),
        context="full",
        conditions="C+Q",
        run_dir=str(tmp_path / "full"),
        progress=False,
    )
    manifest = json.loads((tmp_path / "full" / "manifest.json").read_text())
    assert manifest["load"]["context"] == "full"
    assert set(manifest["templates"]) == {"mmbu-open-full", "mmbu-closed-full", "mmbu-detection-full"}


# -- the judge, over real HTTP ------------------------------------------------------------


def replay_run(root: Path, info: dict, run_dir: Path) -> Path:
    medvqa.run("mmbu_hard", f"replay:{info['replay']}", data=str(root), run_dir=str(run_dir), progress=False)
    return run_dir


@pytest.mark.slow  # a real server or whole-data runs: seconds
def test_judge_gives_each_gate_its_verdict_and_a_rejudge_costs_nothing(fixture, tmp_path):
    root, info = fixture
    run_dir = replay_run(root, info, tmp_path / "run")
    before = {(r["item_id"], r["condition"]): r for r in medvqa.read_run(run_dir).records}
    assert before[("cls_open-0", "C+Q")]["rule"] == "unjudged" and not before[("cls_open-0", "C+Q")]["correct"]
    with OpenAIServer(reply=judge_reply, keep_bodies=True) as server:
        summary = judge_run(run_dir, ["hosted_vllm/test"], backend_options={"api_base": server.url})
        asked = sum(server.counts.values())
        # C+Q and C+Q+I records with the same answer are one judge request
        assert summary["judges"]["hosted_vllm/test"]["requested"] == len(CASES) == asked - 1  # and the preflight
        assert summary["judges"]["hosted_vllm/test"]["judge_errors"] == 0
        # the judge sees text only: the question, the truth, the answer and the label set
        body = server.bodies[-1]["messages"]
        assert (
            len(body) == 1
            and isinstance(body[0]["content"], str)
            and "this dataset): basal cell carcinoma; benign keratosis; melanocytic nevus; melanoma\n"
            in str(server.bodies[1:]).replace("\\n", "\n")
        )
        records = {(r["item_id"], r["condition"]): r for r in medvqa.read_run(run_dir).records}
        for i, (_, truth, reply, verdict, case) in enumerate(CASES):
            for cond in ("C+Q", "C+Q+I"):
                rec = records[(f"cls_open-{i}", cond)]
                judged = rec["judgements"]["hosted_vllm/test"]
                assert judged["verdict"] == verdict, (case, truth, reply)
                assert rec["correct"] == bool(verdict) and rec["rule"] == "judge" and rec["judge"] == "hosted_vllm/test"
                assert judged["prompt_hash"] == summary["prompt_hash"]
        again = judge_run(run_dir, ["hosted_vllm/test"], backend_options={"api_base": server.url})
        assert sum(server.counts.values()) == asked  # re-judging sends no request
        assert again["judges"]["hosted_vllm/test"]["already_judged"] == 2 * len(CASES)
        # a copy of the run, never judged, is judged from the response cache: no request either
        copy = replay_run(root, info, tmp_path / "copy")
        cached = judge_run(copy, ["hosted_vllm/test"], backend_options={"api_base": server.url})
        assert cached["judges"]["hosted_vllm/test"]["cache_hits"] == 2 * len(CASES)
        assert sum(server.counts.values()) == asked
    # verdicts survive re-scoring, and the audit pairs open items on them
    out = subprocess.run(
        [sys.executable, "-m", "medvqa.cli", "score", str(run_dir), "--json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    rescored = {(r["item_id"], r["condition"]): r for r in medvqa.read_run(run_dir).records}
    assert all(rescored[k]["correct"] == records[k]["correct"] for k in records)
    n_right = sum(c[3] for c in CASES)
    audit = medvqa.audit(run_dir, resamples=50)["paired"]["overall"]
    # every answer is the same with and without the image: right items are p11, the rest p00
    n_pairs = len(CASES) + 4 + len(DETECTION)
    right = n_right + 4 + sum(1 for d in DETECTION if d[3] == 0 and d[4] == 0)
    assert audit["n"] == n_pairs and audit["p11"] == pytest.approx(right / n_pairs) and audit["p10"] == 0


def test_a_garbage_judge_leaves_judge_errors_and_the_run_completes(fixture, tmp_path):
    root, info = fixture
    run_dir = tmp_path / "run"
    with OpenAIServer(reply=lambda p: "Looks fine to me. RESULT: yes" if "True answer" in p else None) as server:
        _, summary = medvqa.run(
            "mmbu_hard",
            f"replay:{info['replay']}",
            data=str(root),
            run_dir=str(run_dir),
            judges=["hosted_vllm/test"],
            judge_options={"api_base": server.url},
            progress=False,
        )
        # every verdict was asked three times (two more after the unreadable one), then given up
        judged = {k: n for k, n in server.counts.items() if n > 1}
        assert set(judged.values()) == {3} and len(judged) == len(CASES)
    assert summary["judged"]["judges"]["hosted_vllm/test"]["judge_errors"] == 2 * len(CASES)
    records = [r for r in medvqa.read_run(run_dir).records if r["item_id"].startswith("cls_open")]
    assert all(r["rule"] == "judge-error" and r["correct"] is False for r in records)
    assert all("unreadable verdict after 3" in r["judgements"]["hosted_vllm/test"]["error"] for r in records)
    # judging again asks only what has no verdict yet: here, everything, now with a sound judge
    with OpenAIServer(reply=judge_reply) as server:
        again = judge_run(run_dir, ["hosted_vllm/test"], backend_options={"api_base": server.url})
        assert again["judges"]["hosted_vllm/test"]["requested"] == len(CASES)
    records = {r["item_id"]: r for r in medvqa.read_run(run_dir).records if r["condition"] == "C+Q"}
    assert [records[f"cls_open-{i}"]["correct"] for i in range(len(CASES))] == [bool(c[3]) for c in CASES]


def test_two_judges_agreement_and_kappa_against_a_hand_computed_table(fixture, tmp_path):
    root, info = fixture
    run_dir = replay_run(root, info, tmp_path / "run")
    lenient = {"hedge", "broader"}  # a second judge that accepts hedges and broader terms

    def second(prompt: str) -> str | None:
        if "True answer: " not in prompt:
            return None  # the preflight
        truth = prompt.split("True answer: ", 1)[1].split("\n", 1)[0]
        answer = prompt.split("Model answer: ", 1)[1].split("\n", 1)[0]
        case = {(c[1], model_answer(c[2])): c[4] for c in CASES}[(truth, answer)]
        verdict = 1 if case in lenient else RULES[(truth, answer)]
        return f"Rationale: lenient. [RESULT] {verdict}"

    with OpenAIServer(reply=judge_reply) as a, OpenAIServer(reply=second) as b:
        judge_run(run_dir, ["hosted_vllm/a"], backend_options={"api_base": a.url})
        judge_run(run_dir, ["hosted_vllm/b"], backend_options={"api_base": b.url})
    doc = medvqa.report(run_dir, judges=True)
    pair = doc["pairs"][0]
    # by hand, per condition: both 1 = the strict judge's 1s; 0 for a, 1 for b = the hedges and
    # broader terms; both 0 = the rest; never 1 for a and 0 for b
    ones = sum(c[3] for c in CASES)
    flips = sum(c[4] in lenient for c in CASES)
    table = {"11": 2 * ones, "10": 0, "01": 2 * flips, "00": 2 * (len(CASES) - ones - flips)}
    assert pair["table"] == table and pair["n"] == 2 * len(CASES)
    n = 2 * len(CASES)
    po = (table["11"] + table["00"]) / n
    pe = (
        (table["11"] + table["10"]) * (table["11"] + table["01"])
        + (table["01"] + table["00"]) * (table["10"] + table["00"])
    ) / n**2
    assert pair["agreement"] == pytest.approx(po) and pair["kappa"] == pytest.approx((po - pe) / (1 - pe))
    assert doc["accuracy"]["hosted_vllm/a"]["accuracy"] == pytest.approx(ones / len(CASES))
    assert doc["accuracy"]["hosted_vllm/b"]["accuracy"] == pytest.approx((ones + flips) / len(CASES))


def test_cohen_kappa_of_a_hand_computed_table():
    # n 50: observed agreement 35/50 = 0.7; chance (25·30 + 25·20) / 2500 = 0.5; kappa 0.4
    assert cohen_kappa({"11": 20, "10": 5, "01": 10, "00": 15}) == pytest.approx(0.4)
    assert cohen_kappa({"11": 10, "10": 0, "01": 0, "00": 0}) is None  # both constant: undefined
    assert cohen_kappa({"11": 5, "10": 0, "01": 0, "00": 5}) == pytest.approx(1.0)


def test_verdicts_are_read_strictly():
    assert read_verdict("Rationale: same concept. [RESULT] 1") == 1
    assert read_verdict("  Rationale: negated. [RESULT] 0 \n") == 0
    for bad in (
        "[RESULT] 2",
        "Rationale: yes",
        "Rationale: a [RESULT] 1 b",
        "[RESULT] 1 [RESULT] 0",
        "Rationale: x\n[RESULT] 1",
        "",
        None,
        "[RESULT]",
    ):
        assert read_verdict(bad) is None, bad


# -- detection and micro-F1 ---------------------------------------------------------------


def test_iou_by_hand():
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0  # identical
    assert iou((0, 0, 10, 10), (10, 0, 10, 10)) == 0.0  # touching along an edge
    assert iou((0, 0, 10, 10), (20, 20, 5, 5)) == 0.0  # disjoint
    assert iou((0, 0, 10, 10), (2, 2, 5, 5)) == pytest.approx(25 / 100)  # nested
    assert iou((0, 0, 10, 10), (5, 0, 10, 10)) == pytest.approx(50 / 150)  # half overlap
    assert iou((5, 5, 0, 0), (0, 0, 10, 10)) == 0.0  # a zero-area box inside another
    assert iou((5, 5, 0, 0), (5, 5, 0, 0)) == 0.0  # two zero-area boxes: no union


def test_boxes_are_read_and_matched_greedily():
    assert parse_boxes('{"box": [1, 2, 3, 4]}') == ((1, 2, 3, 4),)
    assert parse_boxes("Box: [1.5, 2, 3, 4] px") == ((1.5, 2, 3, 4),)
    assert parse_boxes("at 1, 2, 3, 4") == ((1, 2, 3, 4),)
    assert parse_boxes('{"box": [1, 2, -3, 4]}') == () and parse_boxes("nothing") == ()
    # the best pair is taken first; the second prediction overlaps the used gold box only
    assert match(((0, 0, 10, 10), (1, 0, 10, 10)), ((0, 0, 10, 10),)) == (1, 1, 0)
    assert match(((0, 0, 10, 10),), ((0, 0, 10, 10), (30, 30, 5, 5))) == (1, 0, 1)
    assert match(((5, 0, 10, 10),), ((0, 0, 10, 10),), threshold=0.3) == (1, 0, 0)  # IoU 1/3
    assert match(((5, 0, 10, 10),), ((0, 0, 10, 10),)) == (0, 1, 1)


def test_detection_records_and_micro_f1(fixture, tmp_path):
    root, info = fixture
    run_dir = replay_run(root, info, tmp_path / "run")
    saved = medvqa.read_run(run_dir)
    det = sorted(
        (r for r in saved.records if r["task"] == "det_grounding_open" and r["condition"] == "C+Q"),
        key=lambda r: r["item_id"],
    )
    assert [r["correct"] for r in det] == [True, False, False, True, False]
    assert det[4]["status"] == "parse_failure"
    head = saved.benchmark.headline(det)
    tp, fp, fn = (sum(d[k] for d in DETECTION) for k in (2, 3, 4))  # 3, 2, 3
    assert head["value"] == pytest.approx(2 * tp / (2 * tp + fp + fn)) == pytest.approx(6 / 11)


def test_micro_f1_and_its_ratio_ci_by_hand():
    # Boxes: the delta-method interval of the ratio R = Σ2TP / Σ(2TP + FP + FN) (Cochran 1977,
    # Sampling Techniques, §6.4: var R = Σ(xᵢ − R·yᵢ)² / (n(n − 1)ȳ²), t on n − 1 df). Ten TPs
    # (x = 2, y = 2) and ten FNs (x = 0, y = 1): R = 20/30 = 2/3, residuals ±2/3, Σe² = 80/9,
    # se = √(80/9 / 380) / 1.5 = 0.10196, t(19, 0.975) = 2.09302: [0.45326, 0.88008].
    result = micro_f1([(1, 0, 0)] * 10 + [(0, 0, 1)] * 10)
    assert result["value"] == pytest.approx(2 / 3)
    assert result["ci"] == pytest.approx([0.45326, 0.88008], abs=1e-5)
    assert result["ci_method"] == "delta-method-ratio"
    # below 20 datapoints no interval has nominal coverage (bench/coverage.py): none, and a note
    small = micro_f1([(1, 0, 0), (0, 0, 1)])
    assert small["value"] == pytest.approx(2 / 3) and small["ci"] is None and "below 20" in small["ci_note"]
    # identical datapoints: every residual is 0, no interval (never a zero-width one, nor the
    # old Clopper-Pearson of 2TP "trials", which are not independent)
    same = micro_f1([(1, 1, 0)] * 25)
    assert same["value"] == pytest.approx(2 / 3) and same["ci"] is None and same["ci_method"] is None
    assert micro_f1([])["value"] is None and micro_f1([])["ci"] is None


@pytest.mark.slow  # a real server or whole-data runs: seconds
def test_report_table_export_and_judges_cli(fixture, tmp_path):
    root, info = fixture
    run_dir = replay_run(root, info, tmp_path / "run")
    with OpenAIServer(reply=judge_reply) as server:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "medvqa.cli",
                "judge",
                str(run_dir),
                "--judge",
                "hosted_vllm/test",
                "--api-base",
                server.url,
                "--json",
            ],
            capture_output=True,
            text=True,
        )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["judges"]["hosted_vllm/test"]["judged"] == 2 * len(CASES)
    tables = medvqa.report(run_dir, table="mmbu_hard")
    rows = tables["micro_f1"].set_index(["condition", "task"]).to_dict(orient="index")
    ones = sum(c[3] for c in CASES)
    cls_open = rows[("C+Q", "cls_open")]  # every answer is non-empty text or "" (answered): wrong = FP + FN
    assert (cls_open["tp"], cls_open["fp"], cls_open["fn"]) == (ones, len(CASES) - ones, len(CASES) - ones)
    delta = tables["closed_minus_open"].set_index(["condition", "task_family"]).to_dict(orient="index")
    assert delta[("C+Q", "cls")]["delta"] == pytest.approx(1.0 - ones / len(CASES))
    baseline = tables["random_baseline"].set_index(["condition", "task"]).to_dict(orient="index")
    assert baseline[("C+Q", "cls_closed")]["expected_micro_f1"] == pytest.approx(1 / 4)
    exported = subprocess.run(
        [sys.executable, "-m", "medvqa.cli", "export", str(run_dir), "--out", str(tmp_path / "pred.jsonl"), "--json"],
        capture_output=True,
        text=True,
    )
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(x) for x in (tmp_path / "pred.jsonl").read_text().splitlines()]
    assert len(lines) == json.loads(exported.stdout)["n_predictions"] == 2 * (len(CASES) + 4 + len(DETECTION))
    assert {x["split"] for x in lines} == {"public"}


@pytest.mark.slow  # a real server or whole-data runs: seconds
def test_cli_run_with_context_and_judge_and_clean_errors(fixture, tmp_path):
    root, info = fixture
    with OpenAIServer(reply=judge_reply) as server:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "medvqa.cli",
                "run",
                "mmbu_hard",
                "--data",
                str(root),
                "--model",
                f"replay:{info['replay']}",
                "--conditions",
                "C+Q",
                "--context",
                "modality",
                "--judge",
                "hosted_vllm/test",
                "--judge-api-base",
                server.url,
                "--run-dir",
                str(tmp_path / "r"),
                "--json",
            ],
            capture_output=True,
            text=True,
        )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    ones = sum(c[3] for c in CASES)
    # open: the judge's 1s; closed: all 4 right; detection: 2 of 5 right
    assert doc["conditions"]["C+Q"]["correct"] == ones + 4 + 2
    assert doc["judged"]["judges"]["hosted_vllm/test"]["judged"] == len(CASES)
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["judges"]["hosted_vllm/test"]["prompt_hash"]
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "medvqa.cli",
            "run",
            "mmbu_hard",
            "--data",
            str(root),
            "--model",
            "random",
            "--context",
            "everything",
            "--run-dir",
            str(tmp_path / "bad"),
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "unknown context 'everything'" in bad.stderr and "Traceback" not in bad.stderr
    medvqa.run("jmed48k", "random", sample=True, run_dir=str(tmp_path / "jmed"), progress=False)
    none = subprocess.run(
        [sys.executable, "-m", "medvqa.cli", "judge", str(tmp_path / "jmed"), "--judge", "x/y"],
        capture_output=True,
        text=True,
    )
    assert none.returncode == 1 and "benchmark jmed48k declares no judge" in none.stderr


def test_private_items_are_asked_never_scored_and_exported(fixture, tmp_path):
    root, info = fixture
    replay = tmp_path / "answers.jsonl"
    replay.write_text(
        info["replay"].read_text()
        + "".join(
            json.dumps({"item_id": f"cls_open-{10_000 + j}", "condition": "C+Q", "response": '{"answer": "pneumonia"}'})
            + "\n"
            for j in range(2)
        )
    )
    _, summary = medvqa.run(
        "mmbu_hard",
        f"replay:{replay}",
        data=str(root),
        split="all",
        conditions="C+Q",
        run_dir=str(tmp_path / "all"),
        progress=False,
    )
    n_public = len(CASES) + 4 + len(DETECTION)
    assert summary["n_records"] == n_public and summary["n_held_out"] == 2
    assert summary["conditions"]["C+Q"]["n"] == n_public  # private records enter no denominator
    assert {r["item_id"] for r in medvqa.read_run(tmp_path / "all").records}.isdisjoint({"cls_open-10000"})
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "medvqa.cli",
            "export",
            str(tmp_path / "all"),
            "--out",
            str(tmp_path / "pred.jsonl"),
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    lines = {x["item_id"]: x for x in map(json.loads, (tmp_path / "pred.jsonl").read_text().splitlines())}
    assert len(lines) == n_public + 2
    assert (
        lines["cls_open-10000"]["response"] == '{"answer": "pneumonia"}'
        and lines["cls_open-10000"]["split"] == "private"
    )
    assert lines["cls_open-10000"]["status"] == "answered"
    # re-scoring leaves private records unscored
    rescored = subprocess.run(
        [sys.executable, "-m", "medvqa.cli", "score", str(tmp_path / "all"), "--json"], capture_output=True, text=True
    )
    assert rescored.returncode == 0 and json.loads(rescored.stdout)["changed"] == 0


def test_ctrl_c_while_judging_says_what_is_saved_and_how_to_resume(tmp_path, monkeypatch):
    """`run --judge` judges after the answers: a Ctrl-C there ends like one during the answers."""
    from medvqa.core.run import judge
    from medvqa.core.run.interrupt import RunInterrupted
    from medvqa.core.run.options import RunOptions, run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(judge, "judge_run", interrupted)
    options = RunOptions(
        benchmark="mmbu_hard",
        model="random",
        data=str(shared_data("mmbu-proxy")),
        run_dir=str(tmp_path / "run"),
        judges=["hosted_vllm/judge"],
        cache=False,
        command_line=["medvqa", "run", "mmbu_hard"],
    )
    with pytest.raises(RunInterrupted, match=r"^20 records saved; resume with: medvqa run mmbu_hard --run-dir "):
        run(options, progress=False)


def test_a_held_out_item_a_provider_refused_is_recorded_as_a_refusal(fixture):
    from medvqa.core.run.recording import scored_safely

    root, _ = fixture
    private = next(it for it in medvqa.load("mmbu_hard", root, split="all") if it.held_out)
    from medvqa.core import plugins

    benchmark = plugins.get_benchmark("mmbu_hard")
    assert scored_safely(benchmark, private, "I cannot help with that.", None, (), refused=True)[1] == "refusal"
    assert scored_safely(benchmark, private, '{"answer": "pneumonia"}', None, ())[1] == "answered"
    assert scored_safely(benchmark, private, None, None, ())[1] == "missing"


def test_selecting_by_a_field_the_items_lack_names_the_fields_there_are(fixture):
    root, _ = fixture
    with pytest.raises(ValueError, match=r"no field 'stain'.*dataset.*modality"):
        medvqa.load("mmbu_hard", root, select={"stain": ["H&E"]})


def test_closed_non_answers_are_incorrect_predictions_and_unjudged_answers_have_no_score():
    # ../shared/papers/mmbu.txt §4.3: "Responses with no parseable answer or with labels outside
    # the valid option set are counted as incorrect." Six closed answers: 4 correct, 1 with no
    # parseable answer, 1 naming a label outside the options (both parse failures). Each
    # incorrect prediction is a FP (the class it named, or none valid) and a FN (the class
    # missed): TP 4, FP 2, FN 2, micro-F1 = 2·4 / (2·4 + 2 + 2) = 8/12 = 0.667, the accuracy 4/6
    # (counting a non-answer as FN only gave 8/10 = 0.80, better than a wrong valid label).
    records = [{"status": "answered", "correct": True}] * 4 + [
        {"status": "parse_failure", "correct": False, "response": "I think it is"},
        {"status": "parse_failure", "correct": False, "response": '{"answer": ["Z"]}'},
    ]
    rows = [counts(r, 0.5) for r in records]
    assert rows[4] == rows[5] == counts({"status": "answered", "correct": False}, 0.5) == (0, 1, 1)
    result = micro_f1(rows)
    assert (result["tp"], result["fp"], result["fn"]) == (4, 2, 2)
    assert result["value"] == pytest.approx(4 / 6)
    # every datapoint a classification: micro-F1 is 4/6 and its interval that of the proportion 4 of 6:
    # low Wilson's (p + z²/2n − z√(p(1 − p)/n + z²/4n²)) / (1 + z²/n) = 0.3000; 4 of 6 is two failures
    # from n, so high is Brown, Cai & DasGupta's 1 − λ/6 with e^−λ(1 + λ) = 0.95, λ = 0.35536: 0.9408
    # (Wilson's 0.9032)
    assert result["ci_method"] == "wilson-score-bcd" and result["ci"] == pytest.approx([0.29999, 0.94077], abs=1e-5)
    # a refusal, an error and a missing record are incorrect predictions too
    assert {counts({"status": s, "correct": False}, 0.5) for s in ("refusal", "error", "missing")} == {(0, 1, 1)}

    # open answers nobody has judged: no score ("not judged", never 0.0); judged ones count alone
    unjudged = {"status": "answered", "correct": False, "rule": "unjudged"}
    none = micro_f1([counts(unjudged, 0.5)] * 3)
    assert none["value"] is None and none["status"] == "not judged" and none["n"] == 0 and none["n_unjudged"] == 3
    part = micro_f1([counts(unjudged, 0.5), counts({"status": "answered", "correct": True, "rule": "judge"}, 0.5)])
    assert part["value"] == 1.0 and part["n"] == 1 and part["n_unjudged"] == 1 and part["status"] == "scored"
    table = MMBUTables([{**unjudged, "condition": "C+Q", "task": "cls_open", "format": "open"}] * 2, 0.5).frames()
    row = table["micro_f1"].iloc[0]
    assert row["status"] == "not judged" and row["micro_f1"] is None and row["unjudged"] == 2


def test_a_judge_with_nothing_to_judge_says_so_and_writes_nothing(fixture, tmp_path):
    """Observed: `medvqa judge` on a run without an open-ended answer printed a summary of 0 judged
    records and wrote the judge into the manifest, as if it had judged. Now: one line, non-zero,
    the manifest untouched (and no server is asked: the address below has nobody listening)."""
    from medvqa.core import plugins
    from tests.core.inference.test_retry import closed_port_url

    root, info = fixture
    run_dir = tmp_path / "closed"
    medvqa.run(
        "mmbu_hard",
        f"replay:{info['replay']}",
        data=str(root),
        run_dir=str(run_dir),
        progress=False,
        select={"task": ["cls_closed"]},
    )
    records = medvqa.read_run(run_dir).records
    answered = sum(r["status"] == "answered" for r in records)
    assert records and {r["task"] for r in records} == {"cls_closed"} and answered > 0
    manifest = (run_dir / "manifest.json").read_text()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "medvqa.cli",
            "judge",
            str(run_dir),
            "--judge",
            "hosted_vllm/test",
            "--api-base",
            closed_port_url(),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert out.stderr.strip().splitlines()[-1] == (
        f"Error: nothing to judge in {run_dir}: of its {len(records)} records, {answered} hold an answer and none "
        f"of them is one the {plugins.get_benchmark('mmbu_hard').judge().name} judge reads (closed items are scored "
        f"by their options without a judge); nothing was written"
    )
    assert (run_dir / "manifest.json").read_text() == manifest

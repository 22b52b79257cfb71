import json
import math
import sys
from collections import Counter
from pathlib import Path

import pytest

from medvqa.core import plugins
from medvqa.core.audit import runs as audit_runs
from medvqa.core.audit.analysis import audit
from medvqa.core.audit.cohorts import parse_cohorts
from medvqa.core.audit.pairs import RunInput, Settings
from medvqa.core.audit.sections import stem_leaks
from medvqa.core.inference.replay import ReplayBackend
from medvqa.core.items import DataError, Gold, Item, Option
from medvqa.core.run.forced import FORCED_CONDITION, forced_guess_requests
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.recording import make_record
from medvqa.core.run.saved import load_run, read_run
from medvqa.core.run.store import RunStore, read_manifest
from medvqa.ja import JAPANESE
from tests.conftest import REPO, shared_data

REFUSAL = "回答できません"  # a Japanese refusal sentence the adapter's patterns recognise
# Outcomes (with image, image removed) for the sample's 17 items whose images are present,
# in load order; "refusal" is a declined answer.
DESIGN = (
    [("correct", "correct")] * 5  # 0-4   p11
    + [("correct", "wrong")] * 4  # 5-8   p10
    + [("correct", "refusal")] * 2  # 9-10  p10 under strict
    + [("wrong", "correct")] * 2  # 11-12 p01
    + [("wrong", "refusal")] * 2  # 13-14 p00 under strict
    + [("wrong", "wrong")]  # 15    p00
    + [("refusal", "wrong")]  # 16    p00 under strict
)
FORCED = {9: "correct", 10: "wrong", 13: "correct", 14: "wrong"}  # forced guesses of the refused C+Q items


def answer(item: Item, outcome: str) -> str:
    if outcome == "refusal":
        return REFUSAL
    gold = list(item.gold.alternatives[0])
    keys = gold if outcome == "correct" else [next(k for k in item.keys if k not in item.gold.keys)]
    return json.dumps({"answer": keys})


def mcnemar(b: int, c: int) -> float:
    n = b + c
    return 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n)


def run_input(run_dir: Path) -> RunInput:
    return audit_runs.run_input([read_run(run_dir)])


@pytest.fixture(scope="module")
def sample_items():
    data = shared_data("jmed48k-sample")
    return plugins.get_benchmark("jmed48k").load(data, "full")


@pytest.fixture(scope="module")
def designed_run(tmp_path_factory, sample_items):
    """A replayed run with the DESIGN outcomes, three out-of-list answers on text items, and
    the forced guesses appended as the runner would record them."""
    tmp = tmp_path_factory.mktemp("designed")
    image_items = [it for it in sample_items if it.image_available]
    assert len(image_items) == len(DESIGN) == 17
    text_items = [it for it in sample_items if not it.has_images and len(it.options) == 5][:3]
    lines = []
    for item, (w, r) in zip(image_items, DESIGN):
        lines.append({"item_id": item.id, "condition": "C+Q+I", "response": answer(item, w)})
        lines.append({"item_id": item.id, "condition": "C+Q", "response": answer(item, r)})
    lines += [{"item_id": it.id, "condition": "C+Q", "response": '{"answer": ["F"]}'} for it in text_items]
    replay = tmp / "responses.jsonl"
    replay.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    run_dir = tmp / "run"
    run(
        RunOptions(
            benchmark="jmed48k",
            model=f"replay:{replay}",
            data=str(shared_data("jmed48k-sample")),
            conditions="C+Q,C+Q+I",
            run_dir=str(run_dir),
            cache=False,
        ),
        progress=False,
    )
    before = audit([run_input(run_dir)], Settings(resamples=200))

    forced_file = tmp / "forced.jsonl"
    forced_file.write_text(
        "".join(
            json.dumps(
                {"item_id": image_items[i].id, "condition": FORCED_CONDITION, "response": answer(image_items[i], o)}
            )
            + "\n"
            for i, o in FORCED.items()
        ),
        encoding="utf-8",
    )
    manifest, records, bench, items = load_run(run_dir)
    backend = ReplayBackend.from_file(forced_file)
    requests = forced_guess_requests(bench, backend, records, items)
    store = RunStore(run_dir)
    store.open(read_manifest(run_dir))
    with store:
        for req, resp in backend.generate(requests):
            store.append(make_record(bench, req.item, req.condition, req.key, resp, plugins.answer_patterns()))
    return {
        "dir": run_dir,
        "image_items": image_items,
        "text_items": text_items,
        "requests": requests,
        "before": before,
        "bench": bench,
    }


def test_forced_guess_requests_reissue_refused_image_removed_items(designed_run):
    reqs = designed_run["requests"]
    image_items = designed_run["image_items"]
    assert [r.item.id for r in reqs] == [image_items[i].id for i in sorted(FORCED)]
    assert {r.condition for r in reqs} == {"C+Q/forced"}
    instruction = designed_run["bench"].forced_guess_instruction
    for req in reqs:
        text = req.messages[-1]["content"]
        text = text if isinstance(text, str) else " ".join(p.get("text", "") for p in text)
        assert text.rstrip().endswith(instruction)
        assert not any(
            p.get("type") == "image" for m in req.messages if not isinstance(m["content"], str) for p in m["content"]
        )
    _, records, bench, items = load_run(designed_run["dir"])
    backend = ReplayBackend.from_file(designed_run["dir"].parent / "forced.jsonl")
    assert forced_guess_requests(bench, backend, records, items) == []  # already answered


def test_known_counts_give_exact_transitions_under_every_convention(designed_run):
    doc = audit([run_input(designed_run["dir"])], Settings(resamples=200))
    n = 17
    strict = doc["paired"]["overall"]
    assert doc["paired"]["convention"] == "strict"
    assert strict["n"] == n
    assert strict["counts"] == {"n11": 5, "n10": 6, "n01": 2, "n00": 4}
    assert [strict[k] for k in ("p11", "p10", "p01", "p00")] == pytest.approx([5 / n, 6 / n, 2 / n, 4 / n])
    assert strict["a_with"] == pytest.approx(11 / n) and strict["a_removed"] == pytest.approx(7 / n)
    assert strict["delta_img"] == pytest.approx(4 / n)
    # McNemar mid-p (Fagerland, Lydersen & Laake 2013): 2·P(X ≤ 2 | 8, ½) − P(X = 2) = (74 − 28)/256
    assert strict["test"] == "mcnemar-mid-p" and strict["mcnemar_p"] == pytest.approx(46 / 256, rel=1e-12)
    assert strict["mcnemar_exact_p"] == pytest.approx(mcnemar(6, 2), rel=1e-12)  # the exact conditional p beside
    lo, hi = strict["ci"]
    assert lo <= strict["delta_img"] <= hi

    conv = doc["refusals"]["delta_img"]
    assert conv["strict"] == strict
    cond = conv["conditional"]  # items 9, 10, 13, 14 and 16 leave both denominators
    assert cond["n"] == 12 and cond["counts"] == {"n11": 5, "n10": 4, "n01": 2, "n00": 1}
    assert cond["delta_img"] == pytest.approx(2 / 12)
    assert cond["mcnemar_exact_p"] == pytest.approx(mcnemar(4, 2), rel=1e-12)
    assert cond["mcnemar_p"] == pytest.approx((2 * 22 - 15) / 64, rel=1e-12)  # mid-p: 2·P(X ≤ 2 | 6) − P(X = 2)
    imp = conv["imputed"]  # forced-guess accuracy 2/4 credited to each of the five refusals
    assert doc["refusals"]["forced_guess"] == {
        "n": 4,
        "n_predicted": 4,
        "n_no_prediction": 0,
        "correct": 2,
        "accuracy": 0.5,
    }
    assert [imp[k] for k in ("p11", "p10", "p01", "p00")] == pytest.approx([6 / n, 5.5 / n, 3 / n, 2.5 / n])
    assert imp["a_with"] == pytest.approx(11.5 / n) and imp["a_removed"] == pytest.approx(9 / n)
    assert imp["delta_img"] == pytest.approx(2.5 / n)
    assert imp["mcnemar_p"] is None  # fractional pairs
    for row in (strict, cond, imp):
        assert sum(row[k] for k in ("p11", "p10", "p01", "p00")) == pytest.approx(1.0, abs=1e-12)
        assert row["delta_img"] == pytest.approx(row["a_with"] - row["a_removed"])

    rates = doc["refusals"]["rates"]
    assert rates["C+Q+I"] == {"n": 17, "refusals": 1, "rate": 1 / 17}
    # over the 17 paired items of the image-removal table (not the run's 800 C+Q records)
    assert rates["C+Q"] == {"n": 17, "refusals": 4, "rate": 4 / 17}
    assert doc["refusals"]["rates_over"] == {"items": 17, "scope": "paired"}
    assert rates["C+Q/forced"] == {"n": 4, "refusals": 0, "rate": 0.0}

    for convention, expected in (("conditional", cond), ("imputed", imp)):
        other = audit([run_input(designed_run["dir"])], Settings(refusals=convention, resamples=200))
        assert other["paired"]["convention"] == convention
        assert other["paired"]["overall"] == expected


def test_imputed_needs_forced_guess_records(designed_run):
    before = designed_run["before"]
    assert before["refusals"]["delta_img"]["imputed"] is None
    assert "--forced-guess" in before["refusals"]["notes"]["imputed"]


def test_strata_rows_partition_the_pairs(designed_run, sample_items):
    doc = audit([run_input(designed_run["dir"])], Settings(by=("image_type", "image_types", "year"), resamples=200))
    image_items = designed_run["image_items"]
    outcome = {it.id: d for it, d in zip(image_items, DESIGN)}
    by_type = doc["paired"]["by"]["image_type"]
    assert Counter({k: r["n"] for k, r in by_type.items()}) == Counter(it.meta["dominant_type"] for it in image_items)
    for key, row in by_type.items():
        members = [outcome[it.id] for it in image_items if it.meta["dominant_type"] == key]
        n10 = sum(w == "correct" and r != "correct" for w, r in members)
        n01 = sum(w != "correct" and r == "correct" for w, r in members)
        assert row["p10"] == pytest.approx(n10 / len(members)) and row["p01"] == pytest.approx(n01 / len(members))
        if len(members) >= 10:
            assert row["mcnemar_exact_p"] == pytest.approx(mcnemar(n10, n01))
        else:  # a stratum of fewer than 10 pairs is descriptive: no test, and a note says so
            assert row["mcnemar_p"] is None and row["test"] is None and row["note"].startswith("descriptive")
            assert row["role"] == "secondary"
        assert sum(row[k] for k in ("p11", "p10", "p01", "p00")) == pytest.approx(1.0, abs=1e-12)
    # a list field counts an item under each of its values
    per_type = Counter(t for it in image_items for t in it.meta["image_types"])
    assert {k: r["n"] for k, r in doc["paired"]["by"]["image_types"].items()} == dict(per_type)
    assert {k: r["n"] for k, r in doc["paired"]["by"]["year"].items()} == dict(
        Counter(str(it.meta["year"]) for it in image_items)
    )
    unavailable = [it.id for it in sample_items if it.has_images and not it.image_available]
    assert doc["paired"]["unpaired"] == {"image not available": {"n": len(unavailable), "items": unavailable}}


def test_selection_bias_counts_answers_outside_the_listed_labels(designed_run, sample_items):
    doc = audit([run_input(designed_run["dir"])], Settings(resamples=50))
    bias = doc["selection_bias"]["C+Q"]
    assert bias["n_outside"] == 3
    n_choice = sum(1 for it in sample_items if it.options)
    assert bias["n_records"] == n_choice
    assert bias["outside_share"] == pytest.approx(3 / n_choice)


def test_examples_come_from_their_state(designed_run):
    doc = audit([run_input(designed_run["dir"])], Settings(examples=2, resamples=50))
    ids = [it.id for it in designed_run["image_items"]]
    state_of = {ids[i]: s for i, s in enumerate(["p11"] * 5 + ["p10"] * 6 + ["p01"] * 2 + ["p00"] * 4)}
    for state in ("p11", "p10", "p01", "p00"):
        examples = doc["examples"][state]
        assert len(examples) == 2
        for ex in examples:
            assert state_of[ex["item_id"]] == state
            assert ex["question"] and ex["with_image"]["response"] and ex["removed"]["response"]
            assert ex["with_image"]["correct"] == (state in ("p11", "p10"))


@pytest.fixture(scope="module")
def random_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("random") / "run"
    run(
        RunOptions(
            benchmark="jmed48k",
            model="random",
            data=str(shared_data("jmed48k-sample")),
            conditions="C,C+Q,C+I,C+Q+I",
            run_dir=str(run_dir),
            cache=False,
        ),
        progress=False,
    )
    return run_dir


def chance(item: Item) -> float | None:
    """1/k for one key, 1/C(k, m) for an m-key set, summed over official alternatives."""
    if not item.options:
        return None
    k = len(item.options)
    return sum(1 / math.comb(k, len(alt)) for alt in set(item.gold.alternatives))


def test_ablation_on_the_same_items_with_random_baselines(random_run, sample_items):
    doc = audit([run_input(random_run)], Settings(resamples=100))
    records = [json.loads(line) for line in (random_run / "records.jsonl").read_text().splitlines()]
    correct = {(r["item_id"], r["condition"]): r["correct"] for r in records}
    groups = {
        "image": [it for it in sample_items if it.image_available],
        "text_only": [it for it in sample_items if not it.has_images],
        "image_unavailable": [it for it in sample_items if it.has_images and not it.image_available],
    }
    expected_conditions = {
        "image": ["C", "C+Q", "C+I", "C+Q+I"],
        "text_only": ["C", "C+Q"],
        "image_unavailable": ["C", "C+Q"],
    }
    for name, items in groups.items():
        row = doc["ablation"][name]
        assert row["n"] == len(items)
        assert list(row["conditions"]) == expected_conditions[name]
        for cond, acc in row["conditions"].items():
            assert acc["accuracy"] == pytest.approx(sum(correct[(it.id, cond)] for it in items) / len(items))
        chances = [c for c in map(chance, items) if c is not None]
        assert row["baseline_n"] == len(chances)
        assert row["baseline"] == pytest.approx(sum(chances) / len(chances))
    # the multi-select baseline is the exact chance of the whole set (1/10 for 2 of 5)
    assert any(chance(it) == pytest.approx(0.1) for it in groups["text_only"])


def test_stem_leakage_flags_stems_that_describe_options():
    opts = tuple(Option(key=k, label=lab, text=t) for k, lab, t in zip("ABCDE", "abcde", "①②③④⑤"))

    def item(stem: str) -> Item:
        return Item(id="x", benchmark="b", question=stem, options=opts, gold=Gold.from_json("A"), image_as_options=True)

    ja = (JAPANESE,)
    assert stem_leaks(item("①腹部膨隆を認める。②圧痛を認める。下線部のうち誤っているのはどれか。"), ja)
    assert stem_leaks(item("A は大動脈弁領域を示す。最強点はどれか。"), ja)
    assert stem_leaks(item("研修医：「③左総腸骨動脈だと思います」"), ja)
    assert not stem_leaks(item("Gram 染色標本（別冊No. 1①〜⑤）を別に示す。最も多いのはどれか。"), ja)
    assert not stem_leaks(item("HbA1c が 7.0% である。適切なのはどれか。"), ja)
    # the particle is the Japanese patterns' cue; English contributes its own, a colon is any language's
    assert not stem_leaks(item("A は大動脈弁領域を示す。最強点はどれか。"))
    assert stem_leaks(item("Which is wrong? A shows the aortic area."))
    assert stem_leaks(item("B: the aortic area. Which is wrong?"))


def test_cohort_files_in_either_shape():
    assert parse_cohorts({"open": ["m1", "m2"], "proprietary": ["m3"]}) == {
        "m1": "open",
        "m2": "open",
        "m3": "proprietary",
    }
    assert parse_cohorts({"m1": "open"}) == {"m1": "open"}
    with pytest.raises(DataError, match="cohorts.yaml: record open: .*two cohorts"):
        parse_cohorts({"medical": ["m1"], "open": ["m1"]}, "cohorts.yaml")
    with pytest.raises(DataError, match="cohorts.yaml: expected a mapping"):
        parse_cohorts(["m1"], "cohorts.yaml")


def test_unknown_stratum_names_the_available_fields(random_run):
    with pytest.raises(ValueError, match="no field 'organ'; available: .*dominant_type"):
        audit([run_input(random_run)], Settings(by=("organ",)))


@pytest.fixture
def kmle_plugin():
    pm = plugins.manager()
    path = str(REPO / "tests" / "plugin_package")
    sys.path.insert(0, path)
    import medvqa_kmle_demo

    pm.register(medvqa_kmle_demo, name="kmle_demo")
    try:
        yield medvqa_kmle_demo
    finally:
        pm.unregister(name="kmle_demo")
        sys.path.remove(path)


def test_audit_runs_unchanged_on_a_third_party_adapter(kmle_plugin, tmp_path):
    replay = tmp_path / "kmle.jsonl"
    rows = [
        ("kmle-3", "C+Q+I", "정답은 2"),
        ("kmle-3", "C+Q", "답할 수 없습니다"),
        ("kmle-4", "C+Q+I", "정답은 4"),
        ("kmle-4", "C+Q", "정답은 4"),
        ("kmle-1", "C+Q", "정답은 1"),
        ("kmle-2", "C+Q", "정답은 3"),
        ("kmle-5", "C+Q", "정답은 1"),
    ]
    replay.write_text(
        "".join(
            json.dumps({"item_id": i, "condition": c, "response": r}, ensure_ascii=False) + "\n" for i, c, r in rows
        ),
        encoding="utf-8",
    )
    run(
        RunOptions(
            benchmark="kmle_demo",
            model=f"replay:{replay}",
            conditions="C+Q,C+Q+I",
            run_dir=str(tmp_path / "run"),
            cache=False,
        ),
        progress=False,
    )
    doc = audit([run_input(tmp_path / "run")], Settings(by=("subject", "has_image"), resamples=100))
    overall = doc["paired"]["overall"]
    assert overall["counts"] == {"n11": 1, "n10": 1, "n01": 0, "n00": 0}
    assert overall["delta_img"] == pytest.approx(0.5)
    assert set(doc["paired"]["by"]["subject"]) == {"내과", "영상의학과"}
    assert doc["paired"]["by"]["has_image"]["true"]["n"] == 2
    # over the two paired items (kmle-3, kmle-4) of the image-removal table, not all five C+Q records
    assert doc["refusals"]["rates"]["C+Q"] == {"n": 2, "refusals": 1, "rate": 0.5}
    assert doc["refusals"]["delta_img"]["conditional"]["n"] == 1
    text = doc["ablation"]["text_only"]
    assert text["n"] == 3 and text["conditions"]["C+Q"]["accuracy"] == pytest.approx(1 / 3)
    # 1/4 for the two single-answer items, 1/C(4,2) for the two-answer one
    assert text["baseline"] == pytest.approx((0.25 + 0.25 + 1 / 6) / 3)
    assert doc["io_control"]["n"] == 0

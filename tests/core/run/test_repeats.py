"""`--repeats K`: every pair asked K times (repeat r with its own seed), each repeat its own request
key and record, resumed repeat by repeat; the summary's mean over repeats, between-repeat SD,
item-level interval and Δimg per repeat and pooled, checked against a hand computation on the
records of a server that samples its answers at temperature > 0."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.repeats import item_interval, paired_repeats
from medvqa.core.run.options import RunOptions, repeat_seed, run
from medvqa.core.run.store import read_all_records, read_records
from tests.openai_server import OpenAIServer

# jmed48k-sample: 17 items, 5 with an image: 22 pairs under C+Q,C+Q+I per repeat
PAIRS = 22


def options(tmp_path, server, repeats, **kw) -> RunOptions:
    return RunOptions(
        benchmark="jmed48k",
        model="hosted_vllm/test",
        sample=True,
        conditions="C+Q,C+Q+I",
        run_dir=str(tmp_path / "run"),
        repeats=repeats,
        backend_options={"api_base": [server.url], "temperature": 0.7},
        **kw,
    )


@pytest.fixture(scope="module")
def three_repeats(tmp_path_factory):
    """Two repeats, then the same run with three: only the third is asked."""
    tmp_path = tmp_path_factory.mktemp("repeats")
    with OpenAIServer(sampling=True, keep_bodies=True) as server:
        first = run(options(tmp_path, server, 2), progress=False)
        sent_first = sum(server.counts.values())
        third = run(options(tmp_path, server, 3), progress=False)
        sent_third = sum(server.counts.values()) - sent_first
        again = run(options(tmp_path, server, 3), progress=False)
        seeds = sorted({b.get("seed") for b in server.bodies})
        total = sum(server.counts.values())
    return {
        "dir": tmp_path / "run",
        "first": first,
        "third": third,
        "again": again,
        "sent_first": sent_first,
        "sent_third": sent_third,
        "sent_again": total - sent_first - sent_third,
        "seeds": seeds,
    }


def test_each_repeat_is_asked_once_with_its_own_seed_and_key_and_resume_counts_repeats(three_repeats):
    r = three_repeats
    assert r["sent_first"] == 2 * PAIRS + 1  # two repeats and one preflight request
    assert r["sent_third"] == PAIRS + 1 and r["third"].requested == PAIRS  # only repeat 2 is new
    assert r["sent_again"] == 0 and r["again"].requested == 0
    assert r["seeds"][-3:] == sorted([0, repeat_seed(0, 1), repeat_seed(0, 2)])
    records = read_records(r["dir"])
    assert len(records) == 3 * PAIRS == len(read_all_records(r["dir"]))
    assert sorted({rec["repeat"] for rec in records}) == [0, 1, 2]
    assert len({rec["key"] for rec in records}) == 3 * PAIRS  # repeats are never one cached answer
    per_pair = defaultdict(set)
    for rec in records:
        per_pair[(rec["item_id"], rec["condition"])].add(rec["response"])
    assert sum(len(v) > 1 for v in per_pair.values()) > PAIRS // 2  # sampled: the answers differ


def test_the_summary_counts_the_tokens_of_every_repeat(three_repeats):
    # the first run asked repeats 0 and 1 of every pair: its summary's tokens are all its records'
    # (each repeat's backend counts into the run's one set of counters), as report sums them
    first = three_repeats["first"]
    asked = [r for r in read_all_records(three_repeats["dir"]) if r.get("repeat") in (0, 1)]
    assert len(asked) == 2 * PAIRS
    for k in ("prompt_tokens", "completion_tokens"):
        assert first.usage[k] == sum((r.get("usage") or {}).get(k, 0) for r in asked) > 0


def test_the_between_repeat_sd_and_the_item_interval_match_a_hand_computation(three_repeats):
    records = read_records(three_repeats["dir"])
    summary = three_repeats["again"].summary()
    numbers = summary["repeats"]
    assert numbers["repeats"] == 3 and "Student's t over items" in numbers["method"]
    for cond, n_items in (("C+Q", 17), ("C+Q+I", 5)):
        got = numbers["conditions"][cond]
        correct = [
            sum(bool(x["correct"]) for x in records if x["condition"] == cond and x["repeat"] == k) for k in range(3)
        ]
        acc = [c / n_items for c in correct]
        mean = sum(acc) / 3
        sd = math.sqrt(sum((a - mean) ** 2 for a in acc) / 2)
        assert got["per_repeat"] == pytest.approx(acc) and got["mean"] == pytest.approx(mean)
        assert got["between_repeat_sd"] == pytest.approx(sd)
        assert got["n_items"] == n_items
        # the pooled accuracy of the summary's table is the mean over repeats (every repeat has every pair)
        assert summary["accuracy"][cond] == pytest.approx(mean)
    assert numbers["conditions"]["C+Q"]["between_repeat_sd"] > 0


def test_delta_img_per_repeat_and_pooled_match_a_hand_computation(three_repeats):
    records = read_records(three_repeats["dir"])
    got = three_repeats["again"].summary()["repeats"]["delta_img"]
    with_image = {(x["item_id"], x["repeat"]): x["correct"] for x in records if x["condition"] == "C+Q+I"}
    without = {(x["item_id"], x["repeat"]): x["correct"] for x in records if x["condition"] == "C+Q"}
    per_repeat = [sum(with_image[p] - without[p] for p in with_image if p[1] == k) / 5 for k in range(3)]
    assert [d["delta"] for d in got["per_repeat"]] == pytest.approx(per_repeat)
    assert [d["n"] for d in got["per_repeat"]] == [5, 5, 5]
    assert got["pooled"]["delta"] == pytest.approx(sum(per_repeat) / 3) == got["mean"]


def test_item_interval_worked_by_hand():
    """Eight items' means over 3 repeats: 1, 1, 2/3, 2/3, 2/3, 1/3, 1, 2/3. Mean 6/8 = 0.75; squared
    deviations 3 × 1/16 + 4 × 1/144 + 25/144 = 7/18, over 7: SD sqrt(1/18); t(7, 0.975) = 2.364624."""
    lo, hi = item_interval([1, 1, 2 / 3, 2 / 3, 2 / 3, 1 / 3, 1, 2 / 3])
    half = 2.364624251592784 * math.sqrt(1 / 18) / math.sqrt(8)
    assert (lo, hi) == (pytest.approx(0.75 - half), pytest.approx(0.75 + half))
    assert (lo, hi) == (pytest.approx(0.55295, abs=1e-5), pytest.approx(0.94705, abs=1e-5))
    # no spread among the items: the Wilson interval on the items, never zero width
    lo, hi = item_interval([1.0] * 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)  # Wilson 10/10: n / (n + z²)
    d = paired_repeats(
        [{"item_id": "a", "correct": True, "repeat": 0}, {"item_id": "a", "correct": False, "repeat": 1}],
        [{"item_id": "a", "correct": False, "repeat": 0}, {"item_id": "a", "correct": False, "repeat": 1}],
    )
    assert [x["delta"] for x in d["per_repeat"]] == [1.0, 0.0] and d["pooled"]["delta"] == 0.5


def test_a_pooled_delta_without_spread_among_its_items_has_no_interval():
    """One paired item, right with the image in both repeats and wrong without: its pooled Δ is
    (1 + 1) / 2 = 1.0 with no interval (not [1.0, 1.0]); two such items likewise (no spread)."""

    def side(item_ids, correct):
        return [{"item_id": i, "correct": correct, "repeat": k} for i in item_ids for k in (0, 1)]

    one = paired_repeats(side(["a"], True), side(["a"], False))
    assert one["pooled"] == {"n_items": 1, "delta": 1.0, "ci": None, "ci_method": None}
    two = paired_repeats(side(["a", "b"], True), side(["a", "b"], False))
    assert two["pooled"] == {"n_items": 2, "delta": 1.0, "ci": None, "ci_method": None}
    # with spread, the t interval over the two items' means 1.0 and 0.5: 0.75 ± t(1) · 0.353553 / √2
    mixed = paired_repeats(
        side(["a"], True) + side(["b"], True),
        side(["a"], False) + [{"item_id": "b", "correct": c, "repeat": k} for k, c in ((0, True), (1, False))],
    )
    half = 12.706204736174698 * math.sqrt(0.125) / math.sqrt(2)
    assert mixed["pooled"]["ci"] == [-1.0, 1.0] and 0.75 - half < -1 and 0.75 + half > 1  # clipped to [−1, 1]


def test_the_cli_takes_repeats_and_prints_them(tmp_path):
    with OpenAIServer(sampling=True) as server:
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "jmed48k",
                "--sample",
                "--model",
                "hosted_vllm/test",
                "--api-base",
                server.url,
                "--conditions",
                "C+Q",
                "--temperature",
                "0.5",
                "--repeats",
                "2",
                "--run-dir",
                str(tmp_path / "run"),
            ],
        )
        assert result.exit_code == 0, result.output
        assert "over 2 repeats (interval: Student's t over items" in result.output
        assert "the 95% CI is item-level: each item's mean over its repeats" in result.output
        as_json = CliRunner().invoke(
            cli,
            [
                "run",
                "jmed48k",
                "--sample",
                "--model",
                "hosted_vllm/test",
                "--api-base",
                server.url,
                "--conditions",
                "C+Q",
                "--temperature",
                "0.5",
                "--repeats",
                "2",
                "--run-dir",
                str(tmp_path / "run"),
                "--json",
            ],
        )
    doc = json.loads(as_json.stdout)
    assert doc["repeats"]["repeats"] == 2 and doc["repeats"]["conditions"]["C+Q"]["n_items"] == 17


def test_report_and_compare_show_the_summary_s_numbers_over_repeats(three_repeats):
    """One number, one computation: report's columns and compare's section are the summary's."""
    import medvqa
    from medvqa.core.compare.comparison import compare_runs
    from medvqa.core.compare.render import markdown

    summary = three_repeats["again"].summary()["repeats"]
    rows = medvqa.report(three_repeats["dir"], by="", fmt="json")
    for row in rows:
        want = summary["conditions"][row["condition"]]
        assert (row["repeats"], row["mean_over_repeats"], row["between_repeat_sd"]) == (
            3,
            pytest.approx(want["mean"]),
            pytest.approx(want["between_repeat_sd"]),
        )
        assert [row["item_ci_low"], row["item_ci_high"]] == pytest.approx(want["ci"])
    doc = compare_runs([three_repeats["dir"]]).as_json()
    (got,) = doc["repeats"]
    assert got["conditions"] == summary["conditions"] and got["delta_img"] == summary["delta_img"]
    assert any("3 repeats" in n for n in doc["notes"])
    assert "## Over repeats" in markdown(doc)


def test_delta_lang_per_repeat_and_pooled_in_compare_match_a_hand_computation(tmp_path):
    """IgakuQA 116-A (the first 12 items) in Japanese and in English, two sampled repeats each."""
    from medvqa.core.compare.comparison import compare_runs
    from tests.conftest import shared_data

    dirs = {}
    with OpenAIServer(sampling=True) as server:
        for lang in ("ja", "en"):
            dirs[lang] = tmp_path / lang
            run(
                RunOptions(
                    benchmark="igakuqa",
                    model="hosted_vllm/test",
                    data=str(shared_data("igakuqa")),
                    select={"block": ["116A"]},
                    limit=12,
                    language=lang,
                    conditions="C+Q",
                    repeats=2,
                    run_dir=str(dirs[lang]),
                    backend_options={"api_base": [server.url], "temperature": 1.0},
                ),
                progress=False,
            )
    doc = compare_runs([dirs["en"], dirs["ja"]]).as_json()
    (lang_row,) = [r for r in doc["repeats"] if "delta_lang" in r]
    assert lang_row["languages"] == ["ja", "en"]
    got = lang_row["delta_lang"]["C+Q"]
    right = {lang: {(r["item_id"], r["repeat"]): r["correct"] for r in read_records(dirs[lang])} for lang in dirs}
    pairs = sorted(set(right["ja"]) & set(right["en"]))
    per_repeat = []
    for k in (0, 1):
        mine = [p for p in pairs if p[1] == k]
        per_repeat.append(sum(right["ja"][p] - right["en"][p] for p in mine) / len(mine))
    assert [d["delta"] for d in got["per_repeat"]] == pytest.approx(per_repeat)
    assert got["pooled"]["delta"] == pytest.approx(sum(per_repeat) / 2)
    assert got["between_repeat_sd"] == pytest.approx(abs(per_repeat[0] - per_repeat[1]) / math.sqrt(2))


def test_runs_with_different_seeds_share_no_repeat(tmp_path):
    """The random baseline on the sample's 17 items, --seed 0 and --seed 1, three repeats each:
    every one of the six repeats answers differently (with seed + r, repeat 1 of seed 0 and
    repeat 0 of seed 1 were one and the same), and the manifest lists each repeat's seed."""
    answers = {}
    for seed in (0, 1):
        run_dir = tmp_path / f"seed{seed}"
        run(
            RunOptions(
                benchmark="jmed48k",
                model="random",
                sample=True,
                conditions="C+Q",
                seed=seed,
                repeats=3,
                run_dir=str(run_dir),
            ),
            progress=False,
        )
        for k in range(3):
            answers[(seed, k)] = tuple(
                json.dumps(r["predicted"])
                for r in sorted((r for r in read_records(run_dir) if r["repeat"] == k), key=lambda r: r["item_id"])
            )
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["repeats"]["seeds"] == [seed, repeat_seed(seed, 1), repeat_seed(seed, 2)]
    assert all(len(a) == 17 for a in answers.values())
    assert len(set(answers.values())) == 6
    assert repeat_seed(0, 1) != 1 and len({repeat_seed(s, r) for s in range(50) for r in range(1, 10)}) == 450


def test_repeats_with_forced_guess_are_refused_before_the_run_directory_is_touched(tmp_path):
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "jmed48k",
            "--sample",
            "--model",
            "random",
            "--repeats",
            "2",
            "--forced-guess",
            "--run-dir",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 1
    assert "--forced-guess and --repeats cannot be combined yet" in result.output
    assert not (tmp_path / "run").exists()  # no lock file, no folder left behind


def test_a_repeated_run_s_headline_interval_is_the_item_level_one_in_every_output(tmp_path):
    """The random baseline, seed 6, on the sample's first 3 items, 2 repeats: Q1 right twice, Q2
    never, Q3 in repeat 0 only. Item means 1, 0, 1/2: mean 1/2, SD √((1/4 + 1/4 + 0) / 2) = 1/2,
    half-width t(2, 0.975) · (1/2) / √3 = 4.302653 · 0.288675 = 1.242069, so [−0.742, 1.742]
    clipped to [0, 1]. Counting the 6 records as items gave Wilson's 3/6 = [0.18762, 0.81238]
    (centre (3 + z²/2) / (6 + z²) = 1/2, half z·√(6/4 + z²/4) / (6 + z²) = 0.312381)."""
    import medvqa
    from medvqa.core.compare.comparison import compare_runs

    run_dir = tmp_path / "run"
    result = run(
        RunOptions(
            benchmark="jmed48k",
            model="random",
            sample=True,
            conditions="C+Q",
            limit=3,
            repeats=2,
            seed=6,
            run_dir=str(run_dir),
        ),
        progress=False,
    )
    right = defaultdict(list)
    for r in sorted(read_records(run_dir), key=lambda r: (r["item_id"], r["repeat"])):
        right[r["item_id"]].append(bool(r["correct"]))
    assert list(right.values()) == [[True, True], [False, False], [True, False]]
    half = 4.302652729749464 * 0.5 / math.sqrt(3)
    assert half == pytest.approx(1.242069, abs=1e-6) and 0.5 - half < 0 and 0.5 + half > 1
    want = {"n": 6, "n_items": 3, "repeats": 2, "accuracy": 0.5, "ci": [0.0, 1.0], "ci_method": "item-mean-t"}

    (row,) = medvqa.report(run_dir, by="", fmt="json")
    assert {k: row[k] for k in ("n", "n_items", "repeats", "accuracy", "ci_method")} == {
        k: want[k] for k in ("n", "n_items", "repeats", "accuracy", "ci_method")
    }
    assert [row["ci_low"], row["ci_high"]] == want["ci"]
    summary = result.summary()
    assert summary["repeats"]["conditions"]["C+Q"]["ci"] == want["ci"]
    table = compare_runs([run_dir], resamples=200).as_json()["table"]
    (overall,) = [r for r in table if r["stratum"] == "overall"]
    assert (overall["n"], overall["value"], [overall["ci_low"], overall["ci_high"]], overall["ci_method"]) == (
        6,
        0.5,
        want["ci"],
        "item-mean-t",
    )
    cell = medvqa.audit(run_dir, resamples=200)["marginals"]["overall"]["C+Q"]
    assert {k: cell[k] for k in want} == want


def random_run(tmp_path, seed: int, conditions: str = "C+Q", limit: int | None = None):
    run_dir = tmp_path / f"random-{seed}"
    run(
        RunOptions(
            benchmark="jmed48k",
            model="random",
            sample=True,
            conditions=conditions,
            limit=limit,
            repeats=2,
            seed=seed,
            model_name=f"random-{seed}",
            run_dir=str(run_dir),
        ),
        progress=False,
    )
    right = defaultdict(list)
    for r in sorted(read_records(run_dir), key=lambda r: (r["item_id"], r["condition"], r["repeat"])):
        right[(r["item_id"], r["condition"])].append(bool(r["correct"]))
    return run_dir, right


def test_tests_between_repeated_runs_pair_each_item_s_mean_over_its_repeats(tmp_path):
    """Seeds 6 and 8 on the sample's first 3 items, 2 repeats: item means (1, 0, 1/2) and (0, 0, 1),
    contrasts (1, 0, −1/2): mean 1/6, SD √((25 + 1 + 16) / 36 / 2) = 0.763763, SE 0.440959,
    t = 0.377964 on 2 df: p = 2·(1/2 − t / (2√(2 + t²))) = 2·(0.5 − 0.129099) = 0.741801; the
    interval 1/6 ± 4.302653 · 0.440959 clipped to [−1, 1]. The last repeat alone gave (1, 0, 0)
    against (0, 0, 1): a difference of 0, one third of the data."""
    from medvqa.core.compare.comparison import compare_runs

    a, right_a = random_run(tmp_path, 6, limit=3)
    b, right_b = random_run(tmp_path, 8, limit=3)
    assert list(right_a.values()) == [[True, True], [False, False], [True, False]]
    assert list(right_b.values()) == [[False, False], [False, False], [True, True]]
    p = 2 * (0.5 - 0.377964473 / (2 * math.sqrt(2 + 0.377964473**2)))
    assert p == pytest.approx(0.741801, abs=1e-6)
    (test,) = compare_runs([a, b], resamples=200).as_json()["tests"]
    assert (test["n"], test["a_value"], test["b_value"]) == (3, 0.5, pytest.approx(1 / 3))
    assert (test["difference"], test["p"]) == (pytest.approx(1 / 6), pytest.approx(p, abs=1e-6))
    assert ([test["ci_low"], test["ci_high"]], test["ci_method"], test["test"]) == (
        [-1.0, 1.0],
        "item-mean-t",
        "item-mean-paired-t",
    )
    import medvqa

    audited = {c["measure"]: c for c in medvqa.audit(a, b, resamples=200)["comparisons"]}
    same = audited["accuracy C+Q"]
    assert (same["n"], same["difference"], same["p"], same["test"]) == (3, test["difference"], test["p"], test["test"])


def test_compare_s_delta_img_of_a_repeated_run_is_the_pooled_one(tmp_path):
    """Seed 11 on the sample, C+Q+I and C+Q, 2 repeats; its 5 image items, (with, removed) per
    repeat: Nurse Q3 (1, 0) (0, 1); A Q3 (1, 0) (0, 0); A Q4 (1, 0) (0, 0); B Q2 and B Q3 wrong in
    all four. Item contrasts of the means: 0, 1/2, 1/2, 0, 0: pooled Δimg 0.2; deviations
    −0.2, 0.3, 0.3, −0.2, −0.2, SD √(0.30 / 4) = 0.273861, SE 0.122474: 0.2 ± 2.776445 · 0.122474
    = [−0.140044, 0.540044], t = 1.632993 on 4 df, p 0.177808. The last repeat alone gave
    0 with the image and 1/5 without: Δimg −0.2, the opposite sign."""
    from medvqa.core.compare.comparison import compare_runs

    run_dir, right = random_run(tmp_path, 11, conditions="C+Q,C+Q+I")
    image_items = sorted({i for i, c in right if c == "C+Q+I"})
    assert [(right[(i, "C+Q+I")], right[(i, "C+Q")]) for i in image_items] == [
        ([True, False], [False, True]),
        ([True, False], [False, False]),
        ([True, False], [False, False]),
        ([False, False], [False, False]),
        ([False, False], [False, False]),
    ]
    doc = compare_runs([run_dir], resamples=200).as_json()
    (row,) = doc["delta_img"]
    assert (row["n"], row["delta_img"], row["a_with"], row["a_removed"]) == (
        5,
        pytest.approx(0.2),
        pytest.approx(0.3),
        pytest.approx(0.1),
    )
    assert [row["ci_low"], row["ci_high"]] == pytest.approx([-0.140044, 0.540044], abs=1e-6)
    assert (row["ci_method"], row["test"]) == ("item-mean-t", "item-mean-paired-t") and "p 0.178" in row["note"]
    (repeated,) = doc["repeats"]
    assert repeated["delta_img"]["pooled"]["delta"] == row["delta_img"]
    assert repeated["delta_img"]["pooled"]["ci"] == [row["ci_low"], row["ci_high"]]
    assert [d["delta"] for d in repeated["delta_img"]["per_repeat"]] == pytest.approx([0.6, -0.2])

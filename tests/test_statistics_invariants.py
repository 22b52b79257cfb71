"""Every interval medvqa prints contains its estimate, none has zero width where n >= 1, every
one names its method, and no p-value is 0 — checked over the JSON of `report`, `report --table`,
`audit` and `compare` on runs of the bundled JMed48k sample at the extremes: a model right on
every item, one wrong on every item, one right only with the image, and strata of one item
(`--by dominant_type`: four of the five image items have a type of their own).

The methods are our own (the papers prescribe none; docs/audit.md, "Statistics")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core import bootstrap, stats
from medvqa.core.run.options import RunOptions, run

ESTIMATES = {
    "ci": ("delta_img", "delta_lang", "difference", "accuracy", "value", "mean", "delta"),
    "ci_a_with": ("a_with",),
    "ci_a_removed": ("a_removed",),
}
P_KEYS = (
    "p",
    "p_holm",
    "mcnemar_p",
    "mcnemar_p_holm",
    "mcnemar_exact_p",
    "exact_p",
    "p_cluster",
    "binomial_p",
    "binomial_p_with",
)


def answer(item, right: bool) -> list[str]:
    gold = list(item.gold.alternatives[0])
    if right:
        return [{o.key: o.label for o in item.options}.get(k, k) for k in gold] if item.options else gold
    if item.options:
        return [next(o.label for o in item.options if o.key not in item.gold.keys)]
    return ["987654"]


def replay_run(tmp_path, name: str, with_image: bool, without_image: bool, limit: int | None = None):
    items = medvqa.load("jmed48k", split="sample")
    lines = [
        {"item_id": it.id, "condition": cond, "response": json.dumps({"answer": answer(it, right)})}
        for it in items
        if not it.excluded
        for cond, right in (("C+Q+I", with_image), ("C+Q", without_image))
    ]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run_dir = tmp_path / name
    run(
        RunOptions(
            benchmark="jmed48k",
            model=f"replay:{path}",
            sample=True,
            conditions="C+Q,C+Q+I",
            limit=limit,
            run_dir=str(run_dir),
        ),
        progress=False,
    )
    return run_dir


def invoke(*args) -> dict:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def rows(doc, path="$"):
    """(path, object) of every JSON object in a document, the document's own first."""
    if isinstance(doc, list):
        for i, x in enumerate(doc):
            yield from rows(x, f"{path}[{i}]")
    elif isinstance(doc, dict):
        yield path, doc
        for key, value in doc.items():
            yield from rows(value, f"{path}.{key}")


def intervals(doc):
    """(path, estimate, (low, high), n, method) of every interval in a JSON document."""
    for path, row in rows(doc):
        method = row.get("ci_method")
        for key, names in ESTIMATES.items():
            ci = row.get(key)
            if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci):
                estimate = next(row[k] for k in names if row.get(k) is not None)
                yield (
                    f"{path}.{key}",
                    estimate,
                    tuple(ci),
                    row.get("n"),
                    (row.get("ci_a_method") or method) if key != "ci" else method,
                )
        for low, high in (("ci_low", "ci_high"), ("f1_ci_low", "f1_ci_high")):
            if row.get(low) is not None:
                estimate = next(
                    row[k]
                    for k in ("accuracy", "value", "delta_img", "delta_lang", "difference", "micro_f1")
                    if row.get(k) is not None
                )
                yield f"{path}.{low}", estimate, (row[low], row[high]), row.get("n"), method


def p_values(doc):
    for path, row in rows(doc):
        for key, value in row.items():
            if key in P_KEYS and isinstance(value, (int, float)):
                yield f"{path}.{key}", value


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("extremes")
    return {
        "right": replay_run(tmp, "right", True, True),
        "wrong": replay_run(tmp, "wrong", False, False),
        "image": replay_run(tmp, "image", True, False),
    }


def test_every_interval_contains_its_estimate_has_width_and_a_method_and_no_p_is_zero(runs):
    by = ["--by", "dominant_type"]
    docs = {}
    for name, run_dir in runs.items():
        docs[f"report {name}"] = invoke("report", run_dir, *by, "--json")
        docs[f"report --table {name}"] = invoke("report", run_dir, "--table", "jmed48k", "--json")
        docs[f"audit {name}"] = invoke("audit", run_dir, *by, "--resamples", "200", "--json")
    everything = list(runs.values())
    docs["audit all"] = invoke("audit", *everything, *by, "--resamples", "200", "--json")
    docs["compare all"] = invoke("compare", *everything, *by, "--resamples", "200", "--json")

    seen = 0
    for name, doc in docs.items():
        for where, estimate, (low, high), n, method in intervals(doc):
            seen += 1
            assert low - 1e-12 <= estimate <= high + 1e-12, (name, where, estimate, low, high)
            assert n is None or n < 1 or high > low, (name, where, n, low, high)
            assert method, (name, where)
        for where, p in p_values(doc):
            assert 0 < p <= 1, (name, where, p)
    assert seen > 200

    # the extremes behave as the methods say: 18/18 right gets [lower, 1] of positive width;
    # a stratum of one image item gets a Tango interval around Δimg = 1 (z²/(1 + z²) = 0.793 wide)
    overall = next(r for r in docs["report right"] if r["condition"] == "C+Q")
    assert overall["accuracy"] == 1.0 and overall["ci_high"] == 1.0 and overall["ci_low"] < 1.0
    one = docs["audit image"]["paired"]["by"]["dominant_type"]["Diagram"]
    z2 = 1.959963984540054**2
    assert one["n"] == 1 and one["delta_img"] == 1.0
    assert one["ci"] == pytest.approx([(1 - z2) / (1 + z2), 1.0]) and one["ci_method"] == "tango-score"
    # strata of 1-2 pairs are descriptive: no test (and no Holm), a note; the overall row is the
    # primary Δimg and is tested at any n (5 pairs all one way: mid-p 1/32 = 0.03125)
    levels = docs["audit image"]["paired"]["by"]["dominant_type"]
    assert all(
        v["mcnemar_p"] is None
        and v["mcnemar_p_holm"] is None
        and v["role"] == "secondary"
        and v["note"].startswith("descriptive")
        for v in levels.values()
    )
    overall = docs["audit image"]["paired"]["overall"]
    assert (overall["role"], overall["test"]) == ("primary", "mcnemar-mid-p")
    assert (overall["mcnemar_p"], overall["mcnemar_exact_p"]) == pytest.approx((0.03125, 0.0625), rel=1e-12)


def test_audit_and_compare_give_the_same_exact_mcnemar_for_the_same_runs(tmp_path):
    # Four items, one model right on each, the other wrong on each: four discordant pairs all
    # one way: McNemar's exact conditional p = 2 · (1/2)⁴ = 0.125, the mid-p 0.125 − 1/16 = 0.0625
    # (Fagerland, Lydersen & Laake 2013), in both commands (never 0).
    right = replay_run(tmp_path, "right", True, True, limit=4)
    wrong = replay_run(tmp_path, "wrong", False, False, limit=4)
    compared = invoke("compare", right, wrong, "--json")
    [test] = [t for t in compared["tests"] if t["condition"] == "C+Q"]
    assert (test["n"], test["test"]) == (4, "mcnemar-mid-p")
    assert (test["p"], test["exact_p"]) == pytest.approx((0.0625, 0.125), rel=1e-12)
    audited = invoke("audit", right, wrong, "--json")
    [row] = [c for c in audited["comparisons"] if c["measure"] == "accuracy C+Q"]
    assert (row["n"], row["test"], row["difference"]) == (4, "mcnemar-mid-p", 1.0)
    assert (row["p"], row["exact_p"]) == (test["p"], test["exact_p"])
    # (4, 0) is one of the few tables where Tango's interval (the asymptotic test, z = 2.0 > 1.96)
    # excludes 0 and the mid-p (0.0625) does not reject: both rows say so (docs/audit.md)
    assert "asymptotic McNemar" in row["note"] and row["note"] == test["note"]
    # Tango's interval for n10 = 4 of 4: [(4 − z²)/(4 + z²), 1] = [0.0202, 1], in both
    assert row["ci"][0] == pytest.approx(test["ci_low"]) == pytest.approx(0.020218, abs=1e-6)
    assert not math.isclose(row["ci"][0], row["ci"][1])


# ---------------------------------------------------------------- every built-in benchmark, both readings


def contradictions(doc):
    """(path, ci, p) of every row whose interval excludes 0 while its test says p ≥ 0.05, or the
    reverse, without a note that explains it."""
    for _, row in rows(doc):
        p = row.get("mcnemar_p", row.get("p"))
        ci = (
            row.get("ci")
            if isinstance(row.get("ci"), list)
            else ([row["ci_low"], row["ci_high"]] if row.get("ci_low") is not None else None)
        )
        if (
            isinstance(p, (int, float))
            and ci
            and None not in ci
            and any(k in row for k in ("difference", "delta_img", "delta_lang"))
        ):
            if (ci[0] > 0 or ci[1] < 0) != (p < 0.05) and not row.get("note"):
                yield row, ci, p
        # the image-as-options control: an accuracy's Wilson interval excludes the chance baseline
        # exactly when its score test against it rejects
        for ci_key, p_key in (("ci_a_removed", "binomial_p"), ("ci_a_with", "binomial_p_with")):
            ci, p, chance = row.get(ci_key), row.get(p_key), row.get("baseline")
            if isinstance(p, (int, float)) and ci and chance is not None:
                outside = not ci[0] <= chance <= ci[1]
                if outside != (p < 0.05):
                    yield row, ci, p


def untested_p(doc):
    """Paths of the rows with a p-value (`p`, `mcnemar_p`, `binomial_p`) that name no test (`test`)."""
    for path, row in rows(doc):
        if any(isinstance(row.get(k), (int, float)) for k in ("p", "mcnemar_p", "binomial_p")) and not row.get("test"):
            yield path


def igakuqa_run(tmp_path, name: str, right_with: bool, right_without: bool):
    """A replay run of IgakuQA (real data, ../shared/data/igakuqa, 2018) on 60 items, withdrawn
    items among them under the MHLW convention (SOURCE.txt)."""
    from tests.conftest import shared_data

    data = shared_data("igakuqa")
    items = [it for it in medvqa.load("igakuqa", path=data, select={"year": ["2018"]}) if not it.excluded][:60]
    lines = [
        {"item_id": it.id, "condition": cond, "response": json.dumps({"answer": answer(it, right)})}
        for it in items
        for cond, right in (("C+Q+I", right_with), ("C+Q", right_without))
    ]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run_dir = tmp_path / name
    run(
        RunOptions(
            benchmark="igakuqa",
            model=f"replay:{path}",
            data=str(data),
            conditions="C+Q,C+Q+I",
            select={"year": ["2018"]},
            limit=60,
            run_dir=str(run_dir),
        ),
        progress=False,
    )
    return run_dir


@pytest.fixture(scope="module")
def igakuqa_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("igakuqa")
    return {"right": igakuqa_run(tmp, "right", True, True), "image": igakuqa_run(tmp, "image", True, False)}


@pytest.mark.parametrize("reading", ["strict", "assisted"])
def test_no_zero_p_no_contradiction_one_n_and_named_methods_on_every_benchmark(runs, igakuqa_runs, reading):
    docs = {}
    for bench, group in (("jmed48k", runs), ("igakuqa", igakuqa_runs)):
        dirs = list(group.values())
        docs[f"audit {bench}"] = invoke("audit", *dirs, "--reading", reading, "--resamples", "100", "--json")
        docs[f"compare {bench}"] = invoke("compare", *dirs, "--reading", reading, "--resamples", "100", "--json")
        docs[f"audit {bench} --cluster case"] = invoke(
            "audit", *dirs, "--reading", reading, "--resamples", "100", "--cluster", "case", "--json"
        )
        docs[f"compare {bench} --cluster block"] = invoke(
            "compare", *dirs, "--reading", reading, "--resamples", "100", "--cluster", "block", "--json"
        )
        # the same comparison counts the same items in audit and compare (Benchmark.counts)
        audited = {(c["a"], c["b"], c["measure"]): c for c in docs[f"audit {bench}"]["comparisons"]}
        for t in docs[f"compare {bench}"]["tests"]:
            same = audited[(t["a"], t["b"], f"accuracy {t['condition']}")]
            assert (t["n"], t["p"], t["ci_low"]) == (same["n"], same["p"], same["ci"][0]), (bench, t["condition"])
    # IgakuQA 2018's first 60 items hold 112A43, withdrawn (採点除外, SOURCE.txt; MHLW convention):
    # every output counts 59, the audit's comparisons as compare's tests and every table cell
    assert {t["n"] for t in docs["compare igakuqa"]["tests"]} == {59}
    assert {c["n"] for c in docs["audit igakuqa"]["comparisons"] if c["measure"] == "accuracy C+Q"} == {59}
    assert {r["n"] for r in docs["compare igakuqa"]["table"] if r["stratum"] == "overall"} == {59}
    # the image-as-options control is among what `contradictions` checks
    assert any(isinstance(m["io_control"].get("binomial_p"), float) for m in docs["audit jmed48k"]["models"].values())
    for name, doc in docs.items():
        assert doc["intervals"]["item"].startswith("item-level"), name
        for where, estimate, (low, high), _n, method in intervals(doc):
            assert method, (name, where)
            assert low - 1e-12 <= estimate <= high + 1e-12, (name, where)
        for where, p in p_values(doc):
            assert 0 < p <= 1, (name, where, p)
        assert list(contradictions(doc)) == [], name
        assert list(untested_p(doc)) == [], name
        for row in doc.get("delta_lang", []) + doc.get("delta_img", []):
            assert row["ci_method"], name
    cluster = docs["compare igakuqa --cluster block"]
    assert cluster["intervals"]["cluster"] == "block"
    assert all(r["cluster_level"] == "block" for r in cluster["table"])


def test_mid_p_and_the_bound_below_the_smallest_float_by_hand():
    # Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91: mid-p = 2·P(X ≤ k) − P(X = k),
    # X ~ Bin(b + c, ½), k = min(b, c). (5, 0): exact 2/32 = 0.0625, mid-p 1/32 = 0.03125.
    t = stats.mcnemar(5, 0)
    assert t["test"] == "mcnemar-mid-p" and (t["p"], t["exact_p"]) == pytest.approx((0.03125, 0.0625), rel=1e-12)
    # (7, 1): exact 2·9/256 = 0.0703, mid-p (18 − 8)/256 = 0.0391
    assert stats.mcnemar(7, 1)["p"] == pytest.approx(10 / 256, rel=1e-12)
    # (0, 1579), the IgakuQA random-vs-gold case: mid-p = ½^1579, log10 = −1579·log10 2 = −475.326;
    # below the smallest float, so reported as the bound 1e-300 ("<"), never 0
    big = stats.mcnemar(0, 1579)
    assert (big["p"], big["p_bound"]) == (1e-300, "<")
    assert big["log10_p"] == pytest.approx(-1579 * math.log10(2), abs=1e-9)
    assert big["exact_log10_p"] == pytest.approx(-1578 * math.log10(2), abs=1e-9)
    assert stats.mcnemar_exact(0, 1076) == 1e-300
    from medvqa.core.render import p_value

    assert p_value(big["p"]) == "< 1e-300"


def test_cluster_bootstrap_on_a_small_fixture_by_hand():
    # Two clusters: {1, 1} and {0}. Resampling 2 clusters gives totals (correct, items) of
    # (4, 4), (2, 3) twice, or (0, 2), each with probability ¼, ½, ¼: accuracies 1, 2/3, 0.
    # The 2.5 % and 97.5 % quantiles of that distribution are 0 and 1 (Davison & Hinkley 1997,
    # §3.8: resample whole clusters).
    out = bootstrap.cluster_bootstrap([1, 1, 0], [1, 1, 1], ["a", "a", "b"], resamples=4000, seed=0, min_clusters=1)
    assert (
        out["ci"] == [0.0, 1.0]
        and out["ci_method"] == "cluster-bootstrap-expanded-percentile"
        and out["n_clusters"] == 2
    )
    sums = bootstrap.resampled_sums(np.array([[1, 1], [1, 1], [0, 1]]), ["a", "a", "b"], resamples=4000, seed=0)
    shares = {v: float(np.mean(np.isclose(sums[:, 0] / sums[:, 1], v))) for v in (1.0, 2 / 3, 0.0)}
    assert shares == pytest.approx({1.0: 0.25, 2 / 3: 0.5, 0.0: 0.25}, abs=0.03)
    # item-level resampling of the same three items never gives 2/3 from 3 items alone... it is
    # a different distribution: P(accuracy 1) = (2/3)³ = 0.296
    items = bootstrap.resampled_sums(np.array([[1, 1], [1, 1], [0, 1]]), None, resamples=4000, seed=0)
    assert float(np.mean(items[:, 0] == 3)) == pytest.approx(8 / 27, abs=0.03)
    # below the minimum number of clusters (20) no interval, and a note
    assert bootstrap.cluster_bootstrap([1, 1, 0], [1, 1, 1], ["a", "a", "b"])["ci"] is None


@pytest.fixture(scope="module")
def other_benchmark_runs(tmp_path_factory):
    """Runs of the other built-in benchmarks on real or bundled data: MMBU-hard (the real proxy
    items, ../shared/data/mmbu-proxy: `random` and a replay right on 7 of 10), WorldMedQA-V (the
    authors' published GPT-4o-mini outputs in both languages, with and without images: Δlang and
    Δimg, an assisted reading), Polish PES (its test fixture, two seeds of `random`) and MIR (2024's
    published GPT-4 and GPT-4 Vision answers, one model name: Δimg on the 25 image items)."""
    from tests.conftest import shared_data

    tmp = tmp_path_factory.mktemp("others")
    out: dict[str, list] = {}
    proxy = shared_data("mmbu-proxy")
    medvqa.run("mmbu_hard", "random", data=str(proxy), run_dir=str(tmp / "mmbu_random"), progress=False)
    golds = {r["item_id"]: r["predicted"] for r in medvqa.read_run(tmp / "mmbu_random").records}
    replay = tmp / "mmbu.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"item_id": i, "condition": c, "response": json.dumps({"answer": ["A"]})}) + "\n"
            for i in golds
            for c in ("C+Q", "C+Q+I")
        ),
        encoding="utf-8",
    )
    medvqa.run("mmbu_hard", f"replay:{replay}", data=str(proxy), run_dir=str(tmp / "mmbu_replay"), progress=False)
    out["mmbu_hard"] = [tmp / "mmbu_random", tmp / "mmbu_replay"]
    data = shared_data("worldmedqa-v-japan")
    out["worldmedqa_v"] = []
    for folder in ("outputs_w_images", "outputs_blind"):
        for version in ("local", "english"):
            table = data / "visuals" / folder / "GPT4o" / f"GPT4o_japan_{version}_gpt-4o-mini_result.xlsx"
            run_dir = tmp / f"wmq-{folder}-{version}"
            result = CliRunner().invoke(
                cli, ["import", "worldmedqa_v", str(table), "--data", str(data), "--run-dir", str(run_dir), "--json"]
            )
            assert result.exit_code == 0, result.output
            out["worldmedqa_v"].append(run_dir)
    fixture = __import__("pathlib").Path(__file__).parent / "adapters" / "polish_pes" / "data"
    for seed in (0, 1):
        run(
            RunOptions(
                benchmark="polish_pes",
                model="random",
                data=str(fixture),
                seed=seed,
                model_name=f"random{seed}",
                conditions="C+Q,C+Q+I",
                run_dir=str(tmp / f"pes{seed}"),
            ),
            progress=False,
        )
    out["polish_pes"] = [tmp / "pes0", tmp / "pes1"]
    mir = shared_data("mir")  # GPT-4 (C+Q, all 210) and GPT-4 Vision (C+Q+I, 1-25) under one name: Δimg
    for name, book, column, model in (
        ("gpt4", "MIR24GPT_final.xlsx", " GPT-4", "gpt-4"),
        ("vision", "MIR24GPT_vision_answered_v2.xlsx", " GPT-4 Vision", "gpt-4-vision"),
    ):
        result = CliRunner().invoke(
            cli,
            [
                "import",
                "mir",
                str(mir / "2024" / book),
                "--data",
                str(mir),
                "--run-dir",
                str(tmp / f"mir-{name}"),
                "--response-column",
                column,
                "--model",
                model,
                "--model-name",
                "gpt-4",
                "--json",
                *(["--condition", "C+Q"] if name == "gpt4" else []),
            ],
        )
        assert result.exit_code == 0, result.output
    out["mir"] = [tmp / "mir-gpt4", tmp / "mir-vision"]
    return out


@pytest.mark.parametrize("reading", ["strict", "assisted"])
def test_the_invariants_hold_on_the_other_built_in_benchmarks(other_benchmark_runs, reading):
    for bench, dirs in other_benchmark_runs.items():
        docs = {
            "audit": invoke("audit", *dirs, "--reading", reading, "--resamples", "100", "--json"),
            "compare": invoke("compare", *dirs, "--reading", reading, "--resamples", "100", "--json"),
        }
        for name, doc in docs.items():
            for where, estimate, (low, high), _n, method in intervals(doc):
                assert method, (bench, name, where)
                assert low - 1e-12 <= estimate <= high + 1e-12, (bench, name, where)
            for where, p in p_values(doc):
                assert 0 < p <= 1, (bench, name, where, p)
            assert list(contradictions(doc)) == [], (bench, name)
            assert list(untested_p(doc)) == [], (bench, name)
            for row in doc.get("delta_lang", []) + doc.get("delta_img", []):
                assert row["ci_method"] and (row["mcnemar_p"] is None or row["test"] == "mcnemar-mid-p"), (bench, row)
        audited = {(c["a"], c["b"], c["measure"]): c for c in docs["audit"].get("comparisons", [])}  # one model: none
        for t in docs["compare"]["tests"]:
            same = audited.get((t["a"], t["b"], f"accuracy {t['condition']}"))
            if same is not None and t["metric"] == "accuracy":
                assert (t["n"], t["p"]) == (same["n"], same["p"]), (bench, t)
    wmq = invoke("compare", *other_benchmark_runs["worldmedqa_v"], "--reading", reading, "--json")
    assert wmq["delta_lang"] and all(r["ci_method"] == "tango-score" for r in wmq["delta_lang"])


def test_cluster_on_benchmarks_that_do_not_declare_it(runs, other_benchmark_runs):
    # JMed48k declares `case`; MMBU-hard declares no clusters: its cells keep item-level intervals
    # and a note says so. Where no benchmark declares the level, the command refuses, naming them.
    doc = invoke("compare", runs["right"], *other_benchmark_runs["mmbu_hard"], "--cluster", "case", "--json")
    assert "mmbu_hard declares no cluster level 'case': item-level intervals only" in doc["notes"]
    assert {r["benchmark"]: r["cluster_level"] for r in doc["table"]} == {"jmed48k": "case", "mmbu_hard": None}
    result = CliRunner().invoke(cli, ["compare", *map(str, other_benchmark_runs["mmbu_hard"]), "--cluster", "case"])
    assert result.exit_code != 0 and "no benchmark of these runs declares the cluster level 'case'" in result.output


def test_tango_and_the_mid_p_disagree_only_where_a_note_says_so():
    # Every table of n = 17 pairs (171 of them): Tango's interval inverts the asymptotic McNemar
    # test, and the mid-p test agrees with it except at (4, 0) and (0, 4) (z = 2.0, mid-p 0.0625);
    # the exact conditional test disagreed in 12 (docs/audit.md, "Statistics").
    from medvqa.core.audit.transitions import agreement_note

    noted = [
        (b, c)
        for b in range(18)
        for c in range(18 - b)
        if agreement_note(stats.paired_difference_ci(b, c, 17), stats.mcnemar(b, c)["p"])
    ]
    assert noted == [(0, 4), (4, 0)]
    exact = [
        (b, c)
        for b in range(18)
        for c in range(18 - b)
        if agreement_note(stats.paired_difference_ci(b, c, 17), stats.mcnemar(b, c)["exact_p"])
    ]
    assert len(exact) == 12 and (5, 0) in exact and (7, 1) in exact


# the benchmarks the invariants above run on; kokushimd10 and yakugakuqa share IgakuQA's class
# (`_MhlwExam`: its counting, clusters and headline), so IgakuQA's runs stand for them
COVERED = {"jmed48k", "igakuqa", "mmbu_hard", "worldmedqa_v", "polish_pes", "mir"}
SAME_CLASS_AS_IGAKUQA = {"kokushimd10", "yakugakuqa"}


def test_every_built_in_benchmark_is_covered_by_the_invariants():
    from medvqa.core import plugins

    built_in = {name for name, e in plugins.benchmarks().items() if e.plugin in plugins.DEFAULT_PLUGINS}
    missing = built_in - COVERED - SAME_CLASS_AS_IGAKUQA
    assert not missing, f"add runs of {sorted(missing)} to the invariants (other_benchmark_runs)"


def test_the_expanded_percentile_bootstrap_by_hand_and_its_p_agrees_with_its_interval():
    # Hesterberg (2015), §4.1: for n = 20 units, α′ = 2Φ(−√(20/19)·t(19, 0.975)) = 2Φ(−2.1474)
    # = 0.03176, so the percentile interval is read at level 0.96824; a plain bootstrap p of
    # α′ maps back to 0.05
    assert bootstrap.expanded_level(20) == pytest.approx(0.968238, abs=1e-6)
    assert bootstrap.expanded_p(1 - bootstrap.expanded_level(20), 20) == pytest.approx(0.05, abs=1e-9)
    rng = np.random.default_rng(3)
    for seed in range(40):  # the interval excludes 0 exactly when p < 0.05
        a, b = rng.integers(0, 2, 30), rng.integers(0, 2, 30) * rng.integers(0, 2, 30)
        out = bootstrap.bootstrap_difference(a, b, resamples=400, seed=seed)
        if out["ci"] is not None:
            assert (out["ci"][0] > 0 or out["ci"][1] < 0) == (out["p"] < 0.05), (seed, out)
    # near the edge: 5 and 6 right of 20 against 2 (on two items of their own): p 0.098 with the
    # interval reaching 0, p 0.048 with the interval [0.05, 0.40] just clear of it
    a5, a6, b = [1] * 5 + [0] * 15, [1] * 6 + [0] * 14, [0] * 2 + [1] * 2 + [0] * 16
    five, six = (bootstrap.bootstrap_difference(a, b, resamples=1000, seed=1) for a in (a5, a6))
    assert five["ci"][0] == 0.0 and five["p"] > 0.05
    assert six["ci"][0] > 0 and six["p"] < 0.05


def test_the_audit_pages_a_clustered_comparison_links_to_show_the_cluster_intervals_too(runs, tmp_path):
    """`compare --html --cluster case`: each run's audit page beside the comparison shows the
    cluster-bootstrap intervals the comparison shows, as `audit --cluster case` of that run does
    (they were item-level only)."""
    page = tmp_path / "cmp.html"
    result = CliRunner().invoke(
        cli,
        [
            "compare",
            str(runs["right"]),
            str(runs["image"]),
            "--cluster",
            "case",
            "--resamples",
            "100",
            "--html",
            str(page),
        ],
    )
    assert result.exit_code == 0, result.output
    audits = sorted((tmp_path / "cmp-audits").glob("*.html"))
    assert len(audits) == 2
    for audit_page, name in zip(audits, ("right", "image")):
        text = audit_page.read_text(encoding="utf-8")
        assert "cluster bootstrap over case" in text, audit_page.name
        doc = invoke("audit", runs[name], "--cluster", "case", "--resamples", "100", "--json")
        assert doc["intervals"]["cluster"] == "case" and doc["paired"]["overall"]["n_clusters"] > 0


# ---------------------------------------------------------------- clusters by default, repeated runs


def block_run(tmp_path, name: str, right) -> Path:
    """A replay of IgakuQA 2018's block 112B (real data: 49 items, five linked pairs 112B40–41 …
    112B48–49, so 44 cases), right on the items `right(number)` picks, under C+Q."""
    from tests.conftest import shared_data

    data = shared_data("igakuqa")
    items = medvqa.load("igakuqa", path=data, select={"block": ["112B"]})
    lines = [
        {"item_id": it.id, "condition": "C+Q", "response": json.dumps({"answer": answer(it, right(it.id))})}
        for it in items
        if not it.excluded
    ]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run(
        RunOptions(
            benchmark="igakuqa",
            model=f"replay:{path}",
            data=str(data),
            conditions="C+Q",
            select={"block": ["112B"]},
            run_dir=str(tmp_path / name),
        ),
        progress=False,
    )
    return tmp_path / name


def test_a_benchmark_that_declares_clusters_gets_the_cluster_interval_by_default(tmp_path):
    # right on 112B1-112B30, wrong on the other 19: accuracy 30/49; 44 cases (the five pairs
    # 40-41 … 48-49 are one case each), so the cluster bootstrap resamples 44 units by default
    run_dir = block_run(tmp_path, "first30", lambda item_id: int(item_id[4:]) <= 30)
    other = block_run(tmp_path, "last19", lambda item_id: int(item_id[4:]) > 30)
    compared = invoke("compare", run_dir, other, "--resamples", "2000", "--json")
    assert compared["intervals"]["cluster"] == "case" and "--cluster none" in compared["intervals"]["cluster_statement"]
    overall = {r["model"]: r for r in compared["table"] if r["stratum"] == "overall"}
    row = next(r for m, r in overall.items() if "first30" in m)
    assert (row["n"], row["value"]) == (49, pytest.approx(30 / 49))
    assert (row["cluster_level"], row["n_clusters"]) == ("case", 44)
    assert row["cluster_ci_low"] < 30 / 49 < row["cluster_ci_high"]
    audited = invoke("audit", run_dir, other, "--resamples", "2000", "--json")
    assert audited["intervals"]["cluster"] == "case"
    # --cluster none switches it off: item-level intervals only, and no cluster column
    plain = invoke("compare", run_dir, other, "--cluster", "none", "--json")
    assert plain["intervals"]["cluster"] is None and "cluster_statement" not in plain["intervals"]
    assert all("cluster_ci_low" not in r for r in plain["table"])
    assert invoke("audit", run_dir, "--cluster", "none", "--json")["intervals"]["cluster"] is None
    # 10,000 resamples unless --resamples says otherwise: about 250 in each tail of a 95 % interval
    by_default = invoke("audit", run_dir, "--json")
    assert by_default["settings"]["resamples"] == 10_000 == bootstrap.RESAMPLES
    assert by_default["paired"]["overall"]["n"] == 0 and by_default["marginals"]["overall"]["C+Q"]["n"] == 49
    # the text output names the level
    text = CliRunner().invoke(cli, ["compare", str(run_dir), str(other), "--resamples", "200"])
    assert text.exit_code == 0 and "Cluster-bootstrap intervals (case)" in text.output


def test_the_invariants_hold_on_repeated_runs(tmp_path):
    """The random baseline on the sample, three repeats, and a replay beside it: every interval of
    report, audit and compare contains its estimate, has width, names its method; no p is 0."""
    repeated = tmp_path / "random3"
    run(
        RunOptions(
            benchmark="jmed48k", model="random", sample=True, conditions="C+Q,C+Q+I", repeats=3, run_dir=str(repeated)
        ),
        progress=False,
    )
    right = replay_run(tmp_path, "right", True, False)
    docs = {
        "report": invoke("report", repeated, "--json"),
        "audit": invoke("audit", repeated, right, "--resamples", "200", "--json"),
        "compare": invoke("compare", repeated, right, "--resamples", "200", "--json"),
    }
    seen = 0
    for name, doc in docs.items():
        for where, estimate, (low, high), n, method in intervals(doc):
            seen += 1
            assert low - 1e-12 <= estimate <= high + 1e-12, (name, where, estimate, low, high)
            assert n is None or n < 1 or high > low, (name, where)
            assert method, (name, where)
        for where, p in p_values(doc):
            assert 0 < p <= 1, (name, where, p)
        assert list(contradictions(doc)) == [], name
    assert seen > 20

"""Every interval medvqa prints contains its estimate, none has zero width where n >= 1, every
one names its method, and no p-value is 0 — checked over the JSON of `report`, `report --table`,
`audit` and `compare` on runs of the bundled JMed48k sample at the extremes: a model right on
every item, one wrong on every item, one right only with the image, and strata of one item
(`--by dominant_type`: four of the five image items have a type of their own).

The methods are our own (the papers prescribe none; docs/audit.md, "Statistics")."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.run.options import RunOptions, run

ESTIMATES = {"ci": ("delta_img", "difference", "accuracy", "value"), "ci_a_with": ("a_with",),
             "ci_a_removed": ("a_removed",)}
P_KEYS = ("p", "mcnemar_p", "mcnemar_p_holm", "binomial_p", "binomial_p_with")


def answer(item, right: bool) -> list[str]:
    gold = list(item.gold.alternatives[0])
    if right:
        return [{o.key: o.label for o in item.options}.get(k, k) for k in gold] if item.options else gold
    if item.options:
        return [next(o.label for o in item.options if o.key not in item.gold.keys)]
    return ["987654"]


def replay_run(tmp_path, name: str, with_image: bool, without_image: bool, limit: int | None = None):
    items = medvqa.load("jmed48k", split="sample")
    lines = [{"item_id": it.id, "condition": cond, "response": json.dumps({"answer": answer(it, right)})}
             for it in items if not it.excluded
             for cond, right in (("C+Q+I", with_image), ("C+Q", without_image))]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run_dir = tmp_path / name
    run(RunOptions(benchmark="jmed48k", model=f"replay:{path}", sample=True, conditions="C+Q,C+Q+I",
                   limit=limit, run_dir=str(run_dir)), progress=False)
    return run_dir


def invoke(*args) -> dict:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def intervals(doc, path="$"):
    """(path, estimate, (low, high), n, method) of every interval in a JSON document."""
    if isinstance(doc, list):
        for i, x in enumerate(doc):
            yield from intervals(x, f"{path}[{i}]")
        return
    if not isinstance(doc, dict):
        return
    method = doc.get("ci_method")
    for key, names in ESTIMATES.items():
        ci = doc.get(key)
        if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci):
            estimate = next(doc[k] for k in names if doc.get(k) is not None)
            yield f"{path}.{key}", estimate, tuple(ci), doc.get("n"), (doc.get("ci_a_method") or method) if key != "ci" else method
    for low, high in (("ci_low", "ci_high"), ("f1_ci_low", "f1_ci_high")):
        if doc.get(low) is not None:
            estimate = next(doc[k] for k in ("accuracy", "value", "delta_img", "difference", "micro_f1")
                            if doc.get(k) is not None)
            yield f"{path}.{low}", estimate, (doc[low], doc[high]), doc.get("n"), method
    for key, value in doc.items():
        yield from intervals(value, f"{path}.{key}")


def p_values(doc, path="$"):
    if isinstance(doc, list):
        for i, x in enumerate(doc):
            yield from p_values(x, f"{path}[{i}]")
    elif isinstance(doc, dict):
        for key, value in doc.items():
            if key in P_KEYS and isinstance(value, (int, float)):
                yield f"{path}.{key}", value
            yield from p_values(value, f"{path}.{key}")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("extremes")
    return {"right": replay_run(tmp, "right", True, True), "wrong": replay_run(tmp, "wrong", False, False),
            "image": replay_run(tmp, "image", True, False)}


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
    z2 = 1.959963984540054 ** 2
    assert one["n"] == 1 and one["delta_img"] == 1.0
    assert one["ci"] == pytest.approx([(1 - z2) / (1 + z2), 1.0]) and one["ci_method"] == "tango-score"
    # Holm beside the raw p in the stratified table: four levels, each p = 1 (one discordant
    # pair: McNemar 2·½ = 1) except Chart/Graph/Table (two: 2·¼ = 0.5); Holm: 4·0.5 → 1
    levels = docs["audit image"]["paired"]["by"]["dominant_type"]
    assert {k: v["mcnemar_p"] for k, v in levels.items()}["Chart/Graph/Table"] == 0.5
    assert all(v["mcnemar_p_holm"] == 1.0 for v in levels.values())


def test_audit_and_compare_give_the_same_exact_mcnemar_for_the_same_runs(tmp_path):
    # Four items, one model right on each, the other wrong on each: four discordant pairs all
    # one way, McNemar's exact two-sided p = 2 · (1/2)⁴ = 0.125 in both commands (never 0).
    right = replay_run(tmp_path, "right", True, True, limit=4)
    wrong = replay_run(tmp_path, "wrong", False, False, limit=4)
    compared = invoke("compare", right, wrong, "--json")
    [test] = [t for t in compared["tests"] if t["condition"] == "C+Q"]
    assert (test["n"], test["test"], test["p"]) == (4, "mcnemar-exact", 0.125)
    audited = invoke("audit", right, wrong, "--json")
    [row] = [c for c in audited["comparisons"] if c["measure"] == "accuracy C+Q"]
    assert (row["n"], row["test"], row["p"], row["difference"]) == (4, "mcnemar-exact", 0.125, 1.0)
    # Tango's interval for n10 = 4 of 4: [(4 − z²)/(4 + z²), 1] = [0.0202, 1], in both
    assert row["ci"][0] == pytest.approx(test["ci_low"]) == pytest.approx(0.020218, abs=1e-6)
    assert not math.isclose(row["ci"][0], row["ci"][1])

"""`--variants confidence` end to end: MIR 2026 under C+Q against a local OpenAI-compatible
server whose planted model states 95 % when asked for a confidence and is right on three items
in five. The prompt asks in Spanish, structured output asks for the number, the answer reader
records it, the audit's calibration reads it, and the variant pairs with C+Q like any factor.

Hand computation: every stated confidence is 0.95, so every record falls in one bin of the ECE
(0.9-1.0]; ECE = |0.95 − accuracy|. The model is right exactly where the item's position among
the asked items is 0, 1 or 2 modulo 5, with and without the confidence instruction: no pair
changes (Δconfidence = 0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medvqa.core.conditions import Condition
from medvqa.core.inference.images import to_openai
from medvqa.core.run.options import RunOptions, prepare
from medvqa.core.run.plan import dry_run
from medvqa.core.run.runner import execute
from tests.openai_server import OpenAIServer, prompt_text

MIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mir"
ASKED = "confianza en que la respuesta es correcta"  # the Spanish confidence instruction


def test_a_stated_confidence_is_asked_in_the_exams_language_recorded_and_calibrated(tmp_path):
    if not MIR.is_dir():
        pytest.fail(f"the MIR data is missing: {MIR} (see ../shared/data/README.md)")
    opts = RunOptions(
        benchmark="mir",
        model="hosted_vllm/test",
        data=str(MIR),
        select={"year": ["2026"]},
        conditions="C+Q",
        variants="confidence",
        run_dir=str(tmp_path / "run"),
        cache=False,
    )
    spec = prepare(opts)
    asked = [it for it in spec.items if not it.excluded]
    right = {it.id: i % 5 < 3 for i, it in enumerate(asked)}
    by_text = {prompt_text(to_openai(spec.benchmark.render(it, Condition.CQ))): it for it in asked}

    def see(text, images):
        base = text.split("\n\n" + spec.benchmark.confidence_instruction)[0]
        item = by_text.get(base)
        if item is None:
            return None  # (the preflight request)
        gold = item.gold.alternatives[0][0]
        label = gold if right[item.id] else next(o.label for o in item.options if o.key != gold)
        return json.dumps({"answer": [label], **({"confidence": 95} if ASKED in text else {})})

    plan = dry_run(opts)
    with OpenAIServer(see=see) as server:
        opts.backend_options = {"api_base": server.url}
        spec.backend = prepare(opts).backend
        result = execute(spec)
        sent = sum(server.counts.values())
    n = len(asked)  # 203 valid items in 2026 (7 annulled)
    assert n == 203 and plan["pairs"] == 2 * n and plan["requests"] + plan["preflight"] == sent
    stated = [r for r in result.records if r["condition"] == "C+Q~confidence"]
    assert len(stated) == n and {(r["confidence"], r["confidence_method"]) for r in stated} == {(0.95, "stated")}
    assert all("confidence" not in r for r in result.records if r["condition"] == "C+Q")

    from medvqa import audit

    doc = audit(tmp_path / "run")
    k = sum(right.values())  # positions 0-202: 40 full fives (3 right each) and 0, 1, 2: 123
    assert k == 123
    calibration = doc["confidence"]["conditions"]["C+Q~confidence"]["overall"]
    assert calibration["n"] == n and calibration["accuracy"] == pytest.approx(k / n)
    assert calibration["ece"]["value"] == pytest.approx(0.95 - 123 / 203)  # 0.3441
    factor = doc["variants"]["confidence"]["overall"]
    assert factor["counts"] == {"n11": k, "n10": 0, "n01": 0, "n00": n - k} and factor["delta_confidence"] == 0.0
    # compare shows the same calibration for the variant's records, beside no row for plain C+Q
    from medvqa.core.compare.comparison import compare_runs

    rows = compare_runs([tmp_path / "run"]).as_json()["calibration"]
    assert [(r["condition"], r["n"], r["methods"]) for r in rows] == [("C+Q~confidence", n, {"stated": n})]
    assert rows[0]["ece"] == calibration["ece"]["value"] and rows[0]["ece_ci_low"] == calibration["ece"]["ci"][0]

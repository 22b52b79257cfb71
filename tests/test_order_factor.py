"""The option-order factor end to end: a run with `--variants order` against a local
OpenAI-compatible server whose planted model answers by position, then the audit's `order`
section, every number worked out by hand from the planted rule and the official keys.

The planted model always answers the first slot's label ("1" in MIR and the nurse exam, "a" in
the physician exam), whatever the options say. CircularEval (MMBench, Liu et al. 2024, §3.2)
asks each item in all k rotations of its option texts; the gold text visits slot 1 in exactly
one of them, so this model is right in every rotation on no item, and right on every record
whose gold stands in slot 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medvqa.core import order
from medvqa.core.conditions import Condition
from medvqa.core.inference.images import to_openai
from medvqa.core.run.options import RunOptions, prepare
from medvqa.core.run.runner import execute
from tests.openai_server import OpenAIServer, prompt_text

ROOT = Path(__file__).resolve().parents[1]
MIR = ROOT.parent / "shared" / "data" / "mir"


def position_run(tmp_path, **options) -> dict:
    """Run `options` under C+Q with `--variants order` against the first-slot model, and audit the
    saved run as `medvqa audit` does."""
    opts = RunOptions(
        model="hosted_vllm/test", conditions="C+Q", variants="order", run_dir=str(tmp_path / "run"), **options
    )
    spec = prepare(opts)
    first = {}
    for it in spec.items:
        for r in range(max(1, len(it.options))):
            first[prompt_text(to_openai(spec.benchmark.render(order.rotated(it, r), Condition.CQ)))] = it

    def see(text, images):
        item = first.get(text)  # (None: the preflight request)
        return json.dumps({"answer": [item.options[0].label]}) if item is not None and item.options else None

    with OpenAIServer(see=see) as server:
        opts.backend_options = {"api_base": server.url}
        spec.backend = prepare(opts).backend
        result = execute(spec)
    assert not [r for r in result.records if r["status"] == "error"]
    from medvqa import audit

    return audit(tmp_path / "run")["variants"]["order"]


def slots(section: dict) -> dict[str, tuple[int, int]]:
    return {s: (v["n"], v["k"]) for s, v in section["accuracy_by_gold_slot"].items()}


def test_a_position_biased_model_survives_no_rotation_on_the_jmed48k_sample(tmp_path):
    section = position_run(tmp_path, benchmark="jmed48k", sample=True)
    # 11 reorderable items (of 17: 1 excluded, 2 numeric, 2 image-as-options, 2 ordered scales);
    # right in the printed order where the gold is the first label alone or among alternatives:
    # Physician A_Q1 (A), A_Q6 (A or C), B_Q5 (A): 3 of 11; in every order: none
    overall = section["overall"]
    assert (overall["n"], overall["counts"]) == (11, {"n11": 0, "n10": 3, "n01": 0, "n00": 8})
    assert overall["a_base"] == 3 / 11 and overall["a_order"] == 0.0 and overall["delta_order"] == 3 / 11
    assert (section["circular_accuracy"]["k"], section["circular_accuracy"]["n"]) == (0, 11)
    # the chosen text moves with slot 1 on every item
    assert (section["flip_rate"]["k"], section["flip_rate"]["n"]) == (11, 11)
    # one-key golds: A_Q1 (A), A_Q3 (B), B_Q1 (C), B_Q3 (B), B_Q5 (A), 5 options each: the gold
    # stands once in each slot, right only in slot 1
    assert slots(section) == {"1": (5, 5), "2": (5, 0), "3": (5, 0), "4": (5, 0), "5": (5, 0)}
    assert section["kept_in_order"] == {
        "its options are numbers in order (an ordered scale)": {
            "n": 2,
            "items": ["Nurse_2023_AM_Q1", "Nurse_2023_AM_Q3"],
        },
        "its answer is numeric, not options": {"n": 2, "items": ["Nurse_2023_PM_Q1", "Physician_2024_A_Q5"]},
        "its images are the options": {"n": 2, "items": ["Physician_2024_A_Q4", "Physician_2024_B_Q2"]},
    }


def test_a_position_biased_model_survives_no_rotation_on_mir_2026(tmp_path):
    if not MIR.is_dir():
        pytest.fail(f"the MIR data is missing: {MIR} (see ../shared/data/README.md)")
    section = position_run(tmp_path, benchmark="mir", data=str(MIR), select={"year": ["2026"]})
    # 2026: 203 valid items (7 annulled), 3 of them kept in order (options 65/75/85/95 and two
    # other ordered scales); of the other 200 the official key answers 1 on 40 (2 on 62, 3 on 63,
    # 4 on 35)
    overall = section["overall"]
    assert (overall["n"], overall["counts"]) == (200, {"n11": 0, "n10": 40, "n01": 0, "n00": 160})
    assert overall["delta_order"] == 40 / 200 == 0.2
    assert (section["circular_accuracy"]["k"], section["circular_accuracy"]["n"]) == (0, 200)
    assert (section["flip_rate"]["k"], section["flip_rate"]["n"]) == (200, 200)
    # 4 options: each of the 200 golds stands once in each of the 4 slots
    assert slots(section) == {"1": (200, 200), "2": (200, 0), "3": (200, 0), "4": (200, 0)}
    assert {why: v["n"] for why, v in section["kept_in_order"].items()} == {
        "its options are numbers in order (an ordered scale)": 3
    }

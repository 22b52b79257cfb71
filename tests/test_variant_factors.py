"""The image factors end to end: a run with `--variants swap,hflip` against a local
OpenAI-compatible server whose planted model looks at the images, then the audit's paired
sections, every number worked out by hand from the planted rule.

The data are the bundled JMed48k sample (17 items; 5 with their images: Nurse_2023_AM_Q3,
Physician_2024_A_Q3, A_Q4, B_Q2 and B_Q3, which has two). All items are put in one profession and
one image type, so that `swap` pairs them (seed 7: A_Q3 <-> Nurse Q3 and A_Q4 <-> B_Q2; B_Q3, the one
item with two images, has no partner: tests/core/run/test_variants.py pins the partners).

Two planted models, each told the item by the prompt's text:
- reads THE image: right exactly when it is shown the item's own image bytes (so wrong without
  an image, with another item's image, and with its own image mirrored);
- image-agnostic: right whenever any image is shown, whatever it is.
Text-only items are answered right by both under C+Q (they show no image, and the item's own
images are none), so they enter no image pair.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medvqa.core import plugins
from medvqa.core.audit.analysis import audit_run
from medvqa.core.audit.pairs import RunInput, Settings
from medvqa.core.conditions import Condition
from medvqa.core.inference.images import to_openai
from medvqa.core.run.options import RunOptions, prepare
from medvqa.core.run.runner import execute
from tests.openai_server import OpenAIServer, canonical_messages, prompt_text

pytestmark = pytest.mark.slow  # two runs against a live server, 30 s each here

SWAPPED = 4  # image items with a swap partner
IMAGE_ITEMS = 5
# MIR 2026: questions 1-25 show an image, question 13 was annulled: 24 image items, all of one
# group for the swap (MIR declares no image type or profession), so each has a partner
MIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mir"
MIR_IMAGE_ITEMS = 24


def answer(item, right: bool) -> str:
    """The item's gold labels, or one wrong label."""
    gold = set(item.gold.alternatives[0])
    labels = {o.key: o.label for o in item.options}
    if right:
        return json.dumps({"answer": sorted(labels[k] for k in gold)})
    return json.dumps({"answer": [next(lab for k, lab in labels.items() if k not in gold)]})


def audited(tmp_path, name: str, rule, mir: bool = False) -> dict:
    """Run the sample (or MIR 2026) under C+Q, C+Q+I, swap and hflip against a model answering
    by `rule(own images, shown images)`, and audit the run."""
    data = {"benchmark": "mir", "data": str(MIR), "select": {"year": ["2026"]}} if mir else {"benchmark": "jmed48k"}
    options = RunOptions(
        model="hosted_vllm/test",
        sample=not mir,
        conditions="C+Q,C+Q+I",
        variants="swap,hflip",
        seed=7,
        run_dir=str(tmp_path / name),
        cache=False,
        **data,
    )
    spec = prepare(options)
    if not mir:
        spec.items = [
            it.model_copy(update={"meta": {**it.meta, "profession": "Physician", "dominant_type": "Diagram"}})
            for it in spec.items
        ]
    by_text, own = {}, {}
    for it in spec.items:
        if it.excluded:
            continue
        shown = canonical_messages(
            to_openai(spec.benchmark.render(it, Condition.CQI if it.image_available else Condition.CQ))
        )
        for cond in (Condition.CQ, Condition.CQI):  # (the prompt's text may differ with the image shown)
            by_text[prompt_text(to_openai(spec.benchmark.render(it, cond)))] = it
        own[it.id] = [d for _, parts in shown for kind, d in parts if kind == "image"]

    def see(text, images):
        item = by_text.get(text)  # (None: the preflight request, answered as the server answers it)
        return answer(item, rule(own[item.id], images)) if item is not None else None

    with OpenAIServer(see=see) as server:
        options.backend_options = {"api_base": server.url}
        spec.backend = prepare(options).backend
        result = execute(spec)
    # audited as `medvqa audit` audits a run (its items relabelled in memory, so from the records
    # the run returns: the saved run's data fingerprint is the unrelabelled data's)
    bench = spec.benchmark
    run = RunInput(
        model="planted",
        records=result.records,
        items={it.id: it for it in spec.items},
        patterns=plugins.answer_patterns(),
        stratum_aliases=bench.stratum_aliases,
        benchmark=bench,
    )
    return audit_run(run, Settings())


def counts(section: dict) -> tuple[int, int, int, int]:
    c = section["overall"]["counts"]
    return c["n11"], c["n10"], c["n01"], c["n00"]


def test_a_model_that_reads_the_image_loses_as_much_to_another_image_as_to_none(tmp_path):
    doc = audited(tmp_path, "reads", lambda own, shown: shown == own)
    image = doc["paired"]["overall"]
    # right with its own image on all 5, wrong on all 5 without: Δimg = 5/5
    assert (image["n"], image["counts"]) == (IMAGE_ITEMS, {"n11": 0, "n10": 5, "n01": 0, "n00": 0})
    assert image["delta_img"] == 1.0
    swap = doc["variants"]["swap"]
    # the 4 swapped items: right with their own image, wrong with their partner's: Δswap = Δimg on them
    assert counts(swap) == (0, SWAPPED, 0, 0) and swap["overall"]["delta_swap"] == 1.0
    # a wrong image is no worse than none for this model: both wrong on the 4 (swap − removed = 0)
    removal = swap["vs_removal"]["overall"]
    assert removal["counts"] == {"n11": 0, "n10": 0, "n01": 0, "n00": SWAPPED} and removal["delta_swap_removal"] == 0.0
    # its own image mirrored is not its own image: wrong on all 5 under hflip (laterality-aware)
    assert counts(doc["variants"]["hflip"]) == (0, IMAGE_ITEMS, 0, 0)
    assert doc["variants"]["hflip"]["overall"]["delta_hflip"] == 1.0
    # exact mid-p McNemar of 4 discordant pairs all one way: 2 * (1/16) - 1/16 = 1/16
    assert swap["overall"]["mcnemar_p"] == 1 / 16


def test_an_image_agnostic_model_loses_the_image_but_not_to_another_image(tmp_path):
    doc = audited(tmp_path, "agnostic", lambda own, shown: bool(shown))
    assert doc["paired"]["overall"]["counts"] == {"n11": 0, "n10": 5, "n01": 0, "n00": 0}
    assert doc["paired"]["overall"]["delta_img"] == 1.0
    # right with any image: Δswap = 0 on the 4, Δhflip = 0 on the 5 (laterality-blind)
    assert (
        counts(doc["variants"]["swap"]) == (SWAPPED, 0, 0, 0)
        and doc["variants"]["swap"]["overall"]["delta_swap"] == 0.0
    )
    assert counts(doc["variants"]["hflip"]) == (IMAGE_ITEMS, 0, 0, 0)
    # another image beats none: right with the partner's image, wrong without any (swap − removed = +1)
    removal = doc["variants"]["swap"]["vs_removal"]["overall"]
    assert removal["counts"] == {"n11": 0, "n10": SWAPPED, "n01": 0, "n00": 0}
    assert removal["delta_swap_removal"] == 1.0


def test_on_mir_2026_the_image_reader_loses_to_a_swap_and_a_flip_what_it_loses_without_the_image(tmp_path):
    if not MIR.is_dir():
        pytest.fail(f"the MIR data is missing: {MIR} (see ../shared/data/README.md)")
    doc = audited(tmp_path, "mir-reads", lambda own, shown: shown == own, mir=True)
    n = MIR_IMAGE_ITEMS
    assert doc["paired"]["overall"]["counts"] == {"n11": 0, "n10": n, "n01": 0, "n00": 0}
    # Δswap = Δimg = 24/24; a wrong image no worse than none; its own image mirrored is not its own
    assert counts(doc["variants"]["swap"]) == (0, n, 0, 0) and doc["variants"]["swap"]["overall"]["delta_swap"] == 1.0
    assert doc["variants"]["swap"]["vs_removal"]["overall"]["counts"] == {"n11": 0, "n10": 0, "n01": 0, "n00": n}
    assert counts(doc["variants"]["hflip"]) == (0, n, 0, 0)


def test_on_mir_2026_the_image_agnostic_model_loses_the_image_but_not_to_a_swap_or_a_flip(tmp_path):
    if not MIR.is_dir():
        pytest.fail(f"the MIR data is missing: {MIR} (see ../shared/data/README.md)")
    doc = audited(tmp_path, "mir-agnostic", lambda own, shown: bool(shown), mir=True)
    n = MIR_IMAGE_ITEMS
    assert doc["paired"]["overall"]["delta_img"] == 1.0
    # right with any image: Δswap = 0 and Δhflip = 0 on the 24 (laterality-blind), swap − removed = +1
    assert counts(doc["variants"]["swap"]) == (n, 0, 0, 0) and doc["variants"]["swap"]["overall"]["delta_swap"] == 0.0
    assert counts(doc["variants"]["hflip"]) == (n, 0, 0, 0)
    assert doc["variants"]["swap"]["vs_removal"]["overall"]["delta_swap_removal"] == 1.0

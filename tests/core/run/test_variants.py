"""Image variants in runs (`--variants`): each image item asked again under the conditions that
show its image, with the image changed (`C+Q+I~hflip`, `C+Q+I~swap`), against the fake
OpenAI-compatible server on the bundled JMed48k sample (17 items, 5 of them with their images:
Nurse_2023_AM_Q3, Physician_2024_A_Q3, A_Q4, B_Q2 and B_Q3, which has two; B_Q1's image file is
missing, so it is asked without images only)."""

from __future__ import annotations

import io
import json
import os
from collections import Counter

import pytest
from click.testing import CliRunner
from PIL import Image, ImageFilter

from medvqa.cli.main import cli
from medvqa.core import perturb, plugins
from medvqa.core.items import Gold, ImageRef, Item
from medvqa.core.messages import file_sha256
from medvqa.core.run.evalset import read_set
from medvqa.core.run.evalset_run import run_options
from medvqa.core.run.options import RunOptions, prepare
from medvqa.core.run.plan import dry_run_set
from medvqa.core.run.runner import execute, plan_requests
from medvqa.core.run.store import read_manifest, read_records
from medvqa.core.run.variants import derangement, swap_group
from tests.openai_server import OpenAIServer

MODEL = "hosted_vllm/test"
IMAGE_ITEMS = [
    "Nurse_2023_AM_Q3",
    "Physician_2024_A_Q3",
    "Physician_2024_A_Q4",
    "Physician_2024_B_Q2",
    "Physician_2024_B_Q3",
]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def medvqa_json(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def sample_items():
    spec = prepare(RunOptions(benchmark="jmed48k", model="random", sample=True), cache=False)
    return spec.items


def test_a_run_asks_each_image_item_under_each_variant_once_and_resumes_sending_nothing(tmp_path):
    with OpenAIServer() as server:
        common = (
            "run",
            "jmed48k",
            "--sample",
            "--model",
            MODEL,
            "--api-base",
            server.url,
            "--run-dir",
            tmp_path / "run",
        )
        args = (*common, "--conditions", "C+Q,C+Q+I", "--variants", "hflip,blur", "--json")
        plan = medvqa_json(*args, "--dry-run")
        assert not (tmp_path / "run").exists() and sum(server.counts.values()) == 0
        # 17 C+Q, 5 C+Q+I, and the 5 image items once per variant
        assert (plan["pairs"], plan["requests"], plan["preflight"]) == (17 + 5 + 2 * 5, 32, 1)
        assert plan["conditions"] == {
            "C+Q": {"to_ask": 17, "cached": 0},
            "C+Q+I": {"to_ask": 5, "cached": 0},
            "C+Q+I~blur": {"to_ask": 5, "cached": 0},
            "C+Q+I~hflip": {"to_ask": 5, "cached": 0},
        }
        medvqa_json(*args)
        assert sum(server.counts.values()) == plan["requests"] + plan["preflight"] == 33
        records = read_records(tmp_path / "run")
        assert Counter(r["condition"] for r in records) == {"C+Q": 17, "C+Q+I": 5, "C+Q+I~hflip": 5, "C+Q+I~blur": 5}
        for variant in ("hflip", "blur"):
            assert sorted(r["item_id"] for r in records if r["condition"] == f"C+Q+I~{variant}") == IMAGE_ITEMS
        base = {r["item_id"]: r for r in records if r["condition"] == "C+Q+I"}
        for r in records:
            if "~" in r["condition"]:  # the changed image is in the request's key
                assert r["key"] != base[r["item_id"]]["key"]
        manifest = read_manifest(tmp_path / "run")
        assert manifest["variants"] == {"hflip": {}, "blur": {"radius": 4.0}}

        # resumed: every record kept, nothing sent; other variants are another run
        sent = sum(server.counts.values())
        again = medvqa_json(*args, "--dry-run")
        assert (again["recorded"], again["requests"], again["preflight"]) == (32, 0, 0)
        medvqa_json(*args)
        assert sum(server.counts.values()) == sent
        assert read_records(tmp_path / "run") == records
        other = invoke(*common, "--conditions", "C+Q,C+Q+I", "--variants", "hflip", "--json")
        assert other.exit_code == 1 and "differs in: variants" in other.output

        # a run without variants writes no `variants` to its manifest
        medvqa_json(*common[:-1], tmp_path / "plain", "--json")
        assert "variants" not in read_manifest(tmp_path / "plain")


def test_the_perturbed_images_are_pillows_operations_and_each_is_made_once(tmp_path, monkeypatch):
    calls = Counter()
    decode, encode = perturb.decode, perturb.encode
    monkeypatch.setattr(perturb, "decode", lambda data: calls.update(["decode"]) or decode(data))
    monkeypatch.setattr(perturb, "encode", lambda *a, **k: calls.update(["encode"]) or encode(*a, **k))
    with OpenAIServer() as server:
        for name in ("one", "two"):  # a second run, with another condition: the same images, not made again
            conditions = "C+Q+I" if name == "one" else "C+I,C+Q+I"
            medvqa_json(
                "run",
                "jmed48k",
                "--sample",
                "--model",
                MODEL,
                "--api-base",
                server.url,
                "--conditions",
                conditions,
                "--variants",
                "hflip,jpeg,crop,downscale",
                "--run-dir",
                tmp_path / name,
                "--json",
            )
            # 6 images (B_Q3 has two) × 4 perturbations: one decode and one encode each
            assert calls == {"decode": 24, "encode": 24}
        records = read_records(tmp_path / "two")
        assert Counter(r["condition"] for r in records)["C+I~hflip"] == 5

    item = next(it for it in sample_items() if it.id == "Physician_2024_A_Q3")
    source = item.images[0].path
    original = Image.open(source)
    original.load()
    w, h = original.size
    made = {v: perturb.perturbed_path(source, v) for v in ("hflip", "crop", "downscale", "jpeg", "blur")}
    assert calls == {"decode": 24 + 1, "encode": 24 + 1}  # blur was not made yet: it is now, once
    assert all(perturb.confined(p) and p.parent.parent == perturb.folder() for p in made.values())
    assert made["hflip"].suffix == ".png" and made["jpeg"].suffix == ".jpg"
    mirror = Image.open(made["hflip"])
    assert mirror.size == (w, h) and mirror.tobytes() == original.transpose(Image.Transpose.FLIP_LEFT_RIGHT).tobytes()
    assert mirror.getpixel((0, 0)) == original.getpixel((w - 1, 0))
    crop = Image.open(made["crop"])
    box = (round(w * 0.15), round(h * 0.15), round(w * 0.85), round(h * 0.85))
    assert crop.size == (box[2] - box[0], box[3] - box[1]) and crop.tobytes() == original.crop(box).tobytes()
    small = Image.open(made["downscale"])
    assert small.size == (round(w / 4), round(h / 4))
    by_hand = io.BytesIO()
    original.convert("RGB").save(by_hand, format="JPEG", quality=10)
    assert made["jpeg"].read_bytes() == by_hand.getvalue()
    plain = original if original.mode in ("L", "LA", "RGB", "RGBA") else original.convert("RGB")
    assert Image.open(made["blur"]).tobytes() == plain.filter(ImageFilter.GaussianBlur(4.0)).tobytes()

    # a file planted there as a link (to a file outside the cache) is not used: made again
    target = tmp_path / "elsewhere.png"
    target.write_bytes(made["hflip"].read_bytes())
    made["hflip"].unlink()
    os.symlink(target, made["hflip"])
    assert perturb.perturbed_path(source, "hflip") == made["hflip"] and not made["hflip"].is_symlink()
    assert calls["decode"] == 26


def with_meta(item: Item, **meta) -> Item:
    return item.model_copy(update={"meta": {**item.meta, **meta}})


def test_swap_shows_another_items_image_of_the_same_group_never_its_own(tmp_path):
    with OpenAIServer() as server:
        options = RunOptions(
            benchmark="jmed48k",
            model=MODEL,
            sample=True,
            conditions="C+Q+I",
            variants="swap",
            seed=7,
            run_dir=str(tmp_path / "run"),
            backend_options={"api_base": server.url},
            cache=False,
        )
        spec = prepare(options)
        # one profession and one image type for all: the content images with one image pair up, and
        # the two image-as-options items; B_Q3 (two images) has no partner
        spec.items = [with_meta(it, profession="Physician", dominant_type="Diagram") for it in spec.items]
        _, todo, _ = plan_requests(spec, [])
        result = execute(spec)
    partners = {
        "Nurse_2023_AM_Q3": "Physician_2024_A_Q3",
        "Physician_2024_A_Q3": "Nurse_2023_AM_Q3",
        "Physician_2024_A_Q4": "Physician_2024_B_Q2",
        "Physician_2024_B_Q2": "Physician_2024_A_Q4",
    }
    section = read_manifest(tmp_path / "run")["variants"]["swap"]
    assert section["seed"] == 7 and section["partners"] == partners
    assert [u["item_id"] for u in section["unpaired"]] == ["Physician_2024_B_Q3"]
    assert "2 image(s)" in section["unpaired"][0]["reason"]
    swapped = sorted(r["item_id"] for r in result.records if r["condition"] == "C+Q+I~swap")
    assert swapped == sorted(partners)
    # the request shows the partner's image, and is scored against the item's own gold
    items = {it.id: it for it in spec.items}
    for req in todo:
        shown = [
            part["sha256"]
            for m in req.messages
            for part in m["content"]
            if isinstance(part, dict) and part.get("type") == "image"
        ]
        own = req.item.id if req.condition == "C+Q+I" else partners[req.item.id]
        assert shown == [file_sha256(im.path) for im in items[own].images]
        assert (req.item.gold, req.item.options) == (items[req.item.id].gold, items[req.item.id].options)


def synthetic(n: int) -> list[Item]:
    return [
        Item(
            id=f"q{i:02d}",
            benchmark="jmed48k",
            question="?",
            gold=Gold(alternatives=(("A",),)),
            images=(ImageRef(ref=f"{i}.png"),),
            meta={"profession": ("Nurse", "Physician")[i % 2], "dominant_type": ("X-ray", "CT", "ECG")[i % 3]},
        )
        for i in range(n)
    ]


def test_the_derangement_has_no_fixed_point_stays_in_its_group_and_follows_the_seed():
    bench = plugins.get_benchmark("jmed48k")
    items = synthetic(40) + [
        Item(
            id="alone",
            benchmark="jmed48k",
            question="?",
            gold=Gold(alternatives=(("A",),)),
            images=(ImageRef(ref="x.png"),),
            meta={"profession": "Dentist", "dominant_type": "X-ray"},
        )
    ]
    by_id = {it.id: it for it in items}
    partners, unpaired = derangement(items, bench, 0)
    assert len(partners) == 40 and [u["item_id"] for u in unpaired] == ["alone"]
    assert sorted(partners.values()) == sorted(partners)  # each image shown once: a permutation
    assert all(p != i for i, p in partners.items())  # never an item's own image
    assert all(swap_group(by_id[i], bench) == swap_group(by_id[p], bench) for i, p in partners.items())
    assert derangement(items, bench, 0) == (partners, unpaired)
    assert derangement(items, bench, 1)[0] != partners


@pytest.mark.parametrize(
    ("variants", "message"),
    [("swap,mirror", "unknown variant 'mirror'"), ("", "empty")],
)
def test_an_unknown_variant_is_a_usage_error(variants, message, tmp_path):
    result = invoke(
        "run", "jmed48k", "--sample", "--model", "random", "--variants", variants, "--run-dir", tmp_path / "r"
    )
    assert result.exit_code == 2 and message in result.output and not (tmp_path / "r").exists()


def test_on_the_sample_every_image_item_is_alone_in_its_group_and_listed_with_the_reason(tmp_path):
    summary = medvqa_json(
        "run", "jmed48k", "--sample", "--model", "random", "--variants", "swap", "--run-dir", tmp_path / "r", "--json"
    )
    assert "C+Q+I~swap" not in summary["conditions"]
    swap = read_manifest(tmp_path / "r")["variants"]["swap"]
    assert swap["partners"] == {} and [u["item_id"] for u in swap["unpaired"]] == IMAGE_ITEMS
    assert swap["unpaired"][0]["reason"] == (
        "no other item with its images has the same group "
        "(profession Nurse, image_type Chart/Graph/Table, kind content, 1 image(s))"
    )
    result = invoke(
        "run",
        "jmed48k",
        "--sample",
        "--model",
        "random",
        "--conditions",
        "C+Q",
        "--variants",
        "hflip",
        "--run-dir",
        tmp_path / "q",
    )
    assert result.exit_code == 2 and "give a condition that shows it (C+I, C+Q+I)" in result.output


def test_an_eval_set_gives_variants_per_benchmark_entry(tmp_path):
    entry = {"benchmark": "jmed48k", "sample": True, "conditions": "C+Q+I", "variants": ["hflip"]}
    study = read_set(
        {"study_dir": str(tmp_path / "s"), "models": [{"model": "random"}], "benchmarks": [entry]}, base=tmp_path
    )
    assert run_options(study, study.experiments[0], ["medvqa"]).variants == "hflip"
    plan = dry_run_set(study)["plans"][0]
    assert plan["conditions"] == {"C+Q+I": {"to_ask": 5, "cached": 0}, "C+Q+I~hflip": {"to_ask": 5, "cached": 0}}
    with pytest.raises(Exception, match=r"benchmarks\[0\].*variants: .*unknown variant 'mirror'"):
        read_set(
            {"study_dir": "s", "models": [{"model": "random"}], "benchmarks": [{**entry, "variants": "mirror"}]},
            base=tmp_path,
        )


def test_variants_are_asked_in_every_repeat_and_the_dry_run_counts_each_one(tmp_path):
    """--repeats 3 with hflip and order on the sample: every pair, variant pairs included, is asked
    three times. The plan builds the first two repeats and counts the third: its count is what
    the run then records."""
    from medvqa.core.run.plan import dry_run

    def options(repeats: int) -> RunOptions:
        return RunOptions(
            benchmark="jmed48k",
            model="random",
            sample=True,
            conditions="C+Q,C+Q+I",
            variants="hflip,order",
            repeats=repeats,
            run_dir=str(tmp_path / "run"),
            cache=False,
        )

    once = dry_run(options(1))
    plan = dry_run(options(3))
    # 17 items under C+Q (18, one excluded), 5 under C+Q+I, 5 flipped and 51 rotations (test_eval_variants)
    assert once["pairs"] == 17 + 5 + 5 + 51 == 78
    assert (plan["pairs"], plan["to_ask"]) == (3 * 78, 3 * 78)
    assert plan["conditions"]["C+Q+I~hflip"] == {"to_ask": 15, "cached": 0}
    assert plan["conditions"]["C+Q~order:4"]["to_ask"] == 3 * 10  # the ten 5-option items
    result = execute(prepare(options(3)))
    held = Counter((r["condition"], r["repeat"] or 0) for r in result.records)
    assert len(result.records) == plan["pairs"]
    assert {held[("C+Q+I~hflip", r)] for r in range(3)} == {5} and {held[("C+Q~order:3", r)] for r in range(3)} == {11}


def test_a_box_answer_is_left_out_of_the_perturbations_that_move_pixels(tmp_path, monkeypatch):
    """A box is drawn on the original's pixels: mirrored, cropped or downscaled, the image no
    longer has the lesion where the gold says. Blur and JPEG keep the geometry."""
    from medvqa.core.conditions import Condition
    from medvqa.core.run.variants import variant_plan

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    Image.new("RGB", (16, 8), "red").save(tmp_path / "x.png")
    boxed = Item(
        id="box1",
        benchmark="mmbu_hard",
        question="Where?",
        answer_format="bbox",
        gold=Gold(box=(1.0, 1.0, 4.0, 4.0)),
        images=(ImageRef(ref="x.png", path=tmp_path / "x.png"),),
    )
    bench = plugins.get_benchmark("jmed48k")
    planned = variant_plan(bench, [boxed], (Condition.CQI,), ("blur", "hflip", "crop"), 0)
    assert [label for _, label, _ in planned.pairs] == ["C+Q+I~blur"]
    assert planned.manifest["hflip"]["excluded"] == [
        {"item_id": "box1", "reason": "its answer is a box in the original image"}
    ]
    assert "excluded" not in planned.manifest["blur"]


def test_the_confidence_variant_asks_for_the_number_in_the_benchmarks_own_answer_schema():
    """Polish PES answers `{"response": "A"}` (its paper's Appendix A.3 schema): the confidence
    request keeps that schema and adds a required `confidence` from 0 to 100; a benchmark with no
    schema of its own gets medvqa's answer schema with it. Other variants keep the schema as is."""
    from medvqa.core.run.variants import variant_messages, variant_schema

    pes, jmed = plugins.get_benchmark("polish_pes"), plugins.get_benchmark("jmed48k")
    item = jmed.load(None, "sample")[0]
    schema = variant_schema(pes, "C+Q~confidence", item)
    assert schema["required"] == ["response", "confidence"]
    assert schema["properties"]["response"]["enum"] == ["A", "B", "C", "D", "E"]
    assert schema["properties"]["confidence"] == {"type": "number", "minimum": 0, "maximum": 100}
    assert variant_schema(jmed, "C+Q~confidence", item)["required"] == ["answer", "confidence"]
    assert variant_schema(jmed, "C+Q~order:1", item) is None
    text = variant_messages(jmed, "C+Q~confidence", item)[-1]["content"]
    assert text.endswith(jmed.confidence_instruction) and "確信度" in text

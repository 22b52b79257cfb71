"""The image variants of a run (`--variants swap,hflip`): which items each variant asks, with
which image, and what the manifest records of it.

A variant asks an item again under each of the run's conditions that show its image (C+I,
C+Q+I), recorded as `<condition>~<variant>` (`C+Q+I~swap`) and scored against the item's own
gold; only the image changes. The item is rendered as a copy whose image paths point at the
changed image, so the request's key (which hashes the image bytes) is the variant's own.

- A perturbation (`blur`, `jpeg`, `downscale`, `crop`, `hflip`) shows the item's own image
  perturbed (`perturb.perturbed_path`, made once and kept in the cache folder). Those that move
  pixels (`GEOMETRIC`) leave out the items whose answer is a box (drawn on the original's
  pixels); the manifest lists them under the variant's `excluded`.
- `swap` shows another item's image: the image items are grouped by what the items declare of
  them, the profession or country where the items carry one (`SWAP_GROUPS`), the benchmark's
  image type (its `image_type` stratum, under the name `stratum_aliases` gives it), whether the
  images are the options (an image-as-options item takes the images of another), and the number
  of images; within each group, the items (by id) are shuffled with the run's seed and each
  takes the image of the next one round the circle: a derangement, never an item's own image,
  the same for the same seed. An item alone in its group is not asked under `swap`; the
  manifest lists it with the reason, beside every item's partner.

`order` asks an item again under every condition of the run with its options rotated, once
per rotation (`order.rotated`: r = 1 .. k-1 for k options, the original order being the base
condition's record; recorded as `C+Q+I~order:1`, ...), scored against the gold remapped to
where its text now stands. An item the benchmark keeps in its order (`Benchmark.reorder_refusal`)
is not asked; the manifest lists it with the reason.

`confidence` asks every item again under every condition of the run with the benchmark's
confidence instruction after the answer instruction (`Benchmark.confidence_instruction`, in the
exam's language): the JSON answer then carries `confidence`, 0-100, which the answer reader
records (`scoring.confidence`), and structured output asks for it (`variant_schema`). Paired with
its base condition it says whether asking for a confidence moves the answers; its records are
what the audit's calibration reads.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from .. import order, perturb
from ..benchmark import Benchmark
from ..conditions import CONFIDENCE, IMAGE_VARIANTS, ORDER, Condition, plan, rotation_label, variant_label
from ..errors import UsageError
from ..inference.output import ANSWER_SCHEMA
from ..items import ImageRef, ImageRole, Item
from ..messages import Message
from ..results import base_condition, variant_of

SWAP = "swap"
# The perturbations that move pixels: a box answer drawn on the original no longer marks the same place.
GEOMETRIC = ("downscale", "crop", "hflip")
# The conditions a variant of the image applies to: those that show it.
SHOWS_IMAGE = (Condition.CI, Condition.CQI)
# Item strata that keep a swap among items of the same exam population, where items carry them.
SWAP_GROUPS = ("profession", "country")


def check_variants(variants: tuple[str, ...], conditions: tuple[Condition, ...] | None = None) -> tuple[str, ...]:
    """`variants` (parsed by `conditions.parse_variants`), refused where an image variant is
    asked and none of `conditions` (when given) shows the image it changes."""
    image = [v for v in variants if v in IMAGE_VARIANTS]
    if image and conditions is not None and not set(conditions) & set(SHOWS_IMAGE):
        raise UsageError(
            f"--variants {','.join(image)} change the image: give a condition that shows it "
            f"({', '.join(SHOWS_IMAGE)}), not only {', '.join(conditions)}"
        )
    return variants


@dataclass
class VariantPlan:
    """The variant pairs of a run: (item, record label, the item as shown), in a stable order, and
    the manifest's `variants` section."""

    pairs: list[tuple[Item, str, Item]] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)


def image_kind(item: Item) -> str:
    """ "options" for an item whose images are its options, else "content"."""
    answer = item.image_as_options or bool(item.meta.get("image_as_options"))
    return "options" if answer or any(im.role == ImageRole.ANSWER for im in item.images) else "content"


def swap_group(item: Item, benchmark: Benchmark) -> list[Any]:
    """What an item's swap partner must share with it (see the module's docstring)."""
    type_field = benchmark.stratum_aliases.get("image_type", "image_type")
    population = [[name, item.meta[name]] for name in SWAP_GROUPS if item.meta.get(name) is not None]
    return [*population, ["image_type", item.meta.get(type_field)], ["kind", image_kind(item)], len(item.images)]


def derangement(items: list[Item], benchmark: Benchmark, seed: int) -> tuple[dict[str, str], list[dict]]:
    """(item id -> partner id, the unpaired items with their reason) for `swap` over `items`
    (those with their images), seeded by `seed`."""
    groups: dict[str, list[Item]] = {}
    keys: dict[str, list[Any]] = {}
    for item in items:
        key = swap_group(item, benchmark)
        text = repr(key)
        groups.setdefault(text, []).append(item)
        keys[text] = key
    partners: dict[str, str] = {}
    unpaired: list[dict] = []
    for text, members in groups.items():
        if len(members) < 2:
            described = ", ".join(f"{k[0]} {k[1]}" if isinstance(k, list) else f"{k} image(s)" for k in keys[text])
            unpaired.append(
                {"item_id": members[0].id, "reason": f"no other item with its images has the same group ({described})"}
            )
            continue
        order = sorted(it.id for it in members)
        digest = hashlib.sha256(f"medvqa-swap\x00{seed}\x00{text}".encode()).digest()
        random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
        for i, item_id in enumerate(order):
            partners[item_id] = order[(i + 1) % len(order)]
    return dict(sorted(partners.items())), sorted(unpaired, key=lambda u: u["item_id"])


def shown_with(item: Item, paths: list) -> Item:
    """A copy of `item` whose images are at `paths` (one a image), refs and roles its own."""
    images = tuple(ImageRef(ref=im.ref, role=im.role, path=p) for im, p in zip(item.images, paths))
    return item.model_copy(update={"images": images})


def variant_plan(
    benchmark: Benchmark, items: list[Item], conditions: tuple[Condition, ...], variants: tuple[str, ...], seed: int
) -> VariantPlan:
    """The requests `variants` add to a run of `items` under `conditions`, and its manifest section."""
    out = VariantPlan()
    if not variants:
        return out
    check_variants(variants)
    shown = [(item, cond) for item, cond in plan(items, conditions) if cond in SHOWS_IMAGE]
    with_images = list({item.id: item for item, _ in shown}.values())
    by_id = {item.id: item for item in with_images}
    for variant in variants:
        if variant == ORDER:
            order_pairs(benchmark, items, conditions, out)
            continue
        if variant == CONFIDENCE:
            out.manifest[CONFIDENCE] = {"instruction": benchmark.confidence_instruction, "scale": [0, 100]}
            out.pairs += [(item, variant_label(cond, CONFIDENCE), item) for item, cond in plan(items, conditions)]
            continue
        if variant == SWAP:
            partners, unpaired = derangement(with_images, benchmark, seed)
            out.manifest[SWAP] = {
                "seed": seed,
                "group_by": [*SWAP_GROUPS, "image_type", "kind", "n_images"],
                "partners": partners,
                "unpaired": unpaired,
            }
            copies = {
                item.id: shown_with(item, [im.path for im in by_id[partners[item.id]].images])
                for item in with_images
                if item.id in partners
            }
        else:
            out.manifest[variant] = perturb.parameters(variant)
            copies = {}
            moved = [item.id for item in with_images if variant in GEOMETRIC and item.answer_format == "bbox"]
            if moved:  # the gold boxes are in the original's pixels: a moved image would be scored against them
                out.manifest[variant] = {
                    **out.manifest[variant],
                    "excluded": [{"item_id": i, "reason": "its answer is a box in the original image"} for i in moved],
                }
            for item in (it for it in with_images if it.id not in moved):
                # each inside the cache's perturbed folder, as dataset images are inside theirs
                # (`perturbed_path` refuses any other)
                paths = [perturb.perturbed_path(im.path, variant) for im in item.images if im.path is not None]
                copies[item.id] = shown_with(item, paths)
        out.pairs += [
            (item, variant_label(cond, variant), copies[item.id]) for item, cond in shown if item.id in copies
        ]
    return out


def order_pairs(benchmark: Benchmark, items: list[Item], conditions: tuple[Condition, ...], out: VariantPlan) -> None:
    """Add to `out` every rotation of every reorderable item under each of `conditions`, and the
    manifest's `order` section: how the options move and the items kept in their order, with
    the reason."""
    kept: list[dict] = []
    asked: set[str] = set()
    refusals: dict[str, str | None] = {}
    for item, cond in plan(items, conditions):
        if item.id not in refusals:
            refusals[item.id] = why = benchmark.reorder_refusal(item)
            if why is not None:
                kept.append({"item_id": item.id, "reason": why})
        if refusals[item.id] is not None:
            continue
        asked.add(item.id)
        out.pairs += [(item, rotation_label(cond, r), order.rotated(item, r)) for r in range(1, len(item.options))]
    out.manifest[ORDER] = {
        "rotations": "each of the k - 1 rotations of an item's k option texts, labels in place (CircularEval)",
        "n_items": len(asked),
        "kept_in_order": sorted(kept, key=lambda u: u["item_id"]),
    }


def variant_messages(benchmark: Benchmark, label: str, shown: Item) -> list[Message]:
    """The messages of a request under record label `label` (a base condition or a variant of
    one): `shown` under the label's base condition, with the confidence instruction after the
    answer instruction for `confidence`."""
    if variant_of(label) == CONFIDENCE:
        return benchmark.render(shown, base_condition(label), suffix=benchmark.confidence_instruction)
    return benchmark.render(shown, base_condition(label))


def variant_schema(benchmark: Benchmark, label: str, shown: Item) -> dict[str, Any] | None:
    """The answer schema of a request under record label `label`: the benchmark's, with a required
    `confidence` (a number from 0 to 100) for `confidence`."""
    schema = benchmark.response_schema(shown)
    if variant_of(label) != CONFIDENCE:
        return schema
    base: dict[str, Any] = dict(schema or ANSWER_SCHEMA)
    properties: dict[str, Any] = dict(base.get("properties") or {})
    required: list[str] = list(base.get("required") or [])
    properties[CONFIDENCE] = {"type": "number", "minimum": 0, "maximum": 100}
    return {**base, "properties": properties, "required": [*required, CONFIDENCE]}

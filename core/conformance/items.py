"""The conformance kit's checks on the loaded items: ids, gold, images, conditions, prompts,
the other languages a benchmark offers and its selection keywords. Each adds a `Problem` per
broken contract, naming the item."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from .. import order
from ..benchmark import Benchmark
from ..conditions import ALL, Condition, applicable, plan
from ..items import Item, fingerprint_items
from .report import AddProblem, KitReport, Problem


def first_difference(a: list[str], b: list[str]) -> str | None:
    """The first id at which two lists of ids differ in place, else an id only one of them holds."""
    return next((x for x, y in zip(a, b) if x != y), None) or next(iter(set(a) ^ set(b)), None)


def check_ids(bench: Benchmark, first: list[Item], second: list[Item], add: AddProblem, report: KitReport) -> None:
    report.checks.append("ids")
    for item in first:
        if item.benchmark != bench.name:
            add(Problem("ids", f"Item.benchmark is {item.benchmark!r}, not {bench.name!r}", item.id))
    for item_id, count in Counter(it.id for it in first).items():
        if count > 1:
            add(Problem("ids", f"the id is used by {count} items (ids must be unique)", item_id))
    ids_a, ids_b = [it.id for it in first], [it.id for it in second]
    if ids_a != ids_b:
        changed = first_difference(ids_a, ids_b)
        add(Problem("ids", "a second load gave other ids or another order (ids must be stable across loads)", changed))
    elif fingerprint_items(first) != fingerprint_items(second):
        changed = next(a.id for a, b in zip(first, second) if a.fingerprint() != b.fingerprint())
        add(Problem("ids", "a second load gave different content (the data fingerprint must be stable)", changed))


def check_gold(items: list[Item], add: AddProblem, report: KitReport) -> None:
    report.checks.append("gold")
    for item in items:
        gold = item.gold  # None: the item is excluded
        if gold is None or not item.options or gold.format in ("text", "bbox"):
            continue
        keys = set(item.keys)
        for key in sorted(gold.keys - keys):
            add(Problem("gold", f"gold key {key!r} is not among the options ({', '.join(item.keys)})", item.id))


def check_images(items: list[Item], root: Path | None, add: AddProblem, report: KitReport) -> None:
    report.checks.append("images")
    from PIL import Image, UnidentifiedImageError

    for item in items:
        for image in item.images:
            if image.path is None:
                continue
            if root is not None and not Path(image.path).resolve().is_relative_to(root.resolve()):
                add(
                    Problem(
                        "images",
                        f"image {image.ref!r} resolves to {image.path}, outside the data root {root} "
                        "(build paths with medvqa.resolve_image)",
                        item.id,
                    )
                )
                continue
            try:
                with Image.open(image.path) as im:
                    im.verify()
                with Image.open(image.path) as im:
                    im.load()
            except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as exc:
                add(Problem("images", f"image {image.ref!r} does not decode ({type(exc).__name__}: {exc})", item.id))


def check_conditions(items: list[Item], add: AddProblem, report: KitReport) -> None:
    report.checks.append("conditions")
    for item in items:
        admitted = applicable(item)
        if Condition.CQ not in admitted or Condition.C not in admitted:
            add(Problem("conditions", "the item does not admit C and C+Q", item.id))
        if item.image_available and not {Condition.CI, Condition.CQI} <= set(admitted):
            add(Problem("conditions", "an item with its images does not admit C+I and C+Q+I", item.id))
        if item.image_as_options and not item.has_images:
            add(Problem("conditions", "image_as_options is set but the item references no image", item.id))
    if not plan(items, ALL):
        add(Problem("conditions", "no (item, condition) pair to run: every item is excluded"))


def check_order(bench: Benchmark, items: list[Item], add: AddProblem, report: KitReport) -> None:
    """The option-order declarations (`--variants order`): `reorder_refusal` gives a reason or
    None for every item, and an item it lets be reordered renders its rotated options (a template
    that ignores the order of `item.options` would ask the same prompt again)."""
    report.checks.append("order")
    for item in items:
        if item.excluded:
            continue
        try:
            why = bench.reorder_refusal(item)
        except Exception as exc:
            add(Problem("order", f"reorder_refusal raises {type(exc).__name__}: {exc}", item.id))
            continue
        if why is not None and (not isinstance(why, str) or not why.strip()):
            add(Problem("order", f"reorder_refusal gives {why!r}: a reason (text) or None", item.id))
            continue
        if why is not None:
            continue
        try:
            shown = _texts(bench.render(order.rotated(item, 1), Condition.CQ))[0]
            printed = _texts(bench.render(item, Condition.CQ))[0]
        except Exception as exc:
            add(Problem("order", f"the rotated options do not render ({type(exc).__name__}: {exc})", item.id))
            continue
        if shown == printed:
            add(
                Problem(
                    "order",
                    "the rotated item renders the same prompt (the template does not show item.options in their "
                    "order): declare why in reorder_refusal",
                    item.id,
                )
            )


def _texts(messages: list) -> tuple[str, int]:
    texts, images = [], 0
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image":
                    images += 1
                elif isinstance(part, dict):
                    texts.append(str(part.get("text", "")))
    return "\n".join(texts), images


def check_prompts(bench: Benchmark, items: list[Item], add: AddProblem, report: KitReport) -> None:
    report.checks.append("prompts")
    for item in items:
        if item.excluded:
            continue
        for condition in applicable(item):
            try:
                messages = bench.render(item, condition)
                text, n_images = _texts(messages)
            except Exception as exc:
                add(Problem("prompts", f"{condition} does not render ({type(exc).__name__}: {exc})", item.id))
                continue
            if not messages or not text.strip():
                add(Problem("prompts", f"{condition} renders no text", item.id))
                continue
            question = item.question.strip()
            if condition.with_question and question and question[:40] not in text:
                add(Problem("prompts", f"{condition} does not show the question", item.id))
            if not condition.with_question and len(question) >= 12 and question[:40] in text:
                add(Problem("prompts", f"{condition} shows the question, which only C+Q and C+Q+I may", item.id))
            if condition.with_image and n_images != len(item.usable_images):
                add(
                    Problem(
                        "prompts",
                        f"{condition} shows {n_images} of the item's {len(item.usable_images)} images",
                        item.id,
                    )
                )
            if not condition.with_image and n_images:
                add(Problem("prompts", f"{condition} shows {n_images} image(s) without I", item.id))


def check_languages(
    bench: Benchmark, first: list[Item], data: Path | None, split: str | None, add: AddProblem, report: KitReport
) -> None:
    """Every other language the benchmark offers loads the same items (ids, order, gold), so
    runs in two languages pair item by item; an item in no single language is reported."""
    others = bench.offered_languages[1:]
    if not others:
        return
    report.checks.append("languages")
    reference = {it.id: it for it in first}
    for code in others:
        try:
            items = bench.with_language(code).load(data, split)
        except Exception as exc:
            add(Problem("languages", f"--language {code} does not load: {type(exc).__name__}: {exc}"))
            continue
        ids = [it.id for it in items]
        if ids != list(reference):
            changed = first_difference(list(reference), ids)
            add(
                Problem(
                    "languages",
                    f"--language {code} gives other item ids or another order than "
                    f"{bench.offered_languages[0]} (runs in two languages pair by id)",
                    changed,
                )
            )
        for item in items:
            base = reference.get(item.id)
            if base is not None and item.gold != base.gold:
                add(Problem("languages", f"the gold answer differs in --language {code}", item.id))
        if len({it.language for it in items} | {it.language for it in first}) < 2:
            add(
                Problem(
                    "languages",
                    f"the items of --language {code} hold the same Item.language as those of "
                    f"{bench.offered_languages[0]}",
                )
            )


def check_selection_keywords(
    bench: Benchmark, first: list[Item], data: Path | None, split: str | None, add: AddProblem, report: KitReport
) -> None:
    """Each selection keyword the benchmark declares selects what `select` on its field does:
    `load(KEYWORD=[v])` gives the loaded items whose field holds v (the first item's value)."""
    if not bench.selection_keywords:
        return
    report.checks.append("selection")
    for keyword, field in bench.selection_keywords.items():
        field = bench.stratum_aliases.get(field, field)
        values = [
            v
            for it in first
            for v in ([it.meta.get(field)] if not isinstance(it.meta.get(field), list) else it.meta[field])
            if v is not None
        ]
        if not values:
            known = sorted({k for it in first for k in it.meta})
            add(
                Problem(
                    "selection",
                    f"the selection keyword {keyword!r} selects on {field!r}, a field no item has "
                    f"(fields: {', '.join(known)})",
                )
            )
            continue
        # the keyword takes a list of the field's values, whatever their type in Item.meta
        selection: dict[str, Any] = {keyword: [values[0]]}
        try:
            chosen = [it.id for it in bench.load(data, split, **selection)]
        except Exception as exc:
            add(Problem("selection", f"load({keyword}=[{values[0]!r}]) fails: {type(exc).__name__}: {exc}"))
            continue
        expected = [it.id for it in bench.select_items(first, {field: [str(values[0])]})]
        if chosen != expected:
            odd = first_difference(chosen, expected)
            add(
                Problem(
                    "selection",
                    f"load({keyword}=[{values[0]!r}]) gives {len(chosen)} items, select={{{field!r}: "
                    f"[{str(values[0])!r}]}} on the loaded items {len(expected)}",
                    odd,
                )
            )

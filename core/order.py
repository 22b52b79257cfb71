"""The options of an item in another order (`--variants order`): CircularEval's rotations, the
gold remapped, the labels kept in place, and which items cannot be reordered and why.

Rotation r (1 ≤ r < k, k options) shows in slot j the text of option (j + r) mod k: the labels
(and the keys scoring uses) stay where they are printed, the texts move up r places, and the
gold follows its text. With k rotations (the original order is rotation 0, the base condition's
own record) every option text sits once in every slot, as MMBench's CircularEval asks: an item
counts as right only when it is right in all of them.

An item keeps its order when reordering would change what it asks (`refusal`): answers that
are not options (numeric grids, free text, boxes), images that are the options, fewer than two
options, options that are numbers in order (an ordered scale), or an option whose text refers
to the others ("all of the above", "aからdのすべて"). The last is language: a benchmark declares
the phrases of its exam (`Benchmark.order_bound_patterns`, a regular expression with its reason),
and `COMMON_PATTERNS` holds ready-made ones per language for adapters to take.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from .items import Gold, Item, Option
from .results import rotation_of

# Phrases of an option that refers to the other options, by language: {pattern: reason}. The
# patterns are case-insensitive regular expressions searched in each option's text.
REFERS = "an option refers to the others"
COMMON_PATTERNS: Mapping[str, Mapping[str, str]] = {
    "en": {
        r"\b(all|none|both|neither) of the (above|others|options|answers)\b": REFERS,
        r"\b(answers?|options?) [A-H1-9] and [A-H1-9]\b": REFERS,
    },
    "ja": {
        r"[a-eア-オ1-9①-⑨]\s*(から|～|〜)\s*[a-eア-オ1-9①-⑨]\s*の\s*(すべて|全て|いずれ)": REFERS,
        r"(上記|以上|前記)\s*の\s*(すべて|全て|いずれ)": REFERS,
    },
    "es": {
        r"\b(todas|ninguna) de las (anteriores|respuestas|opciones)\b": REFERS,
        r"\b(las )?respuestas \d y \d\b": REFERS,
    },
    "pt": {r"\b(todas|nenhuma) (as|das) (anteriores|alternativas)\b": REFERS},
    "pl": {
        r"\bwszystkie (powyższe|wymienione)\b": REFERS,
        r"\bżadn[aey] z (powyższych|wymienionych)\b": REFERS,
        r"\bodpowiedzi [A-E] i [A-E]\b": REFERS,
    },
    "he": {r"כל התשובות|כל הנ\"ל|אף אחת מהתשובות": REFERS},
}
NUMBER = re.compile(r"^\s*[-+]?\d+(?:[.,]\d+)?")


def order_patterns(*languages: str) -> dict[str, str]:
    """`COMMON_PATTERNS` of `languages` together, for a benchmark's `order_bound_patterns`."""
    return {p: why for lang in languages for p, why in COMMON_PATTERNS.get(lang, {}).items()}


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def ordered_scale(options: Sequence[Option]) -> bool:
    """Whether every option text starts with a number and the numbers run up or down: an
    ordered scale, whose order is part of what the item shows."""
    numbers = []
    for o in options:
        m = NUMBER.match(o.text)
        if m is None:
            return False
        numbers.append(float(m.group().replace(",", ".")))
    pairs = list(zip(numbers, numbers[1:]))
    return len(numbers) > 2 and (all(a < b for a, b in pairs) or all(a > b for a, b in pairs))


def refusal(item: Item, patterns: Mapping[str, str] = {}) -> str | None:
    """Why `item`'s options cannot be shown in another order, or None when they can (see the
    module's docstring); `patterns` are the benchmark's phrases of options that refer to others."""
    if item.answer_format != "choice":
        return f"its answer is {item.answer_format}, not options"
    if item.image_as_options or bool(item.meta.get("image_as_options")):
        return "its images are the options"
    if len(item.options) < 2:
        return "it has fewer than two options"
    if item.gold is not None and not item.gold.keys <= set(item.keys):
        return "its gold names a key that is no option"
    if ordered_scale(item.options):
        return "its options are numbers in order (an ordered scale)"
    for pattern, why in patterns.items():
        for o in item.options:
            if _compiled(pattern).search(o.text):
                return why
    return None


def source_index(k: int, slot: int, rotation: int) -> int:
    """The original index of the option shown in `slot` under `rotation`."""
    return (slot + rotation) % k


def slot_of(k: int, index: int, rotation: int) -> int:
    """The slot (0-based) in which the option of original `index` is shown under `rotation`."""
    return (index - rotation) % k


def rotated(item: Item, rotation: int) -> Item:
    """`item` with its option texts rotated `rotation` places, labels and keys in place, the gold
    remapped to the keys now holding its texts (`gold.raw` keeps the source's answer as written)."""
    k = len(item.options)
    if k == 0 or rotation % k == 0:  # no options, or all the way round: as printed
        return item
    options = tuple(
        o.model_copy(update={"text": item.options[source_index(k, j, rotation)].text})
        for j, o in enumerate(item.options)
    )
    gold = item.gold
    if gold is not None and gold.alternatives:
        index = {key: i for i, key in enumerate(item.keys)}
        alternatives = tuple(
            tuple(item.options[slot_of(k, index[key], rotation)].key for key in alt) for alt in gold.alternatives
        )
        gold = Gold(alternatives=alternatives, text=gold.text, raw=gold.raw)
    return item.model_copy(update={"options": options, "gold": gold})


def as_asked(item: Item, label: str) -> Item:
    """The item as the request of record label `label` showed it: rotated for an order record
    (`C+Q+I~order:2`), itself for any other."""
    rotation = rotation_of(label)
    return item if rotation is None else rotated(item, rotation)


def original_keys(item: Item, keys: Iterable[str], rotation: int) -> list[str]:
    """The original option keys whose texts the keys `keys` of `item` rotated `rotation` places
    showed: what an answer chose, in terms of the item as printed. Unknown keys are kept as they
    are."""
    k, index = len(item.options), {key: i for i, key in enumerate(item.keys)}
    return [item.keys[source_index(k, index[key], rotation)] if key in index else key for key in keys]


def gold_slot(item: Item, rotation: int) -> int | None:
    """The 1-based slot holding the gold under `rotation`, for an item with one gold key (None for
    a multi-key or alternative gold: it holds several slots)."""
    if item.gold is None or len(item.gold.alternatives) != 1 or len(item.gold.alternatives[0]) != 1:
        return None
    key = item.gold.alternatives[0][0]
    if key not in item.keys:
        return None
    return slot_of(len(item.options), item.keys.index(key), rotation) + 1

"""Boxes: reading one or several `[x, y, w, h]` boxes (pixels) from a reply, IoU, and greedy
matching of predicted to gold boxes."""

from __future__ import annotations

import json
import math
import re

Box = tuple[float, float, float, float]
IOU_THRESHOLD = 0.5
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_FOUR = re.compile(
    rf"\[?\(?\s*({_NUMBER})\s*[,;\s]\s*({_NUMBER})\s*[,;\s]\s*({_NUMBER})\s*[,;\s]\s*({_NUMBER})\s*\]?\)?"
)


def as_box(value) -> Box | None:
    """`value` as a box when it is four finite numbers with non-negative width and height."""
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return None
    box = tuple(float(v) for v in value)
    if not all(math.isfinite(v) for v in box) or box[2] < 0 or box[3] < 0:
        return None
    return box


def as_boxes(value) -> tuple[Box, ...] | None:
    """One box or a list of boxes; None when `value` is neither."""
    one = as_box(value)
    if one is not None:
        return (one,)
    if isinstance(value, (list, tuple)) and value:
        boxes = [as_box(v) for v in value]
        if all(b is not None for b in boxes):
            return tuple(boxes)
    return None


def parse_boxes(text: str | None) -> tuple[Box, ...]:
    """The boxes a reply gives: JSON `{"box": [x, y, w, h]}` (or `"boxes": [[...], ...]`, or a
    bare JSON box or list of boxes) anywhere in the reply, else the first four numbers written
    as a box. Nothing readable gives ()."""
    if not text:
        return ()
    decoder = json.JSONDecoder()
    found: tuple[Box, ...] = ()
    for start in (i for i, ch in enumerate(text) if ch in "{["):
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            for key in ("box", "boxes", "bbox", "answer"):
                if key in value and (boxes := as_boxes(value[key])):
                    found = boxes
                    break
        elif boxes := as_boxes(value):
            found = boxes
        if found:
            return found
    match = _FOUR.search(text)
    if match:
        box = as_box([float(g) for g in match.groups()])
        return (box,) if box is not None else ()
    return ()


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two `[x, y, w, h]` boxes. Boxes that only touch share no
    area (0); two zero-area boxes have no union, and their IoU is 0."""
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    inter_w = max(0.0, min(ax2, bx2) - max(a[0], b[0]))
    inter_h = max(0.0, min(ay2, by2) - max(a[1], b[1]))
    inter = inter_w * inter_h
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def match(predicted: tuple[Box, ...], gold: tuple[Box, ...], threshold: float = IOU_THRESHOLD) -> tuple[int, int, int]:
    """(TP, FP, FN) by greedy matching: pairs taken in decreasing IoU, each box used once, a
    pair counting only when its IoU is at least `threshold`."""
    pairs = sorted(
        ((iou(p, g), i, j) for i, p in enumerate(predicted) for j, g in enumerate(gold)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used_p, used_g = set(), set()
    for value, i, j in pairs:
        if value < threshold:
            break
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
    tp = len(used_p)
    return tp, len(predicted) - tp, len(gold) - tp


def box_text(box: Box) -> str:
    return ",".join(f"{v:g}" for v in box)


def box_from_text(text: str) -> Box:
    return tuple(float(v) for v in text.split(","))

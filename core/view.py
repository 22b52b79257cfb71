"""The item browser: every item of one or more saved runs in one self-contained HTML page.

One entry per item (`data-item="<item id>"`): its stem, options, images (embedded, downscaled),
the gold answer as the exam writes it and its strata; for each run and condition the raw
response, how it was read (labels, the rule that read them, an extraction's strict and
assisted readings where a record has them), its status and whether it is correct; a judge's
verdicts and rationales; predicted and true boxes drawn over the image.

The page holds its data as one JSON document and renders a page of entries at a time, so a run
of thousands of items opens in a browser in about a second. Filters combine (benchmark, model,
condition, status, stratum, correctness, the image-removal transition of `medvqa audit`, the
transition of each variant factor (`factor=swap:p10`, paired as the audit pairs it), disagreement
between models, free text) and live in the URL fragment
(`#status=parse_failure&transition=p10&q=...`), so a link reproduces a view. Every text from
items and responses is set as text by the page's script, never parsed as HTML. An item asked
with its image perturbed (`C+Q+I~blur`, ...) shows the perturbed image beside its own.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from .audit.names import model_names
from .audit.pairing import pair_records, same_but_language, side
from .audit.pairs import pair_image_removal, state_of
from .audit.runs import join_runs, read_runs, run_input
from .audit.thumbnails import thumbnail
from .audit.variants import factor_names, held_variants, variant_pairs
from .conditions import variant_label
from .files import write_atomic
from .items import DataError, Item
from .metrics import level_keys, reading_summary
from .perturb import PERTURBATIONS, perturbed_path
from .render import FONT_STACK, bidi_auto
from .results import condition_order, is_derived, model_name
from .run.saved import SavedRun

IMAGE_PX = 384  # the longer side of an embedded image
# The image-removal transitions (`medvqa audit`): correct with the image (C+Q+I), without it (C+Q).
TRANSITIONS = {
    "p11": "right with and without the image",
    "p10": "right only with the image",
    "p01": "right only without the image",
    "p00": "wrong with and without the image",
}


def gold_text(item: Item) -> str:
    """The gold answer as the exam writes it: option labels as printed (`a, c`), accepted
    alternatives joined by "or", numeric slots digit by digit, a reference text or boxes."""
    gold = item.gold
    if gold is None:
        return "no usable answer" + (f" ({item.exclusion_reason})" if item.exclusion_reason else "")
    if gold.format == "bbox":
        return "; ".join("[" + ", ".join(f"{v:g}" for v in box) + "]" for box in gold.all_boxes)
    if gold.format == "text":
        return gold.text or ""
    labels = {o.key: o.label for o in item.options}
    sep = "" if item.answer_format == "numeric" else ", "
    return " or ".join(sep.join(labels.get(k, k) for k in alt) for alt in gold.alternatives)


def _boxes(values: Any) -> list[list[float]]:
    """Boxes `[x, y, w, h]` from a record's `predicted` ("x,y,w,h" strings) or a gold's tuples;
    what is not four numbers is left out."""
    out = []
    for v in values or ():
        try:
            box = [float(x) for x in (v.split(",") if isinstance(v, str) else v)]
        except (TypeError, ValueError):
            continue
        if len(box) == 4:
            out.append(box)
    return out


class _Images:
    """Each image file embedded once: [data URL, width, height] (the original's pixels, which
    boxes are written in)."""

    def __init__(self, px: int):
        self.px = px
        self.table: list[list] = []
        self.index: dict[str, int] = {}

    def add(self, path: Path) -> int | None:
        key = str(path)
        if key not in self.index:
            src = thumbnail(key, self.px, "JPEG")
            if src is None:  # unreadable, or a decompression bomb
                return None
            from PIL import Image

            try:
                with Image.open(key) as im:  # the header only: the size boxes are written in
                    width, height = im.size
            except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):  # changed since: as if missing
                return None
            self.index[key] = len(self.table)
            self.table.append([src, width, height])
        return self.index[key]


def reading_text(reading: Any, labels: Mapping[str, str]) -> str:
    """A reading as the page writes it: the options read as the exam labels them (`D`, `A, C`) or
    "nothing read", then whether it is correct and who read it (`D, correct, by extractor
    gpt-4o-mini`); a value that is no reading, as text."""
    if not isinstance(reading, Mapping):
        return ", ".join(map(str, reading)) if isinstance(reading, (list, tuple)) else str(reading)
    predicted = reading.get("predicted")
    parts = [", ".join(labels.get(k, k) for k in predicted) if predicted else "nothing read"]
    if reading.get("status"):
        parts.append(str(reading["status"]))
    if reading.get("correct") is not None:
        parts.append("correct" if reading["correct"] else "wrong")
    source = " ".join(str(reading[k]) for k in ("source", "extractor") if reading.get(k))
    if source:
        parts.append(f"by {source}")
    if reading.get("error"):
        parts.append(f"error: {reading['error']}")
    return ", ".join(parts)


def _reading(rec: dict, item: Item) -> dict:
    """One record as the page shows it; `p` the keys read (compared between models), `l` the
    same as the exam's labels."""
    labels = {o.key: o.label for o in item.options}
    out: dict[str, Any] = {
        "s": rec.get("status"),
        "c": rec.get("correct"),
        "r": rec.get("response"),
        "p": rec.get("predicted"),
        "u": rec.get("rule"),
        "l": [labels.get(k, k) for k in rec.get("predicted") or ()],
    }
    if rec.get("error"):
        out["e"] = rec["error"]
    if rec.get("scoring_error"):
        out["e"] = rec["scoring_error"]
    raw = rec.get("extraction")
    extraction = raw if isinstance(raw, dict) else rec
    for key in ("strict", "assisted", "strict_reading"):
        if extraction.get(key) is not None:
            out.setdefault("x", {})[key.removesuffix("_reading")] = reading_text(extraction[key], labels)
    judgements = rec.get("judgements") or {}
    if judgements:
        out["j"] = [
            {
                "m": model,
                "v": j.get("verdict"),
                "r": j.get("response"),
                "e": j.get("error"),
                "primary": model == rec.get("judge"),
            }
            for model, j in judgements.items()
        ]
    return out


def view_document(runs: Sequence[SavedRun], *, image_px: int = IMAGE_PX) -> dict:
    """The browser's data: one column per experiment (runs of one model on the same data with
    different conditions are joined, as the audit joins them, and named as the audit names
    them), items in the order of the first run holding each, each item's readings per
    experiment and condition, image-removal transitions and the embedded images."""
    images = _Images(image_px)
    groups, _ = join_runs(runs)
    inputs = [run_input(g) for g in groups]
    labels = model_names(inputs)
    entries: dict[tuple[str, str], dict] = {}
    strata: dict[str, set[str]] = {}
    factors: dict[str, str] = {}
    for gi, (group, inp) in enumerate(zip(groups, inputs)):
        key = str(gi)
        bench = group[0].manifest["benchmark"]
        fields = list(dict.fromkeys(f for run in group for f in run.manifest.get("strata") or [] if f))
        states = {p.item.id: state_of(p) for p in pair_image_removal(inp)[0]}
        for rec in inp.records:
            item = inp.items.get(rec["item_id"])
            if item is None:
                continue
            entry = entries.get((bench, item.id))
            if entry is None:
                entry = entries[(bench, item.id)] = _item_entry(item, bench, images)
            if key not in entry["aq"] and (
                item.question != entry["q"]
                or any([o.label, o.text] != shown for o, shown in zip(item.options, entry["o"]))
            ):
                # this run asked the item otherwise (another language): shown in its column
                entry["aq"][key] = {
                    "q": item.question,
                    "o": [[o.label, o.text] for o in item.options],
                    "g": gold_text(item),
                }
            for f in fields:
                if f in rec:
                    values = level_keys(rec[f])
                    entry["st"].setdefault(f, values)
                    strata.setdefault(f, set()).update(values)
            reading = entry["runs"].setdefault(key, {})[rec["condition"]] = _reading(rec, item)
            if rec.get("held_out") or not group[0].benchmark.counts(rec):
                reading["k"] = 0  # left out of n by the benchmark's rules: a cell's "items" under n skip it
            if item.id in states:
                entry["t"][key] = states[item.id]
            if entry["gb"] or item.answer_format == "bbox":
                reading["b"] = _boxes(rec.get("predicted"))
        _variant_states(inp, bench, key, entries, factors, images)
    language_pairs = _language_transitions(groups, entries)
    records = [r for inp in inputs for r in inp.records]
    return {
        **reading_summary(runs),
        "language_pairs": language_pairs,
        "runs": [
            {
                "label": label,
                "model": model_name(g[0].manifest),
                "model_string": g[0].manifest["model"],
                "benchmark": g[0].manifest["benchmark"],
                "paths": [str(r.path) for r in g],
            }
            for label, g in zip(labels, groups)
        ],
        "benchmarks": list(dict.fromkeys(run.manifest["benchmark"] for run in runs)),
        "conditions": sorted({r["condition"] for r in records}, key=condition_order),
        "statuses": sorted({r["status"] for r in records}),
        "strata": {f: sorted(v) for f, v in sorted(strata.items())},
        # a benchmark's other names of its strata (`image_type` for `dominant_type`), as the audit uses them
        "aliases": {alias: f for g in groups for alias, f in g[0].benchmark.stratum_aliases.items()},
        "transitions": TRANSITIONS,
        **({"factors": factors} if factors else {}),  # (only where the records hold variants)
        "images": images.table,
        "items": list(entries.values()),
    }


def _variant_states(
    inp: Any, bench: str, key: str, entries: dict[tuple[str, str], dict], factors: dict[str, str], images: _Images
) -> None:
    """Each item's transition under every variant factor the run's records hold (`vt[run][factor]`,
    paired as the audit's variant sections pair them) and the perturbed images it was shown
    (`vi[variant]`), and the factors' names into `factors` ({name: "C+Q+I vs C+Q+I~swap"})."""
    by_key = {(r["item_id"], r["condition"]): r for r in inp.records}
    for name, variant, base in factor_names(held_variants(by_key)):
        factors[name] = f"{base} vs {variant_label(base, variant)}"
        for pair in variant_pairs(inp.items, by_key, variant, base)[0]:
            entry = entries.get((bench, pair.item.id))
            if entry is None:
                continue
            entry.setdefault("vt", {}).setdefault(key, {})[name] = state_of(pair)
            if variant in PERTURBATIONS and variant not in entry.setdefault("vi", {}):
                try:
                    shown = [perturbed_path(im.path, variant) for im in pair.item.usable_images if im.path is not None]
                except DataError:  # the source changed since the run: shown without it
                    continue
                entry["vi"][variant] = [i for path in shown if (i := images.add(path)) is not None]


def _language_transitions(groups: Sequence[Sequence[SavedRun]], entries: dict[tuple[str, str], dict]) -> list[dict]:
    """The language pairings the audit makes (experiments that differ only in the language):
    each item's transition per condition, `p10` right only in the first language (the exam's
    own), stored on the entries as `lt[pair index][condition]`."""
    out: list[dict] = []
    for gi, gj in combinations(range(len(groups)), 2):
        a, b = groups[gi], groups[gj]
        if not same_but_language(a, b):
            continue
        sa, sb = side(a), side(b)
        if sb.rank < sa.rank:
            (gi, sa), (gj, sb) = (gj, sb), (gi, sa)
        ka = {(r["item_id"], r["condition"]): r for r in sa.records}
        kb = {(r["item_id"], r["condition"]): r for r in sb.records}
        items = {k: v for k, v in sa.items.items() if k in sb.items}
        key = str(len(out))
        conditions = sorted(
            {c for _, c in ka if not is_derived(c)} & {c for _, c in kb if not is_derived(c)}, key=condition_order
        )
        for cond in conditions:
            for pair in pair_records(items, ka, kb, cond)[0]:
                entry = entries.get((a[0].manifest["benchmark"], pair.item.id))
                if entry is not None:
                    entry.setdefault("lt", {}).setdefault(key, {})[cond] = state_of(pair)
        out.append({"runs": [str(gi), str(gj)], "languages": [sa.language, sb.language]})
    return out


def _item_entry(item: Item, bench: str, images: _Images) -> dict:
    imgs = [i for ref in item.usable_images if ref.path is not None and (i := images.add(ref.path)) is not None]
    return {
        "id": item.id,
        "b": bench,
        "q": item.question,
        "o": [[o.label, o.text] for o in item.options],
        "g": gold_text(item),
        "gb": [list(b) for b in item.gold.all_boxes] if item.gold is not None else [],
        "i": imgs,
        "st": {},
        "runs": {},
        "t": {},
        "aq": {},
    }


def _json_for_script(doc: dict) -> str:
    """JSON safe inside a `<script>` element: no `<`, `>` or `&` can end it or open a comment."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_ASSETS = Path(__file__).with_name("view_assets")


def render_view(doc: dict) -> str:
    """The whole page as a string."""
    style = (_ASSETS / "view.css").read_text(encoding="utf-8").replace("FONT_STACK", FONT_STACK)
    script = (_ASSETS / "view.js").read_text(encoding="utf-8")
    n_runs = len(doc["runs"])
    return bidi_auto(
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>medvqa view</title>'
        f"<style>{style}</style></head><body>"
        f"<h1>Items of {n_runs} run{'s' if n_runs != 1 else ''}</h1>"
        f'<p id="reading">Reading: {html.escape(str(doc.get("reading", "strict")))} (statuses and verdicts; '
        "--reading switches)</p>"
        '<form id="filters" onsubmit="return false"></form>'
        '<p id="status-line"></p><nav class="pager" id="pager-top"></nav><div id="items"></div>'
        '<nav class="pager" id="pager-bottom"></nav>'
        f'<script type="application/json" id="view-data">{_json_for_script(doc)}</script>'
        f"<script>{script}</script></body></html>\n"
    )


def write_view(runs: Sequence[SavedRun], path: str | Path, *, image_px: int = IMAGE_PX) -> Path:
    """Write the browser page of `runs` to `path` (by the run store's one writer: whole, never
    through a link); returns its absolute path."""
    return write_atomic(Path(path).absolute(), render_view(view_document(runs, image_px=image_px)))


def items_page_beside(page: Path) -> Path:
    """Where an audit or comparison page at `page` puts the item browser its cells link to."""
    return page.with_name(f"{page.stem}-items.html")


def view(
    *run_dirs: str | Path, html: str | Path = "view.html", image_px: int = IMAGE_PX, reading: str | None = None
) -> Path:
    """Write one self-contained HTML page showing every item, image, response and verdict of
    the saved runs `run_dirs`, as `medvqa view RUN ... --html FILE` does; returns its path.
    Statuses and verdicts are those of `reading` (None: each benchmark's protocol's reading)."""
    from .metrics import reading_of

    if not run_dirs:
        raise ValueError("medvqa.view() needs at least one run directory")
    reading_of(None, reading)
    runs, _ = read_runs(run_dirs)
    return write_view([run.read_as(reading) for run in runs], html, image_px=image_px)

"""The conformance kit (`medvqa.testing.check_benchmark`): every contract a benchmark must keep,
checked on real data in one call, with every broken contract named by its item.

The checks, in order: the items load (twice, identically: ids unique and stable, the same data
fingerprint); gold keys are among the options; images lie inside the data root and decode;
conditions are admitted per item; prompts render for every admitted condition (question only
with Q, images only with I, the same instruction everywhere); a benchmark offering several
languages loads each, with the same item ids in the same order, the same gold and each item in
the language asked; each selection keyword selects what `select` on its field does; `validate`
finds no error; a
random run and a replay of the gold answers both complete, and the gold replay scores 100 %
(free-text answers, whose correctness is a judge's verdict, are replayed but left out of that
check, with a note in the report); the audit runs on them; the plugin implements documented hooks only and the benchmark spells
the `Benchmark` surface correctly.
"""

from __future__ import annotations

import difflib
import json
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import hookspecs, plugins
from .benchmark import Benchmark
from .conditions import ALL, Condition, applicable, plan
from .hookspecs import hookimpl
from .items import DataError, Item, fingerprint_items

HOOKS = tuple(name for name in vars(hookspecs) if name.startswith("register_"))


class ContractError(AssertionError):
    """One or more broken contracts; the message lists each, naming the item."""


@dataclass(frozen=True)
class Problem:
    check: str
    message: str
    item: str | None = None

    def __str__(self) -> str:
        where = f"item {self.item}: " if self.item is not None else ""
        return f"[{self.check}] {where}{self.message}"


@dataclass
class KitReport:
    """What `check_benchmark` found: the checks that ran, the items and run records seen."""

    benchmark: str
    checks: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    n_items: int = 0
    n_records: dict[str, int] = field(default_factory=dict)  # run name -> records
    work_dir: Path | None = None
    notes: list[str] = field(default_factory=list)  # what the checks left out, and why

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        notes = "".join(f"\n  note: {n}" for n in self.notes)
        if self.ok:
            return f"{self.benchmark}: {len(self.checks)} checks passed on {self.n_items} items{notes}"
        listing = "\n".join(f"  {p}" for p in self.problems)
        return f"{self.benchmark}: {len(self.problems)} broken contract(s):\n{listing}{notes}"


class _TemporaryPlugin:
    """Registers an unregistered benchmark object for the duration of the check."""

    def __init__(self, benchmark: Benchmark):
        self.benchmark = benchmark

    @hookimpl
    def register_benchmarks(self, register):
        register(self.benchmark)


def _resolve(benchmark: Benchmark | str) -> tuple[Benchmark, Any]:
    if isinstance(benchmark, str):
        return plugins.get_benchmark(benchmark), None
    if not isinstance(benchmark, Benchmark):
        raise TypeError(f"expected a medvqa.Benchmark or a registered name, got {type(benchmark).__name__}")
    found = plugins.benchmarks().get(benchmark.name)
    if found is not None:
        if found.obj is not benchmark and type(found.obj) is not type(benchmark):
            raise ValueError(
                f"a different benchmark named {benchmark.name!r} is registered by {found.plugin}; "
                "give the registered name, or another name"
            )
        return found.obj if type(found.obj) is type(benchmark) else benchmark, None
    temporary = _TemporaryPlugin(benchmark)
    plugins.manager().register(temporary, name=f"medvqa.testing:{benchmark.name}")
    return benchmark, temporary


def check_benchmark(
    benchmark: Benchmark | str,
    data: str | Path | None = None,
    *,
    split: str | None = None,
    work_dir: str | Path | None = None,
    raise_on_problems: bool = True,
) -> KitReport:
    """Check `benchmark` (a registered name or a `Benchmark` object) on the data at `data` (its
    default source when None; give `split="sample"` for a bundled sample). Runs go to
    `work_dir` (a temporary folder when None). Raises `ContractError` listing every broken
    contract unless `raise_on_problems` is False; returns the `KitReport`."""
    bench, temporary = _resolve(benchmark)
    work = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="medvqa-kit-"))
    report = KitReport(bench.name, work_dir=work)
    try:
        _check(bench, Path(data) if data is not None else None, split, work, report)
    finally:
        if temporary is not None:
            plugins.manager().unregister(temporary)
    if raise_on_problems and report.problems:
        raise ContractError(report.text())
    return report


def _check(bench: Benchmark, data: Path | None, split: str | None, work: Path, report: KitReport) -> None:
    add = report.problems.append
    report.checks.append("load")
    try:
        first = bench.load(data, split)
        second = bench.load(data, split)
    except Exception as exc:  # a loader that cannot load its own fixture says why, naming the record
        add(Problem("load", f"{type(exc).__name__}: {exc}"))
        return
    not_items = [type(x).__name__ for x in first if not isinstance(x, Item)]
    if not_items or not first:
        add(
            Problem(
                "load",
                "load() returned no items"
                if not first
                else f"load() returned {len(not_items)} objects that are not medvqa.Item ({not_items[0]})",
            )
        )
        return
    report.n_items = len(first)
    _ids(bench, first, second, add, report)
    root = data if data is not None else bench.sample_path()
    _gold(first, add, report)
    _images(first, root, add, report)
    _conditions(first, add, report)
    _prompts(bench, first, add, report)
    _languages(bench, first, data, split, add, report)
    _selection_keywords(bench, first, data, split, add, report)
    checked = data if data is not None else (bench.sample_path() if split == "sample" else None)
    if checked is not None:  # the data that was loaded (a download is the benchmark's own)
        report.checks.append("validate")
        for finding in bench.validate(Path(checked)):
            if getattr(finding, "level", "error") == "error":
                add(Problem("validate", str(finding), getattr(finding, "number", None)))
    _runs(bench, first, data, split, work, add, report)
    _hooks(bench, add, report)


def _ids(bench: Benchmark, first: list[Item], second: list[Item], add, report: KitReport) -> None:
    report.checks.append("ids")
    for item in first:
        if item.benchmark != bench.name:
            add(Problem("ids", f"Item.benchmark is {item.benchmark!r}, not {bench.name!r}", item.id))
    for item_id, count in Counter(it.id for it in first).items():
        if count > 1:
            add(Problem("ids", f"the id is used by {count} items (ids must be unique)", item_id))
    ids_a, ids_b = [it.id for it in first], [it.id for it in second]
    if ids_a != ids_b:
        changed = next((a for a, b in zip(ids_a, ids_b) if a != b), None) or (set(ids_a) ^ set(ids_b) or {None}).pop()
        add(Problem("ids", "a second load gave other ids or another order (ids must be stable across loads)", changed))
    elif fingerprint_items(first) != fingerprint_items(second):
        changed = next(a.id for a, b in zip(first, second) if a.fingerprint() != b.fingerprint())
        add(Problem("ids", "a second load gave different content (the data fingerprint must be stable)", changed))


def _languages(
    bench: Benchmark, first: list[Item], data: Path | None, split: str | None, add, report: KitReport
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
            changed = (
                next((a for a, b in zip(list(reference), ids) if a != b), None)
                or (set(reference) ^ set(ids) or {None}).pop()
            )
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


def _selection_keywords(
    bench: Benchmark, first: list[Item], data: Path | None, split: str | None, add, report: KitReport
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
        try:
            chosen = [it.id for it in bench.load(data, split, **{keyword: [values[0]]})]
        except Exception as exc:
            add(Problem("selection", f"load({keyword}=[{values[0]!r}]) fails: {type(exc).__name__}: {exc}"))
            continue
        expected = [it.id for it in bench.select_items(first, {field: [str(values[0])]})]
        if chosen != expected:
            odd = next((a for a, b in zip(chosen, expected) if a != b), None) or (set(chosen) ^ set(expected)).pop()
            add(
                Problem(
                    "selection",
                    f"load({keyword}=[{values[0]!r}]) gives {len(chosen)} items, select={{{field!r}: "
                    f"[{str(values[0])!r}]}} on the loaded items {len(expected)}",
                    odd,
                )
            )


def _gold(items: list[Item], add, report: KitReport) -> None:
    report.checks.append("gold")
    for item in items:
        if item.excluded or not item.options or item.gold.format in ("text", "bbox"):
            continue
        keys = set(item.keys)
        for key in sorted(item.gold.keys - keys):
            add(Problem("gold", f"gold key {key!r} is not among the options ({', '.join(item.keys)})", item.id))


def _images(items: list[Item], root: Path | None, add, report: KitReport) -> None:
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


def _conditions(items: list[Item], add, report: KitReport) -> None:
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


def _prompts(bench: Benchmark, items: list[Item], add, report: KitReport) -> None:
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


def gold_response(item: Item, answer_key: str) -> str | None:
    """The reply that states the gold answer in the JSON the answer reader reads first (the
    first accepted alternative; the box `[x, y, w, h]`, or the list of boxes when there are
    several), or the reference text of an open answer."""
    gold = item.gold
    if gold.format == "text":
        return gold.text
    if gold.format == "bbox":
        boxes = [list(b) for b in gold.all_boxes]
        return json.dumps({answer_key: boxes[0] if len(boxes) == 1 else boxes})
    return json.dumps({answer_key: list(gold.alternatives[0])}, ensure_ascii=False)


def _runs(
    bench: Benchmark, items: list[Item], data: Path | None, split: str | None, work: Path, add, report: KitReport
) -> None:
    from .api import audit
    from .files import write_atomic
    from .run.options import RunOptions, run
    from .run.store import read_records

    report.checks.append("runs")
    conditions = ",".join(c.value for c in ALL)
    pairs = plan(items, ALL)
    common = {
        "benchmark": bench.name,
        "data": str(data) if data is not None else None,
        "split": split,
        "sample": split == "sample" and data is None,
        "conditions": conditions,
        "cache": False,
        "allow_invalid": True,
    }
    if common["sample"]:
        common["split"] = None
    answer_key = bench.answer_conventions().answer_key
    work.mkdir(parents=True, exist_ok=True)
    replay = work / "gold.jsonl"
    lines, unwritten = [], set()
    for item, condition in pairs:
        try:
            lines.append(
                json.dumps(
                    {"item_id": item.id, "condition": condition.value, "response": gold_response(item, answer_key)},
                    ensure_ascii=False,
                )
                + "\n"
            )
        except Exception as exc:  # a gold answer the kit cannot state is the item's problem, not a crash
            if item.id not in unwritten:
                add(
                    Problem(
                        "runs", f"the gold answer cannot be written as a reply ({type(exc).__name__}: {exc})", item.id
                    )
                )
            unwritten.add(item.id)
    runs = [("random", "random")]
    try:
        write_atomic(replay, "".join(lines))
        runs.append(("gold", f"replay:{replay}"))
    except DataError as exc:
        add(Problem("runs", f"the gold replay cannot be written: {exc}"))
    # free text is scored by a judge model, which the kit has not: replayed, not held to 100 %
    judged = {item.id for item, _ in pairs if item.gold is not None and item.gold.format == "text"}
    if judged:
        report.notes.append(
            f"{len(judged)} free-text item(s) are replayed but left out of the gold replay's "
            "100 % check: their correctness is a judge's verdict (medvqa judge)"
        )
    run_dirs = {}
    for name, model in runs:
        run_dir = work / name
        try:
            run(RunOptions(model=model, run_dir=str(run_dir), **common), progress=False)
        except Exception as exc:
            add(Problem("runs", f"the {name} run failed: {type(exc).__name__}: {exc}"))
            continue
        records = read_records(run_dir)
        report.n_records[name] = len(records)
        run_dirs[name] = run_dir
        skip = unwritten if name == "gold" else set()  # already reported above
        got = {(r["item_id"], r["condition"]) for r in records}
        for item, condition in pairs:
            if (item.id, condition.value) not in got and item.id not in skip:
                add(Problem("runs", f"the {name} run has no {condition} record", item.id))
        for r in records:
            if r["item_id"] in skip:
                continue
            if r["status"] in ("error", "missing"):
                add(
                    Problem(
                        "runs",
                        f"the {name} run's {r['condition']} record is {r['status']}: {r.get('error')}",
                        r["item_id"],
                    )
                )
            elif name == "gold" and not r["correct"] and r["item_id"] not in judged:
                add(
                    Problem(
                        "runs",
                        f"the gold answer replayed in {r['condition']} scores as wrong "
                        f"(status {r['status']}, read {r['predicted']}, rule {r['rule']}): "
                        f"{r['response']!r}",
                        r["item_id"],
                    )
                )
    report.checks.append("audit")
    for name, run_dir in run_dirs.items():
        try:
            doc = audit(run_dir, resamples=20, examples=1)
            assert "paired" in doc and "ablation" in doc
        except Exception as exc:
            add(Problem("audit", f"the audit of the {name} run failed: {type(exc).__name__}: {exc}"))


SURFACE = tuple(n for n in dir(Benchmark) if not n.startswith("_"))


def _hooks(bench: Benchmark, add, report: KitReport) -> None:
    report.checks.append("hooks")
    found = plugins.benchmarks().get(bench.name)
    if found is not None:
        plugin = plugins.manager().get_plugin(found.plugin)
        for caller in plugins.manager().get_hookcallers(plugin) or []:
            if caller.name not in HOOKS:
                add(
                    Problem(
                        "hooks",
                        f"plugin {found.plugin} implements {caller.name}, which is not a documented "
                        f"hook ({', '.join(HOOKS)})",
                    )
                )
    for cls in type(bench).__mro__:
        if cls is Benchmark or not issubclass(cls, Benchmark):
            continue
        for name in vars(cls):
            if name.startswith("_") or name in SURFACE:
                continue
            close = difflib.get_close_matches(name, SURFACE, n=1, cutoff=0.85)
            if close:
                add(
                    Problem(
                        "hooks",
                        f"{cls.__name__}.{name} is not part of the Benchmark surface; did you mean {close[0]!r}?",
                    )
                )

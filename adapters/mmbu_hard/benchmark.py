"""The MMBU-hard benchmark: biomedical VQA over 35 submodalities, open and closed
classification and detection, scored by micro-F1; open answers are judged by a model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medvqa import AnswerConventions, Benchmark, Item, Score, Template, order_patterns

from . import hub, loader, templates
from .detection import IOU_THRESHOLD, box_text, match, parse_boxes
from .judge import MMBUJudge, answer_text
from .metrics import counts, f1, micro_f1
from .validate import RULES

if TYPE_CHECKING:
    from medvqa.metrics import Headline


class MMBUHard(Benchmark):
    name = "mmbu_hard"
    title = "MMBU-hard: open-ended biomedical VQA (classification and detection, 35 submodalities)"
    language = "en"
    # option phrases that refer to the others keep an item in its order (`--variants order`)
    order_bound_patterns = order_patterns("en")
    splits = ("public", "private", "all")
    default_split = "public"
    strata = ("task", "format", "kind", "modality", "submodality", "dataset", "split")
    default_strata = ("task", "format")
    headline_metric = "micro_f1"
    validation_rules = RULES

    def __init__(self, iou_threshold: float = IOU_THRESHOLD):
        self.iou_threshold = iou_threshold

    # -- data ------------------------------------------------------------------------

    def load(
        self,
        path: Path | None = None,
        split: str | None = None,
        *,
        select: Mapping[str, list[str]] | None = None,
        context: str | None = None,
        **keywords: Any,
    ) -> list[Item]:
        split = self.checked_split(split)
        wanted = self.keyword_selection(select, **keywords)  # it declares none: any keyword is an error
        context = context or "none"
        if context not in templates.CONTEXTS:
            raise ValueError(f"unknown context {context!r} for mmbu_hard; choose from {', '.join(templates.CONTEXTS)}")
        items = loader.load_items(Path(path) if path is not None else hub.download(), context)
        if split != "all":
            items = [it for it in items if it.meta["split"] == split]
        return self.select_items(items, wanted)

    def validate(self, path: Path) -> list:
        from .validate import validate

        return validate(path)

    # -- prompts ---------------------------------------------------------------------

    def template(self, item: Item) -> Template:
        return templates.TEMPLATES[(templates.template_kind(item.meta), item.meta.get("context", "none"))]

    def render(self, item, condition, *, suffix=None):
        template = self.template(item)
        messages = template.render(item, condition, suffix=suffix)
        context = templates.context_text(template, item.meta)
        if context:
            user = messages[-1]
            if isinstance(user["content"], str):
                user["content"] = f"{context}\n\n{user['content']}"
            else:
                first = next(p for p in user["content"] if p["type"] == "text")
                first["text"] = f"{context}\n\n{first['text']}"
        return messages

    def response_schema(self, item: Item) -> dict | None:
        """The answer object structured output asks for: the class name for open items, a box
        for detection; closed items keep the default `{"answer": [<label>]}`."""
        kind = templates.template_kind(item.meta)
        if kind == "open":
            return {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
                "additionalProperties": False,
            }
        if kind == "detection":
            return {
                "type": "object",
                "properties": {"box": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4}},
                "required": ["box"],
                "additionalProperties": False,
            }
        return None

    def record_fields(self, item: Item) -> dict[str, Any]:
        fields = super().record_fields(item)
        if item.gold is not None and item.gold.format == "bbox":
            fields["gold_boxes"] = [list(b) for b in item.gold.all_boxes]
        if item.options:
            fields["n_options"] = len(item.options)
        return fields

    # -- scoring ---------------------------------------------------------------------

    def answer_conventions(self) -> AnswerConventions:
        return AnswerConventions(score_open=self.score_open)

    def score_open(self, item: Item, response_text: str) -> Score:
        """Detection: IoU against the gold boxes (correct when greedy matching finds every gold
        box and nothing else). Free text: the answer read from the reply, incorrect until a
        judge's verdict (`medvqa judge`) says otherwise."""
        if item.gold.format == "bbox":
            boxes = parse_boxes(response_text)
            if not boxes:
                return Score(False, "parse_failure", None, None)
            tp, fp, fn = match(boxes, item.gold.all_boxes, self.iou_threshold)
            return Score(fp == 0 and fn == 0, "answered", tuple(box_text(b) for b in boxes), "iou")
        return Score(False, "answered", (answer_text(response_text),), "unjudged")

    def judge(self) -> MMBUJudge:
        return MMBUJudge()

    # -- metrics ---------------------------------------------------------------------

    def headline(self, records: Sequence[Mapping[str, Any]]) -> Headline:
        """Micro-F1 over the records given, with its 95 % CI (`metrics.micro_f1`: exact where
        micro-F1 is an accuracy, else the delta-method interval of the ratio from 20 datapoints);
        answers not judged yet are left out, and with none judged the value is None ("not judged")."""
        result = micro_f1([counts(r, self.iou_threshold) for r in records])
        return {
            "metric": "micro_f1",
            "value": result["value"],
            "n": result["n"],
            "ci": result["ci"],
            "ci_method": result["ci_method"],
            "status": result["status"],
        }

    def headline_value(self, records: Sequence[Mapping[str, Any]]) -> float | None:
        """Micro-F1 alone, with no interval: what a comparison's own bootstrap computes per resample."""
        rows = [c for c in (counts(r, self.iou_threshold) for r in records) if c is not None]
        return f1(*(sum(c[i] for c in rows) for i in range(3)))

    def report_tables(self, records: list[dict], manifest: dict):
        from .tables import MMBUTables

        return MMBUTables(records, self.iou_threshold).tables()

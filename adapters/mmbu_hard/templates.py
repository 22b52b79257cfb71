"""The three context templates (MMBU §3): No Context (one template for every task), Modality
(the same, with the image modality) and Full Context (the item's metadata: specimen, modality,
stain/contrast, preparation, anatomical site). Each template's words are in its hash."""

from __future__ import annotations

from medvqa import Template

CONTEXTS = ("none", "modality", "full")
SYSTEM = "You are an expert in biomedical image analysis. Answer the question about the image."
CONTEXT_LINES = {
    "none": (),
    "modality": (("modality", "Image modality: {}"),),
    "full": (
        ("specimen", "Specimen: {}"),
        ("modality", "Image modality: {}"),
        ("stain_contrast", "Stain / contrast: {}"),
        ("preparation", "Preparation: {}"),
        ("anatomical_site", "Anatomical site: {}"),
    ),
}
INSTRUCTIONS = {
    "closed": (
        'Answer with the option letter only, as JSON: {{"answer": ["<letter>"]}}. Valid labels: {labels}. Choose {n}.'
    ),
    "open": 'Answer with the name of the class only (one concept), as JSON: {{"answer": "<class name>"}}.',
    "detection": (
        "Locate the object the question asks about. Answer with its bounding box in pixels, as JSON: "
        '{{"box": [x, y, w, h]}} (x, y: top-left corner; w, h: width and height).'
    ),
}


def _template(kind: str, context: str) -> Template:
    lines = tuple((name, fmt) for name, fmt in CONTEXT_LINES[context])
    return Template(
        name=f"mmbu-{kind}-{context}",
        system=SYSTEM,
        question_header="Question: ",
        options_header="Options:",
        instruction=INSTRUCTIONS[kind],
        extra=lines,
    )


TEMPLATES = {(kind, context): _template(kind, context) for kind in INSTRUCTIONS for context in CONTEXTS}


def template_kind(meta: dict) -> str:
    if meta.get("kind") == "detection":
        return "detection"
    return "closed" if meta.get("format") == "closed" else "open"


def context_text(template: Template, meta: dict) -> str:
    """The context block the template adds for an item (empty for No Context)."""
    fields = dict(meta.get("context_fields") or {})
    fields.setdefault("modality", meta.get("modality"))
    if not fields.get("modality"):
        fields["modality"] = meta.get("modality")
    lines = [fmt.format(fields[name]) for name, fmt in template.extra if fields.get(name)]
    return "\n".join(lines)

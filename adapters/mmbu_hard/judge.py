"""The MMBU open-answer judge: what the judge model sees (the question, the true answer, the
model's answer and the item's dataset label set; never the image), its two gates, and the
strict reading of its one-line verdict `... [RESULT] 0|1`."""

from __future__ import annotations

import json
import re

from medvqa import JudgePrompt

PROMPT = """You grade one answer of a biomedical image question. You do not see the image.

Dataset label set (every valid class of this dataset): {labels}

Question: {question}
True answer: {truth}
Model answer: {answer}

Gate 1 - grounding: does the model answer unambiguously assert exactly one concept of the label set, or an \
unambiguous synonym of one? An empty, hedged, vague or off-taxonomy answer, or one naming several concepts, \
fails: [RESULT] 0.
Gate 2 - equivalence: if gate 1 passes, is that concept equivalent to the true answer under strict biomedical \
equivalence? Negation, laterality, severity, uncertainty and diagnostic specificity must all agree. A broader \
or narrower term, a parent or subtype, or a related but distinct concept is not equivalent: [RESULT] 0.

Reply with exactly one line: Rationale: <brief rationale naming the grounded concept> [RESULT] <0 or 1>"""

_VERDICT = re.compile(r"\[RESULT\]\s*([01])")


def answer_text(response: str | None) -> str:
    """The answer a reply gives: the `answer` of a JSON object (a string, or a one-element
    list), else the whole reply, stripped."""
    text = (response or "").strip()
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and "answer" in value:
            got = value["answer"]
            if isinstance(got, list) and len(got) == 1:
                got = got[0]
            if isinstance(got, (str, int, float)) and not isinstance(got, bool):
                return str(got).strip()
            return json.dumps(got, ensure_ascii=False)
    return text


def read_verdict(text: str | None) -> int | None:
    """1 or 0 from a reply that is one line ending in `[RESULT] 0` or `[RESULT] 1` with no
    other `[RESULT]`; None for anything else."""
    if not isinstance(text, str):
        return None
    line = text.strip()
    if not line or "\n" in line or line.count("[RESULT]") != 1:
        return None
    found = _VERDICT.search(line)
    if found is None or line[found.end() :].strip():
        return None
    return int(found.group(1))


class MMBUJudge(JudgePrompt):
    name = "mmbu-open-per-dataset"
    version = "1"
    template = PROMPT
    max_attempts = 3

    def messages(self, item, record):
        if item.gold is None or item.gold.format != "text":
            return None
        answer = (record.get("predicted") or [answer_text(record.get("response"))])[0]
        labels = "; ".join(item.meta.get("label_set") or []) or "(none given)"
        prompt = PROMPT.format(labels=labels, question=item.question, truth=item.gold.text, answer=answer)
        return [{"role": "user", "content": prompt}]

    def verdict(self, text):
        return read_verdict(text)

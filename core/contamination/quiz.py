"""The Data Contamination Quiz's quiz: four word-level perturbations of each exam question,
written by a generator model, checked, and kept in a reviewable file that any number of
examined models then take (`exam`).

The prompts are the authors' own (github.com/shahriargolchin/DCQ, commit 04bd66b), word for
word: `GENERATOR_PROMPT` is `src/prompts/option_generation.py`, `QUIZ_PROMPT`
`src/prompts/quiz_question.py`; `parse_variants` splits a reply as `src/core/quiz_generation.py`
(`parse_generated_options`) does, and the generator is asked as it asks (temperature 1.0,
4,000 tokens at most). What a quiz shows of an item is its question's text (`instance`): the
Polish PES paper quizzes "the textual part" of its questions; options and images are left out.

A variant is rejected (`check_variant`), with its reason, when it is empty, the original itself
(whitespace aside) or another variant again, or when it changes what a paraphrase must keep: a
number, a drug name (a word with an international nonproprietary name's stem, `DRUG_STEMS`)
or a side of the body (`LATERALITY`). Such a variant would be a second right answer, or a
wrong question. An item whose reply has fewer than four acceptable variants is asked again, up
to `GENERATOR_ATTEMPTS` replies in all (a cached reply with a rejected variant is asked again
too), then dropped from the quiz with the reasons. The checks are words in Latin script and
digits: a drug name written in katakana or a side in Hebrew words they do not name is not
checked (docs/audit.md, "Contamination").

The file (`write_quiz`, `read_quiz`) is JSON: its format and version, the benchmark, split and
language the questions came from, the generator model with its parameters and the hash of its
prompt, the quiz prompt's hash, and per item its id, strata, instance and four variants; the
dropped items with their reasons. Reading checks every variant again, so a hand-edited quiz
obeys the same rules."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..items import DataError, Item
from .checks import check_variant

GENERATOR_PROMPT = """Your task is to create a four-choice quiz by replacing the words in the provided INPUT TEXT with \
their contextually relevant synonyms.
The meaning and sentence structure of the four options MUST EXACTLY match every detail in the INPUT TEXT.
You MUST NOT include the provided INPUT TEXT as an option.

You MUST make sure that:
(1) You generate DISTINCT options based on the provided INPUT TEXT;
(2) The ONLY difference between options is WORD-LEVEL PERTURBATIONS.
(3) Options are ORDERED;
(4) There is NOT any extra explanation;
(5) You follow the following FORMAT to generate options;
(6) You comply with every specific symbol and letter detail in the given INPUT TEXT; and
(7) All options retain the EXACT LABEL from the INPUT TEXT, if there is one.
---
INPUT TEXT:
{original_instance}
---
FORMAT:

A)
First word-level perturbation goes here

B)
Second word-level perturbation goes here

C)
Third word-level perturbation goes here

D)
Fourth word-level perturbation goes here
---
"""

QUIZ_PROMPT = """You are provided with a five-choice quiz. Your task is to CORRECTLY select the option that EXACTLY \
corresponds to an instance from the {split_name} split of the {dataset_name} dataset.

When selecting the option, you MUST ensure that you follow the following rules:
(1) You MUST ensure that you ONLY generate a single option letter as your answer.
(2) If you do not know the dataset or the correct answer, you MUST select option "E) None of the provided options."

Hint: While all the following options seem similar in terms of meaning, there is ONLY one option that reflects the \
EXACT WORDING with respect to the original instance.
---
A)
{option_a}

B)
{option_b}

C)
{option_c}

D)
{option_d}

E)
None of the provided options.
---
ANSWER:
"""

QUIZ_FORMAT = "medvqa-dcq-quiz"
QUIZ_VERSION = 1
# The authors ask the generator at temperature 1.0 for up to 4,000 tokens (quiz_generation.py)
# and the examined model at temperature 0.0 for one token (bias_detector_quiz.py); a reply in
# free text, not medvqa's answer object.
GENERATOR_DEFAULTS: dict[str, Any] = {"temperature": 1.0, "max_tokens": 4000, "response_format": "none"}
EXAMINEE_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 1, "response_format": "none"}
GENERATOR_ATTEMPTS = 3
N_VARIANTS = 4


class QuizIncomplete(RuntimeError):
    """Generator requests failed after their retries: the quiz is not written, and the same
    command asks them again (the replies so far are in the response cache)."""


def prompt_hash(prompt: str) -> str:
    """The first 16 hex digits of the prompt's SHA-256: a quiz names the prompts it was made and
    is taken with, so a changed prompt is seen."""
    return hashlib.sha256(prompt.encode()).hexdigest()[:16]


GENERATOR_PROMPT_HASH = prompt_hash(GENERATOR_PROMPT)
QUIZ_PROMPT_HASH = prompt_hash(QUIZ_PROMPT)


def parse_variants(text: str) -> list[str]:
    """The four options A-D of a generator's reply, as the authors split it: at each `A)`..`D)`
    at the start of a word and followed by a line break; an option not found is ""."""
    chunks = re.split(r"(?<!\w)([A-D])\)\s*\n", text)
    found = {letter: "" for letter in "ABCD"}
    for i in range(1, len(chunks), 2):
        found[chunks[i]] = chunks[i + 1].strip()
    return [found[letter] for letter in "ABCD"]


@dataclass
class Reading:
    """A generator's reply read: the variants accepted, in order, and those rejected with why."""

    accepted: list[str] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return len(self.accepted) == N_VARIANTS


def read_reply(original: str, text: str | None) -> Reading:
    reading = Reading()
    for variant in parse_variants(text or ""):
        reason = check_variant(original, variant, reading.accepted)
        if reason is None:
            reading.accepted.append(variant)
        else:
            reading.rejected.append({"variant": variant, "reason": reason})
    return reading


def instance(item: Item) -> str:
    """What the quiz shows of an item: its question's text."""
    return item.question.strip()


def quiz_messages(variants: Sequence[str], *, dataset: str, split: str) -> list[dict[str, Any]]:
    """The quiz as the examined model is asked it: the four options in order, E beside them."""
    a, b, c, d = variants
    text = QUIZ_PROMPT.format(split_name=split, dataset_name=dataset, option_a=a, option_b=b, option_c=c, option_d=d)
    return [{"role": "user", "content": text}]


def generator_messages(original: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": GENERATOR_PROMPT.format(original_instance=original)}]


@dataclass
class Quiz:
    """A quiz as its file holds it (see the module's docstring)."""

    benchmark: str
    split: str
    language: str
    dataset: str  # the name the quiz prompt gives the dataset
    generator: dict[str, Any]
    items: list[dict[str, Any]]  # {item_id, strata, instance, variants}
    dropped: list[dict[str, Any]]  # {item_id, reason, rejected}

    def as_json(self) -> dict[str, Any]:
        return {
            "format": QUIZ_FORMAT,
            "version": QUIZ_VERSION,
            "benchmark": self.benchmark,
            "split": self.split,
            "language": self.language,
            "dataset": self.dataset,
            "generator": self.generator,
            "quiz_prompt_hash": QUIZ_PROMPT_HASH,
            "items": self.items,
            "dropped": self.dropped,
        }


def make_quiz(
    items: Iterable[Item],
    generator: str,
    *,
    benchmark: str,
    split: str,
    language: str,
    dataset: str | None = None,
    strata: Sequence[str] = (),
    backend_options: dict[str, Any] | None = None,
    cache: bool = True,
    cache_path: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Quiz, dict[str, Any]]:
    """A quiz of `items` written by `generator` through the one request path (the response
    cache, the backend's retries and preflight), and what it took: requests, cache hits, cost."""
    from ..inference.base import Request, Response, request_key
    from ..inference.cache import ResponseCache
    from ..inference.path import RequestPath, backend_for

    backend = backend_for(generator, backend_options or {}, GENERATOR_DEFAULTS)
    params = {**backend.params, "dcq_generator_prompt": GENERATOR_PROMPT_HASH}
    items = list(items)
    requests = []
    for item in items:
        messages = generator_messages(instance(item))
        key = request_key(backend.model, params, messages, backend.endpoint)
        requests.append(Request(item=item, condition="dcq:generate", messages=messages, key=key))
    replies: dict[str, tuple[Response, Reading | None, int]] = {}

    def read(req: Request, text: str | None) -> Reading | None:
        reading = read_reply(instance(req.item), text)
        return reading if reading.complete else None

    def done(req: Request, response: Response, reading: Reading | None, attempts: int) -> bool:
        replies[req.item.id] = (response, reading, attempts)
        return reading is not None

    response_cache = ResponseCache(Path(cache_path) if cache_path else None) if cache else None
    path = RequestPath(backend, response_cache)
    try:
        path.send(
            requests,
            done,
            read=read,
            max_attempts=GENERATOR_ATTEMPTS,
            dedupe=True,
            again=(lambda n: progress(f"{generator}: {n} quiz(zes) with a rejected variant, asking again"))
            if progress
            else None,
        )
    finally:
        if response_cache is not None:
            response_cache.close()
    quiz_items: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    for item in items:
        response, reading, attempts = replies[item.id]
        if reading is not None:
            quiz_items.append(
                {
                    "item_id": item.id,
                    "strata": {s: item.meta.get(s) for s in strata},
                    "instance": instance(item),
                    "variants": reading.accepted,
                }
            )
            continue
        if response.error is not None:
            dropped.append(
                {
                    "item_id": item.id,
                    "reason": f"the generator failed: {response.error}",
                    "rejected": [],
                    "failed": True,
                }
            )
            continue
        last = read_reply(instance(item), response.text)
        dropped.append(
            {
                "item_id": item.id,
                "reason": f"{len(last.accepted)} acceptable variants of {N_VARIANTS} after {attempts} replies",
                "rejected": last.rejected,
            }
        )
    quiz = Quiz(
        benchmark=benchmark,
        split=split,
        language=language,
        dataset=dataset or benchmark,
        generator={
            "model": generator,
            "params": {k: v for k, v in backend.params.items()},
            "prompt": "dcq-option-generation",
            "prompt_hash": GENERATOR_PROMPT_HASH,
        },
        items=quiz_items,
        dropped=dropped,
    )
    return quiz, spent(path)


def spent(path: Any) -> dict[str, Any]:
    """What a request path (`RequestPath`) asked and what it cost: its requests, the answers the
    cache gave, and the backend's cost in USD (None where the backend keeps no count)."""
    stats = path.backend.stats or {}
    return {"requested": path.requested, "cache_hits": path.cache_hits, "cost_usd": stats.get("cost_usd")}


def write_quiz(quiz: Quiz, path: str | Path) -> Path:
    from ..files import write_atomic

    return write_atomic(path, json.dumps(quiz.as_json(), ensure_ascii=False, indent=1) + "\n")


def read_quiz(path: str | Path) -> Quiz:
    """The quiz in `path`, every variant checked again (`check_variant`); a file that is not a
    quiz of this format, or an item that breaks a rule, is a DataError naming the file and the item."""
    path = Path(path)
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise DataError("no such quiz file", file=path) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"not a JSON quiz file ({exc})", file=path) from None
    if not isinstance(doc, dict) or doc.get("format") != QUIZ_FORMAT:
        raise DataError(f'not a quiz file (no "format": {QUIZ_FORMAT!r})', file=path)
    if doc.get("version") != QUIZ_VERSION:
        raise DataError(f"quiz format version {doc.get('version')!r}; this medvqa reads {QUIZ_VERSION}", file=path)
    for name in ("benchmark", "split", "language", "dataset"):
        if not isinstance(doc.get(name), str):
            raise DataError(f"{name!r} must be text", file=path)
    if not isinstance(doc.get("generator"), dict) or not isinstance(doc.get("items"), list):
        raise DataError("a quiz holds a 'generator' object and an 'items' list", file=path)
    seen: set[str] = set()
    for i, entry in enumerate(doc["items"], 1):
        where = f"item {i}"
        if not isinstance(entry, dict) or not isinstance(entry.get("item_id"), str):
            raise DataError("an item is an object with a text 'item_id'", file=path, record=where)
        where = f"item {i} ({entry['item_id']})"
        if entry["item_id"] in seen:
            raise DataError("the item is in the quiz twice", file=path, record=where)
        seen.add(entry["item_id"])
        original, variants = entry.get("instance"), entry.get("variants")
        if not isinstance(original, str) or not isinstance(variants, list) or len(variants) != N_VARIANTS:
            raise DataError(f"an item holds its 'instance' and {N_VARIANTS} 'variants'", file=path, record=where)
        if not isinstance(entry.get("strata", {}), dict):
            raise DataError("'strata' must be an object", file=path, record=where)
        for j, variant in enumerate(variants):
            reason = check_variant(original, variant, variants[:j]) if isinstance(variant, str) else "not text"
            if reason is not None:
                raise DataError(f"variant {'ABCD'[j]} is rejected: {reason}", file=path, record=where)
    return Quiz(
        benchmark=doc["benchmark"],
        split=doc["split"],
        language=doc["language"],
        dataset=doc["dataset"],
        generator=doc["generator"],
        items=doc["items"],
        dropped=doc.get("dropped") or [],
    )

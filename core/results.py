"""The results model: what a run directory holds, typed and versioned.

A run directory holds `manifest.json` (a `Manifest`) and `records.jsonl`, one `Record` per
(item, condition) request. Writers build records and manifests through these models and readers
validate every line against them, so a damaged record is one error naming its file and line,
never a traceback three modules later. Statuses, condition labels (derived ones such as
`C+Q/forced` included) and their order come from here, not from string tests in consumers.

Format versions: 1 is every manifest written before the `format` field existed (its records have
the same fields); 2 adds `format`. `upgrade_manifest` reads either as the current version, with
identical numbers: nothing a number depends on changed between them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .conditions import ALL, FORCED_SUFFIX, ORDER, ROTATION_SEP, VARIANT_SEP, VARIANTS, Condition
from .items import DataError

FORMAT_VERSION = 2


class Status(StrEnum):
    """What became of one request: an answer read, a refusal, an answer the reader could not
    read, a failed request, or no response at all."""

    ANSWERED = "answered"
    REFUSAL = "refusal"
    PARSE_FAILURE = "parse_failure"
    ERROR = "error"
    MISSING = "missing"


STATUSES = tuple(s.value for s in Status)
# Statuses of a request that reached the model and came back with an answer of some kind.
SUCCEEDED = (Status.ANSWERED.value, Status.REFUSAL.value, Status.PARSE_FAILURE.value)
NON_ANSWERS = tuple(s for s in STATUSES if s != Status.ANSWERED.value)
CONDITION_NAMES = tuple(c.value for c in ALL)


def _base_label(label: str) -> str:
    return label.split("/", 1)[0].split(VARIANT_SEP, 1)[0]


def variant_of(label: str) -> str | None:
    """The variant of a record label (`C+Q+I~swap` → "swap", `C+Q+I~order:2` → "order"); None for
    a base condition or a forced guess."""
    head = label.split("/", 1)[0]
    return head.split(VARIANT_SEP, 1)[1].split(ROTATION_SEP, 1)[0] if VARIANT_SEP in head else None


def rotation_of(label: str) -> int | None:
    """How many places the options of a record label's item are rotated (`C+Q+I~order:2` → 2);
    None for a label without a rotation."""
    head = label.split("/", 1)[0]
    tail = head.split(VARIANT_SEP, 1)[1] if VARIANT_SEP in head else ""
    if ROTATION_SEP not in tail:
        return None
    text = tail.split(ROTATION_SEP, 1)[1]
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 4 and int(text) > 0 else None


@lru_cache(maxsize=1024)  # (a run holds a handful of labels; every record's is read through here)
def base_condition(label: str) -> Condition:
    """The condition a record label is asked under: `C+Q/forced` → `C+Q`, `C+Q+I~swap` → `C+Q+I`.
    An unknown label, or an unknown variant, raises ValueError."""
    base = _base_label(label)
    variant = variant_of(label)
    try:
        condition = Condition(base)
    except ValueError:
        raise ValueError(
            f"unknown condition {label!r}; conditions are {', '.join(CONDITION_NAMES)}, "
            f"optionally with a derived suffix such as {FORCED_SUFFIX!r} or a variant such as "
            f"'{VARIANT_SEP}{VARIANTS[0]}'"
        ) from None
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"unknown variant in condition {label!r}; variants are {', '.join(VARIANTS)}")
    if (variant == ORDER) != (rotation_of(label) is not None) or (variant != ORDER and ROTATION_SEP in label):
        raise ValueError(
            f"condition {label!r}: a rotation is written {base}{VARIANT_SEP}{ORDER}{ROTATION_SEP}<r> (r = 1, 2, ...), "
            "and only the order variant has one"
        )
    return condition


def is_derived(label: str) -> bool:
    """A label other than a base condition: a second request derived from one (`C+Q/forced`) or a
    variant of one (`C+Q+I~swap`). Both are the audit's: official tables leave them out."""
    return "/" in label or VARIANT_SEP in label


def condition_order(label: str) -> tuple[int, int, str]:
    """Sort key: C, C+Q, C+I, C+Q+I, each base condition before its derived labels."""
    base = _base_label(label)
    rank = CONDITION_NAMES.index(base) if base in CONDITION_NAMES else len(CONDITION_NAMES)
    return (rank, is_derived(label), label)


class Assisted(BaseModel):
    """An assisted reading of a record the strict reader could not read (`parse_failure`):
    the option keys another reader found in the response (None: it could not tell), whether they
    are correct, and where the reading comes from (`source`: "extractor" for `medvqa score
    --extractor`, with the model and the hash of its prompt)."""

    model_config = ConfigDict(extra="allow")

    predicted: list[str] | None = None
    correct: bool = False
    source: str
    extractor: str | None = None
    prompt_hash: str | None = None
    error: str | None = None


class Record(BaseModel):
    """One line of `records.jsonl`: one request for one (item, condition), its raw response and
    its score. The strata an adapter declares (subject, year, ...) and fields other tools add
    (a judge's verdicts) are kept as extra fields."""

    model_config = ConfigDict(extra="allow")

    item_id: str
    condition: str
    key: str | None = None
    response: str | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    latency_s: float | None = None
    cached: bool | None = None
    predicted: list[str] | None = None
    status: Status
    correct: bool | None = None
    rule: str | None = None
    scoring_error: str | None = None
    held_out: bool = False
    saved: bool = False
    # the assisted reading of a parse failure (strict fields untouched); see `Assisted`
    assisted: Assisted | None = None
    # a reasoning model's reasoning, kept apart from `response` and never read as the answer
    reasoning: str | None = None
    finish_reason: str | None = None  # "length": the reply was cut off by max_tokens
    reason: str | None = None  # why a parse failure is one, where medvqa knows ("reasoning cut off")
    repeat: int | None = None  # which repeat of a run asked `--repeats K` times (None: a run without repeats)

    @field_validator("condition")
    @classmethod
    def _known_condition(cls, value: str) -> str:
        base_condition(value)
        return value

    @model_validator(mode="after")
    def _confidence_is_a_probability(self) -> Record:
        """A record's confidence (an extra field, written where one was read: `confidence_metrics`)
        is a probability in [0, 1] or null, and how it was read is text: the calibration metrics
        read no other."""
        extra = self.model_extra or {}
        value = extra.get("confidence")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1):
            raise ValueError(f"confidence {value!r} is not a probability in [0, 1] or null")
        if not isinstance(method := extra.get("confidence_method"), str | None):
            raise ValueError(f"confidence_method {method!r} is not text")
        return self

    @property
    def base(self) -> Condition:
        return base_condition(self.condition)

    @property
    def derived(self) -> bool:
        return is_derived(self.condition)


class AssistedDict(TypedDict, total=False):
    """An `Assisted` reading as a record in memory holds it: the plain dict read from
    `records.jsonl` (the fields `Assisted` declares)."""

    predicted: list[str] | None
    correct: bool
    source: str
    extractor: str | None
    prompt_hash: str | None
    error: str | None


class RecordDict(TypedDict, total=False):
    """A `Record` as consumers read it: the plain dict of one line of `records.jsonl` (what
    `check_record` returns), its fields as `Record` declares them, so that a type checker checks
    the field names the metrics layer reads. The status is its text; the strata and the fields
    other tools add are extra keys, read with `.get`. `strict_reading` is no field of the file:
    the assisted reading of a record (`metrics.assisted_record`) keeps the strict one there, in
    memory. A TypedDict is a plain dict at run time: typing records costs nothing."""

    item_id: str
    condition: str
    key: str | None
    response: str | None
    error: str | None
    usage: dict[str, Any] | None
    latency_s: float | None
    cached: bool | None
    predicted: list[str] | None
    status: str
    correct: bool | None
    rule: str | None
    scoring_error: str | None
    held_out: bool
    saved: bool
    assisted: AssistedDict | None
    reasoning: str | None
    finish_reason: str | None
    reason: str | None
    repeat: int | None
    confidence: float | None
    confidence_method: str | None
    strict_reading: dict[str, Any]


def as_records(rows: Iterable[Mapping[str, Any]]) -> Iterable[RecordDict]:
    """`rows` seen as the records they are (the same object, for the type checker): every record
    the metrics layer reads was validated as a `Record` when read (`check_record`) or built by the
    writers through one, so its fields are `RecordDict`'s. Callers that hold plain dicts pass them
    as they are."""
    return cast("Iterable[RecordDict]", rows)


class Manifest(BaseModel):
    """`manifest.json`: what was run, on which data, with which model, parameters, conditions
    and templates, and which items were excluded (no usable gold answer)."""

    model_config = ConfigDict(extra="allow")

    format: int = FORMAT_VERSION
    benchmark: str
    split: str | None = None
    data: str | None = None
    data_fingerprint: str | None = None
    n_items: int | None = None
    model: str
    params: dict[str, Any] = Field(default_factory=dict)
    conditions: list[str] = Field(default_factory=list)
    templates: dict[str, str] = Field(default_factory=dict)
    strata: list[str] = Field(default_factory=list)
    excluded: list[dict[str, Any]] = Field(default_factory=list)
    versions: dict[str, str] = Field(default_factory=dict)
    plugins: dict[str, Any] = Field(default_factory=dict)
    command_line: list[str] = Field(default_factory=list)
    created: str | None = None
    convention: str | None = None
    # the language the items were asked in (`medvqa run --language`); None: the benchmark's only one
    language: str | None = None
    # the name the run's model goes by in tables, pairing, compare and the browser (`--model-name`);
    # None: the model string (`model`, kept beside it)
    model_name: str | None = None


def model_name(manifest: Any) -> str:
    """The name a run's model goes by (`--model-name`, else its model string): runs pair (image,
    language) and compare under it."""
    return manifest.get("model_name") or manifest["model"]


def _first_problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "record"
    return f"{where}: {err['msg']}"


def check_record(data: Mapping[str, Any], *, file: Path | None = None, line: int | None = None) -> dict:
    """`data` validated as a `Record` (returned as it is: the dict consumers read); a record that
    does not validate is a DataError naming the file and the line."""
    try:
        Record.model_validate(data)
    except ValidationError as exc:
        raise DataError(
            f"damaged record ({_first_problem(exc)})",
            file=file,
            record=f"line {line}" if line is not None else str(data.get("item_id")),
        ) from None
    return data if isinstance(data, dict) else dict(data)


def upgrade_manifest(data: Mapping[str, Any], *, file: Path | None = None) -> dict:
    """A manifest of any format version as the current one (a dict, validated as `Manifest`).
    Version 1 (no `format` field) differs only in lacking it."""
    version = data.get("format", 1)
    if not isinstance(version, int) or version < 1 or version > FORMAT_VERSION:
        raise DataError(
            f"manifest format {version!r} is not one this medvqa reads (1 to {FORMAT_VERSION}); upgrade medvqa",
            file=file,
        )
    out = {**data, "format": FORMAT_VERSION}
    try:
        Manifest.model_validate(out)
    except ValidationError as exc:
        raise DataError(f"unreadable manifest ({_first_problem(exc)})", file=file) from None
    return out

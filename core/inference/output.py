"""What every backend asks a model for, and how it reports a failed request."""

from __future__ import annotations

from .secrets import scrub

# The answer shape every template asks for, as a JSON schema for structured output.
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "array", "items": {"type": "string"}}},
    "required": ["answer"],
    "additionalProperties": False,
}
MAX_ERROR_CHARS = 2000


def error_text(exc: BaseException, tries: int = 1) -> str:
    """The error a record keeps: type and message, without secrets, of bounded length."""
    after = f" (after {tries} tries)" if tries > 1 else ""
    return scrub(f"{type(exc).__name__}: {exc}{after}")[:MAX_ERROR_CHARS]


def writable_text(text: str) -> str:
    """`text` with every lone surrogate (`\\ud800`, which UTF-8 cannot encode, so no file or
    database could hold it) replaced by U+FFFD; any other text is returned unchanged."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text

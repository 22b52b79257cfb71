"""Keeping credentials out of everything we write.

Keys are read from the environment by the provider libraries and never pass through medvqa's
own data. Servers may quote them back, though (in an error, or even in an answer), and users
may write them into a URL (`http://user:KEY@host/v1`). `scrub` removes from a text:

- the value of every secret-looking environment variable (`*KEY*`, `*TOKEN*`, `*SECRET*`, ...);
- every value the run itself was given as a credential, whatever the variable that holds it is
  called (`remember`: a model list's `api_key: os.environ/NAME`, the password of a URL);
- bearer tokens, basic authorisation headers and `sk-...` key shapes;
- the user information of every URL (`scheme://user:password@` becomes `scheme://***@`).

Values shorter than `MIN_SECRET_CHARS` are left alone: replacing them would mangle ordinary
text (a key "abc" would cut every "abc" out of an answer), and they are no secret worth the name.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
# A bearer token (with a digit, so "bearer heterozygous" in an answer stays), a basic
# authorisation header, an `sk-...` key.
_TOKEN_SHAPES = re.compile(r"(?i)\bbearer\s+(?=[\w.~+/=-]*\d)[\w.~+/=-]{8,}"
                           r"|\bauthorization\W{0,4}basic\s+[\w+/=]{8,}|\bsk-[\w-]{12,}")
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@\"'<>]+@")
MASK = "***"
MIN_SECRET_CHARS = 8

_given: set[str] = set()


def remember(value: str | None) -> None:
    """Scrub `value` from everything written by this process from now on."""
    if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS:
        _given.add(value)
        if unquote(value) != value:
            _given.add(unquote(value))


def remember_url(url: str | None) -> None:
    """Remember the user name and password written into `url`, if any."""
    if not url:
        return
    parts = urlsplit(url)
    remember(parts.username)
    remember(parts.password)


def secret_values() -> list[str]:
    """Values of secret-looking environment variables and of the credentials remembered,
    longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS}
    return sorted(values | _given, key=len, reverse=True)


class Scrubber:
    """`scrub` with the secret values read once, for texts scrubbed by the thousand (records)."""

    def __init__(self) -> None:
        self.values = secret_values()

    def __call__(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, MASK)
        lowered = text.lower()
        if "bearer" in lowered or "basic" in lowered or "sk-" in text:
            text = _TOKEN_SHAPES.sub(MASK, text)
        if "@" in text and "://" in text:
            text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
        return text

    def data(self, value: Any) -> Any:
        """`value` (JSON-like: dicts, lists, strings, numbers) with every string scrubbed."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


def scrub(text: str) -> str:
    """`text` without any secret known now."""
    return Scrubber()(text)


def redact_url(url: str | None) -> str | None:
    """`url` without its user name and password (kept as is when it has none)."""
    if not url:
        return url
    parts = urlsplit(url)
    if parts.username or parts.password:
        parts = parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))
    return urlunsplit(parts)

"""Keeping credentials out of everything we write.

Keys are read from the environment by the provider libraries and never pass through medvqa's
own data. Servers may quote them back, though (in an error, or even in an answer), and users
may write them into a URL (`http://user:KEY@host/v1`, `...?key=KEY`) or a header
(`--param extra_headers='{"api-key": "KEY"}'`). Credentials are found by where they stand, not
by what they look like:

- by position, in what a run writes about itself (`redact_params`, `redact_command_line`,
  `redact_url`): every header value, every query value of a URL, the user information of a URL;
- in any text (`scrub`): every value the run was given as a credential, whatever its length and
  whatever the variable that holds it is called (`remember`: a model list's
  `api_key: os.environ/NAME`, the password of a URL, a secret-named header or query value), the
  query values and user information of every URL, the values of secret-looking environment
  variables (`*KEY*`, `*TOKEN*`, `*SECRET*`, ...), bearer tokens, basic authorisation headers
  and `sk-...` key shapes.

A remembered credential of fewer than `MIN_SECRET_CHARS` characters is replaced only where it
stands alone (not inside a longer word), so a key "abc" does not cut every "abc" out of an
answer; a secret-looking environment variable that short is no key and is left alone.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any, overload
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
# A bearer token (with a digit, so "bearer heterozygous" in an answer stays), a basic
# authorisation header, an `sk-...` key.
_TOKEN_SHAPES = re.compile(
    r"(?i)\bbearer\s+(?=[\w.~+/=-]*\d)[\w.~+/=-]{8,}"
    r"|\bauthorization\W{0,4}basic\s+[\w+/=]{8,}|\bsk-[\w-]{12,}"
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@\"'<>]+@")
# The query string of a URL in a text: its values are masked, its names kept.
_URL_QUERY = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s?#\"'<>]*\?)([^\s#\"'<>]*[^\s#\"'<>.,;:!?)\]])")
_QUERY_VALUE = re.compile(r"=([^&;]*)")
MASK = "***"
MIN_SECRET_CHARS = 8
# Words of a parameter, header or field name that make it a credential (`api_key`, `x-api-key`,
# `azure_ad_token`, `Authorization`), compared whole: `max_completion_tokens` is no secret.
SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "authorization",
        "auth",
        "cookie",
        "signature",
        "sig",
    }
)
# Generation parameters whose values are headers or query parameters: every value is masked.
_HEADER_OR_QUERY = re.compile(r"(?i)(headers|query)$")

# every credential this process was given (`remember`), scrubbed from every text it writes
remembered: set[str] = set()


def is_secret_name(name: str) -> bool:
    """Whether a parameter, header or field called `name` holds a credential: one of its words
    (split at `_`, `-`, `.` and case changes) is in `SECRET_WORDS`."""
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", str(name))
    return any(w.lower() in SECRET_WORDS for w in words)


def forget() -> None:
    """Forget the credentials remembered so far: for a process that runs several runs in turn (a
    test suite), so that one run's short credential is not masked in the next run's records."""
    remembered.clear()


def remember(value: str | None) -> None:
    """Scrub `value` from everything written by this process from now on, whatever its length."""
    if isinstance(value, str) and value.strip():
        remembered.add(value)
        if unquote(value) != value:
            remembered.add(unquote(value))


def remember_url(url: str | None) -> None:
    """Remember the user name and password written into `url`, and its query values."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return
    if username and len(username) >= MIN_SECRET_CHARS:  # a user name is masked in URLs; a long one everywhere
        remember(username)
    remember(password)
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        _remember_value(name, value)


def remember_params(params: dict[str, Any] | None) -> None:
    """Remember every credential of generation parameters (`credential_entries`): header and
    query values, and the values of secret-named entries, at any depth."""
    for path, value, by_name in credential_entries(params or {}):
        if isinstance(value, str) and by_name:
            remember(value)
        elif isinstance(value, str):
            _remember_value(path.rsplit(".", 1)[-1], value)


def credential_entries(params: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any, bool]]:
    """(dotted name, value, whether its name says so) of every credential in `params`, at any
    depth of mappings and lists (`extra_body` is where gateways take a key): an entry whose name
    is a credential's (`is_secret_name`), whatever it holds, and, by position, every value of a
    headers or query mapping (`extra_headers`, `extra_query`)."""
    for name, value in params.items():
        path = f"{prefix}{name}"
        if _HEADER_OR_QUERY.search(str(name)) and isinstance(value, Mapping):
            yield from ((f"{path}.{inner}", v, False) for inner, v in value.items())
        elif is_secret_name(name):
            yield path, value, True
        elif isinstance(value, (Mapping, list)):
            for sub, entries in _children(path, value):
                yield from credential_entries(entries, sub)


def _children(path: str, value: Any) -> Iterator[tuple[str, Mapping]]:
    """The mappings directly within a mapping or a list (a list's, named `path[i]`), with the
    prefix of their entries' names."""
    if isinstance(value, Mapping):
        yield f"{path}.", value
        return
    for i, item in enumerate(value):
        if isinstance(item, Mapping):
            yield f"{path}[{i}].", item
        elif isinstance(item, list):
            yield from _children(f"{path}[{i}]", item)


def _remember_value(name: str, value: str) -> None:
    """A header or query value, scrubbed from every text when its name is a credential's (at
    any length) or it is long enough to be one; a short value of another name ("1", "en") is
    masked where it stands (`redact_params`, `redact_url`), never cut out of answers."""
    if is_secret_name(name) or len(value) >= MIN_SECRET_CHARS:
        remember(value)


def redact_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """`params` with every credential masked (`credential_entries`: header and query values by
    position, secret-named entries at any depth)."""
    return _redacted(params)


def _redacted(value: Any) -> Any:
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    out: dict[Any, Any] = {}
    for name, inner in value.items():
        if _HEADER_OR_QUERY.search(str(name)) and isinstance(inner, Mapping):
            out[name] = {k: MASK for k in inner}
        else:
            out[name] = MASK if is_secret_name(name) else _redacted(inner)
    return out


# Options whose value is KEY=VALUE with a generation parameter or a backend option as KEY:
# `--param extra_headers={...}`, `-M params.extra_headers={...}`, `-M params={...}`.
_KEY_VALUE_OPTIONS = ("--param", "-M", "--model-option")


def redact_command_line(words: list[str]) -> list[str]:
    """A command line with the value of every `--param` or `-M` (`--model-option`) that holds
    headers or query values (or has a secret name) masked by position; a whole `-M params={...}`
    keeps its entries with their header and query values masked."""
    out, after_option = [], False
    for word in words:
        head, rest = None, word
        if after_option:
            head = ""
        else:
            for option in _KEY_VALUE_OPTIONS:
                if option.startswith("--") and word.startswith(option + "="):
                    head, rest = option + "=", word[len(option) + 1 :]
                elif option == "-M" and word.startswith("-M") and len(word) > 2 and not word.startswith("-M="):
                    head, rest = "-M", word[2:]
        if head is not None:
            word = head + _redact_key_value(rest)
        after_option = word in _KEY_VALUE_OPTIONS
        out.append(word)
    return out


def _redact_key_value(text: str) -> str:
    """`KEY=VALUE` with VALUE masked where KEY (its last dotted part) names headers, query values
    or a credential; a JSON value (`params={...}`, `extra_body={...}`) with its credentials
    masked at any depth (`redact_params`)."""
    name, sep, value = text.partition("=")
    if not sep:
        return text
    leaf = name.rsplit(".", 1)[-1]
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if is_secret_name(leaf) or _HEADER_OR_QUERY.search(leaf) and not isinstance(parsed, dict):
        value = MASK
    elif isinstance(parsed, (dict, list)):
        value = json.dumps(redact_params({leaf: parsed})[leaf], ensure_ascii=False)
    return f"{name}={value}"


def secret_values() -> list[str]:
    """Values of secret-looking environment variables and of the credentials remembered,
    longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS}
    return sorted(values | remembered, key=len, reverse=True)


class Scrubber:
    """`scrub` with the secret values read once, for texts scrubbed by the thousand (records)."""

    def __init__(self) -> None:
        self.values = secret_values()
        self.long = [v for v in self.values if len(v) >= MIN_SECRET_CHARS]
        short = [v for v in self.values if len(v) < MIN_SECRET_CHARS]
        # a short credential only where it stands alone: not inside a longer word or number
        self.short = re.compile("|".join(rf"(?<![\w-]){re.escape(v)}(?![\w-])" for v in short)) if short else None

    def __call__(self, text: str) -> str:
        for value in self.long:
            if value in text:
                text = text.replace(value, MASK)
        if self.short is not None:
            text = self.short.sub(MASK, text)
        lowered = text.lower()
        if "bearer" in lowered or "basic" in lowered or "sk-" in text:
            text = _TOKEN_SHAPES.sub(MASK, text)
        if "://" in text:
            if "@" in text:
                text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
            if "?" in text:
                text = _URL_QUERY.sub(lambda m: m.group(1) + _QUERY_VALUE.sub(f"={MASK}", m.group(2)), text)
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


@overload
def redact_url(url: str) -> str: ...
@overload
def redact_url(url: None) -> None: ...
@overload
def redact_url(url: str | None) -> str | None: ...
def redact_url(url: str | None) -> str | None:
    """`url` without its user name and password, and with its query values masked (kept as is
    when it has neither)."""
    if not url:
        return url
    return _redact_query(without_userinfo(url))


@overload
def without_userinfo(url: str) -> str: ...
@overload
def without_userinfo(url: None) -> None: ...
@overload
def without_userinfo(url: str | None) -> str | None: ...
def without_userinfo(url: str | None) -> str | None:
    """`url` without its user name and password (kept as is when it has none)."""
    if not url:
        return url
    parts = urlsplit(url)
    if parts.username or parts.password:
        parts = parts._replace(netloc=(parts.hostname or "") + (f":{parts.port}" if parts.port else ""))
    return urlunsplit(parts)


def _redact_query(url: str) -> str:
    parts = urlsplit(url)
    if not parts.query:
        return url
    return urlunsplit(parts._replace(query=_QUERY_VALUE.sub(f"={MASK}", parts.query)))

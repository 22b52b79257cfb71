"""Our retry policy for remote calls.

Every failure is classified by `failure_kind`. Retried (transient): rate limits (429), 408 /
409 / 425, every 5xx a server sent, timeouts, connection errors and answers that arrived but
could not be read (a 2xx with a broken body, or fields litellm's model of a response refuses),
whether litellm or the `openai` SDK raised them.
Never retried (final), whatever status litellm attaches to them: authentication, permission,
bad-request (unsupported parameters, context window, content policy), not-found and
unprocessable-entity errors, recognised by litellm's exception types, and failures raised
before any request reached a server (missing credentials come back from litellm as a "500"
whose cause is the provider client's own configuration error). The wait is exponential
backoff with full jitter, and never shorter than the server's `Retry-After`, up to
`--max-retry-wait` (900 s by default); a long wait a server asks for is said on stderr, since it
is outside `--timeout`.

Attempts are counted in one place, `with_retries`, for every request and every preflight probe:
`--max-retries N` means at most N + 1 requests reach the server, whatever the provider (the
provider client's own retries are switched off: `PROVIDER_CLIENT_RETRIES`). Each attempt has
a total deadline (`--timeout`), however slowly the server sends its answer.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

RETRY_STATUS = frozenset({408, 409, 425, 429})
MAX_RETRY_AFTER_S = 900.0  # the longest wait a server's Retry-After gets, unless --max-retry-wait says otherwise
ANNOUNCED_WAIT_S = 5.0  # a wait a server asked for is said on stderr from this long, or when it was cut
# What `failure_kind` returns; the first set is retried.
TRANSIENT = frozenset({"rate_limit", "timeout", "connection", "server", "unreadable"})
FINAL = frozenset(
    {
        "authentication",
        "permission",
        "not_found",
        "unsupported_params",
        "bad_request",
        "configuration",
        "client_error",
        "bug",
    }
)
# litellm's exception types, most specific first (UnsupportedParamsError is a BadRequestError)
_LITELLM_KINDS = (
    ("UnsupportedParamsError", "unsupported_params"),
    ("AuthenticationError", "authentication"),
    ("PermissionDeniedError", "permission"),
    ("NotFoundError", "not_found"),
    ("BadRequestError", "bad_request"),
    ("UnprocessableEntityError", "bad_request"),
    ("RateLimitError", "rate_limit"),
    ("Timeout", "timeout"),
)
# litellm's types for failures it reports as a 5xx (some raised before any request was sent)
_LITELLM_SERVER_TYPES = (
    "APIError",
    "APIConnectionError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
)
# `max_retries` given to the provider's client (the OpenAI client inside litellm retries twice by
# default): our own loop is the only one that asks again.
PROVIDER_CLIENT_RETRIES = 0
_STATUS_KINDS = {
    400: "bad_request",
    401: "authentication",
    403: "permission",
    404: "not_found",
    408: "timeout",
    413: "bad_request",
    422: "bad_request",
    429: "rate_limit",
}


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6  # tries after the first
    base_s: float = 1.0  # the first backoff's upper bound
    cap_s: float = 60.0  # no backoff exceeds this (Retry-After may)
    max_retry_after_s: float = MAX_RETRY_AFTER_S  # no wait a server asks for exceeds this (--max-retry-wait)

    def delay(self, retry: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `retry` (0 for the first retry)."""
        backoff = (rng or random).uniform(0.0, min(self.cap_s, self.base_s * 2**retry))
        if retry_after is None:
            return backoff
        return min(max(retry_after, backoff), self.max_retry_after_s)


def wait_notice(asked: float | None, wait: float, policy: RetryPolicy) -> str | None:
    """What to say about a wait before a retry: the wait a server asked for (`Retry-After`, in
    seconds), when it is long (`ANNOUNCED_WAIT_S`) or was cut to `--max-retry-wait`; a wait of
    our own backoff is never said. The wait is outside `--timeout`, which bounds one attempt."""
    if asked is None or (wait < ANNOUNCED_WAIT_S and asked <= policy.max_retry_after_s):
        return None
    cut = ", the most --max-retry-wait allows" if asked > policy.max_retry_after_s else ""
    return f"the server asked to wait {asked:g} s before retrying (Retry-After): waiting {wait:.3g} s{cut}"


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def failure_kind(exc: BaseException) -> str:
    """What went wrong, as one word: a member of `TRANSIENT` or of `FINAL`."""
    litellm = sys.modules.get("litellm")  # an exception can only be one of litellm's once it is loaded
    if litellm is not None:
        for name, kind in _LITELLM_KINDS:
            if isinstance(exc, getattr(litellm, name)):
                return kind
    openai = sys.modules.get("openai")  # the SDK's own errors, on the direct path (`openai_compatible.py`)
    if openai is not None and type(exc).__module__.partition(".")[0] == "openai":
        if isinstance(exc, openai.APITimeoutError):
            return "timeout"
        if isinstance(exc, openai.APIConnectionError):  # refused, reset, or a body cut short
            return "connection"
    chain = list(causes(exc))
    if _unreadable_answer(chain):
        return "unreadable"
    if any(isinstance(c, (ConnectionError, socket.gaierror)) for c in chain):
        return "connection"
    if isinstance(exc, TimeoutError):
        return "timeout"
    status = status_of(exc)
    if status is None:
        return "bug"
    if status in _STATUS_KINDS:
        return _STATUS_KINDS[status]
    if status in RETRY_STATUS or status >= 500:
        raised_by_litellm = litellm is not None and isinstance(
            exc, tuple(getattr(litellm, name) for name in _LITELLM_SERVER_TYPES)
        )
        if raised_by_litellm and not _reached_a_server(chain):
            return "configuration"
        return "server"
    return "unreadable" if status < 400 else "client_error"


def is_retryable(exc: BaseException) -> bool:
    return failure_kind(exc) in TRANSIENT


def causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the exceptions it was raised from or while handling, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _unreadable_answer(causes: list[BaseException]) -> bool:
    """Whether litellm raised because an answer's fields failed its own model of a response (a
    pydantic `ValidationError` among the causes: `usage.prompt_tokens` NaN, say): the server
    answered, and what it sent cannot be read."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and any(isinstance(c, pydantic.ValidationError) for c in causes[1:])


def _reached_a_server(causes: list[BaseException]) -> bool:
    """Whether any cause is an I/O or HTTP failure (a request left this process), as opposed
    to an error the provider's client raised before sending (e.g. no API key configured)."""
    import aiohttp
    import httpx  # litellm's own dependencies, loaded with it

    network = (OSError, TimeoutError, json.JSONDecodeError, httpx.HTTPError, aiohttp.ClientError)
    return any(isinstance(c, network) for c in causes[1:])


def retry_after(exc: BaseException) -> float | None:
    """The `Retry-After` the server sent with this error, in seconds, if any."""
    for headers in (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
    ):
        value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None) if headers else None
        if value is not None:
            return parse_retry_after(str(value))
    return None


def parse_retry_after(value: str) -> float | None:
    """`Retry-After` is either seconds or an HTTP date."""
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class DeadlineExceeded(TimeoutError):
    """An attempt whose answer was not complete within its total deadline (retried as a timeout)."""


@dataclass
class Attempts:
    """How `with_retries` ended: the value of the attempt that succeeded, or the error of the
    last one; `tries` requests were sent; `latency_s` is the last attempt's."""

    value: Any = None
    error: Exception | None = None
    tries: int = 0
    latency_s: float = 0.0


async def with_retries(
    send: Callable[[], Awaitable[Any]],
    policy: RetryPolicy,
    *,
    deadline_s: float | None = None,
    retryable: Callable[[Exception], bool] = is_retryable,
    before: Callable[[], Awaitable[None]] | None = None,
    on_retry: Callable[[Exception], None] | None = None,
    notice: Callable[[str, float], None] | None = None,
) -> Attempts:
    """Await `send()` at most `policy.max_retries + 1` times: again after a `retryable` failure,
    after `policy.delay`. Each attempt ends at `deadline_s` seconds in all (`DeadlineExceeded`);
    `before()` is awaited before each attempt (pacing), `on_retry(exc)` called before each retry,
    `notice(line, seconds)` before a wait a server asked for that is worth saying (`wait_notice`).
    Never raises for a failed attempt: the last error is returned."""
    tries = 0
    while True:
        if before is not None:
            await before()
        tries += 1
        started = time.monotonic()
        try:
            if deadline_s is None:
                value = await send()
            else:
                try:
                    async with asyncio.timeout(deadline_s) as deadline:
                        value = await send()
                except TimeoutError:
                    if not deadline.expired():
                        raise
                    raise DeadlineExceeded(f"no complete answer within {deadline_s:g} s (--timeout)") from None
            return Attempts(value=value, tries=tries, latency_s=time.monotonic() - started)
        except Exception as exc:
            if tries <= policy.max_retries and retryable(exc):
                if on_retry is not None:
                    on_retry(exc)
                asked = retry_after(exc)
                wait = policy.delay(tries - 1, asked)
                if notice is not None and (line := wait_notice(asked, wait, policy)) is not None:
                    notice(line, wait)
                await asyncio.sleep(wait)
                continue
            return Attempts(error=exc, tries=tries, latency_s=time.monotonic() - started)

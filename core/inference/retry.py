"""Our retry policy for remote calls.

Retried: 429, 408/409/425, every 5xx, timeouts, connection errors and answers that arrived but
could not be read (a 2xx with a broken body). Not retried: any other 4xx, which a second try
would only repeat. The wait is exponential backoff with full jitter, and never shorter than the
server's `Retry-After`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone

RETRY_STATUS = frozenset({408, 409, 425, 429})
MAX_RETRY_AFTER_S = 900.0


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6  # tries after the first
    base_s: float = 1.0  # the first backoff's upper bound
    cap_s: float = 60.0  # no backoff exceeds this (Retry-After may)

    def delay(self, retry: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `retry` (0 for the first retry)."""
        backoff = (rng or random).uniform(0.0, min(self.cap_s, self.base_s * 2 ** retry))
        if retry_after is None:
            return backoff
        return min(max(retry_after, backoff), MAX_RETRY_AFTER_S)


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return True
    status = status_of(exc)
    if status is None:
        return False
    return status in RETRY_STATUS or status >= 500 or status < 400


def retry_after(exc: BaseException) -> float | None:
    """The `Retry-After` the server sent with this error, in seconds, if any."""
    for headers in (getattr(exc, "litellm_response_headers", None), getattr(getattr(exc, "response", None), "headers", None),
                    getattr(exc, "headers", None)):
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
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())

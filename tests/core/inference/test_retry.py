import random
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import pytest

from medvqa.core.inference.retry import RetryPolicy, is_retryable, parse_retry_after, retry_after


class StatusError(Exception):
    def __init__(self, status, headers=None):
        super().__init__(f"status {status}")
        self.status_code = status
        self.litellm_response_headers = headers


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retried(status):
    assert is_retryable(StatusError(status))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_other_client_errors_are_not(status):
    assert not is_retryable(StatusError(status))


def test_timeouts_connection_errors_and_unreadable_2xx_are_retried_other_bugs_not():
    assert is_retryable(TimeoutError())
    assert is_retryable(ConnectionResetError())
    assert is_retryable(StatusError(200))  # e.g. a non-JSON body
    assert not is_retryable(KeyError("x"))


def test_backoff_is_exponential_with_full_jitter_and_capped():
    policy = RetryPolicy(base_s=1.0, cap_s=8.0)
    rng = random.Random(1)
    for retry, bound in [(0, 1), (1, 2), (2, 4), (3, 8), (6, 8)]:
        delays = [policy.delay(retry, rng=rng) for _ in range(400)]
        assert 0 <= min(delays) and max(delays) <= bound
        assert max(delays) > 0.8 * bound  # the whole range is used


def test_retry_after_is_a_lower_bound():
    policy = RetryPolicy(base_s=0.01)
    assert all(policy.delay(0, retry_after=2.5, rng=random.Random(i)) == 2.5 for i in range(20))


def test_retry_after_header_in_seconds_or_as_a_date_any_case():
    assert retry_after(StatusError(429, {"Retry-After": "3"})) == 3.0
    assert retry_after(StatusError(429, {"retry-after": "0.25"})) == 0.25
    assert retry_after(StatusError(429, None)) is None
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 < parse_retry_after(later) <= 30
    assert parse_retry_after("soon") is None

"""The retry policy: which failures are retried (by litellm's exception types and causes, from
real requests to the test server), backoff and Retry-After."""

import asyncio
import random
import socket
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from medvqa.core.inference.litellm_backend import LiteLLMBackend, import_litellm
from medvqa.core.inference.retry import (
    FINAL,
    TRANSIENT,
    RetryPolicy,
    failure_kind,
    is_retryable,
    parse_retry_after,
    retry_after,
)
from tests.core.inference.synthetic import demo_item, requests_for
from tests.openai_server import Faults, OpenAIServer


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
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < parse_retry_after(later) <= 30
    assert parse_retry_after("soon") is None


# -- litellm's real exceptions, from real requests to the test server -------------------------


def answer_one(backend: LiteLLMBackend):
    [(_, response)] = list(backend.generate(iter(requests_for(backend, [demo_item(0)]))))
    return response


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("fault, kind", [("auth_error", "AuthenticationError"), ("bad_request", "BadRequestError")])
def test_refused_credentials_and_bad_requests_are_sent_once(fault, kind, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-medvqa-test-key-000000")
    with OpenAIServer(faults=Faults(**{fault: 1.0})) as server:
        backend = LiteLLMBackend("openai/test", api_base=server.url, max_retries=6, retry_wait=0.01)
        response = answer_one(backend)
        assert kind in response.error and "tries" not in response.error
        assert list(server.counts.values()) == [1] and backend.stats["retries"] == 0


def test_an_unknown_path_is_not_found_and_sent_once():
    with OpenAIServer() as server:
        backend = LiteLLMBackend(
            "hosted_vllm/test", api_base=server.url.removesuffix("/v1") + "/nowhere", max_retries=6, retry_wait=0.01
        )
        response = answer_one(backend)
    assert "NotFoundError" in response.error and backend.stats["retries"] == 0


def test_missing_credentials_are_not_retried_although_litellm_calls_them_a_500(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with OpenAIServer() as server:
        backend = LiteLLMBackend("openai/test", api_base=server.url, max_retries=6, retry_wait=1.0)
        started = time.monotonic()
        response = answer_one(backend)
        elapsed = time.monotonic() - started
        assert sum(server.counts.values()) == 0  # nothing ever left the client
    assert "InternalServerError" in response.error and "Missing credentials" in response.error
    assert backend.stats["retries"] == 0 and elapsed < 3  # with 6 retries of 1 s backoff it took ~56 s


def test_a_refused_parameter_value_is_not_retried(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-medvqa-test-key-000000")
    with OpenAIServer() as server:
        backend = LiteLLMBackend("openai/gpt-5", api_base=server.url, temperature=0.3, retry_wait=1.0)
        response = answer_one(backend)
        assert sum(server.counts.values()) == 0
    assert "UnsupportedParamsError" in response.error and backend.stats["retries"] == 0


def test_kinds_of_real_failures(monkeypatch):
    """Each failure as litellm raises it, classified by its type and cause, not its status."""
    litellm = import_litellm()

    monkeypatch.setenv("OPENAI_API_KEY", "sk-medvqa-test-key-000000")

    def kind(**call) -> str:
        async def go():
            try:
                await litellm.acompletion(messages=[{"role": "user", "content": "hi"}], timeout=1, **call)
            except Exception as exc:
                return failure_kind(exc)
            return "answered"

        return asyncio.run(go())

    for fault, expected in [
        ("rate_limit", "rate_limit"),
        ("server_error", "server"),
        ("timeout", "timeout"),
        ("truncated", "server"),
        ("auth_error", "authentication"),
        ("bad_request", "bad_request"),
    ]:
        with OpenAIServer(faults=Faults(**{fault: 1.0}, hang_s=3)) as server:
            assert kind(model="hosted_vllm/test", api_base=server.url) == expected, fault
    assert kind(model="hosted_vllm/test", api_base=closed_port_url()) == "connection"
    assert kind(model="opnai/gpt-5") == "bad_request"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert kind(model="openai/test", api_base=closed_port_url()) == "configuration"
    for k in ("rate_limit", "server", "timeout", "connection"):
        assert k in TRANSIENT
    for k in ("authentication", "bad_request", "configuration"):
        assert k in FINAL


def test_a_huge_retry_after_is_cut_to_max_retry_wait_and_said_once_per_wave(capsys):
    """Eight requests meet `429 Retry-After: 999999` at once, twice each (`max_retries=1`). Each
    waits `max_retry_wait` (0.3 s), not the 900 s a server could ask for before, and the wait is
    said on stderr once for the eight that wait together, naming the server and the option."""
    with OpenAIServer(faults=Faults(rate_limit=1.0, retry_after_s=999999)) as server:
        backend = LiteLLMBackend(
            "hosted_vllm/test", api_base=server.url, max_retries=1, max_retry_wait=0.3, concurrency=8
        )
        started = time.monotonic()
        got = list(backend.generate(requests_for(backend, [demo_item(i) for i in range(8)])))
        elapsed = time.monotonic() - started
        assert sorted(server.counts.values()) == [2] * 8
    assert len(got) == 8 and all("RateLimitError" in r.error for _, r in got)
    assert 0.3 <= elapsed < 3
    assert capsys.readouterr().err == (
        f"medvqa: hosted_vllm/test at {server.url}: the server asked to wait 999999 s "
        "before retrying (Retry-After): waiting 0.3 s, the most --max-retry-wait "
        "allows\n"
    )


def test_max_retry_wait_bounds_the_preflight_and_is_a_documented_option(tmp_path, monkeypatch):
    """`medvqa run --max-retry-wait 0.2` against a server that rate-limits everything with
    `Retry-After: 999999`: the preflight's 3 tries end in about 0.4 s (status 3), and each of its
    2 waits is said before the preflight's line."""
    from click.testing import CliRunner

    from medvqa.cli.main import cli
    from medvqa.cli.run_cmd import EXIT_PREFLIGHT

    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path / "cache"))
    with OpenAIServer(faults=Faults(rate_limit=1.0, retry_after_s=999999)) as server:
        started = time.monotonic()
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "jmed48k",
                "--sample",
                "--model",
                "hosted_vllm/test",
                "--api-base",
                server.url,
                "--max-retry-wait",
                "0.2",
                "--run-dir",
                str(tmp_path / "run"),
            ],
        )
        elapsed = time.monotonic() - started
        assert sum(server.counts.values()) == 3
    assert result.exit_code == EXIT_PREFLIGHT and elapsed < 5, result.output
    said = (
        f"medvqa: preflight request to hosted_vllm/test at {server.url}: the server asked to wait 999999 s "
        "before retrying (Retry-After): waiting 0.2 s, the most --max-retry-wait allows"
    )
    assert result.output.splitlines() == [
        said,
        said,
        f"Error: preflight request to hosted_vllm/test at {server.url} "
        "failed: rate-limited on every try (RateLimitError: Hosted_vllmException - "
        '{"error": {"message": "rate limited", "type": "rate_limit_error"}} '
        "(after 3 tries))",
    ]

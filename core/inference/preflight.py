"""Checks that a model can be reached before a run sends its first batch.

Two steps, both failing with one line (`PreflightError`), after the checks that need no
litellm (`model_names.check_before_import`: a misspelt provider or backend, a missing key):

1. `check_provider` (when a backend is built, no network): litellm must know the provider of
   the model string. `opnai/gpt-5` or `randm` stop here, with the nearest known names.
2. `check_reachable` (before the first request, before litellm is imported): a TCP connection to
   each `--api-base`. A server nobody listens at ends the run in well under a second, named by
   its address, instead of after litellm's import and its client's connection error.
3. `probe` (before the first request of a run): one small request per server, with every
   generation parameter of the run, checks the model name, the credentials and the server.
   Failures litellm raises before sending (unsupported parameters, missing keys), refused
   credentials, unknown models and unreachable servers end the run at once; a rate limit, a
   5xx or an unreadable answer is tried again (at most `PROBE_TRIES` times in all).

Nothing the probe receives is recorded or cached.
"""

from __future__ import annotations

import asyncio
import re
import socket
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..errors import PreflightError
from .concurrency import event_loop
from .retry import PROVIDER_CLIENT_RETRIES, RetryPolicy, causes, failure_kind, with_retries
from .secrets import scrub

PROBE_TRIES = 3  # requests in all, per server
PROBE_RETRIED = ("rate_limit", "server", "unreadable")
# JSON output modes require the word "JSON" in the messages; the answer itself is ignored.
PROBE_MESSAGES = [{"role": "user", "content": 'Reply with the JSON {"answer": ["A"]}.'}]
MAX_DETAIL = 300
CONNECT_TIMEOUT_S = 5.0  # a host that drops packets: the longest a reachability check waits
# aiohttp's repr of the connection's SSL settings ("ssl:<ssl.SSLContext object at 0x…>",
# "ssl:default"): an address of memory, not of the server
_SSL_REPR = re.compile(r"\s*ssl:(?:<[^>]*>|default|None|False|True)")
_REASONS = {
    "authentication": "the credentials were refused",
    "configuration": "the request could not be sent (missing credentials or settings)",
    "permission": "the credentials have no access to this model",
    "not_found": "the model or the URL does not exist on the server",
    "unsupported_params": "the model does not take a generation parameter (remove it with --param NAME=null)",
    "bad_request": "the request was rejected",
    "client_error": "the request was rejected",
    "connection": "cannot connect to the server",
    "timeout": "no answer within the request timeout (--timeout)",
    "rate_limit": "rate-limited on every try",
    "server": "the server failed on every try",
    "unreadable": "the server's answers could not be read",
    "bug": "the request failed",
}


def check_provider(litellm, model: str) -> str:
    """litellm's provider for `model`, or a PreflightError naming the nearest known names."""
    try:
        return litellm.get_llm_provider(model)[1]
    except Exception:
        pass
    from .. import plugins
    from .model_names import unknown_model_message

    raise PreflightError(
        unknown_model_message(
            model, (str(getattr(p, "value", p)) for p in litellm.provider_list), plugins.backends(), litellm.model_list
        )
    )


def check_reachable(targets: list[tuple[str, str]], timeout: float) -> None:
    """A TCP connection to each `(where, api_base)`; the first that cannot be opened raises a
    PreflightError naming the address. Skipped where a proxy carries the requests (the client
    connects to the proxy, not to the server)."""
    for where, api_base in targets:
        url = urlsplit(api_base)
        proxied = urllib.request.getproxies().get(url.scheme) and not urllib.request.proxy_bypass(url.hostname or "")
        if not url.hostname or proxied:
            continue
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            socket.create_connection((url.hostname, port), timeout=min(timeout, CONNECT_TIMEOUT_S)).close()
        except OSError as exc:
            waited = min(timeout, CONNECT_TIMEOUT_S)
            why = exc.strerror or (
                f"no answer within {waited:g} s" if isinstance(exc, TimeoutError) else type(exc).__name__
            )
            raise PreflightError(
                f"preflight request to {where} failed: cannot connect to the server ({url.hostname}:{port}: {why})"
            ) from None


def probe(
    litellm,
    targets: list[tuple[str, dict[str, Any]]],
    params: dict[str, Any],
    *,
    timeout: float,
    retry: RetryPolicy,
    notice: Callable[[str, float], None] | None = None,
) -> None:
    """Send `PROBE_MESSAGES` once per `(where, call)` of `targets` concurrently: `where` names
    the server in messages (no secrets), `call` holds `model` and the deployment's litellm
    parameters; the run's generation `params` go with every request. The probe runs on an
    event loop of its own (litellm keys its HTTP clients by loop, so nothing is shared with the
    run's), which leaves no thread behind: worker processes can still be forked. Inside a
    running loop (a notebook) it uses the requests' background loop instead. `notice(line, seconds)`
    hears of a long wait a server asked for (`retry.wait_notice`)."""

    async def all_of() -> None:
        await asyncio.gather(
            *(_probe_one(litellm, where, call, params, timeout, retry, notice) for where, call in targets)
        )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(all_of())
    else:
        asyncio.run_coroutine_threadsafe(all_of(), event_loop()).result()


async def _probe_one(
    litellm,
    where: str,
    call: dict[str, Any],
    params: dict[str, Any],
    timeout: float,
    retry: RetryPolicy,
    notice: Callable[[str, float], None] | None,
) -> None:
    policy = replace(retry, max_retries=PROBE_TRIES - 1)
    done = await with_retries(
        lambda: litellm.acompletion(
            messages=PROBE_MESSAGES, timeout=timeout, **{**params, **call, "max_retries": PROVIDER_CLIENT_RETRIES}
        ),
        policy,
        deadline_s=timeout,
        retryable=lambda exc: failure_kind(exc) in PROBE_RETRIED,
        notice=(lambda line, wait: notice(f"preflight request to {where}: {line}", wait)) if notice else None,
    )
    if done.error is not None:
        raise PreflightError(explain_failure(litellm, where, call, failure_kind(done.error), done.error, done.tries))


def explain_failure(litellm, where: str, call: dict[str, Any], kind: str, exc: BaseException, tries: int) -> str:
    """The one line a failed probe of `where` ends the run with: what went wrong (`kind`, with
    the variables to set where credentials are missing) and the error itself, scrubbed and
    bounded (`MAX_DETAIL`)."""
    model, api_base = call["model"], call.get("api_base")
    reason = _REASONS.get(kind, "the request failed")
    if kind in ("authentication", "configuration"):
        try:
            missing = litellm.validate_environment(model=model, api_base=api_base).get("missing_keys") or []
        except Exception:
            missing = []
        if missing and "api_key" not in call:
            reason += f"; set {' or '.join(missing)} in the environment"
    name, text = type(exc).__name__, str(exc)
    for prefix in (f"litellm.{name}: ", f"{name}: "):  # litellm repeats the type in its message
        text = text.removeprefix(prefix)
    text = text.split("Traceback (most recent call last)")[0].rstrip(" :")  # litellm pastes its own traceback in
    if kind == "unreadable" and (problem := _validation_problem(exc)):
        text += f": {problem}"
    after = f" (after {tries} tries)" if tries > 1 else ""
    detail = " ".join(_SSL_REPR.sub("", scrub(f"{name}: {text}{after}")).split())
    if len(detail) > MAX_DETAIL:
        detail = detail[: MAX_DETAIL - 1] + "…"
    return f"preflight request to {where} failed: {reason} ({detail})"


def _validation_problem(exc: BaseException) -> str | None:
    """The first field litellm's model of a response refused, as `Usage.prompt_tokens: Input
    should be a finite number` (None without such a cause)."""
    from pydantic import ValidationError

    found = next((c for c in causes(exc) if isinstance(c, ValidationError)), None)
    if found is None or not found.errors():
        return None
    first = found.errors(include_url=False)[0]
    return f"{found.title}.{'.'.join(map(str, first['loc']))}: {first['msg']}"

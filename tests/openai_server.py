"""A real OpenAI-compatible HTTP server for tests and benchmarks (aiohttp, 127.0.0.1).

`POST /v1/chat/completions` answers deterministically from the request content: it finds the
option labels the prompt lists as valid (else option lines such as `a. ...`) and picks as many
as asked by a hash of the messages, so scores vary but never change between runs. `GET /v1/models` lists one model;
`GET /stats` returns the request counters, `GET /counts` the count per content key.

Every request is counted under its content key (`content_key`: roles, texts and the SHA-256 of
each image's decoded bytes). Faults are injected by rate, decided by a seeded RNG per (key,
attempt), so a re-run meets the same faults: transient ones (429 with `Retry-After`, 500, a
hang past the client's timeout, a truncated body, a non-JSON body) and final ones (400, and a
401 that quotes the presented API key back, as some providers do); a `trickle` sends its answer
one byte at a time, each well within a read timeout, the whole far past any deadline. Hostile answers are faults
too: a 200 with `content: null`, a refusal in OpenAI's `message.refusal` field, an answer
nested 1,000 brackets deep, an answer that quotes the presented API key, and an answer holding
a lone surrogate.

In a test::

    with OpenAIServer(latency=0.01, faults=Faults(server_error=0.2)) as server:
        ... server.url ...   # http://127.0.0.1:<port>/v1
        server.counts        # {content key: requests received}

A reasoning model: `think` gives the reasoning of a prompt (a function of its text), sent as
`reasoning_form` says: in `reasoning_content` (vLLM's reasoning parser), in `reasoning`
(newer vLLM), or before the answer in the text as `<think>…</think>` (`"think"`) or
`<thinking>…</thinking>` (`"thinking"`). The request's `max_tokens` is honoured at 4 characters
a token, the reasoning spending it first: a reply past it stops there with finish reason
`length` (a reasoning cut off has no answer, and an unclosed block in the text). Reasoning
tokens are reported in `usage.completion_tokens_details.reasoning_tokens`.

In its own process: `with ServerProcess("--latency", "0.2") as server: ... server.counts()`.
By hand: `python -m tests.openai_server --port 8000 --latency 0.2 --rate-limit 0.05`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import hashlib
import json
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.request import urlopen

from aiohttp import web

_LABEL_LIST = re.compile(r"(?:Valid labels|選択肢の記号)\s*[:：]\s*([^\n]+?)\s*(?:\.(?:\s|$)|$)", re.M)
_OPTION_LINE = re.compile(r"^\s*([A-Za-z0-9]{1,2})[.)．]\s", re.M)
_CHOOSE = re.compile(r"(?:Choose|選ぶ数[:：]?)\s*(\d+)")
_SLOTS = re.compile(r"(\d+)\s*slots|解答欄は(\d+)つ")
FAULT_KINDS = ("rate_limit", "server_error", "timeout", "truncated", "non_json")  # transient: retried
CLIENT_ERRORS = ("bad_request", "auth_error")  # final: never retried
ANSWER_FAULTS = ("null_content", "refusal", "deep_nesting", "echo_key", "lone_surrogate")  # 200s
SLOW_FAULTS = ("trickle",)  # a 200 whose body arrives one byte at a time
REFUSAL = "I'm sorry, but I can't help with that request."


@dataclass
class Faults:
    """Probability of each fault per request (they add up; the rest are answered)."""

    rate_limit: float = 0.0  # 429 with Retry-After
    server_error: float = 0.0  # 500
    timeout: float = 0.0  # no answer for `hang_s` seconds
    truncated: float = 0.0  # 200 with a body cut short and the connection closed
    non_json: float = 0.0  # 200 with an HTML body
    bad_request: float = 0.0  # 400
    auth_error: float = 0.0  # 401 quoting the presented key, as some providers do
    null_content: float = 0.0  # 200 with `content: null`
    refusal: float = 0.0  # 200 with `content: null` and `refusal` set, as OpenAI refuses
    deep_nesting: float = 0.0  # 200 whose content is `{"answer": ` and 1,000 `[`
    echo_key: float = 0.0  # 200 whose answer quotes the presented Authorization header
    lone_surrogate: float = 0.0  # 200 whose answer holds a lone surrogate (`\ud800`)
    trickle: float = 0.0  # 200 whose body is sent one byte every `trickle_s` seconds
    retry_after_s: float = 0.05
    hang_s: float = 30.0
    trickle_s: float = 0.5

    @classmethod
    def every_kind(cls, total: float, **kw) -> Faults:
        """`total` split evenly over the transient kinds."""
        each = total / len(FAULT_KINDS)
        return cls(**{k: each for k in FAULT_KINDS}, **kw)

    def pick(self, rng: random.Random) -> str | None:
        x = rng.random()
        for kind in FAULT_KINDS + CLIENT_ERRORS + ANSWER_FAULTS + SLOW_FAULTS:
            x -= getattr(self, kind)
            if x < 0:
                return kind
        return None


@dataclass
class BatchFaults:
    """Faults of the batch endpoints: the first batch expires with half its lines run, and every
    `failed_line_every`-th line of it fails (500); a batch stays in progress for its first
    `slow_polls` retrievals. Hostile output files, of the first batch: its line
    `malformed_line` (0-based) is cut short mid-way (not JSON), and its line `repeated_line`
    comes again at the end answering `{"answer": ["zz"]}` instead (-1: neither); with
    `every_batch`, of every batch."""

    expire_first: bool = False
    failed_line_every: int = 0
    slow_polls: int = 0
    malformed_line: int = -1
    repeated_line: int = -1
    every_batch: bool = False  # the hostile output lines in every batch's file, not the first's only


def _image_digest(url: str) -> str:
    """SHA-256 of a data URL's decoded bytes (of the URL itself for anything else)."""
    head, _, data = url.partition(",")
    if head.startswith("data:") and head.endswith(";base64"):
        try:
            return hashlib.sha256(base64.b64decode(data, validate=True)).hexdigest()
        except binascii.Error:
            pass
    return hashlib.sha256(url.encode()).hexdigest()


def canonical_messages(messages: list[dict]) -> list[list]:
    """Roles, texts and image digests: what an answer may depend on."""
    out = []
    for m in messages:
        content = m.get("content")
        parts = [["text", content]] if isinstance(content, str) else []
        for p in content if isinstance(content, list) else []:
            if p.get("type") == "text":
                parts.append(["text", p.get("text", "")])
            elif p.get("type") == "image_url":
                url = p["image_url"]["url"] if isinstance(p.get("image_url"), dict) else p.get("image_url", "")
                parts.append(["image", _image_digest(url)])
        out.append([m.get("role"), parts])
    return out


def body_chars(body: dict) -> int:
    """The size of a request body as the prompt tokens are counted (4 characters a token): its
    compact JSON, so that a body sent live and the same body in a batch line count alike."""
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def prompt_text(messages: list[dict]) -> str:
    """Every text part of the messages, one after another."""
    return "\n".join(t for _, parts in canonical_messages(messages) for kind, t in parts if kind == "text")


def content_key(messages: list[dict]) -> str:
    """The counter key of a request: a hash of its canonical messages."""
    data = json.dumps(canonical_messages(messages), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()


def answer_for(messages: list[dict], key: str) -> list[str]:
    """A deterministic answer: labels the prompt lists as valid (else option lines it shows),
    as many as it asks for; digits for numeric-slot items."""
    text = "\n".join(t for _, parts in canonical_messages(messages) for kind, t in parts if kind == "text")
    rng = random.Random(key)
    listed = _LABEL_LIST.search(text)
    labels = (
        [x.strip() for x in listed.group(1).split(",") if x.strip()]
        if listed
        else list(dict.fromkeys(_OPTION_LINE.findall(text)))
    )
    if labels:
        n = int(m.group(1)) if (m := _CHOOSE.search(text)) else 1
        return sorted(rng.sample(labels, min(max(n, 1), len(labels))))
    slots = next((int(g) for m in _SLOTS.finditer(text) for g in m.groups() if g), 1)
    return [str(rng.randrange(10)) for _ in range(slots)]


def shaped_answer(labels: list[str], response_format: dict | None) -> dict:
    """`{"answer": labels}`, or, when the request sends a JSON schema with one required field,
    that field holding the first label (a string field) or the labels, as a constrained model would."""
    schema = ((response_format or {}).get("json_schema") or {}).get("schema") or {}
    required = schema.get("required") or []
    if len(required) != 1:
        return {"answer": labels}
    kind = ((schema.get("properties") or {}).get(required[0]) or {}).get("type")
    return {required[0]: (labels[0] if labels else "") if kind == "string" else labels}


def completion_body(
    model: str, key: str, text: str | None, prompt_chars: int, refusal: str | None = None, reasoning: dict | None = None
) -> dict:
    """The chat completion; `reasoning`: {"field": name or None, "text": the reasoning, "finish": reason}."""
    prompt_tokens, completion_tokens = 1 + prompt_chars // 4, 1 + len(text or refusal or "") // 4
    message = {"role": "assistant", "content": text, **({"refusal": refusal} if refusal is not None else {})}
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    finish = "stop"
    if reasoning is not None:
        thought = 1 + len(reasoning["text"]) // 4
        if reasoning["field"]:
            message[reasoning["field"]] = reasoning["text"]
            usage["completion_tokens"] += thought
            usage["total_tokens"] += thought
        usage["completion_tokens_details"] = {"reasoning_tokens": thought}
        finish = reasoning["finish"]
    return {
        "id": f"chatcmpl-{key[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "medvqa-test-server",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": usage,
    }


REASONING_FORMS = ("reasoning_content", "reasoning", "think", "thinking")


def with_reasoning(text: str, reasoning: str, form: str, max_tokens: int | None) -> tuple[str | None, dict]:
    """(the content, the reasoning part of `completion_body`) of a reasoning model's reply
    within `max_tokens` (4 characters a token; the reasoning spends it first)."""
    budget = None if max_tokens is None else 4 * max_tokens
    finish = "stop"
    if budget is not None and len(reasoning) > budget:
        reasoning, text, finish = reasoning[:budget], None, "length"
    elif budget is not None and len(text) > budget - len(reasoning):
        text, finish = text[: budget - len(reasoning)], "length"
    if form in ("think", "thinking"):
        closed = f"</{form}>" if text is not None else ""
        content = f"<{form}>{reasoning}{closed}{text or ''}"
        return content, {"field": None, "text": reasoning, "finish": finish}
    return text, {"field": form, "text": reasoning, "finish": finish}


@dataclass
class OpenAIServer:
    """The server; `start()` runs it in a daemon thread, `serve_forever()` in the caller's."""

    latency: float = 0.0
    faults: Faults = field(default_factory=Faults)
    seed: int = 0
    host: str = "127.0.0.1"
    port: int = 0
    model: str = "test"
    keep_bodies: bool = False
    # Answers from the request content instead of option labels (a judge, for instance): a
    # function of the messages' text, or canned replies by content key; None falls through to
    # the default answer.
    reply: Callable[[str], str | None] | None = None
    # a model that looks at the images: a function of the prompt's text and the SHA-256 of each
    # image the request shows (of its decoded bytes, in order), giving the reply; None falls through
    see: Callable[[str, list[str]], str | None] | None = None
    replies: dict[str, str] | None = None
    # a reasoning model (see the module's docstring): the reasoning of a prompt's text, and where it is sent
    think: Callable[[str], str | None] | None = None
    reasoning_form: str = "reasoning_content"
    # a sampling model: at a temperature above 0 the answer is drawn by the request's seed too, so
    # requests differing only in their seed (a run's repeats) get answers drawn independently
    sampling: bool = False
    # the batch API: its faults, and `batch_hold` keeps every batch in progress until it is cleared
    batch_faults: BatchFaults = field(default_factory=lambda: BatchFaults())
    batch_hold: bool = False
    xai_page: int = 1000  # xAI's batch results a page (`/v1/batches/{id}/results`)
    # False: the files and batches endpoints answer 501 "Batch API is not enabled", as a vLLM
    # server without its online batch API does (vllm/entrypoints/openai/batch/api_router.py)
    batch_api: bool = True
    # a hostile server's token counts: this `usage` block in every answer (chat and batch lines)
    # instead of the counted one, sent as given (`NaN` and `Infinity` as Python writes them); or a
    # function of the prompt's text giving the block (None: the counted one)
    usage: dict | Callable[[str], dict | None] | None = None
    # token log-probabilities: a function of the reply's text giving OpenAI's `logprobs.content`
    # list ([{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]), sent in the choice
    # when the request asks for `logprobs`; None sends none
    logprobs: Callable[[str], list[dict] | None] | None = None

    def __post_init__(self) -> None:
        self.files: dict[str, bytes] = {}  # the batch API's files, by id
        self.batches: dict[str, dict] = {}  # the batch API's batches, by id
        self.batch_lines: Counter[str] = Counter()  # batch lines answered (or failed) per content key
        self.counts: Counter[str] = Counter()  # requests received per content key
        self.outcomes: Counter[str] = Counter()  # "answered" or the fault kind
        self.bodies: list[dict] = []  # request bodies, when keep_bodies is set
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/stats", self._stats)
        app.router.add_get("/counts", self._counts)
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{file_id}/content", self._file_content)
        app.router.add_post("/v1/batches", self._create_batch)
        app.router.add_get("/v1/batches/{batch_id}", self._retrieve_batch)
        app.router.add_get("/v1/batches/{batch_id}/results", self._xai_results)
        app.router.add_post("/v1/batch/jobs", self._create_mistral_job)
        app.router.add_get("/v1/batch/jobs/{job_id}", self._retrieve_mistral_job)
        return app

    # -- the files and batches endpoints (OpenAI's batch API) ----------------------------------

    async def _upload(self, request: web.Request) -> web.Response:
        if not self.batch_api:
            return web.json_response(
                {"error": {"message": "Batch API is not enabled", "type": "invalid_request_error", "code": 501}},
                status=501,
            )
        data, purpose = b"", None
        async for part in await request.multipart():
            if part.name == "file":
                data = bytes(await part.read())
            elif part.name == "purpose":
                purpose = await part.text()
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return web.json_response(
            {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": "input.jsonl",
                "purpose": purpose,
                "status": "processed",
            }
        )

    async def _file_content(self, request: web.Request) -> web.Response:
        return web.Response(body=self.files[request.match_info["file_id"]], content_type="application/octet-stream")

    async def _create_batch(self, request: web.Request) -> web.Response:
        """OpenAI's `{input_file_id, endpoint, completion_window}`, or xAI's `{name, input_file_id}`
        (https://docs.x.ai/developers/advanced-api-usage/batch-api): the same path, told apart by
        the body, and answered in the shape of the API that asked."""
        body = await request.json()
        lines = [json.loads(line) for line in self.files[body["input_file_id"]].decode().splitlines() if line.strip()]
        batch_id = f"batch_{len(self.batches) + 1}"
        xai = "completion_window" not in body
        self.batches[batch_id] = {"lines": lines, "polls": 0, "body": body, "result": None, "xai": xai}
        if xai:
            return web.json_response(self._xai_batch(batch_id))
        return web.json_response(self._batch_object(batch_id, "validating"))

    def _batch_object(
        self,
        batch_id: str,
        status: str,
        output: str | None = None,
        errors: str | None = None,
        counts: tuple[int, int] = (0, 0),
    ) -> dict:
        b = self.batches[batch_id]
        return {
            "id": batch_id,
            "object": "batch",
            "endpoint": b["body"]["endpoint"],
            "input_file_id": b["body"]["input_file_id"],
            "completion_window": b["body"]["completion_window"],
            "status": status,
            "output_file_id": output,
            "error_file_id": errors,
            "created_at": int(time.time()),
            "request_counts": {"total": len(b["lines"]), "completed": counts[0], "failed": counts[1]},
        }

    async def _retrieve_batch(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["batch_id"]
        b = self.batches[batch_id]
        b["polls"] += 1
        if b["result"] is None and not (self.batch_hold or b["polls"] <= self.batch_faults.slow_polls):
            b["result"] = self._finish_batch(batch_id)
        if b["xai"]:
            return web.json_response(self._xai_batch(batch_id))
        if b["result"] is None:
            return web.json_response(self._batch_object(batch_id, "in_progress"))
        return web.json_response(self._batch_object(batch_id, *b["result"]))

    # -- xAI's batches: counters instead of a status, results paged instead of an output file ------

    def _xai_batch(self, batch_id: str) -> dict:
        """A batch as xAI's API shows one: request counters, no status (litellm reads the status off
        them: pending requests, in progress; none, completed); a batch xAI could not finish in
        time is cancelled by xAI, its message saying why (litellm: `failed`), the requests it did
        not run counted cancelled."""
        b = self.batches[batch_id]
        n = len(b["lines"])
        state = {"num_requests": n, "num_pending": n, "num_success": 0, "num_error": 0, "num_cancelled": 0}
        out = {"batch_id": batch_id, "name": b["body"].get("name", ""), "create_time": "2026-01-01T00:00:00Z"}
        if b["result"] is not None:
            success, error = len(b["outputs"]), len(b["errors"])
            state.update(num_pending=0, num_success=success, num_error=error, num_cancelled=n - success - error)
            if b["result"][0] == "expired":
                out["cancel_time"] = "2026-01-02T00:00:00Z"
                out["cancel_by_xai_message"] = "the batch expired before all its requests ran"
        return {**out, "state": state, "input_file_id": b["body"]["input_file_id"]}

    async def _xai_results(self, request: web.Request) -> web.Response:
        """`GET /v1/batches/{id}/results`: `{results: [{batch_request_id, batch_result: {response:
        {chat_get_completion: body}} or {error: {code, message}}}], pagination_token}`, at most
        `xai_page` results a page (of `limit`, if smaller)."""
        b = self.batches[request.match_info["batch_id"]]
        rows = [
            {
                "batch_request_id": o["custom_id"],
                "batch_result": {"response": {"chat_get_completion": o["response"]["body"]}},
            }
            for o in b.get("outputs", [])
        ] + [
            {
                "batch_request_id": e["custom_id"],
                "batch_result": {"error": {"code": e["response"]["status_code"], "message": "internal error"}},
            }
            for e in b.get("errors", [])
        ]
        start = int(request.query.get("pagination_token") or 0)
        size = min(self.xai_page, int(request.query.get("limit") or self.xai_page))
        token = str(start + size) if start + size < len(rows) else None
        return web.json_response({"results": rows[start : start + size], "pagination_token": token})

    # -- Mistral's batch jobs (`/v1/batch/jobs`): the files endpoints above, lines without a model ----

    async def _create_mistral_job(self, request: web.Request) -> web.Response:
        """A job as Mistral's API creates one: `{input_files, endpoint, model}`, the model once
        for every line (https://docs.mistral.ai/api/#tag/batch)."""
        body = await request.json()
        (input_file,) = body["input_files"]
        lines = [json.loads(line) for line in self.files[input_file].decode().splitlines() if line.strip()]
        job_id = f"job-{len(self.batches) + 1}"
        self.batches[job_id] = {"lines": lines, "polls": 0, "body": body, "result": None, "xai": False}
        return web.json_response(self._mistral_job(job_id, "QUEUED"))

    def _mistral_job(
        self,
        job_id: str,
        status: str,
        output: str | None = None,
        errors: str | None = None,
        counts: tuple[int, int] = (0, 0),
    ) -> dict:
        b = self.batches[job_id]
        return {
            "id": job_id,
            "object": "batch",
            "input_files": b["body"]["input_files"],
            "endpoint": b["body"]["endpoint"],
            "model": b["body"]["model"],
            "status": status,
            "created_at": int(time.time()),
            "total_requests": len(b["lines"]),
            "completed_requests": sum(counts),
            "succeeded_requests": counts[0],
            "failed_requests": counts[1],
            "output_file": output,
            "error_file": errors,
            "errors": [],
            "metadata": None,
        }

    async def _retrieve_mistral_job(self, request: web.Request) -> web.Response:
        """Mistral's statuses: QUEUED, RUNNING, then SUCCESS, or TIMEOUT_EXCEEDED for a job
        that ran out of time (litellm reads it as OpenAI's `expired`)."""
        job_id = request.match_info["job_id"]
        b = self.batches[job_id]
        b["polls"] += 1
        if b["result"] is None:
            if self.batch_hold or b["polls"] <= self.batch_faults.slow_polls:
                return web.json_response(self._mistral_job(job_id, "RUNNING"))
            b["result"] = self._finish_batch(job_id)
        status, *rest = b["result"]
        return web.json_response(
            self._mistral_job(job_id, {"completed": "SUCCESS", "expired": "TIMEOUT_EXCEEDED"}[status], *rest)
        )

    def _finish_batch(self, batch_id: str) -> tuple:
        """Answer a batch's lines as the chat endpoint answers them, with its faults: the first
        batch may expire half done, and every `failed_line_every`-th line of it fails (500). A
        line without a model (Mistral's) is asked of its job's, and counted with it as the live
        request is."""
        b, f = self.batches[batch_id], self.batch_faults
        first = batch_id == next(iter(self.batches))
        expired = f.expire_first and first
        outputs, errors = [], []
        for i, line in enumerate(b["lines"]):
            if expired and i >= len(b["lines"]) // 2:
                break  # never run: an expired batch answers none of the rest
            body = {"model": b["body"].get("model", self.model), **line["body"]}
            messages = body["messages"]
            key = content_key(messages)
            self.batch_lines[key] += 1
            if f.failed_line_every and first and i % f.failed_line_every == 0:
                errors.append(
                    {
                        "id": f"req-{i}",
                        "custom_id": line["custom_id"],
                        "response": {
                            "status_code": 500,
                            "request_id": f"req-{i}",
                            "body": {"error": {"message": "internal error", "type": "server_error"}},
                        },
                        "error": None,
                    }
                )
                continue
            drawn = key
            if self.sampling and (body.get("temperature") or 0) > 0:  # the seed, as the chat endpoint draws
                drawn = f"{key}:{body.get('seed', body.get('random_seed'))}"
            text = self._reply(messages, drawn, body.get("response_format"))
            answer = completion_body(body["model"], key, text, body_chars(body), None)
            if (usage := self._usage(messages)) is not None:
                answer["usage"] = usage
            outputs.append(
                {
                    "id": f"req-{i}",
                    "custom_id": line["custom_id"],
                    "response": {"status_code": 200, "request_id": f"req-{i}", "body": answer},
                    "error": None,
                }
            )
        lines = [json.dumps(o) for o in outputs]
        hostile = f.every_batch or first
        if hostile and 0 <= f.repeated_line < len(outputs):
            again = json.loads(lines[f.repeated_line])
            again["response"]["body"]["choices"][0]["message"]["content"] = '{"answer": ["zz"]}'
            lines.append(json.dumps(again))
        if hostile and 0 <= f.malformed_line < len(lines):
            lines[f.malformed_line] = lines[f.malformed_line][: len(lines[f.malformed_line]) // 2]
        b["outputs"], b["errors"] = outputs, errors  # (xAI's results are read from these)
        out_id = err_id = None
        if outputs:
            out_id = f"file-{len(self.files) + 1}"
            self.files[out_id] = "\n".join(lines).encode()
        if errors:
            err_id = f"file-{len(self.files) + 1}"
            self.files[err_id] = "\n".join(json.dumps(e) for e in errors).encode()
        return ("expired" if expired else "completed", out_id, err_id, (len(outputs), len(errors)))

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "medvqa-test-server"}]}
        )

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "requests": sum(self.counts.values()),
                "keys": len(self.counts),
                "outcomes": dict(self.outcomes),
                "faults": asdict(self.faults),
                "latency": self.latency,
            }
        )

    async def _counts(self, request: web.Request) -> web.Response:
        return web.json_response(dict(self.counts))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
            messages = body["messages"]
        except (ValueError, KeyError, TypeError):
            return web.json_response(
                {"error": {"message": "invalid request body", "type": "invalid_request_error"}}, status=400
            )
        key = content_key(messages)
        attempt = self.counts[key]
        self.counts[key] += 1
        if self.keep_bodies:
            self.bodies.append(body)
        fault = self.faults.pick(random.Random(f"{self.seed}:{key}:{attempt}"))
        self.outcomes[fault or "answered"] += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        if fault == "rate_limit":
            return web.json_response(
                {"error": {"message": "rate limited", "type": "rate_limit_error"}},
                status=429,
                headers={"Retry-After": f"{self.faults.retry_after_s:g}"},
            )
        if fault == "bad_request":
            return web.json_response(
                {"error": {"message": "invalid image", "type": "invalid_request_error"}}, status=400
            )
        if fault == "auth_error":
            presented = request.headers.get("Authorization", "").removeprefix("Bearer ")
            return web.json_response(
                {"error": {"message": f"Incorrect API key provided: {presented}", "type": "invalid_request_error"}},
                status=401,
            )
        if fault == "server_error":
            return web.json_response({"error": {"message": "internal error", "type": "server_error"}}, status=500)
        if fault == "timeout":
            await asyncio.sleep(self.faults.hang_s)
        if fault == "non_json":
            return web.Response(
                text="<html><body>502 upstream went away</body></html>", status=200, content_type="application/json"
            )
        drawn = key
        if self.sampling and (body.get("temperature") or 0) > 0:
            drawn = f"{key}:{body.get('seed', body.get('random_seed'))}"
        text = self._reply(messages, drawn, body.get("response_format"))
        refusal = None
        if fault in ("null_content", "refusal"):
            text, refusal = None, REFUSAL if fault == "refusal" else None
        elif fault == "deep_nesting":
            text = '{"answer": ' + "[" * 1000
        elif fault == "echo_key":
            text += f" (authorised by {request.headers.get('Authorization', '').removeprefix('Bearer ')})"
        elif fault == "lone_surrogate":
            text = '{"answer": ["\ud800"]}'
        reasoning = None
        thought = self.think(prompt_text(messages)) if self.think is not None and fault is None else None
        if thought is not None:
            text, reasoning = with_reasoning(
                text, thought, self.reasoning_form, body.get("max_tokens") or body.get("max_completion_tokens")
            )
        answer = completion_body(body.get("model", self.model), key, text, body_chars(body), refusal, reasoning)
        if (usage := self._usage(messages)) is not None:
            answer["usage"] = usage
        if self.logprobs is not None and body.get("logprobs") and text is not None:
            answer["choices"][0]["logprobs"] = {"content": self.logprobs(text)}
        payload = json.dumps(answer).encode()
        if fault == "trickle":  # every byte on time, the whole answer never within a deadline
            response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            response.content_length = len(payload)
            await response.prepare(request)
            for i in range(len(payload)):
                await response.write(payload[i : i + 1])
                await asyncio.sleep(self.faults.trickle_s)
            return response
        if fault == "truncated":
            response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            response.content_length = len(payload)
            await response.prepare(request)
            await response.write(payload[: len(payload) // 2])
            request.transport.close()
            raise asyncio.CancelledError
        return web.Response(body=payload, content_type="application/json")

    def _usage(self, messages: list[dict]) -> dict | None:
        return self.usage(prompt_text(messages)) if callable(self.usage) else self.usage

    def _reply(self, messages: list[dict], key: str, response_format: dict | None) -> str:
        if self.replies and key in self.replies:
            return self.replies[key]
        if self.reply is not None:
            got = self.reply(prompt_text(messages))
            if got is not None:
                return got
        if self.see is not None:
            shown = [d for _, parts in canonical_messages(messages) for kind, d in parts if kind == "image"]
            got = self.see(prompt_text(messages), shown)
            if got is not None:
                return got
        return json.dumps(shaped_answer(answer_for(messages, key), response_format), ensure_ascii=False)

    async def _serve(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        self.port = self._runner.addresses[0][1]  # the port bound (a free one for port 0)
        self._ready.set()

    def start(self) -> OpenAIServer:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="openai-test-server", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(timeout=10)
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        self._loop = None

    def serve_forever(self, announce=print) -> None:
        async def main() -> None:
            await self._serve()
            announce(f"listening on {self.url}", flush=True)
            await asyncio.Event().wait()

        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            pass

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class ServerProcess:
    """The server in its own process (so it does not share the client's interpreter):
    `ServerProcess("--latency", "0.2")`; `.url`, `.counts()`, `.stats()`, `.stop()`."""

    def __init__(self, *args: str):
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.openai_server", "--port", "0", *args],
            cwd=Path(__file__).resolve().parents[1],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self._proc.stdout.readline().strip()
        if not line.startswith("listening on "):
            self._proc.kill()
            raise RuntimeError(f"the test server did not start: {line!r}")
        self.url = line.removeprefix("listening on ")

    def _get(self, path: str) -> dict:
        with urlopen(self.url.removesuffix("/v1") + path, timeout=30) as response:
            return json.loads(response.read())

    def counts(self) -> dict[str, int]:
        return self._get("/counts")

    def stats(self) -> dict:
        return self._get("/stats")

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=10)
        self._proc.stdout.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.openai_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 chooses a free port (printed)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--faults", type=float, default=0.0, help="total rate of transient faults, split evenly")
    for kind in FAULT_KINDS + CLIENT_ERRORS + ANSWER_FAULTS + SLOW_FAULTS:
        parser.add_argument(f"--{kind.replace('_', '-')}", type=float, help=f"rate of {kind} faults")
    parser.add_argument("--retry-after", type=float, default=0.05, help="Retry-After seconds sent with 429")
    parser.add_argument("--hang", type=float, default=30.0, help="seconds a 'timeout' fault hangs")
    parser.add_argument("--replies", help="JSON file of canned replies: {content key: reply text}")
    args = parser.parse_args(argv)
    faults = Faults.every_kind(args.faults) if args.faults else Faults()
    for kind in FAULT_KINDS + CLIENT_ERRORS + ANSWER_FAULTS + SLOW_FAULTS:
        if getattr(args, kind) is not None:
            setattr(faults, kind, getattr(args, kind))
    faults.retry_after_s, faults.hang_s = args.retry_after, args.hang
    replies = json.loads(Path(args.replies).read_text()) if args.replies else None
    OpenAIServer(
        latency=args.latency, faults=faults, seed=args.seed, host=args.host, port=args.port, replies=replies
    ).serve_forever()


if __name__ == "__main__":
    main()

"""A run's requests through the provider's batch API (`medvqa run --batch`), via litellm's files
and batches calls (`create_file`, `create_batch`, `retrieve_batch`, `file_content`).

Covered (`BATCH_PROVIDERS`): OpenAI's files and batches endpoints (`openai/` models, at OpenAI
or at an `--api-base` that speaks them; `hosted_vllm/`, a vLLM server's online batch API), Mistral
(`mistral/`: `/v1/files` and `/v1/batch/jobs`) and xAI (`xai/`: `/v1/files` and `/v1/batches`,
results paged), whose answers litellm hands back as OpenAI's output lines. Every other provider
is refused with a one-line error naming these, before anything is sent. `batch_lines.py` holds
what differs between providers: the lines, the calls' arguments, where a finished batch's
answers are read.

`BatchBackend` wraps the run's litellm backend and keeps its model, parameters and endpoint, so
its requests have the live requests' keys: a batch answer enters the same cache and records as
a live one would, and a run can be asked partly live and partly in batches. Each request is one
line of an input file, `custom_id` its request key, its body what the live path sends. A run's
repeats (`--repeats`) are one backend (`add_repeat`): each repeat's lines carry its own
parameters (its seed), and all of them go in the same batches, where a backend per repeat sent
one batch per repeat and waited for each before the next.

The run directory keeps every batch in `batches.jsonl` (its id, its input file, the keys it
holds), written as soon as the batch is created. A run that stops (Ctrl-C, a kill, or
`--batch-wait` seconds passed) resumes by polling the batches it finds there and reading their
output, never by submitting again what a batch still holds. A line that failed and the lines an
expired (or failed) batch never answered are asked again in a new batch, up to `max_rounds`
batches per request; past that, the request is recorded as an error. Requests still in a batch
when the run stops waiting are recorded as `missing`, so the next run asks them again, by
polling.

The provider's files are read as untrusted: a line of an output file that cannot be read, and a
request answered twice, differently, are failed lines (asked again, and named by file and line
in the error of a request that fails every time); the good lines of the same file are recorded.
A last ledger line cut short (a run killed while writing it) is ignored, said on stderr, and cut
off before the next batch is written; a damaged line before it is an error naming the line.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..items import DataError
from .base import Backend, Request, Response
from .batch_lines import BATCH_PROVIDERS, BatchError, BatchLines

__all__ = ["BATCH_PROVIDERS", "BatchBackend", "BatchError"]

if TYPE_CHECKING:
    from .litellm_backend import LiteLLMBackend

FINISHED = ("completed", "expired", "failed", "cancelled")
LEDGER = "batches.jsonl"


class BatchBackend(Backend):
    cacheable = True

    def __init__(
        self,
        live: LiteLLMBackend,
        run_dir: str | Path,
        *,
        poll_s: float = 30.0,
        wait_s: float | None = None,
        max_rounds: int = 3,
        max_lines: int = 50_000,
    ):
        self.live = live
        self.model, self.params, self.endpoint = live.model, live.params, live.endpoint
        self.stats: dict[str, Any] = live.stats
        self.ledger = Path(run_dir) / LEDGER
        self.poll_s, self.wait_s, self.max_rounds, self.max_lines = poll_s, wait_s, max_rounds, max_lines
        self.lines = BatchLines(live)  # refuses a provider or a setting the batch path cannot take
        self.settings = {
            **dict(live.settings),
            "backend": "litellm-batch",
            "batch_poll_s": poll_s,
            "batch_wait_s": wait_s,
            "batch_max_rounds": max_rounds,
        }
        self._ledger_end: int | None = None  # bytes of whole lines in the ledger, once read

    def add_repeat(self, repeat: int, live: LiteLLMBackend) -> BatchBackend:
        """This backend asking repeat `repeat` of the run too, with `live`'s parameters (its own
        seed): a run's repeats are one backend, so one batch holds the lines of every repeat
        instead of one batch each, asked one after another. Returns itself."""
        self.lines.add_repeat(repeat, live)
        return self

    # -- the ledger ------------------------------------------------------------------------

    def _batches(self) -> list[dict]:
        """The ledger's batches. A last line cut short (a run killed while writing it) is left out
        and said on stderr, and cut off before the next batch is written; a damaged line before it
        is a `DataError` naming the file and the line."""
        self._ledger_end = 0
        if not self.ledger.is_file():
            return []
        data = self.ledger.read_bytes()
        out = []
        start = 0
        for lineno, line in enumerate(data.split(b"\n"), 1):
            end = start + len(line) + 1  # past its newline (past the file's end for the last line)
            last = end >= len(data)
            if line.strip():
                entry = _ledger_entry(line)
                if entry is None and last:
                    print(
                        f"medvqa: {self.ledger}: line {lineno} was cut short (a run stopped while writing it): ignored",
                        file=sys.stderr,
                        flush=True,
                    )
                    break
                if entry is None:
                    raise DataError(
                        "not a batch of this run (expected {batch_id, keys, ...})",
                        file=self.ledger,
                        record=f"line {lineno}",
                    )
                out.append(entry)
            self._ledger_end = min(end, len(data))
            start = end
        return out

    def _submit(self, requests: list[Request]) -> list[dict]:
        out = []
        for i in range(0, len(requests), self.max_lines):
            chunk = requests[i : i + self.max_lines]
            data = "\n".join(json.dumps(self.lines.line(r), ensure_ascii=False, allow_nan=False) for r in chunk).encode(
                "utf-8"
            )
            file = self.lines.call("create_file", file=("medvqa-batch.jsonl", data), purpose="batch")
            batch = self.lines.call(
                "create_batch", completion_window="24h", endpoint="/v1/chat/completions", input_file_id=file.id
            )
            entry = {
                "batch_id": batch.id,
                "input_file_id": file.id,
                "keys": [r.key for r in chunk],
                "created": time.time(),
            }
            self._keep(entry)
            out.append(entry)
        return out

    def _keep(self, entry: dict) -> None:
        """`entry` added to the ledger before anything is awaited. The ledger (a few lines) is
        rewritten whole by the run store's one writer, never through a link, keeping only the
        whole lines read (`_batches`): a line cut short before is cut off, not glued to."""
        from ..files import write_atomic

        kept = self.ledger.read_bytes() if self.ledger.is_file() else b""
        if self._ledger_end is not None:
            kept = kept[: self._ledger_end]
        if kept and not kept.endswith(b"\n"):  # a whole last line without its newline
            kept += b"\n"
        content = kept + (json.dumps(entry, allow_nan=False) + "\n").encode("utf-8")
        write_atomic(self.ledger, content)
        self._ledger_end = len(content)

    # -- answers ---------------------------------------------------------------------------

    def _results(self, batch) -> tuple[dict[str, Response], dict[str, str], str | None]:
        """({key: answer}, {key: why it failed}, why some line could not be read) of a finished
        batch's output and error files. The files are the provider's, read as untrusted: a line
        that is not a readable batch line is left out (its request, never answered, is asked
        again as a failed line is), and a `custom_id` answered twice, differently, is a failed
        line; the reasons name the file and the line."""
        answers: dict[str, Response] = {}
        failed: dict[str, str] = {}
        where: dict[str, str] = {}  # the line that answered each key
        conflicting: set[str] = set()  # keys answered twice, differently
        unreadable = None
        for file_id, is_error in self.lines.output_files(batch):
            content = self.lines.call("file_content", file_id=file_id)
            for lineno, line in enumerate(content.content.decode("utf-8", "replace").split("\n"), 1):
                if not line.strip():
                    continue
                here = f"{'error' if is_error else 'output'} file {file_id} line {lineno}"
                row = _batch_line(line)
                if row is None:
                    unreadable = unreadable or f"{here} is not a batch line (a JSON object with a custom_id)"
                    continue
                key, response = row["custom_id"], row.get("response") or {}
                if is_error or row.get("error") or not isinstance(response, dict) or response.get("status_code") != 200:
                    failed[key] = _why(row)
                    continue
                try:
                    answer = self._read(response.get("body") or {})
                except Exception as exc:  # an answer without content, say: retried as a batch line
                    failed[key] = f"{here}: {type(exc).__name__}: {exc}"
                    continue
                if key in conflicting:
                    continue
                if key in answers and _said(answers[key]) != _said(answer):
                    conflicting.add(key)
                    failed[key] = f"{where[key]} and {here} answer {key[:12]}… differently"
                    del answers[key]
                else:
                    answers[key], where[key] = answer, here
        return answers, failed, unreadable

    def _read(self, body: dict) -> Response:
        """A line's answer, read as the live path reads an answer; its cost at the batch API's
        prices where litellm knows them (else its ordinary ones), unless `--price` is given."""
        from openai.types.chat import ChatCompletion

        response = self.live.read(ChatCompletion.model_validate(body), 0.0)
        prompt, completion = response.usage.get("prompt_tokens", 0), response.usage.get("completion_tokens", 0)
        # (a count that is none: no cost)
        if "cost_usd" not in response.usage and prompt is not None and completion is not None:
            p_in, p_out = self._prices()
            cost = prompt * p_in + completion * p_out
            if cost:
                response.usage["cost_usd"] = round(cost, 10)
                self.stats["cost_usd"] += cost
        return response

    def _prices(self) -> tuple[float, float]:
        if not hasattr(self, "_price_per_token"):
            try:
                info = self.live.litellm.get_model_info(self.model)
            except Exception:
                info = {}
            regular = (float(info.get("input_cost_per_token") or 0), float(info.get("output_cost_per_token") or 0))
            self._price_per_token = (
                float(info.get("input_cost_per_token_batches") or regular[0]),
                float(info.get("output_cost_per_token_batches") or regular[1]),
            )
        return self._price_per_token

    def generate(self, requests: Iterable[Request]) -> Iterator[tuple[Request, Response]]:
        wanted: dict[str, list[Request]] = {}
        for req in requests:
            wanted.setdefault(req.key, []).append(req)
        if not wanted:
            return
        ledger = [b for b in self._batches() if set(b["keys"]) & set(wanted)]
        known = {k for b in ledger for k in b["keys"]}  # in a batch already: polled, never submitted again
        rounds = {k: 0 for k in wanted}  # batches submitted for each request by this run
        fresh = [reqs[0] for k, reqs in wanted.items() if k not in known]
        if fresh:
            ledger += self._submit(fresh)
            for r in fresh:
                rounds[r.key] = 1
        started = time.monotonic()
        open_batches = {b["batch_id"]: b for b in ledger}
        pending = set(wanted)
        last_failure: dict[str, str] = {}
        while pending:
            finished_now = []
            for batch_id, entry in list(open_batches.items()):
                batch = self.lines.call("retrieve_batch", batch_id=batch_id)
                if batch.status not in FINISHED:
                    continue
                finished_now.append(batch_id)
                answers, failed, unreadable = self._results(batch)
                for key in entry["keys"]:
                    if key not in pending:
                        continue
                    if key in answers:
                        pending.discard(key)
                        for req in wanted[key]:
                            yield req, answers[key]
                    else:
                        last_failure[key] = (
                            failed.get(key) or unreadable or f"batch {batch_id} {batch.status} before answering it"
                        )
            for batch_id in finished_now:
                del open_batches[batch_id]
            held = {k for b in open_batches.values() for k in b["keys"]}
            again = [wanted[k][0] for k in sorted(pending - held) if rounds[k] < self.max_rounds]
            for key in sorted(k for k in pending - held if rounds[k] >= self.max_rounds):
                pending.discard(key)
                error = f"BatchError: {last_failure.get(key, 'not answered')} (after {rounds[key]} batches)"
                for req in wanted[key]:
                    yield req, Response(error=error)
            if again:
                for entry in self._submit(again):
                    open_batches[entry["batch_id"]] = entry
                for r in again:
                    rounds[r.key] += 1
            if not pending:
                break
            if self.wait_s is not None and time.monotonic() - started >= self.wait_s:
                for key in pending:  # still in a batch: recorded missing, polled by the next run
                    for req in wanted[key]:
                        yield req, Response()
                return
            time.sleep(self.poll_s)


def _why(row: dict) -> str:
    response = row.get("response")
    if not isinstance(response, dict):
        response = {}
    body = response.get("body")
    if not isinstance(body, dict):
        body = {}
    error = row.get("error") or body.get("error") or {}
    status = response.get("status_code")
    message = error.get("message") if isinstance(error, dict) else str(error)
    return f"batch line failed ({status}: {message})" if status else f"batch line failed ({message})"


def _ledger_entry(line: bytes) -> dict | None:
    """A ledger line's batch ({batch_id, keys, ...}), or None when the line is not one."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("batch_id"), str)
        or not isinstance(entry.get("keys"), list)
        or not all(isinstance(k, str) for k in entry["keys"])
    ):
        return None
    return entry


def _batch_line(line: str) -> dict | None:
    """A line of a batch's output or error file, or None when it is not one (not JSON, not an
    object, no text `custom_id`)."""
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return row if isinstance(row, dict) and isinstance(row.get("custom_id"), str) else None


def _said(response: Response) -> tuple:
    """What an answer says, to tell two answers to one request apart."""
    return response.text, response.refusal, response.reasoning

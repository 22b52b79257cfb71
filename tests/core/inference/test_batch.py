"""`--batch`: a run's requests through OpenAI's and Mistral's batch APIs (litellm's files and
batches calls) against the test server's fakes of their endpoints (OpenAI's `/v1/files` and
`/v1/batches`; Mistral's `/v1/files` and `/v1/batch/jobs`), with faults: a failed line, an
expired batch, a slow batch. The batch path records what the live path records on the same
replies; the run directory keeps the batch ids; a run that stops waiting resumes by polling,
never by submitting again; a run's repeats go in one batch; `--dry-run` prices at the batch
API's prices where litellm knows them."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from medvqa.core.errors import UsageError
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.store import read_records
from tests.openai_server import BatchFaults, OpenAIServer, content_key

MODEL = "openai/test"
COMPARED = ("response", "error", "predicted", "status", "correct", "usage")
PAIRS = 22  # jmed48k-sample under C+Q and C+Q+I


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-0000")
    monkeypatch.setenv("MISTRAL_API_KEY", "mk-test-batch-0000")
    monkeypatch.setenv("XAI_API_KEY", "xk-test-batch-0000")


def options(tmp_path, server, name, *, model: str = MODEL, **kw) -> RunOptions:
    """The sample under C+Q and C+Q+I against `server`, as `model` (an OpenAI model by default)."""
    return RunOptions(
        benchmark="jmed48k",
        model=model,
        sample=True,
        conditions="C+Q,C+Q+I",
        run_dir=str(tmp_path / name),
        cache_path=str(tmp_path / f"cache-{name}.sqlite3"),
        backend_options={"api_base": [server.url]},
        batch_poll_s=0.01,
        **kw,
    )


def by_pair(run_dir) -> dict:
    return {(r["item_id"], r["condition"]): {k: r[k] for k in COMPARED} for r in read_records(run_dir)}


def ledger(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "batches.jsonl").read_text().splitlines()]


def test_the_batch_path_records_what_the_live_path_records(tmp_path):
    with OpenAIServer() as server:
        live = run(options(tmp_path, server, "live"), progress=False)
        sent_live = sum(server.counts.values())
        batch = run(options(tmp_path, server, "batch", batch=True), progress=False)
        assert sum(server.counts.values()) == sent_live  # no live request from the batch run
        assert len(server.batches) == 1 and len(server.batches["batch_1"]["lines"]) == PAIRS
    assert live.requested == batch.requested == PAIRS
    assert by_pair(tmp_path / "live") == by_pair(tmp_path / "batch")
    assert [b["batch_id"] for b in ledger(tmp_path / "batch")] == ["batch_1"]
    # the same request keys: a batch answer is in the cache a live run reads
    assert {r["key"] for r in read_records(tmp_path / "live")} == set(ledger(tmp_path / "batch")[0]["keys"])


def test_failed_lines_and_an_expired_batch_are_asked_again_as_batches_and_a_slow_one_is_waited_for(tmp_path):
    """The first batch (22 lines) expires after answering its first 11; of those, lines 0, 5 and
    10 fail. The second batch holds the 3 failed and the 11 never run: 14 lines, all answered,
    after 2 polls in progress."""
    faults = BatchFaults(expire_first=True, failed_line_every=5, slow_polls=2)
    with OpenAIServer(batch_faults=faults) as server:
        run(options(tmp_path, server, "live"), progress=False)
        result = run(options(tmp_path, server, "run", batch=True), progress=False)
        sizes = [len(b["lines"]) for b in server.batches.values()]
        assert sizes == [PAIRS, 3 + 11]
        assert all(b["polls"] >= 3 for b in server.batches.values())  # in progress twice, then done
    records = read_records(tmp_path / "run")
    assert len(records) == PAIRS and {r["status"] for r in records} <= {"answered", "parse_failure", "refusal"}
    assert result.summary()["errors"] == 0
    assert [len(b["keys"]) for b in ledger(tmp_path / "run")] == [PAIRS, 14]
    assert by_pair(tmp_path / "run") == by_pair(tmp_path / "live")


def test_a_run_that_stops_waiting_resumes_by_polling_and_never_submits_again(tmp_path):
    with OpenAIServer(batch_hold=True) as server:
        first = run(options(tmp_path, server, "run", batch=True, batch_wait_s=0.05), progress=False)
        assert {r["status"] for r in read_records(tmp_path / "run")} == {"missing"}
        assert first.summary()["failure"]  # nothing came back yet: the run says so
        assert len(server.batches) == 1
        server.batch_hold = False
        run(options(tmp_path, server, "run", batch=True), progress=False)
        assert len(server.batches) == 1  # polled, not submitted again
        assert sum(server.batch_lines.values()) == PAIRS
    records = read_records(tmp_path / "run")
    assert len(records) == PAIRS and "missing" not in {r["status"] for r in records}
    assert len(ledger(tmp_path / "run")) == 1


@pytest.mark.parametrize("model", ["anthropic/claude-test", "gemini/test", "azure/test"])
def test_a_provider_without_a_batch_api_is_refused_before_anything_is_sent(tmp_path, monkeypatch, model):
    """Anthropic: litellm 1.110.2 retrieves message batches but cannot create one
    (`AnthropicBatchesConfig.transform_create_batch_request` raises NotImplementedError); Gemini
    and Azure: not reached here (docs/runs.md)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("GEMINI_API_KEY", "gm-test")
    monkeypatch.setenv("AZURE_API_KEY", "az-test")
    monkeypatch.setenv("AZURE_API_BASE", "http://127.0.0.1:9")
    monkeypatch.setenv("AZURE_API_VERSION", "2024-10-21")
    with OpenAIServer() as server:
        with pytest.raises(
            UsageError,
            match=f"^--batch: {model}: medvqa sends batches through litellm for "
            "openai/, hosted_vllm/, mistral/, xai/ models only",
        ):
            run(
                RunOptions(
                    benchmark="jmed48k",
                    model=model,
                    sample=True,
                    run_dir=str(tmp_path / "r"),
                    backend_options={"api_base": [server.url]},
                    batch=True,
                ),
                progress=False,
            )
        assert sum(server.counts.values()) == 0 and not server.batches
    assert not (tmp_path / "r").exists()


def test_a_malformed_line_and_a_key_answered_twice_differently_are_failed_lines_asked_again(tmp_path):
    """The first batch's output file holds its line 3 cut short (not JSON) and its line 7 again,
    answering otherwise: the 20 readable lines are recorded, the 2 others are asked again in a
    second batch of 2 lines, and every record is what a live run records."""
    with OpenAIServer(batch_faults=BatchFaults(malformed_line=3, repeated_line=7)) as server:
        live = run(options(tmp_path, server, "live"), progress=False)
        result = run(options(tmp_path, server, "run", batch=True), progress=False)
        first = server.batches["batch_1"]["lines"]
        assert [len(b["lines"]) for b in server.batches.values()] == [PAIRS, 2]
    assert sorted(ledger(tmp_path / "run")[1]["keys"]) == sorted([first[3]["custom_id"], first[7]["custom_id"]])
    assert result.summary()["errors"] == 0 and len(live.records) == PAIRS
    assert by_pair(tmp_path / "run") == by_pair(tmp_path / "live")


def test_a_line_that_stays_unreadable_is_an_error_naming_the_file_and_line(tmp_path):
    """The same two lines are hostile in every batch: after 3 batches each of the 2 requests is
    an `error` record saying why, naming the output file and the line; the 20 others are answered."""
    faults = BatchFaults(malformed_line=0, repeated_line=1, every_batch=True)
    with OpenAIServer(batch_faults=faults) as server:
        result = run(options(tmp_path, server, "run", batch=True), progress=False)
        assert [len(b["lines"]) for b in server.batches.values()] == [PAIRS, 2, 2]
    errors = {r["key"]: r["error"] for r in read_records(tmp_path / "run") if r["status"] == "error"}
    assert result.summary()["errors"] == 2 and len(result.records) == PAIRS
    # files: input file-1, its output file-2; input file-3, output file-4; input file-5, output file-6
    assert sorted(errors.values()) == sorted(
        [
            "BatchError: output file file-6 line 1 is not a batch line (a JSON object with a custom_id) "
            "(after 3 batches)",
            *(
                f"BatchError: output file file-6 line 2 and output file file-6 line 3 answer {key[:12]}… differently "
                "(after 3 batches)"
                for key, error in errors.items()
                if "differently" in error
            ),
        ]
    )


def test_a_torn_last_ledger_line_is_ignored_said_and_cut_off_before_the_next_batch(tmp_path, capsys):
    """A run stopped while writing batches.jsonl leaves half a line after batch_1's. The next run
    says so, polls batch_1 (which expired half done), and writes its second batch after batch_1's
    line, the torn half gone; a damaged line before the last is an error naming the file and line."""
    from medvqa.core.items import DataError

    with OpenAIServer(batch_hold=True, batch_faults=BatchFaults(expire_first=True)) as server:
        run(options(tmp_path, server, "run", batch=True, batch_wait_s=0.05), progress=False)
        path = tmp_path / "run" / "batches.jsonl"
        whole = path.read_text()
        path.write_text(whole + '{"batch_id": "batch_9", "keys": ["ab')
        capsys.readouterr()
        server.batch_hold = False
        result = run(options(tmp_path, server, "run", batch=True), progress=False)
        assert [len(b["lines"]) for b in server.batches.values()] == [PAIRS, PAIRS - PAIRS // 2]
    assert (
        capsys.readouterr().err == f"medvqa: {path}: line 2 was cut short (a run stopped while writing it): ignored\n"
    )
    assert result.summary()["errors"] == 0 and len(result.records) == PAIRS
    assert [b["batch_id"] for b in ledger(tmp_path / "run")] == ["batch_1", "batch_2"]
    assert path.read_text().startswith(whole) and path.read_text().endswith("\n")
    damaged = tmp_path / "other" / "batches.jsonl"  # a run still to ask, whose ledger's first line is damaged
    damaged.parent.mkdir()
    damaged.write_text('{"batch_id": "batch_1", "keys": ["ab"\n' + whole)
    with OpenAIServer() as server, pytest.raises(DataError) as raised:
        run(options(tmp_path, server, "other", batch=True), progress=False)
    assert str(raised.value) == f"{damaged}: record line 1: not a batch of this run (expected {{batch_id, keys, ...}})"


def mistral_options(tmp_path, server, name, **kw) -> RunOptions:
    return options(tmp_path, server, name, model="mistral/test", **kw)


def xai_options(tmp_path, server, name, **kw) -> RunOptions:
    return options(tmp_path, server, name, model="xai/test", **kw)


def test_mistral_batch_jobs_record_what_the_live_path_records_through_a_failed_line_and_an_expired_job(
    tmp_path, monkeypatch
):
    """Mistral's batch API through litellm's `MistralBatchesConfig` and `MistralFilesConfig`
    (litellm/llms/mistral/batches/transformation.py: `POST /v1/batch/jobs` with `input_files`,
    `endpoint` and the `model` once per job; statuses QUEUED, RUNNING, SUCCESS and
    TIMEOUT_EXCEEDED read as OpenAI's; output files OpenAI's lines). The first job (22 lines)
    times out after its first 11, of which lines 0, 5 and 10 fail (500): the second job holds
    the 3 failed and the 11 never run, 3 + 11 = 14 lines. Each line's body is the live request's
    body without its model (`seed` 0 sent as Mistral's `random_seed`, as litellm sends it live)."""
    faults = BatchFaults(expire_first=True, failed_line_every=5, slow_polls=1)
    with OpenAIServer(batch_faults=faults, keep_bodies=True) as server:
        live = run(mistral_options(tmp_path, server, "live", seed=0), progress=False)
        sent_live = sum(server.counts.values())
        result = run(mistral_options(tmp_path, server, "batch", batch=True, seed=0), progress=False)
        assert sum(server.counts.values()) == sent_live  # no live request from the batch run
        assert list(server.batches) == ["job-1", "job-2"]
        assert [len(b["lines"]) for b in server.batches.values()] == [PAIRS, 3 + 11]
        assert [b["body"]["model"] for b in server.batches.values()] == ["test", "test"]
        live_bodies = {content_key(b["messages"]): b for b in server.bodies}
        for line in server.batches["job-1"]["lines"]:
            assert set(line) == {"custom_id", "body"}  # Mistral's line: no method, no url
            sent = live_bodies[content_key(line["body"]["messages"])]
            assert {"model": "test", **line["body"]} == sent and sent["random_seed"] == 0
    assert result.summary()["errors"] == 0 and live.requested == PAIRS
    assert by_pair(tmp_path / "live") == by_pair(tmp_path / "batch")
    assert [len(b["keys"]) for b in ledger(tmp_path / "batch")] == [PAIRS, 14]


def test_mistral_lines_failed_in_every_job_are_error_records_after_three_jobs(tmp_path, monkeypatch):
    """Line 0 of every job's output file is cut short: its request is asked in 3 jobs (22, 1, 1
    lines), then recorded as an error naming the last output file and line; the 21 others are
    answered. Files: input file-1, output file-2; file-3, file-4; file-5, file-6."""
    with OpenAIServer(batch_faults=BatchFaults(malformed_line=0, every_batch=True)) as server:
        result = run(mistral_options(tmp_path, server, "run", batch=True), progress=False)
        assert [len(b["lines"]) for b in server.batches.values()] == [PAIRS, 1, 1]
    errors = [r["error"] for r in read_records(tmp_path / "run") if r["status"] == "error"]
    assert errors == [
        "BatchError: output file file-6 line 1 is not a batch line (a JSON object with a custom_id) (after 3 batches)"
    ]
    assert result.summary()["errors"] == 1 and len(result.records) == PAIRS


@pytest.mark.parametrize("options_of", [options, mistral_options, xai_options], ids=["openai", "mistral", "xai"])
def test_a_run_s_repeats_go_in_one_batch_and_record_what_live_repeats_record(tmp_path, monkeypatch, options_of):
    """`--batch --repeats 3`: one batch of 3 × 22 = 66 lines, each repeat's lines with its own
    seed (a sampling server draws each repeat's answer by it), where one batch per repeat was
    sent, one after another; the records are the live run's, repeat for repeat."""
    with OpenAIServer(sampling=True) as server:
        asked = {}
        for name, batch in (("live", False), ("batch", True)):
            asked[name] = options_of(tmp_path, server, name, repeats=3, seed=7, batch=batch)
            asked[name].backend_options = {**asked[name].backend_options, "temperature": 0.7}
        live = run(asked["live"], progress=False)
        run(asked["batch"], progress=False)
        assert len(server.batches) == 1
        (batch,) = server.batches.values()
        assert len(batch["lines"]) == 3 * PAIRS
        seeds = {line["body"].get("seed", line["body"].get("random_seed")) for line in batch["lines"]}
    assert len(seeds) == 3 and 7 in seeds  # repeat 0 asks with the run's seed, the others with their own
    assert len(live.records) == 3 * PAIRS

    def by_repeat(run_dir):
        return {(r["item_id"], r["condition"], r["repeat"]): {k: r[k] for k in COMPARED} for r in read_records(run_dir)}

    assert by_repeat(tmp_path / "live") == by_repeat(tmp_path / "batch")
    said: dict[tuple, set] = {}
    for r in read_records(tmp_path / "batch"):
        said.setdefault((r["item_id"], r["condition"]), set()).add(r["response"])
    assert any(len(answers) > 1 for answers in said.values())  # the repeats drew differently
    assert len(ledger(tmp_path / "batch")) == 1


def test_a_dry_run_prices_batch_requests_at_the_batch_api_s_prices_where_litellm_knows_them(tmp_path, monkeypatch):
    """openai/gpt-4o-mini: litellm's map holds $0.15 / $0.60 per million tokens live and
    `input_cost_per_token_batches` 7.5e-08, `output_cost_per_token_batches` 3e-07 (half); the
    same plan's cost is half the live one's. Mistral's batch prices are not in litellm's map:
    mistral/mistral-small-latest is priced at its live price ($0.15 / $0.60 per million), and says so."""
    from medvqa.core.run.plan import dry_run

    def plan(model, **kw):
        return dry_run(
            RunOptions(
                benchmark="jmed48k",
                model=model,
                sample=True,
                conditions="C+Q",
                repeats=2,
                run_dir=str(tmp_path / "never"),
                cache=False,
                **kw,
            )
        )

    live, batch = plan("openai/gpt-4o-mini"), plan("openai/gpt-4o-mini", batch=True)
    assert (live["price_source"], batch["price_source"]) == ("litellm", "litellm, batch prices")
    assert (
        batch["tokens"] == live["tokens"] and batch["requests"] == live["requests"] == 2 * 17
    )  # 17 items under C+Q, twice
    t = batch["tokens"]
    assert batch["cost_usd"] == pytest.approx(t["input"] * 7.5e-08 + t["output"] * 3e-07)
    assert batch["cost_usd"] == pytest.approx(live["cost_usd"] / 2)
    mistral = plan("mistral/mistral-small-latest", batch=True)
    assert mistral["price_source"] == "litellm, live prices: it has no batch prices for mistral/mistral-small-latest"
    assert mistral["cost_usd"] == pytest.approx(
        mistral["tokens"]["input"] * 1.5e-07 + mistral["tokens"]["output"] * 6e-07
    )
    assert not (tmp_path / "never").exists()


def test_xai_batches_record_what_the_live_path_records_through_a_failed_line_and_an_expired_batch(
    tmp_path, monkeypatch
):
    """xAI's batch API through litellm's `XAIBatchesHandler` (litellm/llms/xai/batches/
    transformation.py: `POST /v1/batches` with `{name, input_file_id}`, request counters instead
    of a status, results paged from `/v1/batches/{id}/results` and rewritten as OpenAI's lines).
    The first batch is cancelled by xAI, expired, after its first 11 requests ran, of which
    requests 0, 5 and 10 failed: its 8 answers are read from its results all the same (litellm
    gives no output file for a batch it reads as `failed`), and the second batch holds the 3
    failed and the 11 never run: 14 lines, read in pages of 10 (2 pages)."""
    faults = BatchFaults(expire_first=True, failed_line_every=5, slow_polls=1)
    with OpenAIServer(batch_faults=faults, keep_bodies=True, xai_page=10) as server:
        run(xai_options(tmp_path, server, "live"), progress=False)
        sent_live = sum(server.counts.values())
        result = run(xai_options(tmp_path, server, "batch", batch=True), progress=False)
        assert sum(server.counts.values()) == sent_live  # no live request from the batch run
        assert [len(b["lines"]) for b in server.batches.values()] == [PAIRS, 3 + 11]
        assert [b["body"] for b in server.batches.values()] == [
            {"name": "litellm-batch", "input_file_id": "file-1"},
            {"name": "litellm-batch", "input_file_id": "file-4"},  # (files 2 and 3: the fake's own record of batch 1)
        ]
        live_bodies = {content_key(b["messages"]): b for b in server.bodies}
        for line in server.batches["batch_1"]["lines"]:
            assert line["body"] == live_bodies[content_key(line["body"]["messages"])]  # the live body, model and all
    assert result.summary()["errors"] == 0
    assert by_pair(tmp_path / "live") == by_pair(tmp_path / "batch")
    assert [len(b["keys"]) for b in ledger(tmp_path / "batch")] == [PAIRS, 14]


def test_a_vllm_server_s_own_batch_api_records_what_its_live_path_records(tmp_path):
    """hosted_vllm/: litellm sends OpenAI's files and batches calls to the server
    (`OPENAI_COMPATIBLE_BATCH_AND_FILES_PROVIDERS` in litellm/types/utils.py), which a vLLM server
    with its online batch API serves in OpenAI's shapes (vllm/entrypoints/openai/batch/
    api_router.py and protocol.py: `BatchRequestInput` is `{custom_id, method, url, body}`). The
    first batch expires after 11 of its 22 lines, lines 0, 5 and 10 failed: 3 + 11 = 14 asked
    again. A server without it answers 501 "Batch API is not enabled": one error line naming the
    call and the server, nothing asked live."""
    vllm_options = {"model": "hosted_vllm/test"}
    with OpenAIServer(batch_faults=BatchFaults(expire_first=True, failed_line_every=5)) as server:
        run(replace(options(tmp_path, server, "live"), **vllm_options), progress=False)
        sent_live = sum(server.counts.values())
        result = run(replace(options(tmp_path, server, "batch", batch=True), **vllm_options), progress=False)
        assert sum(server.counts.values()) == sent_live
        assert [len(b["lines"]) for b in server.batches.values()] == [PAIRS, 3 + 11]
        assert {line["body"]["model"] for line in server.batches["batch_1"]["lines"]} == {"test"}
    assert result.summary()["errors"] == 0
    assert by_pair(tmp_path / "live") == by_pair(tmp_path / "batch")
    with OpenAIServer(batch_api=False) as server:
        with pytest.raises(ValueError) as raised:
            run(replace(options(tmp_path, server, "off", batch=True), **vllm_options), progress=False)
        assert sum(server.counts.values()) == 0 and not server.batches
    assert str(raised.value) == (
        f"--batch: create_file at {server.url} failed: InternalServerError: Error code: 501 - Batch API is not enabled"
    )


def test_a_run_with_repeats_that_stops_waiting_resumes_by_polling_its_one_batch(tmp_path):
    """`--repeats 2 --batch-wait`: the one batch (2 × 22 = 44 lines) is still held when the run
    stops waiting, so its 44 records are `missing`; the next run polls that batch and submits
    nothing, and every record of both repeats is answered."""
    with OpenAIServer(batch_hold=True) as server:
        run(options(tmp_path, server, "run", batch=True, batch_wait_s=0.05, repeats=2), progress=False)
        records = read_records(tmp_path / "run")
        assert len(records) == 2 * PAIRS and {r["status"] for r in records} == {"missing"}
        server.batch_hold = False
        run(options(tmp_path, server, "run", batch=True, repeats=2), progress=False)
        assert [len(b["lines"]) for b in server.batches.values()] == [2 * PAIRS]
    records = read_records(tmp_path / "run")
    assert sorted({r["repeat"] for r in records}) == [0, 1] and len(records) == 2 * PAIRS
    assert "missing" not in {r["status"] for r in records}

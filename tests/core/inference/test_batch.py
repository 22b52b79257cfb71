"""`--batch`: a run's requests through OpenAI's batch API (litellm's files and batches calls)
against the test server's fake of the files and batches endpoints, with faults: a failed line,
an expired batch, a slow batch. The batch path records what the live path records on the same
replies; the run directory keeps the batch ids; a run that stops waiting resumes by polling,
never by submitting again."""

from __future__ import annotations

import json

import pytest

from medvqa.core.errors import UsageError
from medvqa.core.run.options import RunOptions, run
from medvqa.core.run.store import read_records
from tests.openai_server import BatchFaults, OpenAIServer

MODEL = "openai/test"
COMPARED = ("response", "error", "predicted", "status", "correct", "usage")
PAIRS = 22  # jmed48k-sample under C+Q and C+Q+I


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-0000")


def options(tmp_path, server, name, **kw) -> RunOptions:
    return RunOptions(
        benchmark="jmed48k",
        model=MODEL,
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
        result = run(options(tmp_path, server, "run", batch=True), progress=False)
        sizes = [len(b["lines"]) for b in server.batches.values()]
        assert sizes == [PAIRS, 3 + 11]
        assert all(b["polls"] >= 3 for b in server.batches.values())  # in progress twice, then done
    records = read_records(tmp_path / "run")
    assert len(records) == PAIRS and {r["status"] for r in records} <= {"answered", "parse_failure", "refusal"}
    assert result.summary()["errors"] == 0
    assert [len(b["keys"]) for b in ledger(tmp_path / "run")] == [PAIRS, 14]


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


def test_a_provider_without_a_batch_api_is_refused_before_anything_is_sent(tmp_path):
    with OpenAIServer() as server:
        with pytest.raises(
            UsageError,
            match="--batch: hosted_vllm/test: medvqa sends batches through litellm for openai/, azure/ models only",
        ):
            run(
                RunOptions(
                    benchmark="jmed48k",
                    model="hosted_vllm/test",
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

"""Forced-guess requests: refused image-removed items asked again with permission to guess.

The new request renders the same item under `C+Q` with the benchmark's
`forced_guess_instruction` appended, and is recorded under its own condition label
(`C+Q/forced`), so the audit can impute refusals with the model's forced-guess accuracy.
"""

from __future__ import annotations

from ..benchmark import Benchmark
from ..conditions import FORCED_SUFFIX, IMAGE_REMOVAL
from ..inference.base import Backend, Request, backend_request_key
from ..items import DataError, Item

REMOVED = IMAGE_REMOVAL[1]
FORCED_CONDITION = REMOVED.value + FORCED_SUFFIX


def forced_guess_requests(
    benchmark: Benchmark, backend: Backend, records: list[dict], items_by_id: dict[str, Item]
) -> list[Request]:
    """One request per refused image-removed record (`C+Q` of an item whose images are
    available) that has no `C+Q/forced` record yet, in record order."""
    done = {r["item_id"] for r in records if r.get("condition") == FORCED_CONDITION}
    requests: list[Request] = []
    for record in records:
        if record.get("condition") != REMOVED.value or record.get("status") != "refusal":
            continue
        item = items_by_id.get(record["item_id"])
        if item is None:
            raise DataError("record names an item that is not in the data", record=record["item_id"])
        if item.id in done or not item.image_available:
            continue
        messages = benchmark.render(item, REMOVED, suffix=benchmark.forced_guess_instruction)
        schema = benchmark.response_schema(item)
        requests.append(
            Request(
                item=item,
                condition=FORCED_CONDITION,
                messages=messages,
                key=backend_request_key(backend, messages, schema),
                response_schema=schema,
            )
        )
        done.add(item.id)
    return requests

"""Loading a run's items: the benchmark's split with the run's selections (`load_items`), as a
run and every saved run read them back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..items import Item

# the keys of a manifest's `load` that `load_items` reads itself; any other goes to the loader as a keyword
LOAD_KEYS = ("data", "split", "sample", "select", "limit")


def load_items(benchmark: Any, opts: dict[str, Any]) -> tuple[list[Item], str]:
    """(the items `opts` select from `benchmark`, the split they are from: "sample" for the
    bundled sample, else the split asked for or the benchmark's default)."""
    split = "sample" if opts.get("sample") else opts.get("split")
    data = Path(opts["data"]) if opts.get("data") else None
    # a manifest written before `select` existed keeps its loader's own keywords: passed as given
    legacy = {k: v for k, v in opts.items() if k not in LOAD_KEYS and v is not None}
    items = benchmark.load(data, split, select=opts.get("select"), **legacy)
    if opts.get("limit") is not None:
        items = items[: opts["limit"]]
    return items, split or (benchmark.default_split if data else "sample")

"""Values computed once per pair of objects, found again by the objects' identity.

Items are immutable but not hashable cheaply (hashing would walk every field), and the
scorer sees each item hundreds of thousands of times in a re-score: identity is the cheap key.
Each entry holds its objects, so their ids stay unique while the entry lives.
"""

from __future__ import annotations

from typing import Any, Callable


class IdentityMemo:
    """`entries` maps (id(a), id(b)) to (a, b, value). Hot loops may read it directly (check that
    both objects are the ones stored) and call `get` on a miss."""

    def __init__(self, limit: int = 65536):
        self.entries: dict[tuple[int, int], tuple[Any, Any, Any]] = {}
        self.limit = limit

    def get(self, a: Any, b: Any, compute: Callable[[Any, Any], Any]) -> Any:
        """`compute(a, b)`, computed once while (a, b) are the same objects."""
        key = (id(a), id(b))
        hit = self.entries.get(key)
        if hit is not None and hit[0] is a and hit[1] is b:
            return hit[2]
        if len(self.entries) >= self.limit:
            self.entries.clear()
        value = compute(a, b)
        self.entries[key] = (a, b, value)
        return value

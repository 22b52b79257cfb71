"""Tokens and cost per condition: pure functions of records.

Every record keeps its request's `usage` (`prompt_tokens`, `completion_tokens`, the
`reasoning_tokens` among them where the provider reports them, and `cost_usd` where a price is
known: `--price` or litellm's price map). `usage_by_condition` sums them per condition; the run
summary, `report` and `compare` show these sums. A record answered from the response cache keeps
the usage of the answer as first asked (`cached` counts them): its tokens were paid once.

What a server says it used is read as untrusted: a token count is a whole number from 0 to
2**53 (what every JSON reader holds exactly) and a cost a finite number from 0 (`token_count`,
`usage_cost`). Anything else (NaN, Infinity, a negative or fractional number, text) is kept as
null (`recorded_usage`, applied to every record written), left out of every sum, and counted in
a warning (`usage_warning`), so that one hostile answer can neither make a sum negative or
absurd nor make a file that is not JSON.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from .results import condition_order

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")
MAX_TOKENS = 2**53


def token_count(value: Any) -> int | None:
    """`value` when it is a token count (a whole number, 0 to `MAX_TOKENS`, not true/false); None
    otherwise."""
    return value if type(value) is int and 0 <= value <= MAX_TOKENS else None


def usage_cost(value: Any) -> float | None:
    """`value` as a cost in USD when it is a finite number from 0 (not true/false); None otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def recorded_usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """A response's usage as its record keeps it: every count checked by `token_count` and the
    cost by `usage_cost`, a value that fails kept as None (null)."""
    return {k: usage_cost(v) if k == "cost_usd" else token_count(v) for k, v in (usage or {}).items()}


def usage_warning(records: Iterable[Mapping]) -> str | None:
    """One line when some records' usage holds a null a server's unreadable number left
    (`recorded_usage`), naming the fields; None when none does."""
    fields: set[str] = set()
    n = 0
    for r in records:
        bad = [k for k, v in (r.get("usage") or {}).items() if v is None]
        n += bool(bad)
        fields.update(bad)
    if not n:
        return None
    return (
        f"warning: {n} answers came with usage that is no count ({', '.join(sorted(fields))}: negative, "
        "fractional, NaN, Infinity or text); kept as null and left out of the token and cost sums"
    )


def usage_by_condition(records: Iterable[Mapping]) -> dict[str, dict]:
    """{condition: {prompt_tokens, completion_tokens, reasoning_tokens, cost_usd, cached}}; empty
    when no record holds any usage (a baseline's, an imported run's)."""
    out: dict[str, dict] = {}
    seen = False
    for r in records:
        usage = r.get("usage")
        row = out.get(r["condition"]) or out.setdefault(
            r["condition"], {**{k: 0 for k in TOKEN_FIELDS}, "cost_usd": 0.0, "cached": 0}
        )
        row["cached"] += bool(r.get("cached"))
        if not usage:  # (a baseline's or an imported record: nothing to add)
            continue
        for k in TOKEN_FIELDS:
            n = token_count(usage.get(k)) or 0
            row[k] += n
            seen = seen or bool(n)
        row["cost_usd"] += usage_cost(usage.get("cost_usd")) or 0.0
    if not seen:
        return {}
    return {
        c: {**v, "cost_usd": round(v["cost_usd"], 8)}
        for c, v in sorted(out.items(), key=lambda kv: condition_order(kv[0]))
    }


def usage_columns(frame, by_condition: Mapping[str, Mapping]):
    """A by-condition table with each condition's tokens and cost beside it (`report`)."""
    frame = frame.copy()
    for k in (*TOKEN_FIELDS, "cost_usd"):
        frame[k] = [(by_condition.get(c) or {}).get(k) for c in frame["condition"]]
    return frame

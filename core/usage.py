"""Tokens and cost per condition: pure functions of records.

Every record keeps its request's `usage` (`prompt_tokens`, `completion_tokens`, the
`reasoning_tokens` among them where the provider reports them, and `cost_usd` where a price is
known: `--price` or litellm's price map). `usage_by_condition` sums them per condition; the run
summary, `report` and `compare` show these sums. A record answered from the response cache keeps
the usage of the answer as first asked (`cached` counts them): its tokens were paid once.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from medvqa.core.results import condition_order

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


def usage_by_condition(records: Iterable[Mapping]) -> dict[str, dict]:
    """{condition: {prompt_tokens, completion_tokens, reasoning_tokens, cost_usd, cached}}; empty
    when no record holds any usage (a baseline's, an imported run's)."""
    out: dict[str, dict] = {}
    seen = False
    for r in records:
        usage = r.get("usage") or {}
        row = out.setdefault(r["condition"], {**{k: 0 for k in TOKEN_FIELDS}, "cost_usd": 0.0, "cached": 0})
        for k in TOKEN_FIELDS:
            n = usage.get(k) or 0
            row[k] += n
            seen = seen or bool(n)
        row["cost_usd"] += float(usage.get("cost_usd") or 0.0)
        row["cached"] += bool(r.get("cached"))
    if not seen:
        return {}
    return {c: {**v, "cost_usd": round(v["cost_usd"], 8)} for c, v in sorted(out.items(), key=lambda kv: condition_order(kv[0]))}


def usage_columns(frame, by_condition: Mapping[str, Mapping]):
    """A by-condition table with each condition's tokens and cost beside it (`report`)."""
    frame = frame.copy()
    for k in (*TOKEN_FIELDS, "cost_usd"):
        frame[k] = [(by_condition.get(c) or {}).get(k) for c in frame["condition"]]
    return frame

"""`--dry-run`: what a run would ask, and what it would cost, before anything is sent.

`dry_run(options)` plans the run exactly as `medvqa run` does (`runner.plan_requests`: the
same pairs, repeats and request keys) and counts, without asking anything or writing a file
(but the perturbed images of `--variants`, made into the cache folder as the run would make
them: their bytes are in the request keys and the token counts, and the run reuses them).
The repeats past those the run's records or the response cache hold any answer of are counted,
not built: each sends every pair's messages once more, so `--repeats 1000` costs a plan no more
than the repeats already asked.

- the pairs of the run, those already recorded in its directory (kept on resume), and the
  requests still to ask, of which the response cache already answers some: the rest are the
  `requests` the run will send (and `preflight`, the one check request a backend sends first);
- the input tokens of those requests, images included, counted by litellm's `token_counter`
  for the model (`tokenizer` says whether litellm knows the model; where it does not, its
  count is its default tokenizer's, and the plan says so);
- the output tokens: `TYPICAL_REPLY_TOKENS` per request (the answer object every template asks
  for, `{"answer": ["a"]}`, is about 10 tokens; a model that explains or reasons writes more),
  never more than `max_tokens`, and `max_tokens` × requests as the most it can be;
- the cost, from `--price` or litellm's price map (`cost_per_token`), else unknown.

litellm is imported only here and in the backend, never at start-up.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

TYPICAL_REPLY_TOKENS = 20


def dry_run(options) -> dict:
    """The plan of the run `options` describe (see the module's docstring)."""
    from ..files import default_cache_path
    from ..inference.base import Backend
    from ..inference.images import to_openai
    from ..results import condition_order
    from .options import prepare
    from .runner import plan_requests
    from .store import newest_per_pair, read_all_records
    from .variants import variant_messages

    # a response cache not made yet has nothing in it: it stays unmade (a plan writes nothing)
    cache_file = Path(options.cache_path) if options.cache_path else default_cache_path()
    spec = prepare(options, cache=None if cache_file.is_file() else False)
    backend = spec.backend
    try:
        run_dir = Path(spec.run_dir)
        existing = newest_per_pair(read_all_records(run_dir)) if (run_dir / "records.jsonl").is_file() else []
        # plan the repeats the run or the cache may hold; each one past them is counted, not built
        planned = min(spec.repeats, 2 + max((r.get("repeat") or 0 for r in existing), default=-1))
        while True:
            kept, todo, _ = plan_requests(spec, existing, repeats=planned)
            cached: set[str] = set()
            if spec.cache is not None and backend.cacheable and todo:
                cached = set(spec.cache.get_many([r.key for r in todo]))
            if planned == spec.repeats or not any(r.repeat == planned - 1 and r.key in cached for r in todo):
                break
            planned = min(spec.repeats, 2 * planned)
    finally:
        if spec.cache is not None:
            spec.cache.close()
    pairs = spec.pairs()  # (item, record label, the item as shown), the shard's and the variants'
    more = spec.repeats - planned  # repeats nothing holds yet: every pair of each is sent
    to_send = [r for r in todo if r.key not in cached]
    has_preflight = type(backend).preflight is not Backend.preflight
    per_condition: dict[str, Counter] = {}
    for r in todo:
        c = per_condition.setdefault(r.condition, Counter())
        c["to_ask"] += 1
        c["cached"] += r.key in cached
    for _, label, _ in pairs if more else ():
        per_condition.setdefault(label, Counter()).update(to_ask=more, cached=0)
    for rec in kept:
        per_condition.setdefault(rec["condition"], Counter())["recorded"] += 1
    plan_doc: dict[str, Any] = {
        "run_dir": str(spec.run_dir),
        "benchmark": spec.benchmark.name,
        "language": spec.benchmark.active_language,
        "model": backend.model,
        "repeats": spec.repeats,
        "pairs": len(kept) + len(todo) + more * len(pairs),
        "recorded": len(kept),
        "to_ask": len(todo) + more * len(pairs),
        "cached": len(todo) - len(to_send),
        "requests": len(to_send) + more * len(pairs),
        "preflight": int(bool(to_send or more) and has_preflight),
        "conditions": {k: dict(v) for k, v in sorted(per_condition.items(), key=lambda kv: condition_order(kv[0]))},
    }
    if not backend.cacheable:  # a baseline: its answers cost nothing and reach no model
        plan_doc.update(
            tokens=None, cost_usd=None, note=f"{backend.model} is a baseline: no model is asked, nothing is spent"
        )
        return plan_doc
    # the repeats of a pair send the same messages: each pair's tokens are counted once, times its requests
    sent = Counter((r.item.id, r.condition) for r in to_send)
    messages = {(r.item.id, r.condition): r.messages for r in to_send}
    for item, label, shown in pairs if more else ():
        sent[(item.id, label)] += more
        if (item.id, label) not in messages:
            messages[(item.id, label)] = variant_messages(spec.benchmark, label, shown)
    side = getattr(backend, "max_image_side", None)
    plan_doc.update(estimate_cost(backend, [(to_openai(messages[k], side), n) for k, n in sent.items()]))
    return plan_doc


def estimate_cost(backend, payloads: list[tuple[list[dict], int]]) -> dict:
    """Input and output tokens and cost of sending each payload of `payloads` (messages, how many
    times) through `backend`."""
    from ..inference.litellm_backend import import_litellm

    live = getattr(backend, "live", backend)  # a batch backend's live one holds its settings
    batch = live is not backend
    litellm = getattr(live, "litellm", None) or import_litellm()  # the backend's registers its prices
    target = backend.model
    try:
        info = litellm.get_model_info(target)
    except Exception:
        info = {}
    known = _shipped(litellm, target)
    n_in = sum(n * litellm.token_counter(model=target, messages=messages) for messages, n in payloads)
    requests = sum(n for _, n in payloads)
    max_tokens = (backend.params or {}).get("max_tokens") or (backend.params or {}).get("max_completion_tokens")
    typical = min(TYPICAL_REPLY_TOKENS, max_tokens) if max_tokens else TYPICAL_REPLY_TOKENS
    n_out = typical * requests
    out_max = max_tokens * requests if max_tokens else None
    price = getattr(live, "price", None)
    cost, cost_max, source = None, None, None
    if price:
        cost = (n_in * price[0] + n_out * price[1]) / 1e6
        cost_max = (n_in * price[0] + out_max * price[1]) / 1e6 if out_max is not None else None
        source = "--price"
    elif known and info.get("input_cost_per_token") is not None:  # litellm's own price, not our zero
        p_in, p_out = float(info.get("input_cost_per_token") or 0), float(info.get("output_cost_per_token") or 0)
        source = "litellm"
        if batch and info.get("input_cost_per_token_batches") is not None:  # the batch API's own prices
            p_in = float(info["input_cost_per_token_batches"])
            p_out = float(info.get("output_cost_per_token_batches") or p_out)
            source = "litellm, batch prices"
        elif batch:  # said, so that a live price is not read as the batch's
            source = f"litellm, live prices: it has no batch prices for {target}"
        cost = n_in * p_in + n_out * p_out
        cost_max = n_in * p_in + out_max * p_out if out_max is not None else None
    tokenizer = (
        f"litellm's for {target}"
        if known
        else f"litellm does not know {target}: its default tokenizer's count (images as it counts them)"
    )
    return {
        "tokens": {"input": n_in, "output": n_out, "output_max": out_max, "typical_reply_tokens": typical},
        "tokenizer": tokenizer,
        "cost_usd": cost,
        "cost_usd_max": cost_max,
        "price_source": source or f"unknown: litellm has no price for {target} (give --price IN,OUT)",
    }


def _shipped(litellm, target: str) -> bool:
    """Whether litellm's own model map (as shipped, not as medvqa or a run registered prices in
    this process) holds `target`."""
    try:
        shipped = litellm.get_model_cost_map(url="")  # the local copy: LITELLM_LOCAL_MODEL_COST_MAP
        model, _, _, _ = litellm.get_llm_provider(target)
    except Exception:
        return False
    return target in shipped or model in shipped


def plan_lines(plan: dict) -> list[str]:
    """A plan as the lines `--dry-run` prints."""
    lang = f" ({plan['language']})" if plan.get("language") else ""
    rep = f", {plan['repeats']} repeats" if plan["repeats"] > 1 else ""
    lines = [
        f"{plan['benchmark']}{lang} × {plan['model']} → {plan['run_dir']}{rep}",
        f"  pairs {plan['pairs']}: {plan['recorded']} already recorded, {plan['to_ask']} to ask, of which "
        f"{plan['cached']} in the cache: {plan['requests']} requests to send"
        + (f" (and {plan['preflight']} preflight request)" if plan["preflight"] else ""),
    ]
    if plan.get("note"):
        lines.append(f"  {plan['note']}")
    elif plan.get("tokens") is not None:
        t = plan["tokens"]
        most = f" (at most {t['output_max']:,} at max_tokens)" if t["output_max"] is not None else ""
        lines.append(
            f"  tokens: {t['input']:,} input ({plan['tokenizer']}), {t['output']:,} output at "
            f"{t['typical_reply_tokens']} a reply{most}"
        )
        if plan["cost_usd"] is not None:
            most = f", at most ${plan['cost_usd_max']:.4f}" if plan.get("cost_usd_max") is not None else ""
            lines.append(f"  cost: ${plan['cost_usd']:.4f}{most} (prices: {plan['price_source']})")
        else:
            lines.append(f"  cost: {plan['price_source']}")
    return lines


def dry_run_set(study) -> dict:
    """The plan of every experiment of an eval set (`evalset.EvalSet`) and the totals: what
    `medvqa eval --dry-run` prints. An experiment that cannot be planned (its data, its model)
    is named with the reason."""
    from .evalset_run import run_options

    plans, failed = [], []
    for e in study.experiments:
        try:
            plans.append(dry_run(run_options(study, e, ["medvqa", "eval", "--dry-run"])))
        except Exception as exc:  # planned like a run fails: named, the others planned
            failed.append({"experiment": e.label, "failure": str(exc)})
    costs = [p.get("cost_usd") for p in plans if p.get("tokens") is not None]
    total = {
        "experiments": len(study.experiments),
        "pairs": sum(p["pairs"] for p in plans),
        "recorded": sum(p["recorded"] for p in plans),
        "cached": sum(p["cached"] for p in plans),
        "requests": sum(p["requests"] for p in plans),
        "preflight": sum(p["preflight"] for p in plans),
        "input_tokens": sum((p.get("tokens") or {}).get("input", 0) for p in plans),
        "output_tokens": sum((p.get("tokens") or {}).get("output", 0) for p in plans),
        "cost_usd": sum(c for c in costs if c is not None),
        "cost_unknown": sum(c is None for c in costs),
    }
    out = {"study_dir": str(study.study_dir), "plans": plans, "failed": failed, "total": total}
    if study.exam_dates:  # read from the records after the compare: no request, no cost
        out["contamination"] = {
            "exam_dates": True,
            "cutoffs": dict(study.cutoffs),
            "files": [str(study.study_dir / name) for name in ("contamination.md", "contamination.json")],
            "requests": 0,
        }
    return out

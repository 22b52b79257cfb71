"""Judging free-text answers with a model: a saved run's records in, verdicts appended.

A benchmark whose gold answers are free text declares a `JudgePrompt` (`Benchmark.judge`):
the messages a judge model sees for one record, and how its reply reads as a verdict (1 correct,
0 incorrect, None unreadable). `judge_run` (`run/judge.py`) sends those messages through the same inference layer
as model calls (`plugins.get_backend`: concurrency, retries, preflight), with the same
content-addressed response cache (the prompt's hash is part of every key), and appends each
judged record to `records.jsonl` under the run's lock, so an interrupted judging resumes and a
record already judged by that model under that prompt costs no call.

A judged record carries `judgements` (`{judge model: {verdict, response, error, key,
prompt_hash, ...}}`) and `judge` (the model whose verdict counts); its `correct` is that
verdict, and a judge error (unreadable after `max_attempts`, or a failed request) is never
correct. `apply_verdict` re-applies it after re-scoring. `judge_agreement` compares two judges.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal, TypedDict

from ..items import Item
from ..messages import Message

JUDGED_RULE = "judge"
JUDGE_ERROR_RULE = "judge-error"
# Whatever else a backend is given, a judge's reply is prose ending in a verdict: no JSON mode.
JUDGE_BACKEND_DEFAULTS = {"response_format": "none"}

# A judge's reading of a reply: 1 correct, 0 incorrect (None where the reply cannot be read).
Verdict = Literal[0, 1]


class Judgement(TypedDict):
    """What one judge model made of one record: `record["judgements"][model]`."""

    verdict: Verdict | None  # None: unreadable after `max_attempts`, or the request failed
    response: str | None  # the judge's reply
    error: str | None
    key: str  # the judge request's cache key
    prompt: str
    prompt_version: str
    prompt_hash: str
    cached: bool
    attempts: int  # requests made for it (0: from the cache)


class JudgePrompt:
    """What a judge model is shown for one record, and how its reply is read.

    Subclass it: set `name` and `version`, put every fixed word of the prompt in `template`
    (hashed, with the name and version, into `hash`), and implement `messages` and `verdict`.
    """

    name: str = "judge"
    version: str = "1"
    template: str = ""
    # an unreadable verdict is asked again, up to this many requests in all
    max_attempts: int = 3

    @property
    def hash(self) -> str:
        data = json.dumps([self.name, self.version, self.template], ensure_ascii=False)
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    def messages(self, item: Item, record: dict) -> list[Message] | None:
        """The judge's messages for `record` of `item`; None when the record is not judged
        (its gold is not free text)."""
        raise NotImplementedError

    def verdict(self, text: str | None) -> Verdict | None:
        """1 (correct), 0 (incorrect) or None (the reply cannot be read)."""
        raise NotImplementedError


def apply_verdict(record: dict) -> dict:
    """`record` with `correct` and `rule` from the verdict of its judge, when it has one; a
    judge error is incorrect. Records of non-answers and unjudged records are returned as they
    are."""
    judge = record.get("judge")
    judged = (record.get("judgements") or {}).get(judge) if judge else None
    if judged is None or record.get("status") != "answered":
        return record
    verdict = judged.get("verdict")
    return {**record, "correct": verdict == 1, "rule": JUDGED_RULE if verdict in (0, 1) else JUDGE_ERROR_RULE}


def is_judged(record: dict, model: str, prompt_hash: str) -> bool:
    done = (record.get("judgements") or {}).get(model)
    if not done:
        return False
    return done.get("prompt_hash") == prompt_hash and done.get("verdict") in (0, 1)


def cohen_kappa(table: dict[str, int]) -> float | None:
    """Cohen's kappa of a 2×2 table of two raters' 0/1 verdicts: keys "11", "10", "01", "00"
    (first rater, second rater). None when chance agreement is 1 (both raters constant and
    equal), where kappa is undefined."""
    a, b, c, d = (table.get(k, 0) for k in ("11", "10", "01", "00"))
    n = a + b + c + d
    if n == 0:
        return None
    observed = (a + d) / n
    expected = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def judge_agreement(records: list[dict]) -> dict:
    """For the judged records of a run: each judge's accuracy (judge errors incorrect) and, for
    every pair of judges, the records both read, their 2×2 table, agreement and Cohen's kappa."""
    judged = [r for r in records if r.get("judgements")]
    models = sorted({m for r in judged for m in r["judgements"]})
    accuracy = {}
    for m in models:
        verdicts = [r["judgements"][m].get("verdict") for r in judged if m in r["judgements"]]
        accuracy[m] = {
            "n": len(verdicts),
            "correct": sum(v == 1 for v in verdicts),
            "accuracy": sum(v == 1 for v in verdicts) / len(verdicts) if verdicts else None,
            "judge_errors": sum(v not in (0, 1) for v in verdicts),
        }
    pairs = []
    for i, first in enumerate(models):
        for second in models[i + 1 :]:
            table = {"11": 0, "10": 0, "01": 0, "00": 0}
            for r in judged:
                v1, v2 = (r["judgements"].get(m, {}).get("verdict") for m in (first, second))
                if v1 in (0, 1) and v2 in (0, 1):
                    table[f"{v1}{v2}"] += 1
            n = sum(table.values())
            pairs.append(
                {
                    "judges": [first, second],
                    "n": n,
                    "table": table,
                    "agreement": (table["11"] + table["00"]) / n if n else None,
                    "kappa": cohen_kappa(table),
                }
            )
    return {"judges": models, "n_judged": len(judged), "accuracy": accuracy, "pairs": pairs}


def agreement_tables(doc: dict):
    """`judge_agreement` as tables (`medvqa report RUN --judges`): each judge's accuracy, and
    each pair's agreement, Cohen's kappa and 2×2 table."""
    import pandas as pd

    from ..render import Table, Tables

    accuracy = pd.DataFrame(
        [[m, a["n"], a["accuracy"], a["judge_errors"]] for m, a in doc["accuracy"].items()],
        columns=["judge", "n", "accuracy", "judge errors"],
    )
    pairs = pd.DataFrame(
        [
            [*p["judges"], p["n"], p["agreement"], p["kappa"], *(p["table"][k] for k in ("11", "10", "01", "00"))]
            for p in doc["pairs"]
        ],
        columns=["judge a", "judge b", "n", "agreement %", "Cohen's kappa", "both 1", "1/0", "0/1", "both 0"],
    )
    return Tables(
        [
            Table("accuracy", f"Judged records: {doc['n_judged']}", accuracy),
            Table("agreement", "Agreement between judges", pairs, formats={"agreement %": "pct", "Cohen's kappa": "p"}),
        ]
    )

"""The published VLMEvalKit verdicts beside medvqa's reading of the same replies: the assisted
reading a result table's extractor column gives (`published_reading`), the published accuracy
(`published_accuracy`, from `<table>_acc.csv` or the `hit` column), and `reconcile`, which names
the cause of every item whose verdict differs from the published `hit` (`CAUSES`) and what else
the published log says (`NOTES`). The importer (`importer.py`) writes them into the run's manifest.
"""

from __future__ import annotations

import re
from pathlib import Path

import medvqa
from medvqa import DataError

from .matching import can_infer, match_option
from .sources import Source

PUBLISHED_SOURCE = "vlmevalkit-result"


LOG_PREFIX = "Match Log: "


PREFETCH_FAILED = "Failed in Prefetch"  # VLMEvalKit's log where matching failed and no extractor ran


# the causes a difference between medvqa's verdict and the published `hit` is named by
CAUSES = {
    "empty-answer-column": "published `hit` 0 on {rows} whose reply names the gold option: the published verdicts "
    "compare with the empty `answer` column, not with `correct_option`",
    "quantifier-check": 'published `extracted` differs on {rows} where medvqa\'s matching reads "A" in a reply '
    'holding a lone "A": VLMEvalKit as the authors ran it asked its extractor model there (run '
    'with VERBOSE set, it takes a lone "A" among more than three words for an article), which '
    "named another option",
    "matching-version": "published `extracted` differs on {rows} where medvqa's matching (the one option letter "
    "with at most three words after it, else the one option text) reads another option: "
    "VLMEvalKit as the authors ran it did not read the reply so, and its extractor model named "
    "another option",
    "unread": "published `hit` 1 on {rows} whose reply neither medvqa's matching nor a published extractor "
    "option reads",
    "unexplained": "medvqa's verdict differs from the published `hit` on {rows} for no cause named here",
}


# what is named beside the differences of verdicts (they change no verdict)
NOTES = {
    "vlmevalkit-matched": "VLMEvalKit's matching read {replies} (its `log` repeats the reply) that medvqa's "
    "matching (a lone letter with at most three words after it) leaves unread, {gold} of them "
    "naming the gold option: a lone letter with more words after it, or an option's text in a "
    "reply longer than twice the options, both of which these runs' matching read; the table "
    "has no extractor column to read them",
    "prefetch-failed": "VLMEvalKit's matching failed on {rows} and no extractor ran (`log`: \"Failed in "
    'Prefetch"): published `hit` 0',
}


def published_reading(item, published: str, extractor: str | None) -> dict:
    """The assisted reading (`medvqa.Record.assisted`) of a reply the strict reader could not read,
    from the option VLMEvalKit's extractor model named in the result table (`extracted`); an output
    that names no option of the item ("I") is a reading that could not tell (`predicted` null),
    incorrect, as it was a miss in VLMEvalKit's `hit`."""
    key = published.upper() if published.upper() in {o.key for o in item.options} else None
    return {
        "predicted": [key] if key else None,
        "correct": key is not None and (key,) in item.gold.alternatives,
        "source": PUBLISHED_SOURCE,
        "extractor": extractor,
        "response": published,
    }


def published_accuracy(source: Source) -> dict | None:
    """The published accuracy: from `<table>_acc.csv` beside the result table where it exists
    (its `Overall`), else the mean of the table's `hit` column; None without either."""
    n = len(source.rows)
    hits = [_hit(r, source.file) for r in source.rows] if source.rows and "hit" in source.rows[0] else None
    out = None
    if hits is not None and n:
        out = {"accuracy": sum(hits) / n, "correct": sum(hits), "n": n, "source": "hit"}
    acc = acc_csv(source.file)
    if acc is not None:
        rows = medvqa.read_table(acc, ("Overall",))
        try:
            value = float(rows[0]["Overall"])
        except (IndexError, ValueError):
            raise DataError("no accuracy in its column Overall", file=acc, record="row 2") from None
        out = {
            **(out or {}),
            "accuracy": value,
            "correct": round(value * n),
            "n": n,
            "source": acc.name,
            **({"hit_correct": sum(hits)} if hits is not None else {}),
        }
    return out


def acc_csv(file: Path) -> Path | None:
    """`<model>_<country>_<version>_acc.csv` beside a result table, if there."""
    m = re.fullmatch(
        r"(?P<stem>.+?_(?:brazil|israel|japan|spain)_(?:local|english))(?:_.+?_result)?\.\w+", file.name, re.IGNORECASE
    )
    candidate = file.with_name(f"{m['stem']}_acc.csv") if m else None
    return candidate if candidate is not None and candidate.is_file() else None


def _hit(row: dict, file: Path | None = None) -> int:
    value = str(row.get("hit", "")).strip()
    try:
        return int(float(value)) if value else 0
    except ValueError:
        raise DataError(f"hit must be 0 or 1, got {value!r}", file=file, record=f"index {row.get('index')}") from None


def _log_body(row: dict) -> str | None:
    log = str(row.get("log", ""))
    if not log.startswith(LOG_PREFIX):
        return None
    body = log[len(LOG_PREFIX) :]
    return body[:-2] if body.endswith(". ") else body


def reconcile(source: Source, answers: list[tuple], records: list[dict]) -> dict:
    """medvqa's reading beside the published one: the published accuracy, medvqa's strict and
    assisted correct counts, every item whose verdict differs from the published `hit` grouped
    by its cause (`CAUSES`), and what else the published log says (`NOTES`)."""
    from medvqa.metrics import read

    assisted = {r["item_id"]: r for r in read(records, "assisted") if r["condition"] == source.condition}
    strict = {r["item_id"]: r for r in records if r["condition"] == source.condition}
    has_hit = bool(source.rows) and "hit" in source.rows[0]
    has_extracted = bool(source.rows) and "extracted" in source.rows[0]
    causes: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    extractor_items, differs = [], []
    gold_named = 0
    for row, (item, _, text, extra) in zip(source.rows, answers):
        mine, plain = assisted[item.id], strict[item.id]
        if extra:
            extractor_items.append(item.id)
        choices = {o.key: o.text for o in item.options}
        matched = can_infer(text or "", choices) if text else None
        published = str(row.get("extracted", "")).strip().upper()
        if has_extracted and published and matched is not None and matched != published:
            differs.append({"item_id": item.id, "matching": matched, "published": published})
        log = _log_body(row)
        if log is not None and not has_extracted:
            if log.startswith(PREFETCH_FAILED):
                notes.setdefault("prefetch-failed", []).append(item.id)
            elif log == text and plain["status"] == "parse_failure":
                notes.setdefault("vlmevalkit-matched", []).append(item.id)
                gold_named += (can_infer_lenient(text, choices),) in item.gold.alternatives
        if not has_hit:
            continue
        hit = bool(_hit(row, source.file))
        if hit == bool(mine["correct"]):
            continue
        if not hit and not str(row.get("answer", "")).strip() and not has_extracted:
            cause = "empty-answer-column"
        elif has_extracted and matched is not None and matched != published:
            cause = (
                "quantifier-check"
                if match_option(text, choices, quantifier_check=True) is None and matched == "A"
                else "matching-version"
            )
        elif hit and mine["status"] == "parse_failure":
            cause = "unread"
        else:
            cause = "unexplained"
        causes.setdefault(cause, []).append(item.id)
    differences = [
        {"cause": c, "n": len(ids), "items": ids, "message": CAUSES[c].format(**_counted(len(ids)))}
        for c, ids in causes.items()
    ]
    differences += [
        {
            "cause": c,
            "n": len(ids),
            "items": ids,
            "verdicts_differ": False,
            "message": NOTES[c].format(**_counted(len(ids)), gold=gold_named),
        }
        for c, ids in notes.items()
    ]
    published = published_accuracy(source)
    n = len(answers)
    counts = {
        "strict_correct": sum(bool(strict[it.id]["correct"]) for it, *_ in answers),
        "assisted_correct": sum(bool(assisted[it.id]["correct"]) for it, *_ in answers),
        "n": n,
    }
    if published is not None:
        published = {
            **published,
            "medvqa_assisted_correct": counts["assisted_correct"],
            "medvqa_strict_correct": counts["strict_correct"],
            "difference": counts["assisted_correct"] - published["correct"],
        }
        if "empty-answer-column" in causes:  # the published number measures the empty column, not the model
            published["artifact"] = "empty-answer-column"
        if "hit_correct" in published and published["hit_correct"] != published["correct"]:
            differences.append(
                {
                    "cause": "acc-csv",
                    "n": abs(published["hit_correct"] - published["correct"]),
                    "items": [],
                    "verdicts_differ": False,
                    "message": f"the published {published['source']} counts {published['correct']} "
                    f"correct, the table's `hit` column {published['hit_correct']}",
                }
            )
    return {
        "extractor_items": extractor_items,
        "differs_from_published": differs,
        "published": {source.condition: published} if published is not None else {},
        "differences": differences,
    }


def _counted(n: int) -> dict[str, str]:
    return {"n": str(n), "rows": f"{n} row" + ("s" * (n != 1)), "replies": f"{n} repl" + ("ies" if n != 1 else "y")}


def can_infer_lenient(text: str, choices: dict) -> str | None:
    """The one option letter of a reply, wherever it stands (VLMEvalKit's matching at 18fc37a):
    only to say how many of the replies medvqa leaves unread name the gold."""
    words = text.translate(str.maketrans({c: " " for c in ".()[],:;!*#{}"})).split()
    found = [k for k in choices if k in words]
    return found[0] if len(found) == 1 else None

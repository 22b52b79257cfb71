"""Cohorts of models: which model is in which cohort (`parse_cohorts`, from a file's
`{cohort: [model, ...]}` or `{model: cohort}`) and each cohort's paired rows, the means of its
member models' rows (`cohort_rows`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..items import DataError
from .pairs import STATES, mean_or_none


def parse_cohorts(data: Any, source: str | Path = "cohort file") -> dict[str, str]:
    """Model → cohort from `{cohort: [model, ...]}` or `{model: cohort}`."""
    if not isinstance(data, dict) or not data:
        raise DataError("expected a mapping {cohort: [model, ...]} or {model: cohort}", file=source)
    out: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, list) and all(isinstance(m, str) for m in value):
            for model in value:
                if model in out and out[model] != str(key):
                    raise DataError(
                        f"model {model!r} is in two cohorts ({out[model]}, {key})", file=source, record=str(key)
                    )
                out[model] = str(key)
        elif isinstance(value, str):
            out[str(key)] = value
        else:
            raise DataError(
                f"cohort entry {key!r} must be a list of model names or a cohort name", file=source, record=str(key)
            )
    return out


_MEANED = (*STATES, "a_with", "a_removed", "delta_img")


def _mean_row(rows: list[dict]) -> dict:
    rows = [r for r in rows if r and r.get("n")]
    return {"n_models": len(rows), **{k: mean_or_none([r[k] for r in rows]) for k in _MEANED}}


def cohort_rows(models: dict[str, dict], cohorts: dict[str, str]) -> dict:
    """Each cohort's rows are the means of its member models' rows, with the member count."""
    members: dict[str, list[str]] = {}
    for name, doc in models.items():
        cohort = cohorts.get(doc["model"], cohorts.get(name))
        if cohort is not None:
            members.setdefault(cohort, []).append(name)
    out = {}
    for cohort, names in sorted(members.items()):
        docs = [models[n]["paired"] for n in names]
        # each stratum any member has, each of its levels any member has (sorted)
        levels = {f: sorted({k for d in docs for k in d["by"].get(f, {})}) for d in docs for f in d["by"]}
        by = {f: {k: _mean_row([d["by"].get(f, {}).get(k) for d in docs]) for k in keys} for f, keys in levels.items()}
        out[cohort] = {
            "models": names,
            "n_models": len(names),
            "paired": {"overall": _mean_row([d["overall"] for d in docs]), "by": by},
        }
    return out

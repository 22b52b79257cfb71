"""The Python form of `medvqa contamination`: what the command prints with `--json`, returned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import dcq
from ..errors import UsageError
from ..items import DataError


def read_text(path: str | Path) -> str:
    """The text of a results file, a DataError naming it when it is missing, unreadable or not UTF-8."""
    path = Path(path)
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise DataError("no such file", file=path) from None
    except IsADirectoryError:
        raise DataError("a folder, where a results CSV is expected", file=path) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", file=path) from None


def estimate_file(path: str | Path) -> dict[str, Any]:
    """The Data Contamination Quiz's estimate of a results CSV in its authors' layout (one row per
    instance; `bdq_results` and `bcq_results_for_position_<x>` hold the examined model's answers),
    computed as the authors compute it (`dcq.estimate`): the letter counts and shares of the Bias
    Detector Quiz, the non-preferred positions, each Bias Compensator Quiz's counts and shares,
    and the level {"lower", "upper"} as fractions, with the line the authors' report prints."""
    return {"file": str(path), **dcq.estimate_results(read_text(path), file=str(path)).as_json()}


def contamination(*, dcq_results: str | Path | None = None) -> dict[str, Any]:
    """The contamination audit, as `medvqa contamination --json` prints it. `dcq_results`: a
    results CSV of the Data Contamination Quiz in its authors' layout, estimated as they estimate
    it (`estimate_file`, under "dcq")."""
    if dcq_results is None:
        raise UsageError("contamination: give dcq_results (a results CSV of the Data Contamination Quiz)")
    return {"dcq": estimate_file(dcq_results)}

"""The one metrics layer (`medvqa.core.metrics`): every number medvqa shows over records, for a
benchmark's own tables too. Group records with `group`, count a group with `cell`.

    >>> from medvqa.metrics import cell
    >>> c = cell([{"item_id": "a", "condition": "C+Q", "status": "answered", "correct": True},
    ...           {"item_id": "b", "condition": "C+Q", "status": "refusal", "correct": False}])
    >>> c.n, c.correct, c.accuracy, c.statuses["refusal"]
    (2, 1, 0.5, 1)
"""

from medvqa.core.headline import Headline
from medvqa.core.metrics import (
    ASSISTED_COLUMNS,
    CI_COLUMNS,
    READINGS,
    Cell,
    accuracy_ci,
    assisted_columns,
    cell,
    counted,
    excluded_counts,
    group,
    level_keys,
    read,
    table,
    with_assisted,
)
from medvqa.core.results import NON_ANSWERS, STATUSES, is_derived

__all__ = [
    "ASSISTED_COLUMNS",
    "CI_COLUMNS",
    "READINGS",
    "Cell",
    "Headline",
    "accuracy_ci",
    "assisted_columns",
    "cell",
    "counted",
    "excluded_counts",
    "group",
    "level_keys",
    "read",
    "table",
    "with_assisted",
    "NON_ANSWERS",
    "STATUSES",
    "is_derived",
]

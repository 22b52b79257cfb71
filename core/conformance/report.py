"""What the conformance kit finds: each broken contract (`Problem`), the report of one check
(`KitReport`) and the error that lists them (`ContractError`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


class ContractError(AssertionError):
    """One or more broken contracts; the message lists each, naming the item."""


@dataclass(frozen=True)
class Problem:
    check: str
    message: str
    item: str | None = None

    def __str__(self) -> str:
        where = f"item {self.item}: " if self.item is not None else ""
        return f"[{self.check}] {where}{self.message}"


# how a check reports a broken contract: the report's `problems.append`
AddProblem = Callable[[Problem], None]


@dataclass
class KitReport:
    """What `check_benchmark` found: the checks that ran, the items and run records seen."""

    benchmark: str
    checks: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    n_items: int = 0
    n_records: dict[str, int] = field(default_factory=dict)  # run name -> records
    work_dir: Path | None = None
    notes: list[str] = field(default_factory=list)  # what the checks left out, and why

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        notes = "".join(f"\n  note: {n}" for n in self.notes)
        if self.ok:
            return f"{self.benchmark}: {len(self.checks)} checks passed on {self.n_items} items{notes}"
        listing = "\n".join(f"  {p}" for p in self.problems)
        return f"{self.benchmark}: {len(self.problems)} broken contract(s):\n{listing}{notes}"

"""A model's declared knowledge cutoff, and where an exam's year stands against it.

A cutoff is written `YYYY-MM` (`2024-06`) or `YYYY` (that year's December): the month the
model's makers say its training data ends. It is read where a cutoff is declared (`medvqa
contamination -M cutoff=`, `medvqa audit --cutoff`, an eval set's model entry) and used by the
exam-date curves (`contamination.curves`). It lives on the ground floor so that a set's file is
checked with the same rule the curves apply.

An exam's year is *before* the cutoff when the whole year is (December of it at the latest:
`2021-12` puts 2021 before), *after* when the whole year is, and *straddles* it when the
cutoff falls inside the year: an exam's year does not say whether it was sat and published
before the model's data ended."""

from __future__ import annotations

import re

from .errors import UsageError

_CUTOFF = re.compile(r"^(\d{4})(?:-(\d{1,2}))?$")


def parse_cutoff(text: str | int) -> tuple[int, int]:
    """(year, month) of a cutoff written `YYYY` or `YYYY-MM` (a year alone means its December)."""
    found = _CUTOFF.match(str(text).strip())
    if not found or not 1 <= int(found.group(2) or 12) <= 12:
        raise UsageError(f"cutoff {text!r}: write it YYYY-MM (2024-06) or YYYY")
    return int(found.group(1)), int(found.group(2) or 12)


def cutoff_text(cutoff: tuple[int, int]) -> str:
    """A parsed cutoff written back as `YYYY-MM`."""
    return f"{cutoff[0]:04d}-{cutoff[1]:02d}"


def side(year: int, cutoff: tuple[int, int]) -> str:
    """ "before", "after" or "straddles": where an exam of `year` stands against `cutoff`."""
    if (year, 12) <= cutoff:
        return "before"
    if (year, 1) > cutoff:
        return "after"
    return "straddles"

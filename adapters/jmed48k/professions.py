"""The eleven MHLW professions: release directory names and accepted aliases."""

from __future__ import annotations

from medvqa.mhlw import JAPANESE_NAMES as _JAPANESE
from medvqa.mhlw import PROFESSIONS


def _fold(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_ALIASES = {_fold(k): k for k in PROFESSIONS} | {_fold(v): k for k, v in PROFESSIONS.items()} | _JAPANESE


def specialty_key(name: str) -> str:
    """Map a profession name or alias (case-insensitive; spaces, '_' and '-' ignored) to its
    release directory name. Unknown names raise ValueError listing the known ones."""
    key = _ALIASES.get(_fold(name)) or _ALIASES.get(name.strip())
    if key is None:
        raise ValueError(f"unknown profession {name!r}; known: {', '.join(PROFESSIONS.values())}")
    return key

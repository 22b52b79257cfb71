"""Keeping API keys out of everything we write.

Keys are read from the environment by the provider libraries and never pass through medvqa's
own data. Error texts come from providers, though, and may quote a key: `scrub` removes the
value of every secret-looking environment variable, and bearer tokens, from a text.
"""

from __future__ import annotations

import os
import re

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)
_TOKEN_SHAPES = re.compile(r"(?i)\bbearer\s+[\w.~+/=-]+|\bsk-[\w-]{12,}")
MASK = "***"


def secret_values() -> list[str]:
    """Values of secret-looking environment variables, longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def scrub(text: str) -> str:
    for value in secret_values():
        text = text.replace(value, MASK)
    return _TOKEN_SHAPES.sub(MASK, text)

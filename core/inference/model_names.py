"""What can be checked about a litellm model string before litellm is imported (which takes
seconds): a misspelt provider (`opnai/gpt-5`) or medvqa backend (`randm`), and a provider key
missing from the environment (`openai/gpt-5` without `OPENAI_API_KEY`). Both end the run with
a `PreflightError` before any item is loaded.

The names litellm knows (its providers and models) are remembered in medvqa's cache folder
the first time litellm is imported, one file per litellm version (`litellm-<version>.json`);
before that file exists only the credentials are checked here, and litellm itself places the
model once imported (`preflight.check_provider`). A string is refused here only when it is
not a name litellm knows and lies close to a provider (or a medvqa backend): what litellm
would refuse too, with the same message.

What litellm says of a model when a backend is built (its provider, which default parameters it
takes, its output format, whether it has a price) is remembered the same way, once per litellm
version and question (`recall_answers`, `remember_answers`), so that a backend built again (a
re-run answered from the response cache) has its parameters and request keys without importing
litellm; litellm is imported when a request is really sent.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

# provider -> the environment variables litellm takes its key from (any one will do), as
# `litellm.validate_environment` checks them (a test holds this table to it)
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
}
CLOSE = 0.75  # how alike a name must be to a known one to count as its misspelling


def litellm_version() -> str | None:
    try:
        return version("litellm")
    except PackageNotFoundError:
        return None


def names_path(litellm_version_: str) -> Path:
    from ..files import default_cache_path

    return default_cache_path().parent / f"litellm-{litellm_version_}.json"


def remember_names(litellm) -> None:
    """Write the providers and model names of the imported `litellm` to the cache folder, once
    per litellm version (nothing when the folder cannot be written)."""
    found = litellm_version()
    if found is None:
        return
    path = names_path(found)
    if path.exists():
        return
    names = {
        "litellm": found,
        "providers": sorted(str(getattr(p, "value", p)) for p in litellm.provider_list),
        "models": sorted(set(litellm.model_list)),
    }
    _keep(path, json.dumps(names))


def _keep(path: Path, text: str) -> None:
    """`text` written whole to `path` by the run store's one writer; a cache folder that cannot
    be written keeps nothing (litellm is asked again next time)."""
    from ..files import write_atomic
    from ..items import DataError

    try:
        write_atomic(path, text, sync=False)
    except DataError:
        pass


def _kept_json(path: Path) -> Any:
    """The JSON of the cache file at `path`, read as untrusted: None when there is none, when it
    is no regular file of its own (a link, a pipe planted there is never read) or not JSON."""
    from ..files import read_kept

    data = read_kept(path)
    try:
        return None if data is None else json.loads(data)
    except ValueError:
        return None


# bumped whenever what `remember_answers` keeps, or what the backend asks, changes
ANSWERS_FORMAT = 1


def _answers_path(question: dict[str, Any]) -> Path | None:
    """Where the answers to `question` are kept: a file named by the hash of the question, the
    litellm version and `ANSWERS_FORMAT`. None when litellm is not installed or reads a price map
    over the network (`LITELLM_LOCAL_MODEL_COST_MAP` other than True), whose answers may change."""
    found = litellm_version()
    if found is None or os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "True") != "True":
        return None
    text = json.dumps({"format": ANSWERS_FORMAT, "litellm": found, "question": question}, sort_keys=True)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
    return names_path(found).with_suffix("") / f"answers-{digest}.json"


def recall_answers(question: dict[str, Any], keys: Iterable[str] = ()) -> dict[str, Any] | None:
    """What `remember_answers` kept for `question` (JSON: providers, reasons and choices, never a
    value the user gave), or None; None too for a file that is unreadable or lacks one of `keys`
    (asked of litellm again, and written anew)."""
    path = _answers_path(question)
    if path is None:
        return None
    answers = _kept_json(path)
    return answers if isinstance(answers, dict) and all(k in answers for k in keys) else None


def remember_answers(question: dict[str, Any], answers: dict[str, Any]) -> None:
    """Keep litellm's `answers` to `question` for `recall_answers` (nothing when the cache
    folder cannot be written)."""
    path = _answers_path(question)
    if path is None:
        return
    _keep(path, json.dumps(answers, sort_keys=True))


def known_names() -> dict[str, Any] | None:
    """{providers, models} litellm knows, as remembered for the installed version; None when
    they are not known yet (or unreadable)."""
    found = litellm_version()
    if found is None:
        return None
    names = _kept_json(names_path(found))
    try:
        return {"providers": set(names["providers"]), "models": set(names["models"])}
    except (KeyError, TypeError):
        return None


def unknown_model_message(
    model: str, providers: Iterable[str], backends: Iterable[str], models: Iterable[str] = ()
) -> str:
    """The one line that says litellm cannot place `model`, with the nearest known name."""
    head, slash, _ = model.partition("/")
    providers, backends = sorted(providers), sorted(backends)
    known = providers if slash else backends + providers + sorted(models)
    close = difflib.get_close_matches(head, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    if slash:
        return (
            f"unknown model {model!r}: litellm knows no provider {head!r}{hint} "
            "(providers: https://docs.litellm.ai/docs/providers)"
        )
    return f"unknown model {model!r}: neither a medvqa backend ({', '.join(backends)}) nor a model litellm knows{hint}"


def check_before_import(model: str, *, backends: Iterable[str], api_base: bool = False, keys: bool = True) -> None:
    """Raise PreflightError for what is certain without litellm: a misspelt provider or backend
    (once litellm's names are remembered) and, with `keys` and without a server of one's own
    (`api_base`), a provider key missing from the environment."""
    from ..errors import PreflightError

    backends = sorted(backends)
    head, slash, _ = model.partition("/")
    names = known_names()
    if names is not None and head not in names["providers"] and model not in names["models"]:
        near = names["providers"] if slash else backends
        if difflib.get_close_matches(head, sorted(near), n=1, cutoff=CLOSE):
            raise PreflightError(unknown_model_message(model, names["providers"], backends, names["models"]))
    provider = head if slash else None
    variables = PROVIDER_KEYS.get(provider or "")
    if keys and variables and not api_base and not any(v in os.environ for v in variables):
        raise PreflightError(
            f"model {model}: no {provider} credentials: set {' or '.join(variables)} in the "
            "environment (nothing was requested)"
        )

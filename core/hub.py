"""Data published on the Hugging Face Hub, as adapters load it when no `--data` folder is given."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .items import DataError


def from_hub(
    repo_id: str,
    no_data: str,
    *,
    download: Callable[..., str] | None = None,
    before_download: Callable[[], Any] | None = None,
    **query: Any,
) -> Path:
    """The local path of a Hub dataset (`huggingface_hub.snapshot_download`, or `hf_hub_download`
    of one file when `query` has a `filename`): the cached copy without touching the network,
    else downloaded into the Hugging Face cache, `before_download()` called first (a licence
    notice). When neither works, DataError(`no_data` with `{repo}` and `{reason}`, the error's
    first line, filled in): the message names both ways to get the data."""
    if download is None:
        import huggingface_hub  # imported on first use

        download = huggingface_hub.hf_hub_download if "filename" in query else huggingface_hub.snapshot_download
    query = {"repo_id": repo_id, "repo_type": "dataset", **query}
    try:
        return Path(download(**query, local_files_only=True))
    except OSError:  # not cached (LocalEntryNotFoundError is an OSError)
        pass
    if before_download is not None:
        before_download()
    try:
        return Path(download(**query))
    except OSError as exc:  # offline, connection refused, gated or missing repository
        text = str(exc).strip().splitlines()
        reason = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
        raise DataError(no_data.format(repo=repo_id, reason=reason)) from None

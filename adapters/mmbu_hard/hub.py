"""MMBU from the Hugging Face Hub (`ryandcunha/mmbu`, and `ryandcunha/mmbu-context` for the
context metadata), used when no `--data` folder is given. Files go to the Hugging Face cache;
a cached copy is used without touching the network."""

from __future__ import annotations

from pathlib import Path

from medvqa import DataError

REPO_ID = "ryandcunha/mmbu"
CONTEXT_REPO_ID = "ryandcunha/mmbu-context"
NO_DATA = ("MMBU data not found: no --data folder was given and the Hugging Face dataset {repo} could not be "
           "downloaded ({reason}). Either pass --data PATH, a local folder of the authors' VLMEvalKit TSVs "
           "(<task>.tsv with images/ beside it), or go online and run the command again so medvqa downloads "
           "{repo} (and {context}) into the Hugging Face cache (or fetch it yourself with "
           "`hf download {repo} --repo-type dataset`).")


def snapshot_download(**kwargs) -> str:
    """`huggingface_hub.snapshot_download`, imported on first use."""
    from huggingface_hub import snapshot_download as download

    return download(**kwargs)


def download() -> Path:
    """The local folder holding the MMBU TSVs: from the cache if present, else downloaded.
    Raises DataError naming both ways to get the data when neither works."""
    folders = []
    for repo in (REPO_ID, CONTEXT_REPO_ID):
        query = dict(repo_id=repo, repo_type="dataset")
        try:
            local = snapshot_download(**query, local_files_only=True)
        except OSError:  # not cached (LocalEntryNotFoundError is an OSError)
            try:
                local = snapshot_download(**query)
            except OSError as exc:  # offline, refused, gated or missing
                raise DataError(NO_DATA.format(repo=repo, context=CONTEXT_REPO_ID, reason=_first_line(exc))) from None
        folders.append(Path(local))
    return folders[0]


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__

"""KokushiMD-10 from the Hugging Face Hub (`humanalysis-square/KokushiMD-10`, MIT), used when no
`--data` folder is given. The files go to the Hugging Face cache (`HF_HOME`); a cached copy is
used without touching the network."""

from __future__ import annotations

from pathlib import Path

from medvqa import DataError

REPO_ID = "humanalysis-square/KokushiMD-10"
NO_DATA = ("KokushiMD-10 data not found: no --data folder was given and the Hugging Face dataset {repo} could not "
           "be downloaded ({reason}). Either pass --data PATH, a local folder in the release layout the authors' "
           "scoring script reads (<profession>/<profession>_<year>_<section>.json, e.g. 医師/医師_2020_a.json), or "
           "go online and run the command again so medvqa downloads {repo} into the Hugging Face cache (or fetch "
           "it yourself with `hf download {repo} --repo-type dataset`).")


def snapshot_download(**kwargs) -> str:
    """`huggingface_hub.snapshot_download`, imported on first use."""
    from huggingface_hub import snapshot_download as download

    return download(**kwargs)


def download() -> Path:
    """The local snapshot folder: from the cache if present, else downloaded. Raises DataError
    naming both ways to get the data when neither works."""
    query = dict(repo_id=REPO_ID, repo_type="dataset")
    try:
        return Path(snapshot_download(**query, local_files_only=True))
    except OSError:  # not cached (LocalEntryNotFoundError is an OSError)
        pass
    try:
        return Path(snapshot_download(**query))
    except OSError as exc:  # offline, refused, gated or missing repository
        text = str(exc).strip().splitlines()
        reason = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
        raise DataError(NO_DATA.format(repo=REPO_ID, reason=reason)) from None

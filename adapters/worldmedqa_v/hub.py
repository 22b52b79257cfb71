"""WorldMedQA-V from the Hugging Face Hub (`WorldMedQA/V`, VLMEvalKit TSVs with the images
inline), used when no `--data` folder is given. Files go to the Hugging Face cache (`HF_HOME`);
a cached copy is used without touching the network."""

from __future__ import annotations

from pathlib import Path

from medvqa import DataError

REPO_ID = "WorldMedQA/V"
NO_DATA = ("WorldMedQA-V data not found: no --data folder was given and the Hugging Face dataset {repo} could not "
           "be downloaded ({reason}). Either pass --data PATH, a local folder of its tables "
           "(<country>_local.tsv and <country>_english.tsv, or CSV with the columns index, question, A-D and "
           "answer or correct_option), or go online and run the command again so medvqa downloads {repo} into the "
           "Hugging Face cache (or fetch it yourself with `hf download {repo} --repo-type dataset`).")


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

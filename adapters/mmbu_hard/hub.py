"""MMBU from the Hugging Face Hub (`ryandcunha/mmbu`, and `ryandcunha/mmbu-context` for the
context metadata), used when no `--data` folder is given. Files go to the Hugging Face cache;
a cached copy is used without touching the network."""

from __future__ import annotations

from pathlib import Path

from medvqa import from_hub

REPO_ID = "ryandcunha/mmbu"
CONTEXT_REPO_ID = "ryandcunha/mmbu-context"
NO_DATA = (
    "MMBU data not found: no --data folder was given and the Hugging Face dataset {repo} could not be "
    "downloaded ({reason}). Either pass --data PATH, a local folder of the authors' VLMEvalKit TSVs "
    "(<task>.tsv with images/ beside it), or go online and run the command again so medvqa downloads "
    "{repo} (and " + CONTEXT_REPO_ID + ") into the Hugging Face cache (or fetch it yourself with "
    "`hf download {repo} --repo-type dataset`)."
)


def download() -> Path:
    """The local folder holding the MMBU TSVs: from the cache if present, else downloaded (the
    context metadata too). Raises DataError naming both ways to get the data when neither works."""
    folders = [from_hub(repo, NO_DATA) for repo in (REPO_ID, CONTEXT_REPO_ID)]
    return folders[0]

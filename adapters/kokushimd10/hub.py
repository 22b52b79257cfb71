"""KokushiMD-10 from the Hugging Face Hub (`humanalysis-square/KokushiMD-10`, MIT), used when no
`--data` folder is given. The files go to the Hugging Face cache (`HF_HOME`); a cached copy is
used without touching the network."""

from __future__ import annotations

from pathlib import Path

from medvqa import from_hub

REPO_ID = "humanalysis-square/KokushiMD-10"
NO_DATA = (
    "KokushiMD-10 data not found: no --data folder was given and the Hugging Face dataset {repo} could not "
    "be downloaded ({reason}). Either pass --data PATH, a local folder in the release layout the authors' "
    "scoring script reads (<profession>/<profession>_<year>_<section>.json, e.g. 医師/医師_2020_a.json), or "
    "go online and run the command again so medvqa downloads {repo} into the Hugging Face cache (or fetch "
    "it yourself with `hf download {repo} --repo-type dataset`)."
)


def download() -> Path:
    """The local snapshot folder: from the cache if present, else downloaded. Raises DataError
    naming both ways to get the data when neither works."""
    return from_hub(REPO_ID, NO_DATA)

"""WorldMedQA-V from the Hugging Face Hub (`WorldMedQA/V`, VLMEvalKit TSVs with the images
inline), used when no `--data` folder is given. Files go to the Hugging Face cache (`HF_HOME`);
a cached copy is used without touching the network."""

from __future__ import annotations

from pathlib import Path

from medvqa import from_hub

REPO_ID = "WorldMedQA/V"
NO_DATA = (
    "WorldMedQA-V data not found: no --data folder was given and the Hugging Face dataset {repo} could not "
    "be downloaded ({reason}). Either pass --data PATH, a local folder of its tables "
    "(<country>_local.tsv and <country>_english.tsv, or CSV with the columns index, question, A-D and "
    "answer or correct_option), or go online and run the command again so medvqa downloads {repo} into the "
    "Hugging Face cache (or fetch it yourself with `hf download {repo} --repo-type dataset`)."
)


def download() -> Path:
    """The local snapshot folder: from the cache if present, else downloaded. Raises DataError
    naming both ways to get the data when neither works."""
    return from_hub(REPO_ID, NO_DATA)

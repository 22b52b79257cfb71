"""JMed48k-Eval from the Hugging Face Hub (`JMed48k/JMed48k`, folder `JMed48k-eval/`).

Used when no `--data` folder is given. The files go to the Hugging Face cache (`HF_HOME`);
a cached copy is used without touching the network. The licence is shown before the first
download.
"""

from __future__ import annotations

import sys
from pathlib import Path

from medvqa import DataError, cache_dir, from_hub, write_atomic

REPO_ID = "JMed48k/JMed48k"
FOLDER = "JMed48k-eval"
LICENCE = "CC-BY-NC-4.0"
LICENCE_NOTICE = (
    f"JMed48k-Eval ({REPO_ID} on the Hugging Face Hub) is licensed {LICENCE}: non-commercial use, "
    f"with attribution (cite arXiv 2605.22080). The questions are MHLW national exam items."
)
NO_DATA = (
    "JMed48k data not found: no --data folder was given and the Hugging Face dataset {repo} could not be "
    "downloaded ({reason}). Either pass --data PATH, a local folder in the JMed48k release layout "
    "(JMed48k/<Profession>/<Profession>_<year>/...), or go online and run the command again so medvqa "
    f"downloads {{repo}} ({FOLDER}/) into the Hugging Face cache (or fetch it yourself with "
    f"`hf download {{repo}} --repo-type dataset --include '{FOLDER}/*'`). "
    "`--sample` runs the small bundled sample instead."
)


def download(*, notice=None) -> Path:
    """The local folder holding `JMed48k-eval/`: from the cache if present, else downloaded.
    Raises DataError naming both ways to get the data when neither works."""
    notice = notice or (lambda text: print(text, file=sys.stderr))
    marker = cache_dir() / "jmed48k-licence-shown"
    downloaded = []

    def licence() -> None:  # before a download, until one has succeeded
        downloaded.append(True)
        if not marker.exists():
            notice(LICENCE_NOTICE)

    local = from_hub(REPO_ID, NO_DATA, allow_patterns=[f"{FOLDER}/*"], before_download=licence)
    if downloaded:
        write_atomic(marker, b"", sync=False)
    root = local / FOLDER
    if not root.is_dir():
        raise DataError(f"the downloaded snapshot of {REPO_ID} has no {FOLDER}/ folder", file=local)
    return root

"""The ten professions of KokushiMD-10, under the names its release, MHLW and users write."""

from __future__ import annotations

from medvqa.mhlw import JAPANESE_NAMES, PROFESSIONS

# The release's folder and file prefix (the authors' ROLE_MAP keys) → MHLW release name.
SHORT_NAMES = {
    "医師": "Physician",
    "歯科": "Dentist",
    "看護": "Nurse",
    "保健": "Public_Health_Nurse",
    "助産": "Midwife",
    "理学": "Physical_Therapist",
    "作業": "Occupational_Therapist",
    "診療": "Radiological_Technologist",
    "視能": "Orthoptist",
    "薬剤": "Pharmacist",
}


def _fold(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_ALIASES = (
    {_fold(k): k for k in PROFESSIONS}
    | {_fold(v): k for k, v in PROFESSIONS.items()}
    | {_fold(k): v for k, v in JAPANESE_NAMES.items()}
    | {_fold(k): v for k, v in SHORT_NAMES.items()}
)


def profession_key(name: str) -> str:
    """A profession's release name from any alias: English (`Physician`, `physical therapist`),
    the licence's Japanese name (`医師`, `理学療法士`) or the release's short name (`理学`).
    Unknown names raise ValueError listing the known ones."""
    key = _ALIASES.get(_fold(name))
    if key is None:
        raise ValueError(
            f"unknown profession {name!r}; known: {', '.join(PROFESSIONS.values())} "
            f"(or their Japanese names: {', '.join(JAPANESE_NAMES)})"
        )
    return key

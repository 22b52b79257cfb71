"""The eleven MHLW professions: release directory names and accepted aliases."""

from __future__ import annotations

# Release directory name → English name as the paper writes it.
PROFESSIONS = {
    "Physician": "Physician",
    "Dentist": "Dentist",
    "Pharmacist": "Pharmacist",
    "Nurse": "Nurse",
    "Public_Health_Nurse": "Public Health Nurse",
    "Midwife": "Midwife",
    "Physical_Therapist": "Physical Therapist",
    "Occupational_Therapist": "Occupational Therapist",
    "Orthoptist": "Orthoptist",
    "Radiological_Technologist": "Radiological Technologist",
    "Clinical_Laboratory_Technologist": "Clinical Laboratory Technologist",
}

_JAPANESE = {
    "医師": "Physician", "歯科医師": "Dentist", "薬剤師": "Pharmacist", "看護師": "Nurse",
    "保健師": "Public_Health_Nurse", "助産師": "Midwife", "理学療法士": "Physical_Therapist",
    "作業療法士": "Occupational_Therapist", "視能訓練士": "Orthoptist",
    "診療放射線技師": "Radiological_Technologist", "臨床検査技師": "Clinical_Laboratory_Technologist",
}


def _fold(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_ALIASES = {_fold(k): k for k in PROFESSIONS} | {_fold(v): k for k, v in PROFESSIONS.items()} | _JAPANESE


def specialty_key(name: str) -> str:
    """Map a profession name or alias (case-insensitive; spaces, '_' and '-' ignored) to its
    release directory name. Unknown names raise ValueError listing the known ones."""
    key = _ALIASES.get(_fold(name)) or _ALIASES.get(name.strip())
    if key is None:
        raise ValueError(f"unknown profession {name!r}; known: {', '.join(PROFESSIONS.values())}")
    return key

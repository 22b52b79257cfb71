"""MMBU-hard: open-ended and closed biomedical VQA (classification and detection) in English."""

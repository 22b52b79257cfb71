"""Small WorldMedQA-V runs written here: two countries (Israel in Hebrew, Brazil in Portuguese),
each in its language and in English, two models, with the image and blind, imported with
`medvqa import worldmedqa_v` (in-process) as the authors' tables are.

Model `Alpha` answers the first `RIGHT[(model, country, language, condition)]` items right and
the rest wrong; every reply names its option the way VLMEvalKit's matching reads it (a letter
among the last four words), so each run's accuracy is known exactly.
"""

from __future__ import annotations

import csv
from pathlib import Path

N = 10  # items per country
QUESTIONS = {
    ("israel", "local"): "מה האבחנה הסבירה ביותר בצילום החזה של המטופל {i}?",
    ("israel", "english"): "What is the most likely diagnosis on the chest X-ray of patient {i}?",
    ("brazil", "local"): "Qual é o diagnóstico mais provável na radiografia do paciente {i}? Ação, coração.",
    ("brazil", "english"): "What is the most likely diagnosis on the radiograph of patient {i}?",
}
OPTIONS = {
    ("israel", "local"): ["דלקת ריאות", "אי ספיקת לב", "שחפת", "סרקואידוזיס"],
    ("israel", "english"): ["Pneumonia", "Heart failure", "Tuberculosis", "Sarcoidosis"],
    ("brazil", "local"): ["Pneumonia", "Insuficiência cardíaca", "Tuberculose", "Sarcoidose"],
    ("brazil", "english"): ["Pneumonia", "Heart failure", "Tuberculosis", "Sarcoidosis"],
}
GOLD = "ABCDABCDAB"
# items right out of N, per (model, country, language, condition)
RIGHT = {
    ("Alpha", "israel", "local", "C+Q+I"): 5,
    ("Alpha", "israel", "english", "C+Q+I"): 8,
    ("Alpha", "brazil", "local", "C+Q+I"): 7,
    ("Alpha", "brazil", "english", "C+Q+I"): 6,
    ("Beta", "israel", "local", "C+Q+I"): 3,
    ("Beta", "israel", "english", "C+Q+I"): 4,
    ("Beta", "brazil", "local", "C+Q+I"): 6,
    ("Beta", "brazil", "english", "C+Q+I"): 7,
    ("Alpha", "israel", "local", "C+Q"): 4,
    ("Alpha", "israel", "english", "C+Q"): 8,
    ("Alpha", "brazil", "local", "C+Q"): 3,
    ("Alpha", "brazil", "english", "C+Q"): 5,
    ("Beta", "israel", "local", "C+Q"): 3,
    ("Beta", "israel", "english", "C+Q"): 2,
    ("Beta", "brazil", "local", "C+Q"): 6,
    ("Beta", "brazil", "english", "C+Q"): 6,
}
FOLDER = {"C+Q+I": "outputs_w_images", "C+Q": "outputs_blind"}
LANGUAGE = {"local": {"israel": "he", "brazil": "pt"}, "english": {"israel": "en", "brazil": "en"}}


def accuracy(model: str, country: str, version: str, condition: str) -> float:
    return RIGHT[(model, country, version, condition)] / N


def _write(path: Path, header: list[str], rows: list[list]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t" if path.suffix == ".tsv" else ",")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_tables(root: Path) -> tuple[Path, list[Path]]:
    """The items (`data/<country>_<version>.tsv`) and the prediction tables under `root`."""
    data = root / "data"
    for (country, version), question in QUESTIONS.items():
        rows = [[i, question.format(i=i), *OPTIONS[(country, version)], GOLD[i - 1]] for i in range(1, N + 1)]
        _write(data / f"{country}_{version}.tsv", ["index", "question", "A", "B", "C", "D", "answer"], rows)
    tables = []
    for (model, country, version, condition), right in RIGHT.items():
        rows = []
        for i in range(1, N + 1):
            gold = GOLD[i - 1]
            letter = gold if i <= right else "ABCD"[("ABCD".index(gold) + 1) % 4]
            rows.append([i, f"The image shows this finding most clearly: the answer is {letter}."])
        path = root / FOLDER[condition] / model / f"{model}_{country}_{version}.csv"
        tables.append(_write(path, ["index", "prediction"], rows))
    return data, tables


def build(root: Path) -> dict[tuple[str, str, str, str], Path]:
    """Every run directory by (model, country, version, condition), imported under `root/runs`."""
    from medvqa.adapters.worldmedqa_v.importer import import_table

    data, tables = write_tables(root)
    runs = {}
    for table, key in zip(tables, RIGHT):
        model, country, version, condition = key
        run_dir = root / "runs" / f"{model}-{country}-{version}-{FOLDER[condition]}"
        import_table(table, data, run_dir)
        runs[key] = run_dir
    return runs

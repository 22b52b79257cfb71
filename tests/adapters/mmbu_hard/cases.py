"""A small MMBU-hard layout written by the tests: open-ended classification items covering
every gate of the judge, their closed versions, detection items and private items; the model
answers to replay; and the verdict a strict judge gives to each (true answer, model answer)."""

from __future__ import annotations

import csv
import json
import struct
import zlib
from pathlib import Path

LABELS = {
    "cxr": [
        "pneumonia",
        "no pneumonia",
        "left pleural effusion",
        "right pleural effusion",
        "mild cardiomegaly",
        "severe cardiomegaly",
    ],
    "derm": ["melanoma", "benign keratosis", "basal cell carcinoma", "melanocytic nevus"],
    "blood": ["neutrophil", "lymphocyte", "eosinophil", "monocyte"],
}
# (dataset, true answer, model answer, verdict, gate case)
CASES = [
    ("cxr", "pneumonia", "pneumonia", 1, "exact"),
    ("cxr", "pneumonia", '{"answer": "Pneumonia"}', 1, "exact"),
    ("cxr", "pneumonia", "lung infection (pneumonia)", 1, "synonym"),
    ("cxr", "pneumonia", "no pneumonia", 0, "negation flip"),
    ("cxr", "no pneumonia", "pneumonia", 0, "negation flip"),
    ("cxr", "no pneumonia", "normal chest, no pneumonia", 1, "synonym"),
    ("cxr", "left pleural effusion", "left pleural effusion", 1, "exact"),
    ("cxr", "left pleural effusion", "right pleural effusion", 0, "laterality flip"),
    ("cxr", "right pleural effusion", "left-sided pleural effusion", 0, "laterality flip"),
    ("cxr", "right pleural effusion", "pleural effusion", 0, "broader"),
    ("cxr", "mild cardiomegaly", "severe cardiomegaly", 0, "severity flip"),
    ("cxr", "severe cardiomegaly", "markedly enlarged heart", 1, "synonym"),
    ("cxr", "pneumonia", "possibly pneumonia or effusion", 0, "hedge"),
    ("cxr", "pneumonia", "tuberculosis", 0, "off-taxonomy"),
    ("cxr", "mild cardiomegaly", "", 0, "empty"),
    ("derm", "melanoma", "melanoma", 1, "exact"),
    ("derm", "melanoma", "malignant melanoma", 1, "synonym"),
    ("derm", "melanoma", "skin cancer", 0, "broader"),
    ("derm", "melanoma", "it could be melanoma", 0, "hedge"),
    ("derm", "basal cell carcinoma", "BCC", 1, "synonym"),
    ("derm", "basal cell carcinoma", "squamous cell carcinoma", 0, "off-taxonomy"),
    ("derm", "melanocytic nevus", "mole", 1, "synonym"),
    ("derm", "benign keratosis", "normal skin", 0, "off-taxonomy"),
    ("derm", "benign keratosis", "", 0, "empty"),
    ("blood", "neutrophil", "neutrophil", 1, "exact"),
    ("blood", "neutrophil", "white blood cell", 0, "broader"),
    ("blood", "neutrophil", "band neutrophil", 0, "narrower"),
    ("blood", "lymphocyte", "lymphocytes", 1, "synonym"),
    ("blood", "lymphocyte", "lymphocyte or monocyte", 0, "hedge"),
    ("blood", "eosinophil", "basophil", 0, "off-taxonomy"),
    ("blood", "monocyte", "macrophage", 0, "related but distinct"),
    ("blood", "monocyte", "", 0, "empty"),
]


def model_answer(response: str) -> str:
    """What the judge is shown for a reply: the JSON answer, else the reply."""
    try:
        value = json.loads(response)
        return value["answer"] if isinstance(value, dict) else response
    except (json.JSONDecodeError, KeyError, TypeError):
        return response.strip()


RULES = {(truth, model_answer(resp)): v for _, truth, resp, v, _ in CASES}
# detection items: (gold boxes, reply, TP, FP, FN)
DETECTION = [
    ([[10, 10, 20, 20]], '{"box": [10, 10, 20, 20]}', 1, 0, 0),  # identical
    ([[10, 10, 20, 20]], '{"box": [20, 10, 20, 20]}', 0, 1, 1),  # IoU 1/3
    ([[0, 0, 10, 10], [50, 50, 10, 10]], '{"boxes": [[0, 0, 10, 10], [80, 80, 5, 5]]}', 1, 1, 1),
    ([[0, 0, 10, 10]], "The lesion is at 1, 1, 9, 9.", 1, 0, 0),  # IoU 0.81
    ([[0, 0, 10, 10]], "no box here", 0, 0, 1),
]


def png(path: Path, shade: int) -> None:
    """A 2×2 grey PNG."""
    raw = b"".join(b"\x00" + bytes([shade, shade]) for _ in range(2))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def write_tsv(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def write_fixture(root: Path, *, repeat: int = 1, private: int = 2) -> dict:
    """The layout under `root`; returns {"replay": path of the model answers, "open_ids": ids}."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    png(root / "images" / "x1.png", 40)
    png(root / "images" / "x2.png", 200)
    header = [
        "index",
        "image_path",
        "question",
        "answer",
        "dataset",
        "modality",
        "submodality",
        "class_label",
        "split",
        "specimen",
        "stain",
    ]
    rows, replay, ids = [], [], []
    for r in range(repeat):
        for i, (dataset, truth, resp, _, case) in enumerate(CASES):
            index = r * len(CASES) + i
            image = f"/home/author/mmbu/images/x{1 + i % 2}.png"
            rows.append(
                [
                    index,
                    image,
                    f"What is the finding? ({case}, case {index})",
                    truth,
                    dataset,
                    "imaging",
                    dataset,
                    truth,
                    "public",
                    "tissue" if dataset == "derm" else "",
                    "Giemsa" if dataset == "blood" else "",
                ]
            )
            ids.append(f"cls_open-{index}")
            for cond in ("C+Q", "C+Q+I"):
                replay.append({"item_id": f"cls_open-{index}", "condition": cond, "response": resp})
    for j in range(private):
        rows.append(
            [
                10_000 + j,
                "/home/author/mmbu/images/x1.png",
                "What is the finding?",
                "",
                "cxr",
                "imaging",
                "cxr",
                "",
                "private",
                "",
                "",
            ]
        )
    write_tsv(root / "cls_open.tsv", header, rows)
    closed = [
        [
            i,
            "/data/x1.png",
            "Which cell is shown?",
            "B",
            json.dumps(LABELS["blood"]),
            "blood",
            "microscopy",
            "neutrophil" if i else "lymphocyte",
        ]
        for i in range(4)
    ]
    write_tsv(
        root / "cls_closed.tsv",
        ["index", "image_path", "question", "answer", "options", "dataset", "modality", "class_label"],
        closed,
    )
    det = [
        [i, "C:\\data\\x2.png", "Where is the nodule?", "", json.dumps(gold), "cxr", "x-ray", "nodule"]
        for i, (gold, *_rest) in enumerate(DETECTION)
    ]
    write_tsv(
        root / "det_grounding_open.tsv",
        ["index", "image_path", "question", "answer", "bbox", "dataset", "modality", "class_label"],
        det,
    )
    for i, (_, reply, *_rest) in enumerate(DETECTION):
        for cond in ("C+Q", "C+Q+I"):
            replay.append({"item_id": f"det_grounding_open-{i}", "condition": cond, "response": reply})
    for i in range(4):
        for cond in ("C+Q", "C+Q+I"):
            replay.append({"item_id": f"cls_closed-{i}", "condition": cond, "response": '{"answer": ["B"]}'})
    path = root / "answers.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in replay))
    return {"replay": path, "open_ids": ids}


def judge_reply(prompt: str) -> str | None:
    """A strict judge: the verdict of RULES for the prompt's (true answer, model answer);
    without a rule, a reply that is no verdict. Other requests (the preflight) get the default."""
    if "True answer: " not in prompt:
        return None
    truth = prompt.split("True answer: ", 1)[1].split("\n", 1)[0]
    answer = prompt.split("Model answer: ", 1)[1].split("\n", 1)[0]
    verdict = RULES.get((truth, answer))
    if verdict is None:
        return "I am not sure."
    return f"Rationale: '{answer}' against '{truth}'. [RESULT] {verdict}"

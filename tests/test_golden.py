"""Behaviour unchanged: every command of `tests/golden.py`'s fixed set (run, score, report --json
and each --table and --pass, audit --json, compare --json, view, eval --dry-run, import, on the
JMed48k sample, IgakuQA, MIR and WorldMedQA-V's Japan tables) prints, once normalised, the very
bytes of its golden file under tests/fixtures/golden/. An intended change of output is written
with `python -m tests.golden --update` and said in its commit."""

from __future__ import annotations

import pytest

from tests import golden


def test_every_command_of_the_set_prints_its_golden_json_byte_for_byte(tmp_path):
    produced = golden.produce(tmp_path.resolve())
    kept = {p.stem for p in golden.GOLDEN.glob("*.json")}
    assert kept == set(produced), (
        f"golden files without a command: {sorted(kept - set(produced))}; commands without a golden file: "
        f"{sorted(set(produced) - kept)} (python -m tests.golden --update writes them)"
    )
    differences = []
    for name, content in produced.items():
        want = (golden.GOLDEN / f"{name}.json").read_bytes()
        if content != want:
            command = " ".join(golden.COMMANDS[name])
            differences.append(f"{name} (medvqa {command}): {golden.where_differs(content, want)}")
    if differences:
        pytest.fail("output differs from its golden file:\n" + "\n".join(differences), pytrace=False)


def test_the_comparison_names_the_first_differing_path():
    golden_doc = {"conditions": {"C+Q": {"n": 17, "correct": 1}}, "runs": [{"model": "random"}, {"model": "m"}]}
    assert golden.first_difference(golden_doc, golden_doc) is None
    changed = {"conditions": {"C+Q": {"n": 17, "correct": 2}}, "runs": [{"model": "random"}, {"model": "x"}]}
    assert golden.first_difference(changed, golden_doc) == "$.conditions.C+Q.correct: 2 != golden 1"
    assert (
        golden.first_difference({**golden_doc, "runs": golden_doc["runs"][:1]}, golden_doc)
        == "$.runs: 1 elements != golden 2"
    )
    assert (
        golden.first_difference({"runs": [], "conditions": {}}, {"conditions": {}, "runs": []})
        == "$: keys in another order: ['runs', 'conditions'] != golden ['conditions', 'runs']"
    )
    assert golden.first_difference({"n": 1.0}, {"n": 1}) == "$.n: 1.0 != golden 1"
    layout = "the same JSON laid out otherwise, from line"
    assert golden.where_differs(b'{\n  "n": 1\n}\n', b'{\n "n": 1\n}\n') == f"{layout} 2"
    assert golden.where_differs(b'{\n "n": 1\n}', b'{\n "n": 1\n}\n') == f"{layout} 4"  # the last newline
    assert golden.where_differs(b'{\n "n": 2\n}\n', b'{\n "n": 1\n}\n') == "$.n: 2 != golden 1"


def test_normalising_replaces_the_roots_and_the_images_only(tmp_path):
    roots = {str(tmp_path / "cache"): "<cache>", str(tmp_path): "<tmp>"}
    text = (
        f'{{"run_dir": "{tmp_path / "r"}", "items": "{tmp_path / "cache" / "items"}",\n'
        ' "i": ["data:image/jpeg;base64,/9j/4AAQSkZJRg=="], "note": "tmp", "n": 3}\n'
    )
    assert golden.normalise(text, roots) == (
        '{"run_dir": "<tmp>/r", "items": "<cache>/items",\n "i": ["<image>"], "note": "tmp", "n": 3}\n'
    )

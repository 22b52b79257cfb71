import json
import math
import random
import struct

import pytest

from medvqa.core.jsonl import loads
from tests.conftest import REPO


@pytest.mark.parametrize(
    "text",
    [
        b'{"b": 1, "a": [1.5, -0.0, 1e400, 123456789012345678901234567890, null, true]}',
        b'{"a": 1, "b": 2, "a": 3}',  # a repeated key: the last one, in the first one's place
        b'"\\ud83d"',  # an escaped lone surrogate (a cut emoji): jiter refuses it, json reads it
        '"\ud800"',  # a lone surrogate as text
        b'\xef\xbb\xbf{"a": 1}',  # a byte-order mark
        b"[" * 300 + b"]" * 300,  # deeper than jiter goes
        '{"問題": "膵の萎縮を認める。", "n": 0.1}',
    ],
)
def test_loads_gives_what_json_gives(text):
    got, expected = loads(text), json.loads(text)
    assert got == expected and json.dumps(got) == json.dumps(expected)


@pytest.mark.parametrize("text", [b"not json", b'{"a": 1}{', b"[1,]", b'{"a": "\xff"}', b""])
def test_loads_fails_as_json_fails(text):
    with pytest.raises(ValueError) as got:
        loads(text)
    with pytest.raises(ValueError) as expected:
        json.loads(text)
    assert type(got.value) is type(expected.value) and str(got.value) == str(expected.value)


def test_a_real_runs_records_read_as_json_reads_them():
    """Every line of the records of a run shipped as a test fixture, as json reads it."""
    lines = [
        line
        for path in sorted((REPO / "tests" / "fixtures").rglob("records.jsonl"))
        for line in path.read_bytes().split(b"\n")
        if line.strip()
    ]
    assert len(lines) >= 40
    assert [loads(line) for line in lines] == [json.loads(line) for line in lines]


def test_numbers_read_as_json_reads_them():
    """Seeded random doubles written the ways a record holds them (repr, 17 digits, an exponent)."""
    rng = random.Random(0)
    for _ in range(10_000):
        x = struct.unpack("d", rng.randbytes(8))[0]
        if math.isfinite(x):
            for text in (repr(x), f"{x:.17g}", f"{rng.random():.5e}"):
                assert loads(text) == json.loads(text), text

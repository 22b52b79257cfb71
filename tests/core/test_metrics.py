"""The one metrics layer (`core/metrics.py`): a cell of records under a benchmark's rules."""

from medvqa.core import metrics, plugins
from medvqa.core.benchmark import Benchmark


def records() -> list[dict]:
    """Six records: four answered (three right), a parse failure and a held-out one (never counted)."""
    out = [{"item_id": f"q{i}", "condition": "C+Q", "status": "answered", "correct": i < 3} for i in range(4)]
    out.append({"item_id": "q4", "condition": "C+Q", "status": "parse_failure", "correct": False})
    out.append({"item_id": "q5", "condition": "C+Q", "status": "answered", "correct": True, "held_out": True})
    return out


def test_a_benchmark_that_counts_every_record_is_not_asked_per_record(monkeypatch):
    """JMed48k keeps the default `Benchmark.counts`: every live record counts, so the cell of
    24,000 records asks nothing per record; 3 right of the 5 live ones."""
    asked = []
    monkeypatch.setattr(Benchmark, "counts", lambda self, record: asked.append(record) or True)
    c = metrics.cell(records(), plugins.get_benchmark("jmed48k"))
    assert (c.n, c.correct, c.value, c.uncounted, c.statuses) == (5, 3, 0.6, 0, {"answered": 4, "parse_failure": 1})
    assert asked == []


def test_a_benchmark_with_its_own_rule_is_asked_for_each_live_record():
    """A benchmark that takes q1 out of scoring (as an exam authority withdraws an item): 2 right of 4."""

    class Withdrawn(type(plugins.get_benchmark("jmed48k"))):
        def counts(self, record) -> bool:
            return record["item_id"] != "q1"

    c = metrics.cell(records(), Withdrawn())
    assert (c.n, c.correct, c.value, c.uncounted) == (4, 2, 0.5, 1)


def test_which_strata_records_hold_is_known_from_the_first_record_holding_each():
    """`held_fields` of 1,000 records: `year` and `block` are read off the first record; only a
    name no record holds (`section`, then its alias `block`; `image_type`) is looked for in all 1,000."""
    touched = []

    class Record(dict):
        def __iter__(self):
            touched.append(self["item_id"])
            return super().__iter__()

        def __contains__(self, key):
            touched.append(self["item_id"])
            return super().__contains__(key)

    records = [Record(item_id=f"q{i}", condition="C+Q", year=2024, block="A") for i in range(1000)]
    assert metrics.held_fields(["year", "block"], records) == ({"year": "year", "block": "block"}, [])
    assert touched == ["q0", "q0"]
    touched.clear()
    assert metrics.held_fields(["section"], records, {"section": "block"}) == ({"section": "block"}, [])
    assert len(touched) == 1001
    touched.clear()
    assert metrics.held_fields(["image_type"], records) == ({}, ["image_type"])
    assert len(touched) == 1000

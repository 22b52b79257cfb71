"""Linked question sets as clusters (`medvqa.mhlw.case_clusters`, which JMed48k and the
KokushiMD-10 family share): a set's opening question names its members ("次の文を読み、40、41の問い
に答えよ。"), and the set is one case of the `case` level; the exam block is the `block` level."""

from __future__ import annotations

from collections import Counter

from medvqa.core import plugins
from medvqa.mhlw import linked_numbers
from tests.conftest import shared_data


def test_a_sets_opening_names_its_members_in_every_form_the_exams_print():
    assert linked_numbers("40、41") == [40, 41]
    assert linked_numbers("４０，４１，４２") == [40, 41, 42]  # full-width digits and commas
    assert linked_numbers("40～42") == [40, 41, 42]
    assert linked_numbers("40〜41") == [40, 41]


def test_igakuqa_holds_forty_linked_sets_in_thirty_blocks():
    # the 2,000 IgakuQA items (2018-2022, six blocks a year): 40 openings "次の文を読み、…の問いに答えよ。",
    # 20 sets of two questions and 20 of three, each inside one block
    bench = plugins.get_benchmark("igakuqa")
    items = bench.load(shared_data("igakuqa"))
    clusters = bench.clusters(items)
    cases = Counter(c["case"] for c in clusters.values() if "case" in c)
    assert (len(items), len(cases), Counter(cases.values())) == (2000, 40, Counter({2: 20, 3: 20}))
    assert len({c["block"] for c in clusters.values()}) == 30
    by_id = {it.id: it for it in items}
    for case in cases:  # a case's members share its block, and its first member opens the set
        members = sorted(
            (it for i, it in by_id.items() if clusters[i].get("case") == case), key=lambda it: int(it.meta["number"])
        )
        assert {clusters[m.id]["block"] for m in members} == {case.rsplit("-", 1)[0]}
        assert members[0].question.lstrip().startswith("次の文を読み")

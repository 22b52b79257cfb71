"""Exam-date curves on IgakuQA (the 112th-116th exams, 2018-2022): a planted model whose accuracy
drops after its declared knowledge cutoff shows the drop, with the interval the metrics layer's
cells give (Wilson's with the boundary correction) combined by Newcombe's MOVER."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.contamination_cmd import command
from medvqa.core import stats
from medvqa.core.contamination.curves import parse_cutoff, side
from medvqa.core.errors import UsageError
from tests.conftest import shared_data

BLOCKS = ["112A", "113A", "114A", "115A", "116A"]  # one block of each year, 2018-2022
# their 371 questions scored as asked: without the withdrawn ones (counted by no convention's
# rules alike) and the one credited to all (any answer is right)
SELECT = {"block": BLOCKS, "withdrawn": ["false"], "credited_to_all": ["false"]}
# the planted model: right on 8 items in 10 of the exams up to 2019, 6 in 10 in 2020 and 4 in 10 after
RIGHT_PER_10 = {2018: 8, 2019: 8, 2020: 6, 2021: 4, 2022: 4}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("curves")
    items = medvqa.load("igakuqa", shared_data("igakuqa"), select=SELECT)
    lines, counts = [], {}
    for item in items:
        year = item.meta["year"]
        k = counts.setdefault(year, [0, 0])
        right = k[0] % 10 < RIGHT_PER_10[year]
        gold = sorted(item.gold.keys)
        # a wrong option; 113A75 has none (its answer is a number, 146): another number
        wrong = next((o.key for o in item.options if o.key not in gold), "0")
        answer = gold if right else [wrong]
        lines.append(json.dumps({"item_id": item.id, "condition": "C+Q", "response": json.dumps({"answer": answer})}))
        k[0] += 1
        k[1] += right
    replay = tmp / "planted.jsonl"
    replay.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = medvqa.run(
        "igakuqa",
        f"replay:{replay}",
        data=str(shared_data("igakuqa")),
        select=SELECT,
        conditions="C+Q",
        run_dir=str(tmp / "run"),
        progress=False,
    )
    return outcome.run_dir, counts


def test_the_planted_drop_after_the_cutoff_is_shown_with_its_interval(planted):
    run_dir, counts = planted
    result = CliRunner().invoke(command, [str(run_dir), "-M", "cutoff=2020-06", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["exam_dates"]
    (run,) = doc["runs"]
    c = run["conditions"]["C+Q"]
    # by year, the planted counts exactly (each year's n is the block's scored items)
    for year, (n, right) in counts.items():
        cell = c["years"][str(year)]
        assert (cell["n"], cell["correct"]) == (n, right), year
    # 2020-06 falls inside 2020: left out of both sides; before = 2018 + 2019, after = 2021 + 2022
    assert c["straddles"] == ["2020"]
    n1, k1 = counts[2018][0] + counts[2019][0], counts[2018][1] + counts[2019][1]
    n2, k2 = counts[2021][0] + counts[2022][0], counts[2021][1] + counts[2022][1]
    assert (c["before"]["n"], c["before"]["correct"], c["after"]["n"], c["after"]["correct"]) == (n1, k1, n2, k2)
    # about 80 % before against 40 % after: a drop of about 40 points
    d = k1 / n1 - k2 / n2
    assert c["difference"] == pytest.approx(d) and 0.35 < d < 0.45
    # Newcombe's MOVER from each side's Wilson (boundary-corrected) interval, by hand
    (l1, u1), (l2, u2) = stats.binomial_ci(k1, n1), stats.binomial_ci(k2, n2)
    p1, p2 = k1 / n1, k2 / n2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    assert c["difference_ci"] == [pytest.approx(low), pytest.approx(high)]
    assert 0 < low < d < high  # the drop is clear of zero
    assert c["before"]["ci"] == [pytest.approx(l1), pytest.approx(u1)]
    # the pooled curve of one run is that run's
    assert doc["pooled"][run["model"]]["C+Q"]["difference"] == pytest.approx(d)


def test_a_model_without_a_cutoff_gets_the_curve_without_the_split(planted):
    run_dir, counts = planted
    result = CliRunner().invoke(command, [str(run_dir), "--json"])
    c = json.loads(result.stdout)["exam_dates"]["runs"][0]["conditions"]["C+Q"]
    assert set(c) == {"years", "no_year"} and sorted(c["years"]) == ["2018", "2019", "2020", "2021", "2022"]
    text = CliRunner().invoke(command, [str(run_dir), "-M", "cutoff=2020-06"]).output
    assert "cutoff 2020-06" in text and "2020 left out (the cutoff falls inside)" in text


def test_the_cutoff_and_the_sides_of_a_year():
    assert parse_cutoff("2024-06") == (2024, 6) and parse_cutoff("2021") == (2021, 12)
    # an exam year is before when all of it is: a cutoff of December 2021 puts 2021 before
    assert [side(y, (2021, 12)) for y in (2021, 2022)] == ["before", "after"]
    assert [side(y, (2021, 1)) for y in (2020, 2021, 2022)] == ["before", "straddles", "after"]
    with pytest.raises(UsageError, match="2024-13"):
        parse_cutoff("2024-13")


def test_the_page_shows_the_numbers_of_the_json_document(planted, tmp_path):
    import html as html_module
    import re

    from medvqa.core.audit.page import value_at
    from medvqa.core.render import fmt

    run_dir, _ = planted
    page = tmp_path / "contamination.html"
    result = CliRunner().invoke(command, [str(run_dir), "-M", "cutoff=2020-06", "--json", "--html", str(page)])
    doc = json.loads(result.stdout)
    text = page.read_text(encoding="utf-8")
    cells = re.findall(r'data-path="([^"]+)" data-format="(\w+)">([^<]*)<', text)
    # 5 years and the two sides, 3 numbers each, and the difference with its interval
    assert len(cells) == 7 * 3 + 2
    for path, kind, shown in cells:
        value = value_at(doc, json.loads(html_module.unescape(path)))
        assert html_module.unescape(shown) == fmt(value, kind), path
    assert "+38.5" in text  # the drop, in points

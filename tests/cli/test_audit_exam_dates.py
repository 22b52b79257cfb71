"""The audit page's section of exam-date curves: a run whose records carry exam years gets its
accuracy by year drawn (SVG, as the page draws its charts) and tabled, every number the value at
its JSON path in the `--json` document printed beside it; `--cutoff` splits the curve where the
model's knowledge ends, and adds the curves to `--json` only when given (the document of an
audit without it is unchanged); the page of runs without exam years has no such section."""

from __future__ import annotations

import html
import json
import math
import re

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.audit_cmd import command
from medvqa.cli.contamination_cmd import command as contamination_command
from medvqa.core import stats
from medvqa.core.audit.page import value_at
from medvqa.core.render import fmt
from tests.conftest import shared_data

# IgakuQA's 112th exam (2018) and 116th (2022), block A each, scored as asked: 74 and 73 items
SELECT = {"block": ["112A", "116A"], "withdrawn": ["false"], "credited_to_all": ["false"]}


def early_replay(path):
    """The replies of the model `early` to the blocks of `SELECT`, as a replay file: right on every
    2018 item, and on every second 2022 item (items 0, 2, ..., 72: 37 of 73)."""
    items = medvqa.load("igakuqa", shared_data("igakuqa"), select=SELECT)
    lines, seen = [], {2018: 0, 2022: 0}
    for item in items:
        year = item.meta["year"]
        right = year == 2018 or seen[year] % 2 == 0
        seen[year] += 1
        gold = sorted(item.gold.keys)
        answer = gold if right else [next(o.key for o in item.options if o.key not in gold)]
        lines.append(json.dumps({"item_id": item.id, "condition": "C+Q", "response": json.dumps({"answer": answer})}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A run of the model `early`: right on every 2018 item, and on every second 2022 item
    (items 0, 2, ..., 72: 37 of 73)."""
    tmp = tmp_path_factory.mktemp("audit-dates")
    replay = early_replay(tmp / "early.jsonl")
    outcome = medvqa.run(
        "igakuqa",
        f"replay:{replay}",
        model_name="early",
        data=str(shared_data("igakuqa")),
        select=SELECT,
        conditions="C+Q",
        run_dir=str(tmp / "run"),
        progress=False,
    )
    return outcome.run_dir


def page_cells(text: str) -> list[tuple[list, str, str]]:
    return [
        (json.loads(html.unescape(path)), kind, html.unescape(shown))
        for path, kind, shown in re.findall(r'data-path="([^"]+)" data-format="(\w+)">([^<]*)<', text)
    ]


def test_the_page_draws_the_curve_of_a_run_with_exam_years_and_the_json_holds_it_only_when_asked(planted, tmp_path):
    plain = CliRunner().invoke(command, [str(planted), "--json", "--resamples", "50"])
    assert "exam_dates" not in json.loads(plain.stdout)  # the document of an audit without it is unchanged

    page = tmp_path / "audit.html"
    result = CliRunner().invoke(command, [str(planted), "--json", "--resamples", "50", "--html", str(page)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    text = page.read_text(encoding="utf-8")
    assert ">Exam-date curves</h2>" in text and "none declared (medvqa audit --cutoff YYYY-MM)" in text
    # without a cutoff: two years, no split. 2018: 74/74 = 100.0 %; 2022: 37/73 = 50.7 %
    c = doc["exam_dates"]["runs"][0]["conditions"]["C+Q"]
    assert [(y, v["n"], v["correct"]) for y, v in c["years"].items()] == [("2018", 74, 74), ("2022", 73, 37)]
    assert set(c) == {"years", "no_year"} and "before the cutoff" not in text
    dated = [cell for cell in page_cells(text) if cell[0][0] == "exam_dates"]
    assert len(dated) == 2 * 3  # two years, n, accuracy and interval each
    for path, kind, shown in dated:
        assert shown == fmt(value_at(doc, path), kind), path
    # the chart: a point per year with its interval in its tip, as the page's other charts carry them
    lo, hi = stats.binomial_ci(37, 73)
    assert f"<title>2022: 50.7 % (n=73) [{100 * lo:.1f}, {100 * hi:.1f}]</title>" in text
    assert "<title>early on igakuqa (ja), C+Q</title>" in text


def test_a_declared_cutoff_splits_the_curve_on_the_page_and_in_the_json(planted, tmp_path):
    page = tmp_path / "audit.html"
    args = [str(planted), "--json", "--resamples", "50", "--cutoff", "early=2020-06", "--html", str(page)]
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    dates = doc["exam_dates"]
    c = dates["runs"][0]["conditions"]["C+Q"]
    assert dates["cutoffs"] == {"early": "2020-06"}
    # before: 2018, 74/74; after: 2022, 37/73; difference 1 − 37/73 = 36/73 = +49.3 pp, with
    # Newcombe's MOVER from the two Wilson (boundary-corrected) intervals, by hand:
    # L = d − √((p₁ − l₁)² + (u₂ − p₂)²), U = d + √((u₁ − p₁)² + (p₂ − l₂)²)
    (l1, u1), (l2, u2) = stats.binomial_ci(74, 74), stats.binomial_ci(37, 73)
    d, p2 = 36 / 73, 37 / 73
    low, high = d - math.sqrt((1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - 1) ** 2 + (p2 - l2) ** 2)
    assert c["difference"] == pytest.approx(d) and c["difference_ci"] == [pytest.approx(low), pytest.approx(high)]
    # one computation: `medvqa contamination` prints the same curve of the same run
    alone = CliRunner().invoke(contamination_command, [str(planted), "-M", "cutoff=2020-06", "--json"])
    assert json.loads(alone.stdout)["exam_dates"]["runs"][0]["conditions"] == dates["runs"][0]["conditions"]

    # and the Python API returns the same document
    assert medvqa.audit(planted, resamples=50, cutoff={"early": "2020-06"})["exam_dates"] == dates

    text = page.read_text(encoding="utf-8")
    assert "Knowledge cutoffs: early: 2020-06." in text
    assert "cutoff 2020-06</text>" in text and "before 100.0</text>" in text and "after 50.7</text>" in text
    assert "before the cutoff" in text and "+49.3" in text
    dated = [cell for cell in page_cells(text) if cell[0][0] == "exam_dates"]
    assert len(dated) == 4 * 3 + 2  # two years and the two sides, and the difference with its interval
    for path, kind, shown in dated:
        assert shown == fmt(value_at(doc, path), kind), path

    said = CliRunner().invoke(command, [str(planted), "--resamples", "50", "--cutoff", "2020-06"])
    assert "exam-date curves; cutoff 2020-06" in said.output
    assert "before 100.0% (n 74), after 50.7% (n 73): difference +49.3 pp" in said.output


def test_a_cutoff_that_cannot_apply_is_refused_naming_it(planted):
    for cutoff, message in [
        ("nobody=2020-06", "no run of a model named 'nobody' (models: early)"),
        ("2020-13", "cutoff '2020-13': write it YYYY-MM"),
    ]:
        result = CliRunner().invoke(command, [str(planted), "--resamples", "50", "--cutoff", cutoff])
        assert result.exit_code != 0 and message in result.output, result.output
    result = CliRunner().invoke(command, [str(planted), "--cutoff", "2020-06", "--cutoff", "early=2021"])
    assert result.exit_code != 0 and "not both" in result.output


def test_the_page_of_runs_without_exam_years_has_no_curve(tmp_path):
    # WorldMedQA-V's records carry a country, no exam year
    outcome = medvqa.run(
        "worldmedqa_v",
        "random",
        data=str(shared_data("worldmedqa-v-japan")),
        limit=6,
        run_dir=str(tmp_path / "run"),
        progress=False,
    )
    page = tmp_path / "audit.html"
    result = CliRunner().invoke(command, [str(outcome.run_dir), "--resamples", "50", "--html", str(page), "--json"])
    assert result.exit_code == 0, result.output
    assert "exam_dates" not in json.loads(result.stdout)
    assert "Exam-date curves" not in page.read_text(encoding="utf-8")
    refused = CliRunner().invoke(command, [str(outcome.run_dir), "--cutoff", "2024-06"])
    assert refused.exit_code != 0 and "no record of these runs carries an exam year" in refused.output

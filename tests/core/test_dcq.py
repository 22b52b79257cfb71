"""The Data Contamination Quiz's estimate, against its authors' code and their published reports.

The authors' code (github.com/shahriargolchin/DCQ, commit 04bd66b) fixes the computation:
`src/helpers/option_counter.py` (`letter_counter`, `calculate_non_preferred_options`,
`QuizPerformance.calculate_best_quiz_performance`) and the report's format,
`src/helpers/experiment_result_saver.py` (`prepare_contamination_report`: shares and the level as
percentages with two decimals). Their per-instance answers and reports for 10 partitions are in
../shared/data/dcq (SOURCE.txt); every number the parity test expects is read from those
reports, none is written here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from medvqa.cli.contamination_cmd import command
from medvqa.core import dcq
from medvqa.core.items import DataError
from tests.conftest import shared_data

PARTITIONS = [
    "reported_contamination/drop",
    "reported_contamination/gsm8k",
    "reported_contamination/humaneval",
    "wild_evaluation/gpt4/ag_news",
    "wild_evaluation/gpt4/imdb",
    "wild_evaluation/gpt4/rte",
    "wild_evaluation/gpt4/samsum",
    "wild_evaluation/gpt4/wnli",
    "wild_evaluation/gpt4/xsum",
    "wild_evaluation/gpt4/yelp",
]


def published(report: str) -> dict:
    """The numbers of an authors' report, as printed: BDQ shares, the non-preferred positions,
    each BCQ's shares, and the level's two bounds."""
    sections = report.split("=" * 50)
    shares = [dict(re.findall(r"^Option ([A-E]): ([\d.]+%)$", s, re.M)) for s in sections]
    positions = re.findall(r"correct answers in position ([A-D]):", report)
    lower, upper = re.search(r"Detected Contamination Level: \[([\d.]+%), ([\d.]+%)\]", report).groups()
    return {
        "bdq": shares[0],
        "non_preferred": re.search(r"^Non-preferred Options: (.*)$", report, re.M).group(1).split(", "),
        "bcq": dict(zip(positions, shares[1 : 1 + len(positions)], strict=True)),
        "level": [lower, upper],
    }


def printed(doc: dict) -> dict:
    """medvqa's --json, printed to the reports' precision."""
    as_percent = {k: dcq.percent(v) for k, v in doc["bdq"]["shares"].items()}
    return {
        "bdq": as_percent,
        "non_preferred": doc["non_preferred"],
        "bcq": {p: {k: dcq.percent(v) for k, v in c["shares"].items()} for p, c in doc["bcq"].items()},
        "level": [dcq.percent(doc["level"]["lower"]), dcq.percent(doc["level"]["upper"])],
    }


@pytest.mark.parametrize("partition", PARTITIONS)
def test_every_published_level_and_share_is_reproduced_from_the_authors_answers(partition):
    folder = shared_data("dcq", partition)
    (csv_file,) = folder.glob("*.csv")
    (report_file,) = folder.glob("data_contamination_report_for_*.txt")
    assert report_file.name == f"data_contamination_report_for_{csv_file.stem}.txt"
    result = CliRunner().invoke(command, ["--dcq-results", str(csv_file), "--json"])
    assert result.exit_code == 0, result.output
    ours, theirs = printed(json.loads(result.stdout)["dcq"]), published(report_file.read_text(encoding="utf-8"))
    # each difference named: which number, ours against theirs (none is known: every partition agrees)
    differences = [
        f"{key}: medvqa {ours[key]} against the report's {theirs[key]}" for key in theirs if ours[key] != theirs[key]
    ]
    assert not differences, f"{partition}: " + "; ".join(differences)


@pytest.mark.parametrize("partition", PARTITIONS)
def test_the_text_output_is_the_authors_report_line_for_line(partition):
    folder = shared_data("dcq", partition)
    (csv_file,) = folder.glob("*.csv")
    (report_file,) = folder.glob("data_contamination_report_for_*.txt")
    result = CliRunner().invoke(command, ["--dcq-results", str(csv_file)])
    assert result.exit_code == 0, result.output
    # the authors' files differ only in a final newline (some have one, some not)
    assert result.stdout.rstrip("\n") == report_file.read_text(encoding="utf-8").rstrip("\n")


def test_gsm8k_worked_as_source_txt_works_it():
    # BCQ D: 79 of 100 correct, BDQ picked D once: kappa = (79 - 1) / (100 - 1) = 78/99 = 0.787878...;
    # the second-best BCQ (C) 69/100 = 0.69 < kappa, so lower = 78/99, upper = 79/100
    folder = shared_data("dcq", "reported_contamination", "gsm8k")
    est = dcq.estimate_results((folder / "gsm8k_train.csv").read_text(encoding="utf-8"), file="gsm8k_train.csv")
    assert (est.n, est.best, est.bdq["d"], est.bcq["d"]["d"]) == (100, "d", 1, 79)
    assert est.kappa == pytest.approx(78 / 99) and est.second == pytest.approx(0.69)
    assert (est.lower, est.upper) == (pytest.approx(78 / 99), pytest.approx(0.79))


def test_samsum_lower_bound_is_the_second_best_quiz_when_kappa_is_below_it():
    # samsum: BDQ A 15, B 3, C 1, D 4 of 100: all four below ceil(100/5) = 20, so four BCQs;
    # A and D both 77 correct: the tie goes to D (BDQ 4 < 15); kappa = (77-4)/(100-4) = 0.7604;
    # second best (A) 0.77 > kappa, so the level is [77 %, 77 %] as the report prints
    folder = shared_data("dcq", "wild_evaluation", "gpt4", "samsum")
    est = dcq.estimate_results((folder / "samsum_test.csv").read_text(encoding="utf-8"), file="samsum_test.csv")
    assert est.non_preferred == ["a", "b", "c", "d"] and est.best == "d"
    assert est.kappa == pytest.approx(73 / 96) and (est.lower, est.upper) == (0.77, 0.77)


def test_letters_count_as_whole_words_case_insensitively_and_missing_cells_count_nothing():
    # "a" in "Answer: A" counts once ("answer" is no whole-word a); "B or C" counts B and C;
    # "N/A" is a cell pandas reads as missing (None here), so no A; "" counts nothing, as "Dog" does
    answers = ["Answer: A", "B or C", None, "", "Dog", "e", "E)"]
    assert dcq.letter_counts(answers) == {"a": 1, "b": 1, "c": 1, "d": 0, "e": 2}
    assert dcq.answer_cell("N/A") is None and dcq.answer_cell(" A") == " A"


def test_a_hand_worked_quiz_with_a_tie_and_no_position_below_chance():
    # n = 5, chance count ceil(5/5) = 1: BDQ A, B, C, D, E once each -> no position has fewer than
    # 1 pick, so all four are non-preferred (the authors' fallback).
    bdq = ["A", "B", "C", "D", "E"]
    # BCQ B: 3 correct; BCQ C: 3 correct; A and D: 1 each. Tie B/C at 3, both with BDQ count 1:
    # the sort is stable, so B (first) is best. kappa = (3 - 1) / (5 - 1) = 0.5; second = 3/5 = 0.6
    bcq = {
        "a": ["A", "E", "E", "E", "E"],
        "b": ["B", "B", "B", "E", "E"],
        "c": ["C", "C", "C", "A", "E"],
        "d": ["D", "E", "E", "E", "E"],
    }
    est = dcq.estimate(bdq, bcq)
    assert est.non_preferred == ["a", "b", "c", "d"] and est.best == "b"
    assert (est.kappa, est.second, est.lower, est.upper) == (0.5, 0.6, 0.6, 0.6)


def test_one_non_preferred_position_gives_kappa_alone_where_the_authors_code_fails():
    # n = 5, chance 1: BDQ A, B, C twice... A 2, B 2, C 1, D 0 -> only D below 1 (E never counts).
    # BCQ D: 4 of 5 correct, BDQ D 0: kappa = 4/5; the authors index a second BCQ that is not
    # there (IndexError); medvqa's lower bound is kappa alone
    est = dcq.estimate(["A", "A", "B", "B", "C"], {"d": ["D", "D", "D", "D", "E"]})
    assert est.non_preferred == ["d"] and est.second is None
    assert (est.kappa, est.lower, est.upper) == (0.8, 0.8, 0.8)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "quiz.csv"
    path.write_text(text, encoding="utf-8")
    return path


def fails(*args: str) -> str:
    result = CliRunner().invoke(command, list(args))
    assert result.exit_code == 1, result.output
    return result.output


def test_a_row_of_the_wrong_width_is_named_by_file_row_and_line(tmp_path):
    path = write(tmp_path, 'instance,bdq_results,bcq_results_for_position_b\n"two\nlines",A,B\nx,E\n')
    out = fails("--dcq-results", str(path))
    assert f"{path}: record row 2 (line 4): 2 fields where the header names 3" in out


def test_a_file_without_the_bdq_column_is_named_with_its_columns(tmp_path):
    path = write(tmp_path, "instance,answer\nx,A\n")
    out = fails("--dcq-results", str(path))
    assert str(path) in out and "no column 'bdq_results'" in out and "instance, answer" in out


def test_a_missing_bcq_of_a_non_preferred_position_is_named(tmp_path):
    # n = 2, chance ceil(2/5) = 1: BDQ A, A -> B, C, D non-preferred; only B's BCQ is there
    path = write(tmp_path, "bdq_results,bcq_results_for_position_b\nA,B\nA,B\n")
    out = fails("--dcq-results", str(path))
    assert str(path) in out and "position C is non-preferred" in out


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "the file is empty"),
        (b"bdq_results\n", "a header and no rows"),
        (b"bdq_results\n\xff\n", "not UTF-8"),
        (b'bdq_results\n"A\n', "not a CSV file"),
    ],
)
def test_unreadable_files_are_errors_naming_the_file(tmp_path, content, says):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    out = fails("--dcq-results", str(path))
    assert str(path) in out and says in out


def test_the_python_api_returns_what_json_prints():
    import medvqa

    csv_file = shared_data("dcq", "wild_evaluation", "gpt4", "wnli", "wnli_valid.csv")
    doc = medvqa.contamination(dcq_results=csv_file)
    result = CliRunner().invoke(command, ["--dcq-results", str(csv_file), "--json"])
    assert json.loads(result.stdout) == json.loads(json.dumps(doc))
    assert doc["dcq"]["printed"] == "Detected Contamination Level: [49.30%, 50.70%]"


def test_no_input_is_a_usage_error():
    result = CliRunner().invoke(command, [])
    assert result.exit_code == 2 and "--dcq-results" in result.output
    with pytest.raises(DataError):
        dcq.estimate_results("bdq_results\n", file="x.csv")


def test_the_page_of_a_results_file_shows_the_json_numbers(tmp_path):
    import html as html_module

    from medvqa.core.audit.page import value_at
    from medvqa.core.render import fmt

    csv_file = shared_data("dcq", "reported_contamination", "gsm8k", "gsm8k_train.csv")
    page = tmp_path / "dcq.html"
    result = CliRunner().invoke(command, ["--dcq-results", str(csv_file), "--json", "--html", str(page)])
    doc = json.loads(result.stdout)
    cells = re.findall(r'data-path="([^"]+)" data-format="(\w+)">([^<]*)<', page.read_text(encoding="utf-8"))
    shown = {tuple(json.loads(html_module.unescape(p))): (k, t) for p, k, t in cells}
    # n, and the level [78.79 %, 79.00 %] at the page's one decimal
    assert shown[("dcq", "level", "lower")] == ("pct", fmt(78 / 99, "pct"))
    assert shown[("dcq", "level", "upper")] == ("pct", fmt(0.79, "pct"))
    assert all(fmt(value_at(doc, list(path)), k) == html_module.unescape(t) for path, (k, t) in shown.items())

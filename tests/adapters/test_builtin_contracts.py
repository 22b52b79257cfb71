"""Every built-in benchmark keeps the conformance kit's contracts on its real data or its
fixture, through the same call a third-party adapter's tests make (jmed48k has its own file)."""

import pytest

from medvqa.testing import check_benchmark
from tests.adapters.kokushimd10.fixtures import kokushi_release
from tests.conftest import REPO, shared_data


@pytest.mark.slow  # 2,000 items, each run twice: several seconds
def test_igakuqa_all_2000_real_items(tmp_path):
    report = check_benchmark("igakuqa", shared_data("igakuqa"), work_dir=tmp_path)
    # no images in IgakuQA: every item in C and C+Q
    assert report.ok and report.n_items == 2000 and report.n_records == {"random": 4000, "gold": 4000}


@pytest.mark.slow  # a real server or whole-data runs: seconds
def test_yakugakuqa_real_blocks(tmp_path):
    report = check_benchmark("yakugakuqa", shared_data("yakugakuqa"), work_dir=tmp_path)
    excluded = report.n_items - report.n_records["gold"] // 2
    assert report.ok and report.n_records["random"] == report.n_records["gold"] and excluded >= 0


def test_kokushimd10_release_layout_fixture(tmp_path):
    report = check_benchmark("kokushimd10", kokushi_release(tmp_path / "release"), work_dir=tmp_path / "kit")
    assert report.ok and report.n_items > 0


def test_polish_pes_fixture(tmp_path):
    report = check_benchmark("polish_pes", REPO / "tests" / "adapters" / "polish_pes" / "data", work_dir=tmp_path)
    # 14 items, 2 annulled; 8 VQA (one annulled) in four configurations, 6 QA (one annulled) in two
    assert report.ok and report.n_items == 14 and report.n_records == {"random": 7 * 4 + 5 * 2, "gold": 38}

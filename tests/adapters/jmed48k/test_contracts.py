"""JMed48k keeps every contract of the conformance kit, on the bundled sample and on the two
real physician exams (800 items, numeric slots, alternatives, image-as-options items)."""

from medvqa.testing import check_benchmark
from tests.conftest import shared_data


def test_the_bundled_sample_keeps_every_contract(medvqa_check):
    report = medvqa_check("jmed48k", split="sample")
    assert report.ok and report.n_items == 18
    # 17 live items in C and C+Q, the 5 with their images also in C+I and C+Q+I
    assert report.n_records == {"random": 17 * 2 + 5 * 2, "gold": 44}


def test_the_real_exams_keep_every_contract(tmp_path):
    report = check_benchmark("jmed48k", shared_data("jmed48k-sample"), split="full", work_dir=tmp_path)
    assert report.ok and report.n_items == 800 and "validate" in report.checks
    # 800 items in C and C+Q, the 17 with their image files in C+I and C+Q+I
    assert report.n_records == {"random": 1634, "gold": 1634}

"""Calibration metrics on planted sets whose values are worked out by hand.

The equal-mass ECE follows Kumar, Liang & Ma's `get_equal_bins` (p-lambda/verified_calibration,
calibration/utils.py), which HELM's `ece_10_bin` calls (stanford-crfm/helm,
src/helm/benchmark/metrics/basic_metrics.py, `compute_calibration_metrics`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from medvqa.core import calibration as cal
from medvqa.core.bootstrap import CLUSTER_BOOTSTRAP, EXPANDED_BOOTSTRAP


def test_overconfident_model_stating_95_at_60_percent_has_ece_035():
    # 100 answers all stated at 95 %, 60 right: one bin (0.9, 1.0], |0.60 − 0.95| = 0.35, and
    # the equal-mass bins all sit at 0.95 too: one merged bin, the same 0.35
    conf = [0.95] * 100
    right = [1] * 60 + [0] * 40
    out = cal.calibration(conf, right)
    assert out["ece"]["value"] == pytest.approx(0.35)
    assert out["ece"]["equal_mass"]["value"] == pytest.approx(0.35)
    assert out["ece"]["equal_mass"]["bins"] == 1
    # Brier: 60·0.05² + 40·0.95² = 0.15 + 36.1 = 36.25, over 100 = 0.3625
    assert out["brier"]["value"] == pytest.approx(0.3625)
    # one confidence for all: every right-wrong pair ties, AUROC ½; the curve has one point
    assert out["auroc"]["value"] == pytest.approx(0.5)
    assert out["risk_coverage"] == [{"threshold": 0.95, "coverage": 1.0, "risk": pytest.approx(0.4)}]
    assert out["aurc"]["value"] == pytest.approx(0.4)
    # an item-level bootstrap of 100 items: the interval holds the estimate and is not a point
    low, high = out["ece"]["ci"]
    assert low < 0.35 < high and out["ci_method"] == EXPANDED_BOOTSTRAP


def test_exactly_calibrated_planted_set_has_ece_zero():
    # five levels, 100 items each, exactly 10 %, 30 %, ... right at 0.1, 0.3, ...: every bin's
    # accuracy equals its confidence, so both ECEs are 0 (to rounding)
    conf, right = [], []
    for p in (0.1, 0.3, 0.5, 0.7, 0.9):
        k = round(100 * p)
        conf += [p] * 100
        right += [1] * k + [0] * (100 - k)
    assert cal.ece(conf, right) == pytest.approx(0, abs=1e-12)
    assert cal.ece(conf, right, binning=cal.EQUAL_MASS) == pytest.approx(0, abs=1e-12)


def test_calibrated_model_drawn_at_random_has_ece_within_the_bins_sampling_error():
    # A perfectly calibrated model whose answers are drawn: 200 items at each of 0.1, 0.3, 0.5,
    # 0.7, 0.9, each right with probability equal to its confidence. A bin's accuracy then misses
    # its confidence by |N(0, p(1 − p)/200)| on average √(2/π)·√(p(1 − p)/200):
    #   p = 0.1, 0.9: √(0.09/200) = 0.02121 → 0.01693
    #   p = 0.3, 0.7: √(0.21/200) = 0.03240 → 0.02586
    #   p = 0.5:      √(0.25/200) = 0.03536 → 0.02821
    # expected ECE = (2·0.01693 + 2·0.02586 + 0.02821) / 5 = 0.02276. Each bin's |error| has sd
    # √(1 − 2/π)·σ_b ≈ 0.60·σ_b, so the ECE's sd is √Σ(0.2·0.60·σ_b)² ≈ 0.0083: 0.0228 + 3 sd is
    # 0.048. A calibrated model lies below 0.05, and not at 0 (sampling error is never nil).
    expected = sum(math.sqrt(2 / math.pi) * math.sqrt(p * (1 - p) / 200) for p in (0.1, 0.3, 0.5, 0.7, 0.9)) / 5
    assert expected == pytest.approx(0.02276, abs=1e-5)
    rng = np.random.default_rng(7)
    conf = np.repeat([0.1, 0.3, 0.5, 0.7, 0.9], 200)
    right = (rng.random(conf.size) < conf).astype(int)
    value = cal.ece(conf, right)
    assert 0 < value < 0.05
    # the overconfident model of the same size is far outside that band
    assert cal.ece(np.full(1000, 0.95), np.arange(1000) < 600) == pytest.approx(0.35)


def test_small_set_auroc_aurc_brier_by_hand():
    conf = [0.9, 0.8, 0.7, 0.6]
    right = [1, 0, 1, 0]
    # AUROC: right {0.9, 0.7} against wrong {0.8, 0.6}: (0.9>0.8) (0.9>0.6) (0.7<0.8) (0.7>0.6)
    # = 3 of 4 pairs = 0.75
    assert cal.auroc(conf, right) == pytest.approx(0.75)
    # risk at k = 1..4 most confident: 0/1, 1/2, 1/3, 2/4; AURC = (0 + 0.5 + 0.3333 + 0.5)/4
    # = 1.3333/4 = 0.33333
    assert cal.aurc(conf, right) == pytest.approx(1 / 3)
    assert [p["risk"] for p in cal.risk_coverage(conf, right)] == pytest.approx([0, 0.5, 1 / 3, 0.5])
    assert [p["coverage"] for p in cal.risk_coverage(conf, right)] == pytest.approx([0.25, 0.5, 0.75, 1])
    # Brier: (0.1² + 0.8² + 0.3² + 0.6²)/4 = (0.01 + 0.64 + 0.09 + 0.36)/4 = 0.275
    assert cal.brier(conf, right) == pytest.approx(0.275)
    # ECE over 10 equal-width bins: each item alone in its bin: (0.1 + 0.8 + 0.3 + 0.6)/4 = 0.45
    assert cal.ece(conf, right) == pytest.approx(0.45)
    # equal-mass, 10 bins of 4 items: runs of ⌈4/4⌉ = 1, edges 0.65, 0.75, 0.85, 1.0: the same
    # four singleton bins, the same 0.45
    assert list(cal.bin_edges(np.array(conf), 10, cal.EQUAL_MASS)) == pytest.approx([0.65, 0.75, 0.85, 1.0])


def test_ties_count_half_in_auroc_and_group_in_the_curve():
    # right at 0.8, 0.5; wrong at 0.8, 0.2: pairs (0.8 vs 0.8) tie = ½, (0.8>0.2) 1, (0.5<0.8) 0,
    # (0.5>0.2) 1: (0.5 + 1 + 0 + 1)/4 = 0.625
    conf = [0.8, 0.5, 0.8, 0.2]
    right = [1, 1, 0, 0]
    assert cal.auroc(conf, right) == pytest.approx(0.625)
    # distinct thresholds 0.8 (2 answered, 1 wrong), 0.5 (3, 1 wrong), 0.2 (4, 2 wrong):
    # AURC = 0.5·(1/2) + 0.25·(1/3) + 0.25·(2/4) = 0.25 + 0.08333 + 0.125 = 0.45833
    assert cal.aurc(conf, right) == pytest.approx(0.25 + 0.25 / 3 + 0.125)


def test_bins_are_closed_on_the_right():
    # 0.1 sits in (0, 0.1], 0.2 in (0.1, 0.2]: two bins, each off by its own gap
    rows = cal.reliability([0.1, 0.2], [0, 1])
    assert [(r["high"], r["n"]) for r in rows] == [(0.1, 1), (0.2, 1)]
    # (|0 − 0.1| + |1 − 0.2|)/2 = 0.45
    assert cal.ece([0.1, 0.2], [0, 1]) == pytest.approx(0.45)


def test_auroc_is_undefined_with_one_class():
    assert cal.auroc([0.2, 0.9], [1, 1]) is None
    out = cal.calibration([0.9] * 30, [1] * 30)
    assert out["auroc"] == {"value": None, "ci": None}


def test_clusters_resample_whole_clusters_and_small_groups_get_no_interval():
    conf = [0.95] * 100
    right = [1] * 60 + [0] * 40
    clusters = [i // 2 for i in range(100)]  # 50 clusters of two
    out = cal.calibration(conf, right, clusters=clusters)
    assert out["ci_method"] == CLUSTER_BOOTSTRAP and out["n_units"] == 50
    assert out["ece"]["ci"] is not None
    small = cal.calibration(conf[:10], right[:10])
    assert small["ece"]["ci"] is None and "below 20" in small["note"]


def test_bad_confidence_is_refused_naming_the_item():
    with pytest.raises(ValueError, match="item 1"):
        cal.ece([0.5, 1.5], [1, 0])
    with pytest.raises(ValueError, match="item 0"):
        cal.brier([float("nan")], [1])


def test_long_curves_keep_one_point_per_percent():
    rng = np.random.default_rng(0)
    conf = rng.random(5000)
    right = rng.random(5000) < conf
    curve = cal.risk_coverage(conf, right)
    assert len(curve) <= cal.CURVE_POINTS + 1 and curve[-1]["coverage"] == 1.0


def test_a_weighted_resample_equals_the_same_items_repeated():
    # the bootstrap weighs each sorted item by how often it was drawn; that must give exactly
    # the numbers of the drawn items written out one by one (equal-mass edges re-cut included)
    rng = np.random.default_rng(3)
    conf = np.round(rng.random(60), 2)
    right = (rng.random(60) < conf).astype(float)
    sample = cal.Sample(conf, right)
    w = rng.multinomial(60, np.full(60, 1 / 60)).astype(float)
    drawn = np.repeat(sample.order, w.astype(int))  # sample.order maps sorted positions to items
    expanded = cal.Sample(conf[drawn], right[drawn]).values()
    for key, value in sample.values(w).items():
        assert value == pytest.approx(expanded[key]), key


def test_a_record_with_a_confidence_that_is_no_probability_is_refused_naming_file_and_line():
    from medvqa.core.items import DataError
    from medvqa.core.results import check_record

    good = {"item_id": "q1", "condition": "C+Q", "status": "answered", "confidence": 0.5, "confidence_method": "stated"}
    assert check_record(good)["confidence"] == 0.5
    assert check_record({**good, "confidence": None})["confidence"] is None
    for bad in ("high", 1.5, -0.1, True, float("nan")):
        with pytest.raises(DataError, match=r"records.jsonl: record line 7: damaged record .*confidence"):
            check_record({**good, "confidence": bad}, file="records.jsonl", line=7)
    with pytest.raises(DataError, match="confidence_method"):
        check_record({**good, "confidence_method": 3}, file="records.jsonl", line=7)

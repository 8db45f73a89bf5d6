import numpy as np
import pytest
from scipy import stats as scipy_stats

from pytest_gaamas import stats


@pytest.mark.parametrize("k, n", [(0, 30), (3, 30), (15, 30), (30, 30), (1, 1), (57, 100)])
def test_wilson_matches_scipy(k, n):
    expected = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    got = stats.wilson(k, n)
    assert got.value == k / n
    assert got.low == pytest.approx(expected.low, abs=1e-12)
    assert got.high == pytest.approx(expected.high, abs=1e-12)


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError):
        stats.wilson(4, 3)


def test_mean_interval_is_deterministic_and_covers_the_mean():
    data = np.random.default_rng(1).beta(5, 1, size=30)
    first, second = stats.mean(data), stats.mean(data)
    assert first == second
    assert first.low < data.mean() < first.high


def test_mean_interval_is_close_to_the_t_interval_for_normal_data():
    data = np.random.default_rng(2).normal(10, 2, size=200)
    t_low, t_high = scipy_stats.t.interval(0.95, len(data) - 1, loc=data.mean(), scale=scipy_stats.sem(data))
    got = stats.mean(data)
    assert got.low == pytest.approx(t_low, abs=0.1)
    assert got.high == pytest.approx(t_high, abs=0.1)


def test_constant_and_empty_data():
    assert stats.mean([1.0] * 10) == stats.Estimate(1.0, 1.0, 1.0, 10)
    assert stats.mean([]).n == 0
    assert stats.mean([]).as_json() == {"value": None, "ci": [None, None], "n": 0}

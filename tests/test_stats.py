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


# Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10 (hybrid score).
@pytest.mark.parametrize(
    "k1, n1, k2, n2, low, high",
    [(56, 70, 48, 80, 0.0524, 0.3339), (9, 10, 3, 10, 0.1705, 0.8090), (5, 56, 0, 29, -0.0381, 0.1926),
     (0, 10, 0, 20, -0.1611, 0.2775), (10, 10, 0, 10, 0.6075, 1.0000)],
)  # fmt: skip
def test_rate_difference_matches_newcombes_published_intervals(k1, n1, k2, n2, low, high):
    got = stats.rate_difference(k1, n1, k2, n2)
    assert got.value == pytest.approx(k1 / n1 - k2 / n2)
    assert (got.low, got.high) == pytest.approx((low, high), abs=5e-5)


def test_mean_difference_is_welchs_interval():
    rng = np.random.default_rng(3)
    a, b = rng.normal(5, 1, 30), rng.normal(4, 3, 50)
    expected = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    got = stats.mean_difference(a, b)
    assert got.value == pytest.approx(a.mean() - b.mean())
    assert (got.low, got.high) == pytest.approx((expected.low, expected.high))
    assert stats.mean_difference([2.0] * 5, [2.0] * 7) == stats.Estimate(0.0, 0.0, 0.0, 12)


def test_equivalence_of_rates_needs_the_90_percent_interval_inside_the_margin():
    equivalent, interval = stats.rates_equivalent(30, 30, 30, 30, margin=0.2)
    assert equivalent and interval == stats.rate_difference(30, 30, 30, 30, confidence=0.90)
    assert not stats.rates_equivalent(30, 30, 15, 30, margin=0.2)[0]
    # Equal rates, but too few observations to exclude a difference of 0.2.
    assert not stats.rates_equivalent(3, 6, 3, 6, margin=0.2)[0]


@pytest.mark.parametrize("seed", range(5))
def test_wasserstein_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 101, 30).astype(float), rng.beta(2, 5, 400) * 100
    assert stats.wasserstein(a, b) == pytest.approx(scipy_stats.wasserstein_distance(a, b), rel=1e-12)


@pytest.mark.parametrize(
    "a, b",
    [([0, 0, 1, 1, 1, 2], [1, 2, 2, 3, 3, 3, 2]), ([50, 50, 100, 100, 60], [50, 60, 70, 50, 100, 100, 100, 90]),
     ([0.1, 0.4, 0.35, 0.8], [0.9, 0.7, 0.85, 0.6, 0.95])],
)  # fmt: skip
@pytest.mark.parametrize("discrete", [False, True])
def test_permutation_p_value_matches_scipys_exact_permutation_test(a, b, discrete):
    edges = stats.choice_bins(b, len(a))

    def chi_square(x, y):
        table = [np.bincount(np.searchsorted(edges, v), minlength=len(edges) + 1) for v in (x, y)]
        return scipy_stats.chi2_contingency(table, correction=False).statistic

    statistic = chi_square if discrete else scipy_stats.wasserstein_distance
    exact = scipy_stats.permutation_test(
        (a, b), statistic, permutation_type="independent", alternative="greater", n_resamples=np.inf
    )
    got = stats.compare_distributions(a, b, discrete=discrete)
    assert got.distance == pytest.approx(scipy_stats.wasserstein_distance(a, b))
    # Monte Carlo with 9,999 resamples: within 4 standard errors of the exact p-value.
    assert got.p_value == pytest.approx(exact.pvalue, abs=4 * np.sqrt(0.25 / 9_999) + 1e-4)


@pytest.mark.parametrize("discrete", [False, True])
def test_distribution_test_tells_same_from_different_and_bounds_the_distance(discrete):
    rng = np.random.default_rng(4)
    people = rng.choice([0.0, 50.0, 100.0, 25.0, 80.0], size=5_000, p=[0.3, 0.3, 0.2, 0.1, 0.1])
    same = stats.compare_distributions(rng.choice(people, 30), people, discrete=discrete)
    shifted = stats.compare_distributions(np.full(30, 100.0), people, discrete=discrete)
    assert same.p_value > 0.05 and shifted.p_value < 0.001
    assert same.distance <= same.upper and shifted.upper == pytest.approx(shifted.distance)
    again = stats.compare_distributions(people[:30], people, discrete=discrete)
    assert again == stats.compare_distributions(people[:30], people, discrete=discrete)


def test_the_discrete_test_sees_round_numbers_that_a_distance_misses():
    rng = np.random.default_rng(5)
    people = rng.choice([40.0, 50.0, 60.0], size=5_000, p=[0.25, 0.5, 0.25])
    near_miss = np.full(30, 51.0)  # a dollar away from what half of the people choose
    assert stats.compare_distributions(near_miss, people, discrete=True).p_value < 0.001
    assert stats.compare_distributions(near_miss, people, discrete=False).distance < 6


def test_choice_bins_keep_frequent_values_apart_and_pool_rare_ones():
    people = [0.0] * 10 + [1.0, 2.0, 3.0, 4.0, 5.0] * 2 + [50.0] * 40 + [70.0, 80.0, 90.0] * 6 + [100.0] * 22
    edges = stats.choice_bins(people, 30)  # a bin must expect 5 of 30 choices: a sixth of the mass
    assert list(edges) == [5.0, 50.0, 90.0]  # [0, 5], 50, (50, 90], 100
    bin_of = lambda value: int(np.searchsorted(edges, value))  # noqa: E731
    assert [bin_of(v) for v in (0, 5, 7, 50, 51, 90, 95, 100, 120)] == [0, 0, 1, 1, 2, 2, 3, 3, 3]
    mass = np.bincount([bin_of(v) for v in people], minlength=len(edges) + 1) / len(people)
    assert (mass >= 1 / 6).all()


def test_trend_statistic_is_root_n_times_the_correlation():
    successes, totals, scores = [3, 10, 18], [30, 30, 30], [0.0, 1.0, 2.0]
    outcomes = np.concatenate([[1] * k + [0] * (n - k) for k, n in zip(successes, totals)])
    x = np.repeat(scores, totals)
    z, p = stats.trend_test(successes, totals, scores)
    assert z == pytest.approx(np.sqrt(len(x)) * scipy_stats.pearsonr(x, outcomes).statistic)
    assert p == pytest.approx(scipy_stats.norm.sf(z)) and p < 0.001
    assert stats.trend_test([30, 30, 30], totals, scores) == (0.0, 1.0)
    assert stats.trend_test([18, 10, 3], totals, scores)[1] > 0.999


def test_holm_adjustment():
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adjusted = stats.holm([0.5, float("nan"), 0.001])
    assert adjusted[0] == pytest.approx(0.5) and np.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.002)


def test_change_between_runs_uses_fisher_for_rates_and_welch_for_means():
    old, new = stats.wilson(25, 30), stats.wilson(10, 30)
    assert stats.change_test(old, new) == pytest.approx(scipy_stats.fisher_exact([[25, 5], [10, 20]]).pvalue)
    a, b = [60.0, 70, 80, 90, 100], [50.0, 55, 60, 52, 58, 61]
    assert stats.change_test(stats.mean(a), stats.mean(b)) == pytest.approx(scipy_stats.ttest_ind(a, b, equal_var=False).pvalue)
    assert stats.change_test(stats.wilson(30, 30), stats.wilson(30, 30)) == 1.0
    assert np.isnan(stats.change_test(stats.wilson(0, 0), stats.wilson(3, 30)))

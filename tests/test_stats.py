import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


@pytest.mark.parametrize("n", [2, 3, 7, 30, 31, 120])
@pytest.mark.parametrize("shape", ["three values", "normal", "one outlier", "skewed", "two ends"])
def test_the_mean_interval_is_scipys_bca_bootstrap_to_the_last_bit(n, shape):
    """The suite's own BCa of the mean is scipy's, step for step: any drift would change every
    replayed table's intervals."""
    rng = np.random.default_rng(n)
    data = {
        "three values": rng.integers(0, 3, n).astype(float), "normal": rng.normal(50, 20, n),
        "one outlier": np.r_[np.full(n - 1, 10.0), [10.5]], "skewed": rng.exponential(1, n),
        "two ends": np.r_[[0.0, 100.0], rng.choice([0.0, 100.0], n - 2)],
    }[shape]
    with stats._quiet():
        expected = scipy_stats.bootstrap((data,), np.mean, confidence_level=0.95, n_resamples=stats.BOOTSTRAP_RESAMPLES, method="BCa",
                                         random_state=np.random.default_rng(stats.BOOTSTRAP_SEED)).confidence_interval  # fmt: skip
    got = stats.bca_mean_interval(data)
    assert np.array_equal(got, (expected.low, expected.high), equal_nan=True)


@settings(max_examples=300, database=None)
@given(
    values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=60),
    probabilities=st.lists(st.one_of(st.floats(0, 1), st.sampled_from([math.nan, -0.5, 1.5, 0.0, 1.0])), min_size=2, max_size=2),
)
def test_the_bootstraps_quantiles_are_scipys_to_the_last_bit(values, probabilities):
    """What the BCa interval reads off its resampled means, without importing scipy.stats."""
    data, p = np.asarray(values), np.asarray(probabilities)
    assert np.array_equal(stats._linear_quantiles(data, p), scipy_stats.quantile(data, p, axis=-1), equal_nan=True)


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_the_normal_quantile_is_scipys(confidence):
    assert stats._z(confidence) == scipy_stats.norm.ppf(0.5 + confidence / 2)


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
    assert p < 0.001  # the p is the exact conditional one (tested below), not the normal tail of z
    assert stats.trend_test([30, 30, 30], totals, scores) == (0.0, 1.0)
    assert stats.trend_test([18, 10, 3], totals, scores)[1] > 0.999


def test_holm_adjustment():
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adjusted = stats.holm([0.5, float("nan"), 0.001])
    assert adjusted[0] == pytest.approx(0.5) and np.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.002)


def test_change_between_runs_uses_fisher_for_rates_and_a_permutation_test_for_means():
    old, new = stats.wilson(25, 30), stats.wilson(10, 30)
    assert stats.change_test(old, new) == pytest.approx(scipy_stats.fisher_exact([[25, 5], [10, 20]]).pvalue)
    a, b = [60.0, 70, 80, 90, 100], [50.0, 55, 60, 52, 58, 61]
    # Every one of the 462 ways to deal the 11 values 5 and 6: the exact p the seeded draws estimate.
    pooled = a + b
    differences = [np.mean([pooled[i] for i in first]) - np.mean([pooled[i] for i in range(11) if i not in first])
                   for first in combinations(range(11), 5)]  # fmt: skip
    observed = np.mean(a) - np.mean(b)
    exact = {"both": np.mean([abs(d) >= abs(observed) - 1e-9 for d in differences]),
             "down": np.mean([d >= observed - 1e-9 for d in differences]), "up": np.mean([d <= observed + 1e-9 for d in differences])}  # fmt: skip
    for worse, p in exact.items():
        assert stats.change_test(stats.mean(a), stats.mean(b), worse) == pytest.approx(p, abs=0.004)
    assert stats.change_test(stats.wilson(30, 30), stats.wilson(30, 30)) == 1.0
    assert np.isnan(stats.change_test(stats.wilson(0, 0), stats.wilson(3, 30)))


@given(st.integers(1, 40), st.integers(1, 40), st.floats(0, 100), st.floats(0, 100), st.sampled_from(("down", "up", "both")))
@settings(max_examples=40, deadline=None)
def test_a_change_between_two_constant_samples_is_never_certain(n_old, n_new, old, new, worse):
    """Two runs that each answered one value throughout are as far apart as their sizes can show:
    Fisher's p for rates and the permutation p for means are positive, and 1.0 where nothing moved."""
    p_mean = stats.change_test(stats.mean([old] * n_old), stats.mean([new] * n_new), worse)
    assert p_mean >= 1 / (stats.PERMUTATIONS + 1)
    if old == new:
        assert p_mean == 1.0
    rate_old, rate_new = round(old) % 2, round(new) % 2  # all successes or all failures on each side
    p_rate = stats.change_test(stats.wilson(rate_old * n_old, n_old), stats.wilson(rate_new * n_new, n_new), worse)
    assert 0 < p_rate <= 1


# -- exact conditional tests ---------------------------------------------------------------------

from fractions import Fraction  # noqa: E402



def _monte_carlo_slack(p: float, resamples: int) -> float:
    """Four standard errors of a Monte Carlo p-value, and a little for its (b + 1) / (m + 1)."""
    return 4 * np.sqrt(max(p * (1 - p), 1e-4) / resamples) + 2 / resamples


def _brute_force_trend_p(successes, totals, hundredths) -> Fraction:
    """P(T >= t) by dealing the successes over every subset of the subjects, in exact arithmetic
    (scores given in hundredths, so a tie is a tie)."""
    scores = [Fraction(h, 100) for h in hundredths]
    subjects = [score for score, n in zip(scores, totals) for _ in range(n)]
    observed = sum(score * k for score, k in zip(scores, successes))
    deals = list(combinations(range(len(subjects)), sum(successes)))
    return Fraction(sum(sum(subjects[i] for i in deal) >= observed for deal in deals), len(deals))


def test_exact_trend_p_of_two_defections_under_the_rational_prompt():
    # Rational / Neutral / Human, cooperation 28/30, 30/30, 30/30: the trend's statistic is at its
    # largest exactly when both defections fall in the Rational group, C(30, 2) of C(90, 2) deals.
    z, p = stats.trend_test([28, 30, 30], [30, 30, 30], [0, 1, 2])
    assert p == pytest.approx(Fraction(435, 4005), rel=1e-12)  # = 29/267 = 0.10861...
    assert scipy_stats.norm.sf(z) == pytest.approx(0.040, abs=5e-4)  # what the normal tail said


@pytest.mark.parametrize(
    "successes, totals, hundredths",
    [([3, 1, 2, 4], [4, 3, 2, 5], [0, 100, 100, 300]), ([1, 2, 0, 3], [3, 3, 2, 4], [35, -120, 7, 90]),
     ([2, 0, 0], [2, 2, 0], [50, 10, 90]), ([5, 0, 0, 0, 1], [5, 3, 2, 2, 3], [0, 100, 200, 300, 400])],
)  # fmt: skip
def test_exact_trend_p_is_the_share_of_every_deal_of_the_successes(successes, totals, hundredths):
    assert stats.trend_test(successes, totals, [h / 100 for h in hundredths])[1] == pytest.approx(
        float(_brute_force_trend_p(successes, totals, hundredths)), rel=1e-9)


@pytest.mark.parametrize(
    "successes, scores",
    [([28, 30, 30], [0.0, 1.0, 2.0]), ([20, 25, 28], [0.0, 1.0, 2.0]),
     # Eight dilemmas of 30 answers, scored by a predicted rate (floats, as payoff sensitivity's are).
     ([9, 14, 12, 20, 17, 22, 19, 25], [0.21, 0.26, 0.33, 0.34, 0.41, 0.48, 0.52, 0.61])],
)  # fmt: skip
def test_exact_trend_p_agrees_with_scipys_permutation_of_the_answers(successes, scores):
    totals = [30] * len(successes)
    outcomes = np.concatenate([[1.0] * k + [0.0] * (n - k) for k, n in zip(successes, totals)])
    score_of_answer = np.repeat(np.asarray(scores, dtype=float), totals)
    resamples = 20_000
    permuted = scipy_stats.permutation_test(
        (outcomes, score_of_answer), lambda o, s, axis: np.sum(o * s, axis=axis), vectorized=True,
        permutation_type="pairings", alternative="greater", n_resamples=resamples, rng=np.random.default_rng(7),
    )  # fmt: skip
    p = stats.trend_test(successes, totals, scores)[1]
    assert p == pytest.approx(permuted.pvalue, abs=_monte_carlo_slack(p, resamples))


def test_exact_trend_counts_float_ties_as_ties():
    # 0.1 + 0.2 and 0.3 + 0.0 are one total; in floats they differ in the 17th digit.
    assert stats.trend_test([1, 1, 0, 0], [1, 1, 1, 1], [0.1, 0.2, 0.3, 0.0])[1] == pytest.approx(4 / 6)
    assert stats.trend_test([0, 0, 1, 1], [1, 1, 1, 1], [0.1, 0.2, 0.3, 0.0])[1] == pytest.approx(4 / 6)


@st.composite
def small_trend_tables(draw):
    groups = draw(st.integers(2, 4))
    totals = draw(st.lists(st.integers(0, 3), min_size=groups, max_size=groups))
    successes = [draw(st.integers(0, n)) for n in totals]
    hundredths = draw(st.lists(st.integers(-300, 300) | st.sampled_from([0, 100, 200]), min_size=groups, max_size=groups))
    return successes, totals, hundredths


@given(small_trend_tables())
def test_exact_trend_p_is_a_probability_that_falls_as_a_success_moves_up(table):
    successes, totals, hundredths = table
    scores = [h / 100 for h in hundredths]
    p = stats.trend_test(successes, totals, scores)[1]
    if sum(totals) == 0:
        assert np.isnan(p)  # no answers at all: no test
        return
    assert p == pytest.approx(float(_brute_force_trend_p(successes, totals, hundredths)), rel=1e-9, abs=1e-12)
    assert 0 < p <= 1
    # Both tails hold the observed table: they cover everything at least once.
    assert p + stats.trend_test(successes, totals, [-s for s in scores])[1] >= 1 - 1e-9
    if len(set(scores)) == 1 or sum(successes) in (0, sum(totals)):
        assert p == 1.0
    for low in range(len(scores)):
        for high in range(len(scores)):
            if scores[high] > scores[low] and successes[low] > 0 and successes[high] < totals[high]:
                moved = list(successes)
                moved[low], moved[high] = moved[low] - 1, moved[high] + 1
                assert stats.trend_test(moved, totals, scores)[1] <= p + 1e-12


def test_trend_test_refuses_impossible_tables():
    for successes, totals, scores in (([31], [30], [0]), ([1.5, 2], [3, 3], [0, 1]), ([1, 2], [3, 3], [0])):
        with pytest.raises(ValueError, match="trend_test needs"):
            stats.trend_test(successes, totals, scores)


def test_conditional_tail_falls_back_to_a_seeded_monte_carlo_past_its_budget(monkeypatch):
    drawn, sizes, scores = [9, 14, 12, 20, 17, 22, 19, 25], [30] * 8, [0.21, 0.26, 0.33, 0.34, 0.41, 0.48, 0.52, 0.61]
    exact = stats.conditional_tail(drawn, sizes, scores)
    monkeypatch.setattr(stats, "EXACT_TABLES", 1)  # not even one class can be enumerated
    sampled = stats.conditional_tail(drawn, sizes, scores)
    assert sampled == stats.conditional_tail(drawn, sizes, scores)  # seeded: a replay prints the same p
    assert sampled != exact and sampled == pytest.approx(exact, abs=_monte_carlo_slack(exact, stats.CONDITIONAL_RESAMPLES))
    assert stats.conditional_tail([30, 30, 0], [30, 30, 30], [2.0, 1.0, 0.0]) >= 1 / (stats.CONDITIONAL_RESAMPLES + 1)


# -- log-rank by permutation -------------------------------------------------------------------------


def test_survival_p_is_exact_on_a_worked_case():
    # Three societies live all 10 rounds, three collapse in rounds 1, 2, 3: of the C(6, 3) = 20 ways to
    # say which three are "first", only the observed one puts no collapse in it.
    z, p = stats.survives_longer([10, 10, 10], [0, 1, 2], 10)
    assert z > 0 and p == pytest.approx(1 / 20)
    # Ten against ten, every one of the second collapsing at once: 1 of C(20, 10) deals.
    assert stats.survives_longer([10] * 10, [0] * 10, 10)[1] == pytest.approx(1 / 184_756)
    assert stats.survives_longer([0] * 10, [10] * 10, 10)[1] == pytest.approx(1.0)


def _brute_force_survival_p(first, second, horizon) -> float:
    """Relabel the pooled societies every way; the log-rank numerator (expected minus observed
    collapses of the first) counted time by time, as a textbook does."""
    pooled = [(r + 1, True) if r < horizon else (horizon, False) for r in (*first, *second)]

    def numerator(group):
        total = 0.0
        for t in sorted({time for time, collapsed in pooled if collapsed}):
            at_risk = [i for i, (time, _) in enumerate(pooled) if time >= t]
            dying = [i for i in at_risk if pooled[i] == (t, True)]
            total += sum(i in group for i in at_risk) * len(dying) / len(at_risk) - sum(i in group for i in dying)
        return total

    observed = numerator(set(range(len(first))))
    labellings = [numerator(set(group)) for group in combinations(range(len(pooled)), len(first))]
    return sum(u >= observed - 1e-9 for u in labellings) / len(labellings)


@given(st.lists(st.integers(0, 4), min_size=1, max_size=5), st.lists(st.integers(0, 4), min_size=1, max_size=5))
def test_survival_p_is_the_share_of_every_relabelling(first, second):
    z, p = stats.survives_longer(first, second, 4)
    if np.isnan(z):
        assert p == 1.0
    else:
        assert p == pytest.approx(_brute_force_survival_p(first, second, 4), rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_survival_p_is_close_to_the_asymptotic_one_in_large_samples(seed):
    rng = np.random.default_rng(seed)
    first, second = (np.minimum(rng.geometric(rate, 150) - 1, 10).tolist() for rate in (0.10, 0.13))
    collapsed = lambda rounds: [r + 1 for r in rounds if r < 10]  # noqa: E731
    censored = lambda rounds: [10] * sum(r == 10 for r in rounds)  # noqa: E731
    asymptotic = scipy_stats.logrank(*(scipy_stats.CensoredData(uncensored=collapsed(r), right=censored(r)) for r in (first, second)),
                                     alternative="less").pvalue  # fmt: skip
    assert stats.survives_longer(first, second, 10)[1] == pytest.approx(asymptotic, abs=0.02)


# -- Mann-Whitney under ties ---------------------------------------------------------------------------


@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=2, max_size=5),
       st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=2, max_size=5))  # fmt: skip
def test_mann_whitney_p_is_scipys_exhaustive_permutation_p_under_ties(first, second):
    if np.ptp(first + second) == 0:
        assert stats.stochastically_greater(first, second) == 1.0
        return
    exhaustive = scipy_stats.mannwhitneyu(first, second, alternative="greater",
                                          method=scipy_stats.PermutationMethod(n_resamples=np.inf)).pvalue  # fmt: skip
    assert stats.stochastically_greater(first, second) == pytest.approx(exhaustive, rel=1e-9)


def test_mann_whitney_p_is_scipys_exact_p_without_ties():
    rng = np.random.default_rng(8)
    first, second = rng.normal(0.3, 1, 12), rng.normal(0, 1, 15)
    exact = scipy_stats.mannwhitneyu(first, second, alternative="greater", method="exact").pvalue
    assert stats.stochastically_greater(first, second) == pytest.approx(exact, rel=1e-9)


def test_mann_whitney_p_at_30_games_a_side_with_many_ties():
    rng = np.random.default_rng(9)
    first, second = rng.binomial(10, 0.55, 30) / 10, rng.binomial(10, 0.45, 30) / 10  # coordination rates per game
    resamples = 20_000
    permuted = scipy_stats.mannwhitneyu(first, second, alternative="greater",
                                        method=scipy_stats.PermutationMethod(n_resamples=resamples, rng=np.random.default_rng(10))).pvalue  # fmt: skip
    p = stats.stochastically_greater(first, second)
    assert p == pytest.approx(permuted, abs=_monte_carlo_slack(p, resamples))


# -- families of claims -------------------------------------------------------------------------------


def test_holm_family_shows_each_claims_raw_and_adjusted_p():
    family = stats.holm_family({"punishment": 0.01, "talk": 0.04, "cap": 0.03, "all": 0.005, "untested": float("nan")})
    assert list(family) == ["punishment", "talk", "cap", "all", "untested"]
    assert {name: raw for name, (raw, _) in family.items() if name != "untested"} == {"punishment": 0.01, "talk": 0.04, "cap": 0.03, "all": 0.005}
    assert [family[name][1] for name in ("punishment", "talk", "cap", "all")] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert np.isnan(family["untested"][1])
    assert stats.holm_family({}) == {}


@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_family_is_the_step_down_formula(p_values):
    family = stats.holm_family({f"claim {i}": p for i, p in enumerate(p_values)})
    # Holm's adjusted p as multipletests(method="holm") computes it: sort, multiply by m, m-1, ..., 1,
    # carry the running maximum, clip at 1, unsort.
    order = np.argsort(p_values, kind="stable")
    adjusted = np.empty(len(p_values))
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(np.asarray(p_values)[order] * np.arange(len(p_values), 0, -1)))
    assert [a for _, a in family.values()] == pytest.approx(adjusted.tolist())
    # And Holm's procedure: reject in order of p while p(i) <= alpha / (m - i), stop at the first that is not.
    rejected, alpha = set(), 0.05
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        rejected.add(f"claim {i}")
    assert {name for name, (_, a) in family.items() if a <= alpha} == rejected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=2, max_size=10))  # scipy takes two pairs or more
def test_the_paired_sign_flip_test_is_scipys_exact_paired_permutation_test(pairs):
    first, second = [float(a) for a, _ in pairs], [float(b) for _, b in pairs]
    ours = stats.paired_greater(first, second)
    if first == second:
        assert ours == 1.0
        return
    exact = scipy_stats.permutation_test((np.array(first), np.array(second)), lambda x, y, axis: np.sum(x - y, axis=axis),
                                          permutation_type="samples", alternative="greater", n_resamples=np.inf).pvalue
    assert ours == pytest.approx(exact, abs=1e-9)


def test_the_paired_sign_flip_test_tells_ten_pairs_all_one_way_and_refuses_unpaired_sides():
    assert stats.paired_greater([1.0] * 10, [0.0] * 10) == pytest.approx(1 / 1024)  # only the observed signs reach it
    assert stats.paired_greater([0.0] * 10, [1.0] * 10) == 1.0
    assert 0.4 < stats.paired_greater([1.0, 0.0] * 20, [0.0, 1.0] * 20) <= 1.0  # drawn above 16 pairs: balanced, no evidence
    with pytest.raises(ValueError, match="as many values on each side"):
        stats.paired_greater([1.0], [1.0, 2.0])


def test_an_estimate_is_computed_again_at_another_confidence_from_what_it_was_computed_from():
    rate = stats.wilson(21, 30)
    assert rate.at(0.95) is rate and rate.confidence == 0.95
    assert rate.at(1 - 0.05 / 36) == stats.wilson(21, 30, 1 - 0.05 / 36) and rate.at(0.9).confidence == 0.9
    assert stats.wilson(30, 30).at(1 - 0.05 / 36).low == pytest.approx(0.7459, abs=1e-4)  # the rational agent's cell in a table of 36
    values = [0.2, 0.4, 0.4, 0.6, 0.8, 1.0, 1.0, 0.8] * 4
    assert stats.mean(values).at(0.99) == stats.mean(values, 0.99)
    assert stats.mean(values).at(0.99).high > stats.mean(values).high
    difference = stats.rate_difference(20, 30, 12, 30, confidence=0.9)
    assert difference.at(0.99) == stats.rate_difference(20, 30, 12, 30, confidence=0.99)
    assert stats.mean_difference(values, values[::2]).at(0.9) == stats.mean_difference(values, values[::2], 0.9)
    assert stats.Estimate(0.5, 0.4, 0.6, 30).at(0.99) is None  # an interval given by hand: nothing to compute it from
    assert stats.average(values).at(0.99) is None
    with pytest.raises(ValueError):
        rate.at(1.0)


def test_ordered_groups_greater_is_jonckheere_terpstra_exact():
    """Rising groups: the one labelling of 4,200 that orders them all; ties and a fall show nothing;
    the p of any data is the share of all orderings of the values, counted by brute force."""
    import itertools

    from pytest_gaamas.stats import ordered_groups_greater

    assert ordered_groups_greater([[2, 2, 2, 2], [8, 8, 8], [33, 33, 33]]) == (1.0, pytest.approx(1 / 4200))
    assert ordered_groups_greater([[5] * 4, [5] * 3, [5] * 3]) == (0.0, 1.0)
    assert ordered_groups_greater([[33, 30, 31, 40], [8, 8, 8], [2, 2, 3]]) == (-1.0, 1.0)
    values = [3.0, 1.0, 4.0, 1.0, 5.0]  # groups of 2, 2 and 1

    def statistic(order):
        groups = [order[:2], order[2:4], order[4:]]
        return sum((b > a) + 0.5 * (b == a) for i, g in enumerate(groups) for h in groups[i + 1:] for a in g for b in h)

    observed = statistic(values)
    orderings = list(itertools.permutations(values))
    brute = sum(statistic(list(o)) >= observed for o in orderings) / len(orderings)
    concordance, p = ordered_groups_greater([values[:2], values[2:4], values[4:]])
    assert p == pytest.approx(brute) and concordance == pytest.approx(2 * observed / (2 * 2 + 2 * 1 + 2 * 1) - 1)
    assert ordered_groups_greater([[1.0, 2.0]])[1] == 1.0  # one group: nothing to order


def test_ordered_groups_greater_within_strata_is_exact_and_blind_to_what_sets_strata_apart():
    """Two strata of villagers (personas): the p is the share of the labellings exchanged within
    each stratum, counted by brute force; a stratum that asks more everywhere, listed more often at
    the larger scales, is a rise pooled but none within; one stratum is the plain test; past the
    exact limit, a perfect rise reaches the floor of the seeded draws and no further."""
    import itertools

    from pytest_gaamas.stats import PERMUTATIONS, ordered_groups_greater, ordered_groups_greater_within

    strata = [[[3.0, 1.0], [4.0]], [[1.0], [5.0, 9.0], [2.0]]]

    def statistic(labelled):
        return sum((b > a) + 0.5 * (b == a) for groups in labelled for i, g in enumerate(groups) for h in groups[i + 1:] for a in g for b in h)

    def relabel(groups, order):
        sizes, out, at = [len(g) for g in groups], [], 0
        for size in sizes:
            out.append(list(order[at:at + size]))
            at += size
        return out

    pooled = [[v for g in groups for v in g] for groups in strata]
    every = [statistic([relabel(strata[0], a), relabel(strata[1], b)])
             for a in itertools.permutations(pooled[0]) for b in itertools.permutations(pooled[1])]
    observed = statistic(strata)
    concordance, p = ordered_groups_greater_within(strata)
    assert p == pytest.approx(sum(s >= observed for s in every) / len(every))
    assert concordance == pytest.approx(2 * observed / (2 * 1 + 1 * 2 + 1 * 1 + 2 * 1) - 1)

    confounded = [[[1.0] * 6, [1.0] * 2, [1.0] * 2], [[7.0] * 2, [7.0] * 6, [7.0] * 6]]  # the greedy listed at the larger lakes
    assert ordered_groups_greater([[v for s in confounded for v in s[k]] for k in range(3)])[1] < 0.05
    assert ordered_groups_greater_within(confounded) == (0.0, 1.0)
    assert ordered_groups_greater_within([[[2, 2, 2, 2], [8, 8, 8], [33, 33, 33]]]) == ordered_groups_greater([[2, 2, 2, 2], [8, 8, 8], [33, 33, 33]])
    perfect = [[[1.0] * 8, [2.0] * 6, [3.0] * 6], [[1.5] * 8, [2.5] * 6, [3.5] * 6]]
    assert ordered_groups_greater_within(perfect) == (1.0, pytest.approx(1 / (PERMUTATIONS + 1)))
    assert ordered_groups_greater_within([[[1.0], []], [[], [2.0]]]) == (pytest.approx(float("nan"), nan_ok=True), 1.0)


def test_labels_exchanged_within_strata_match_every_labelling_tried_by_hand():
    """exchanged_within_greater against brute force: every way to relabel each stratum, its sizes kept."""
    import itertools as it

    strata = [([3.0, 1.0], [2.0, 0.5]), ([1.0], [0.0, 2.0, 4.0]), ([2.5, 2.5], [2.5, 1.0])]

    def statistic(labelled):
        return sum(np.mean(a) - np.mean(b) for a, b in labelled)

    observed = statistic(strata)
    relabelled = []
    for first, second in strata:
        values, k = [*first, *second], len(first)
        relabelled.append([([values[i] for i in chosen], [values[i] for i in range(len(values)) if i not in chosen])
                           for chosen in it.combinations(range(len(values)), k)])  # fmt: skip
    sums = [statistic(choice) for choice in it.product(*relabelled)]
    expected = np.mean([s >= observed - 1e-9 for s in sums])
    assert stats.exchanged_within_greater(strata) == pytest.approx(expected)
    assert stats.exchanged_within_greater([]) == 1.0 and stats.exchanged_within_greater([([1.0, 2.0], [])]) == 1.0


def test_ten_societies_of_four_can_show_what_a_sign_flip_over_ten_never_could():
    """Ten societies whose two selfish villagers ask more than their two altruistic ones: 6^10 labellings,
    drawn; the p reaches the smallest a draw can give, far below 1/1024, and the contrary is 1."""
    strata = [([1.5, 1.6], [0.5, 0.4])] * 10
    assert stats.exchanged_within_greater(strata) == pytest.approx(1 / (stats.EXCHANGE_DRAWS + 1))
    assert stats.exchanged_within_greater([(b, a) for a, b in strata]) == 1.0
    # No difference in persona: a p that is no evidence.
    assert stats.exchanged_within_greater([([1.0, 1.0], [1.0, 1.0])] * 10) == 1.0

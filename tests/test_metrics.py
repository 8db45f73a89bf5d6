"""The CCEI and GARP: known cases, and properties that must hold for any data."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pytest_gaamas import metrics
from pytest_gaamas.metrics import ccei, garp


def test_consistent_choices_score_one():
    prices = [[1.0, 1.0], [1.0, 2.0]]
    choices = [[5.0, 5.0], [6.0, 2.0]]
    assert garp(prices, choices)
    assert ccei(prices, choices) == 1.0


def test_two_cycle_ccei_is_the_larger_ratio_on_the_cycle():
    # x1 = (4, 0) at p1 = (1, 1): p1.x1 = 4, p1.x2 = 3 -> r12 = 0.75
    # x2 = (0, 3) at p2 = (1, 2): p2.x2 = 6, p2.x1 = 4 -> r21 = 2/3
    prices = [[1.0, 1.0], [1.0, 2.0]]
    choices = [[4.0, 0.0], [0.0, 3.0]]
    assert not garp(prices, choices)
    assert ccei(prices, choices) == pytest.approx(0.75)
    assert garp(prices, choices, e=0.749) and not garp(prices, choices, e=0.751)


def test_three_cycle_with_no_two_cycle():
    prices = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    prices = np.array(prices) + 0.1
    choices = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 2.0], [2.0, 0.0, 1.0]])
    r = metrics.expenditure_ratios(prices, choices)
    assert not garp(prices, choices)
    for t in range(3):  # no pair is a two-cycle: the violation needs all three
        for s in range(3):
            if t != s:
                assert not (r[t, s] <= 1 and r[s, t] <= 1)
    expected = max(r[0, 1], r[1, 2], r[2, 0])
    assert ccei(prices, choices) == pytest.approx(expected)


def test_ties_on_one_budget_line_are_not_violations():
    prices = [[1.0, 1.0], [1.0, 1.0]]
    choices = [[3.0, 7.0], [7.0, 3.0]]
    assert garp(prices, choices)
    assert ccei(prices, choices) == 1.0


def test_repeated_identical_observations_are_consistent():
    prices = [[0.3, 0.7]] * 4
    choices = [[1.0, 1.0]] * 4
    assert ccei(prices, choices) == 1.0


def test_corner_choices():
    prices = [[1.0, 2.0], [2.0, 1.0]]
    consistent = [[10.0, 0.0], [0.0, 10.0]]  # always the cheaper good
    assert ccei(prices, consistent) == 1.0
    perverse = [[0.0, 5.0], [5.0, 0.0]]  # always the dearer good
    assert ccei(prices, perverse) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "prices, choices, message",
    [
        ([[1, 1]], [[1, 1, 1]], "same shape"),
        ([[1, 1], [1, 1]], [[0, 0], [1, 1]], "zero expenditure"),
        ([[1, -1]], [[1, 1]], "non-negative"),
        ([[1, np.nan]], [[1, 1]], "finite"),
    ],
)
def test_bad_input_is_a_clear_error(prices, choices, message):
    with pytest.raises(ValueError, match=message):
        ccei(prices, choices)


def test_e_outside_unit_interval_is_rejected():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        garp([[1, 1]], [[1, 1]], e=1.5)


# -- properties -----------------------------------------------------------------------------------

positive = st.floats(0.05, 20.0)


@st.composite
def budget_data(draw, max_t=12, k=2):
    t = draw(st.integers(2, max_t))
    prices = draw(arrays(float, (t, k), elements=positive))
    shares = draw(arrays(float, (t, k), elements=st.floats(0.0, 1.0)))
    shares[shares.sum(axis=1) == 0] = 1.0
    shares = shares / shares.sum(axis=1, keepdims=True)
    income = draw(arrays(float, (t,), elements=st.floats(0.5, 10.0)))
    choices = shares * income[:, None] / prices
    return prices, choices


@settings(max_examples=200)
@given(budget_data())
def test_ccei_lies_in_unit_interval(data):
    assert 0.0 <= ccei(*data) <= 1.0


@settings(max_examples=100)
@given(budget_data(), st.randoms(use_true_random=False))
def test_ccei_ignores_the_order_of_observations(data, rnd):
    prices, choices = data
    order = list(range(len(prices)))
    rnd.shuffle(order)
    assert ccei(prices[order], choices[order]) == pytest.approx(ccei(prices, choices), abs=1e-12)


@settings(max_examples=100)
@given(budget_data(), arrays(float, (12,), elements=st.floats(0.1, 10.0)), st.floats(0.1, 10.0))
def test_ccei_ignores_price_levels_and_units(data, price_scale, quantity_scale):
    prices, choices = data
    scaled_prices = prices * price_scale[: len(prices), None]
    assert ccei(scaled_prices, choices * quantity_scale) == pytest.approx(ccei(prices, choices), abs=1e-9)


@settings(max_examples=100)
@given(budget_data(max_t=20, k=3), arrays(float, (3,), elements=st.floats(0.05, 1.0)))
def test_cobb_douglas_demand_is_perfectly_consistent(data, weights):
    prices, _ = data
    shares = weights / weights.sum()
    choices = shares[None, :] / prices  # spend share_k of income 1 on good k
    assert garp(prices, choices)
    assert ccei(prices, choices) == 1.0


@settings(max_examples=150)
@given(budget_data(max_t=15))
def test_ccei_is_the_supremum_of_garp_e(data):
    prices, choices = data
    value = ccei(prices, choices)
    assert garp(prices, choices, e=max(0.0, value * (1 - 1e-6)))
    if value < 1 - 1e-6:
        assert not garp(prices, choices, e=min(1.0, value * (1 + 1e-6)))


@settings(max_examples=150)
@given(budget_data(max_t=15))
def test_two_exact_algorithms_agree(data):
    ratios = metrics.expenditure_ratios(*data)
    by_floyd = metrics._min_max_cycle_floyd_warshall(ratios)
    by_bisection = metrics._min_max_cycle_bisection(ratios)
    assert min(1.0, by_floyd) == pytest.approx(min(1.0, by_bisection), abs=1e-12)


def test_large_data_uses_the_bisection_and_agrees_with_floyd_warshall():
    rng = np.random.default_rng(7)
    t = metrics._FLOYD_WARSHALL_MAX_T + 30
    prices = rng.uniform(0.05, 1.0, (t, 2))
    share = rng.uniform(0, 1, t)
    choices = np.column_stack([share / prices[:, 0], (1 - share) / prices[:, 1]])
    ratios = metrics.expenditure_ratios(prices, choices)
    assert ccei(prices, choices) == pytest.approx(min(1.0, metrics._min_max_cycle_floyd_warshall(ratios)))

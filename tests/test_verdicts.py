"""The three verdicts and the rules that decide them, at and around every boundary."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_gaamas import stats, verdicts
from pytest_gaamas.report import Score
from pytest_gaamas.stats import Estimate
from pytest_gaamas.verdicts import INCONCLUSIVE, MET, MISSED, Verdict


def interval(low: float, high: float, n: int = 30) -> Estimate:
    return Estimate((low + high) / 2, low, high, n)


NO_DATA = (Estimate(math.nan, math.nan, math.nan, 0), Estimate(0.5, math.nan, 0.6, 30), Estimate(0.5, 0.4, 0.6, 0),
           Estimate(math.nan, 0.4, 0.6, 30))  # fmt: skip


@pytest.mark.parametrize(
    "low, high, verdict",
    [
        (0.50, 0.90, MET),  # the lower bound at the threshold: met, as the criterion reads (>=)
        (0.51, 0.90, MET),
        (0.49, 0.90, INCONCLUSIVE),
        (0.20, 0.50, INCONCLUSIVE),  # the upper bound at the threshold: it may still be met
        (0.20, 0.49, MISSED),
        (0.50, 0.50, MET),  # a constant answer at the threshold reaches it
        (0.00, 1.00, INCONCLUSIVE),
    ],
)
def test_at_least(low, high, verdict):
    assert verdicts.at_least(interval(low, high), 0.5) is verdict


@pytest.mark.parametrize(
    "low, high, verdict",
    [
        (50.0, 50.0, MISSED),  # keeps $50 every time: half, not more than half
        (50.0, 60.0, INCONCLUSIVE),
        (50.01, 60.0, MET),
        (40.0, 50.0, MISSED),
        (40.0, 50.01, INCONCLUSIVE),
    ],
)
def test_strictly_above(low, high, verdict):
    assert verdicts.strictly_above(interval(low, high), 50) is verdict


@pytest.mark.parametrize(
    "low, high, verdict",
    [(0.1, 0.5, MET), (0.1, 0.51, INCONCLUSIVE), (0.5, 0.9, INCONCLUSIVE), (0.51, 0.9, MISSED), (0.5, 0.5, MET), (0.0, 0.0, MET)],
)
def test_at_most(low, high, verdict):
    assert verdicts.at_most(interval(low, high), 0.5) is verdict


@pytest.mark.parametrize(
    "low, high, verdict",
    [
        (0.30, 0.60, MET),  # the band itself: inside, its ends included
        (0.35, 0.55, MET),
        (0.29, 0.55, INCONCLUSIVE),
        (0.35, 0.61, INCONCLUSIVE),
        (0.10, 0.90, INCONCLUSIVE),  # wider than the band on both sides
        (0.10, 0.30, INCONCLUSIVE),  # touches the band at one point
        (0.10, 0.29, MISSED),
        (0.61, 0.90, MISSED),
        (0.60, 0.90, INCONCLUSIVE),
    ],
)
def test_inside(low, high, verdict):
    assert verdicts.inside(interval(low, high), 0.30, 0.60) is verdict


@pytest.mark.parametrize(
    "low, high, verdict",
    [
        (-0.19, 0.19, MET),
        (-0.2, 0.1, INCONCLUSIVE),  # reaching the margin has not shown equivalence (the tests' nulls include it)
        (-0.1, 0.2, INCONCLUSIVE),
        (0.0, 0.0, MET),
        (0.2, 0.5, MISSED),  # wholly at or beyond the margin
        (-0.5, -0.2, MISSED),
        (-0.5, -0.19, INCONCLUSIVE),
        (-0.5, 0.5, INCONCLUSIVE),
    ],
)
def test_equivalent(low, high, verdict):
    assert verdicts.equivalent(interval(low, high), 0.2) is verdict


def test_an_honest_label_blind_coin_is_never_shown_equivalent_at_30_trials_with_a_margin_of_0_2():
    """The 90% Newcombe interval of two coin rates at n = 30 is about +-0.2 wide: at the margin
    itself it is inconclusive, never met, which is why semantic robustness needs more trials."""
    _, difference = stats.rates_equivalent(15, 30, 15, 30, 0.2)
    assert verdicts.equivalent(difference, 0.2) is INCONCLUSIVE
    _, wider = stats.rates_equivalent(60, 120, 60, 120, 0.2)
    assert verdicts.equivalent(wider, 0.2) is MET


@pytest.mark.parametrize(
    "p, opposite, verdict",
    [
        (0.049, None, MET),
        (0.05, None, INCONCLUSIVE),  # at alpha: not significant
        (0.5, None, INCONCLUSIVE),  # not shown true is not shown false
        (1.0, None, INCONCLUSIVE),
        (0.97, 0.03, MISSED),  # the contrary claim is significant
        (0.95, 0.05, INCONCLUSIVE),
        (0.01, 0.99, MET),
        (math.nan, None, MISSED),  # the test could not be computed
        (None, None, MISSED),
        (0.5, math.nan, INCONCLUSIVE),
    ],
)
def test_significant(p, opposite, verdict):
    assert verdicts.significant(p, 0.05, opposite=opposite) is verdict


@pytest.mark.parametrize("helper", [
    lambda e: verdicts.at_least(e, 0.5), lambda e: verdicts.strictly_above(e, 0.5), lambda e: verdicts.at_most(e, 0.5),
    lambda e: verdicts.inside(e, 0.3, 0.6), lambda e: verdicts.equivalent(e, 0.2),
])  # fmt: skip
def test_no_valid_answer_is_missed_by_every_helper(helper):
    for estimate in NO_DATA:
        assert helper(estimate) is MISSED, estimate


def test_nonsense_is_refused_rather_than_decided():
    for call in (
        lambda: verdicts.at_least(interval(0.4, 0.6), math.nan),  # a NaN threshold would decide everything one way
        lambda: verdicts.at_least(interval(0.6, 0.4), 0.5),  # bounds the wrong way round
        lambda: verdicts.inside(interval(0.4, 0.6), 0.6, 0.3),
        lambda: verdicts.equivalent(interval(-0.1, 0.1), 0),
        lambda: verdicts.significant(1.2),
        lambda: verdicts.significant(0.01, alpha=0),
        lambda: verdicts.significant(0.5, opposite=-0.1),
    ):
        with pytest.raises(ValueError):
            call()


def test_the_fidelity_verdicts_map_onto_the_three():
    class Result:
        def __init__(self, verdict):
            self.verdict = verdict

    assert [verdicts.faithful(Result(v)) for v in ("faithful", "unfaithful", "inconclusive")] == [MET, MISSED, INCONCLUSIVE]
    assert verdicts.faithful(None) is MISSED


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_at_least_and_at_most_never_both_meet_on_the_wrong_side(a, b, threshold):
    """Met by at_least means the whole interval is at or above, missed means all below: the two
    helpers mirror each other, and no interval is met on one side and missed on the same side."""
    low, high = min(a, b), max(a, b)
    estimate = interval(low, high)
    up, down = verdicts.at_least(estimate, threshold), verdicts.at_most(estimate, threshold)
    assert (up is MET) == (low >= threshold) and (up is MISSED) == (high < threshold)
    assert not (up is MET and down is MET) or low == high == threshold
    if up is INCONCLUSIVE:
        assert low < threshold <= high


def test_a_verdict_is_read_from_its_word_a_bool_or_numpy_s_bool():
    assert [Verdict.of(v) for v in ("met", "missed", "inconclusive", True, False, np.bool_(True), np.float64(0.3) > 0.5, None)] == [
        MET, MISSED, INCONCLUSIVE, MET, MISSED, MET, MISSED, None,
    ]  # fmt: skip
    assert f"{INCONCLUSIVE}" == str(INCONCLUSIVE) == "inconclusive"
    with pytest.raises(ValueError, match="met, missed, inconclusive"):
        Verdict.of("pass")
    with pytest.raises(TypeError):
        Verdict.of(interval(0.1, 0.2))  # an estimate is not a verdict, however truthy


def score(**verdict) -> Score:
    return Score(behaviour="b", test_id="t", model="m", variant={}, metric="x", score=0.5, ci=(0.4, 0.6), n=30, invalid=0,
                 criterion="", table="T", columns=("A",), cells={}, **verdict)  # fmt: skip


def test_a_score_keeps_passed_true_only_when_met_and_reads_either_field():
    assert (score(passed=None, verdict=INCONCLUSIVE).passed, score(passed=None, verdict="met").passed) == (False, True)
    assert score(passed=None, verdict="missed").passed is False
    assert (score(passed=True).verdict, score(passed=False).verdict, score(passed=None).verdict) == (MET, MISSED, None)
    assert score(passed=False, verdict=INCONCLUSIVE).verdict is INCONCLUSIVE
    for contradiction in ({"passed": True, "verdict": INCONCLUSIVE}, {"passed": False, "verdict": "met"}, {"passed": None, "verdict": True}):
        with pytest.raises(ValueError):
            score(**contradiction)
    restored = Score.from_json(score(passed=None, verdict=INCONCLUSIVE).to_json())
    assert restored.verdict is INCONCLUSIVE and restored.passed is False and restored.to_json()["verdict"] == "inconclusive"

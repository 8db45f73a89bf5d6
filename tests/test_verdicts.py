"""The four verdicts and the rules that decide them, at and around every boundary; a table judged as one
family; a claim and its contrary corrected together."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_gaamas import stats, verdicts
from pytest_gaamas.report import Score
from pytest_gaamas.stats import Estimate
from pytest_gaamas.verdicts import AT_CHANCE, INCONCLUSIVE, MET, MISSED, Verdict


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
    with pytest.raises(ValueError, match="met, missed, at chance, inconclusive"):
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


# -- at chance --------------------------------------------------------------------------------------


def test_a_fair_coin_at_30_trials_is_at_chance_and_a_clear_learner_is_not():
    coin = stats.wilson(15, 30)
    assert coin.at(0.90).low == pytest.approx(0.3562, abs=1e-4) and coin.at(0.90).high == pytest.approx(0.6438, abs=1e-4)
    assert verdicts.at_least(coin, 0.5, chance=0.5) is AT_CHANCE
    assert verdicts.at_least(coin, 0.5) is INCONCLUSIVE  # without a chance level, as before
    assert verdicts.at_least(stats.wilson(16, 30), 0.5, chance=0.5, chance_margin=0.10) is INCONCLUSIVE  # [0.38, 0.68] reaches 0.6
    assert verdicts.at_least(stats.wilson(28, 30), 0.5, chance=0.5) is MET
    assert verdicts.at_most(stats.wilson(27, 30), 0.25, chance=0.5) is MISSED  # far from chance, and above the ceiling
    assert verdicts.at_least(stats.wilson(10, 30), 0.75, chance=1 / 3) is MISSED  # guessing at 30 trials: [0.21, 0.49] reaches past 0.48
    assert verdicts.at_least(stats.wilson(40, 120), 0.75, chance=1 / 3) is AT_CHANCE  # at 120, it shows itself


def test_at_chance_on_a_mean_needs_a_margin_in_its_units():
    points = stats.mean([1.0, 0.8, 1.2, 1.0, 0.9, 1.1] * 5)
    with pytest.raises(ValueError, match="chance_margin"):
        verdicts.at_least(points, 1.5, chance=1.0)
    assert verdicts.at_least(points, 1.5, chance=1.0, chance_margin=0.3) is AT_CHANCE
    with pytest.raises(ValueError, match="from its sample"):
        verdicts.at_least(interval(0.4, 0.6), 0.75, chance=0.5, chance_margin=0.15)  # an interval by hand cannot be computed again


HELPERS = ("at_least", "strictly_above", "at_most", "inside")


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 60), st.data(), st.floats(0.05, 0.95), st.floats(0.05, 0.95), st.sampled_from(HELPERS), st.integers(1, 40))
def test_at_chance_never_coincides_with_met_and_a_table_never_makes_a_missed_met(n, data, threshold, chance, helper, size):
    rate = stats.wilson(data.draw(st.integers(0, n)), n)
    judge = {
        "at_least": lambda e, **kw: verdicts.at_least(e, threshold, **kw),
        "strictly_above": lambda e, **kw: verdicts.strictly_above(e, threshold, **kw),
        "at_most": lambda e, **kw: verdicts.at_most(e, threshold, **kw),
        "inside": lambda e, **kw: verdicts.inside(e, min(threshold, chance), max(threshold, chance), **kw),
    }[helper]
    alone, with_chance = judge(rate), judge(rate, chance=chance)
    assert (alone is MET) == (with_chance is MET)  # chance is asked after met, never instead of it
    if with_chance is AT_CHANCE:
        assert verdicts.at_chance(rate, chance) and alone is not MET
    with verdicts.table_family(size):
        in_table = judge(rate, chance=chance)
    if in_table is MET:
        assert alone is MET  # a wider interval shows less, never more
    if alone is MISSED:
        assert in_table is not MET


def test_a_coin_rarely_meets_a_criterion_anywhere_in_a_36_cell_table():
    """A fair coin at 30 trials a cell against "the lower bound >= 0.5": each cell judged alone meets
    it now and then, and somewhere in a table of 36 cells most of the time; judged as one family, in at
    most 5% of tables. The verdict of each count of heads is computed once, then 2,000 tables drawn."""
    n, cells, tables = 30, 36, 2000
    heads = np.random.default_rng(30).binomial(n, 0.5, size=(tables, cells))

    def false_met_rate(size: int) -> float:
        with verdicts.table_family(size):
            met = np.array([verdicts.at_least(stats.wilson(k, n), 0.5, chance=0.5) is MET for k in range(n + 1)])
        return float(np.mean(met[heads].any(axis=1)))

    assert false_met_rate(1) > 0.3  # each cell alone: the table meets somewhere by chance
    assert false_met_rate(cells) <= 0.05


def test_a_table_family_judges_on_the_adjusted_interval_and_keeps_it():
    perfect = stats.wilson(30, 30)
    with verdicts.table_family(36) as family:
        assert verdicts.at_least(perfect, 0.5) is MET
        assert verdicts.at_least(stats.wilson(21, 30), 0.5) is INCONCLUSIVE  # met alone: exact one-sided bound 0.53
    judged = family.judgement(perfect)
    # One end read: the two-sided interval of twice the error, each end an exact one-sided bound at 0.05 / 36.
    assert judged.family_size == 36 and judged.confidence == pytest.approx(1 - 2 * 0.05 / 36)
    assert judged.adjusted.low == pytest.approx((0.05 / 36) ** (1 / 30), abs=1e-9) and judged.as_json()["family"] == 36
    assert verdicts.at_least(stats.wilson(21, 30), 0.5) is MET and verdicts.current_table() is None  # outside the table, as before
    # An equivalence's 90% interval (two one-sided tests) is widened to 1 - 0.10 / 12.
    difference = stats.rate_difference(60, 120, 62, 120, confidence=0.9)
    with verdicts.table_family(12) as family:
        verdicts.equivalent(difference, 0.2)
    assert family.judgement(difference).confidence == pytest.approx(1 - 0.1 / 12)


# -- a claim and its contrary, one family ------------------------------------------------------------


def test_a_claim_and_its_contrary_are_corrected_as_one_family():
    claims = verdicts.family({"a": (0.01, 0.99), "b": (0.6, 0.02), "c": (0.3, 0.7)})
    assert {name: claim.family_size for name, claim in claims.items()} == dict.fromkeys("abc", 6)
    assert claims["a"].p_adjusted == pytest.approx(0.06) and claims["a"].verdict is INCONCLUSIVE  # 6 x 0.01
    assert claims["b"].opposite_adjusted == pytest.approx(0.1)  # 5 x 0.02
    strong = verdicts.family({"a": (0.001, 0.999), "b": (0.999, 0.001)})
    assert strong["a"].verdict is MET and strong["b"].verdict is MISSED


def test_a_claim_and_its_contrary_together_keep_a_wrong_direction_at_alpha():
    """No claim of a family of 4 holds either way: every met or missed is wrong. One Holm family over
    the 8 p-values keeps the chance of any at 5%; two families of 4 let it reach about 10%."""
    rng = np.random.default_rng(2018)
    p = rng.uniform(size=(2000, 4))
    one = [any(c.verdict is not INCONCLUSIVE for c in verdicts.family({i: (q, 1 - q) for i, q in enumerate(row)}).values()) for row in p]
    assert np.mean(one) <= 0.05 + 0.01

    def two_families(row) -> bool:
        claims, contraries = stats.holm(list(row)), stats.holm([1 - q for q in row])
        return any(a < 0.05 or b < 0.05 for a, b in zip(claims, contraries))

    assert np.mean([two_families(row) for row in p]) > 0.08


def test_a_difference_of_rates_is_never_read_as_a_plain_rate_s_exact_interval():
    """A difference of rates keeps each observation's share of the estimate (for the gate's test), a
    sample of n values that are not 0/1 outcomes: an exact binomial interval of their sum would be
    another quantity's, so the difference keeps its own."""
    difference = stats.rate_difference(20, 30, 10, 30)
    assert difference.kind == "rate" and len(difference.sample) == difference.n
    assert any(x not in (0, 1) for x in difference.sample)
    assert verdicts._exact_rate(difference, 0.95) is None
    plain = stats.wilson(20, 30)
    assert verdicts._exact_rate(plain, 0.95) is not None

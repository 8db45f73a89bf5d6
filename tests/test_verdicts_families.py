"""The suite's families whose null a blind agent sits at: listed in one place, each judged at ALPHA
divided by their number, within its table's or its claims' own correction; what it saves a run from,
and what it costs an agent that reads the game."""

import numpy as np
import pytest

from pytest_gaamas import stats, verdicts
from pytest_gaamas.verdicts import INCONCLUSIVE, MET


def test_each_family_at_a_blind_null_gets_an_equal_share_of_alpha_and_says_so():
    share = verdicts.ALPHA / len(verdicts.BLIND_NULLS)
    assert all(verdicts.blind_null(name) == share for name in verdicts.BLIND_NULLS)
    assert all(reason for reason in verdicts.BLIND_NULLS.values())
    words = verdicts.blind_null_words("role fidelity")
    assert f"alpha 0.05 / {len(verdicts.BLIND_NULLS)}" in words and "blind agent" in words
    with pytest.raises(KeyError, match="not one of the families"):
        verdicts.blind_null("a family nobody listed")


def test_a_criterion_at_a_blind_null_is_judged_at_its_share_inside_its_table():
    """23 of 30 meets "the lower bound >= 0.5" in a table of 6 cells at 5%, not at the share of 5%
    (the exact one-sided bound at 0.05 / (6 x the number of families)); 30 of 30 meets it still."""
    alpha = verdicts.blind_null("first-order rationality")
    with verdicts.table_family(6) as family:
        assert verdicts.at_least(stats.wilson(23, 30), 0.5) is MET
        assert verdicts.at_least(stats.wilson(23, 30), 0.5, alpha=alpha) is INCONCLUSIVE
        perfect = stats.wilson(30, 30)
        assert verdicts.at_least(perfect, 0.5, alpha=alpha) is MET
    judged = family.judgement(perfect)
    assert judged.confidence == pytest.approx(1 - 2 * alpha / 6) and judged.family_size == 6
    # outside a table, the share alone; a level above ALPHA is no correction, and is refused
    assert verdicts.at_least(stats.wilson(20, 30), 0.5) is MET and verdicts.at_least(stats.wilson(20, 30), 0.5, alpha=alpha) is INCONCLUSIVE
    with pytest.raises(ValueError, match="at most 0.05"):
        verdicts.at_least(perfect, 0.5, alpha=0.1)


def test_a_claim_family_at_a_blind_null_is_decided_at_its_share():
    claims = {"a": (0.002, 0.998), "b": (0.5, 0.5)}
    assert verdicts.family(claims)["a"].verdict is MET  # 4 x 0.002 < 0.05
    assert verdicts.family(claims, verdicts.blind_null("omniscience adds success"))["a"].verdict is INCONCLUSIVE


def test_a_coin_meets_something_in_at_most_one_suite_in_20_once_the_families_share_alpha():
    """As many tables of 36 coins (30 tosses a cell, "the lower bound >= 0.5") as there are families at
    a blind agent's null: each table held at 5% lets the coin through somewhere in the suite in about a
    quarter of 2,000 suites; with each family at its share, in at most 5%."""
    n, cells, families, suites = 30, 36, len(verdicts.BLIND_NULLS), 2000
    heads = np.random.default_rng(2026).binomial(n, 0.5, size=(suites, families, cells))

    def suite_false_met_rate(alpha: float) -> float:
        with verdicts.table_family(cells):
            met = np.array([verdicts.at_least(stats.wilson(k, n), 0.5, alpha=alpha) is MET for k in range(n + 1)])
        return float(np.mean(met[heads].any(axis=(1, 2))))

    assert suite_false_met_rate(verdicts.ALPHA) > 0.15
    assert suite_false_met_rate(verdicts.blind_null("second-order rationality")) <= 0.05


def test_what_the_share_costs_an_agent_that_reads_the_game():
    """The heads of 30 needed to show "the lower bound >= 0.5", an exact one-sided test: 22 at 5% in a
    table of 6 cells, 25 at the share; 24 in a table of 36, 26 at the share (docs/statistics.md says these)."""
    alpha = verdicts.blind_null("second-order rationality")

    def needed(cells: int, level: float) -> int:
        with verdicts.table_family(cells):
            return min(k for k in range(31) if verdicts.at_least(stats.wilson(k, 30), 0.5, alpha=level) is MET)

    assert (needed(6, verdicts.ALPHA), needed(6, alpha), needed(36, verdicts.ALPHA), needed(36, alpha)) == (22, 25, 24, 26)

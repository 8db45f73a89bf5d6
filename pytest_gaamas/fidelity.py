"""Fidelity to people at the level of individual choices: is the model's distribution of choices the
one people produce, not only its average?

Each comparison sets the model's valid choices against the individual choices of real people in the
same game (``pytest_gaamas.data``): the difference of means with Welch's interval, the Wasserstein
distance with its upper 95% bound, and a permutation test of "same distribution". The verdict:

- ``unfaithful``: the test rejects "same distribution" at 5%;
- ``faithful``: it does not, and the upper 95% bound of the distance is within the tolerance, so the
  data say the model is both indistinguishable from people and close to them;
- ``inconclusive``: neither (too few valid choices to say).

The tolerances are what 30 choices can show: 30 choices drawn from the people themselves stay
within them about 95% of the time ($15 of $100 for amounts, 0.1 for a CCEI, 0.25 for the share
accepting an offer: one yes-or-no choice says little). ``reference:human``, which draws from the
data, is tested to be faithful, ``reference:rational`` and ``reference:random`` not to be.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from . import stats
from .data import ckms2014_subjects, moblab_dictator_gifts, moblab_ultimatum_strategies
from .metrics import ccei

TABLE = "Fidelity to humans: the model's individual choices against people's"
#: The verdict column of this table says faithful, unfaithful or inconclusive (Score.verdict_label).
COLUMNS = ("model mean", "human mean", "difference [95% CI]", "Wasserstein [upper 95%]", "p same as people", "n", "invalid")
ALPHA = 0.05


@dataclass(frozen=True)
class HumanChoices:
    """People's choices in one decision, with what a reader needs to trust them."""

    choice: str  # what was chosen, as a row label: "dictator: $ kept"
    values: tuple[float, ...]
    discrete: bool  # choices from a small set (dollars), not a continuous score
    tolerance: float  # the largest distance, in the choice's units, still called close
    unit: str  # "$" for dollars, "" for shares and indices
    source: str


@dataclass(frozen=True)
class Fidelity:
    verdict: str
    test: stats.DistributionTest
    difference: stats.Estimate
    model_mean: float
    human_mean: float

    @property
    def faithful(self) -> bool:
        return self.verdict == "faithful"


def explain(result: Fidelity | None, humans: HumanChoices) -> str:
    """Why a fidelity test failed, for its assertion message."""
    return f"{result.verdict if result else 'no valid choice'}: {criterion(humans)}"


def compare(model_values: Sequence[float], humans: HumanChoices) -> Fidelity | None:
    """The comparison, or None when the model made no valid choice to compare."""
    if not model_values:
        return None
    test = stats.compare_distributions(model_values, humans.values, discrete=humans.discrete)
    if test.p_value < ALPHA:
        verdict = "unfaithful"
    elif test.upper <= humans.tolerance:
        verdict = "faithful"
    else:
        verdict = "inconclusive"
    return Fidelity(
        verdict, test, stats.mean_difference(model_values, humans.values),
        statistics.fmean(model_values), statistics.fmean(humans.values),
    )  # fmt: skip


def criterion(humans: HumanChoices) -> str:
    return (
        f"fidelity ({humans.choice}, {len(humans.values):,} people): faithful when the "
        f"{stats.distribution_test_name(humans.discrete)} keeps 'same distribution as people' at {ALPHA:g} and the upper "
        f"95% bound of the Wasserstein distance is <= {humans.unit}{humans.tolerance:g}"
    )


@lru_cache(maxsize=1)
def dictator_kept() -> HumanChoices:
    return HumanChoices(
        "dictator: $ kept", tuple(100 - g for g in moblab_dictator_gifts()), discrete=True, tolerance=15, unit="$",
        source="MobLab first-round one-shot dictator games of $100 (Mei, Xie, Yuan & Jackson 2024, PNAS data)",
    )  # fmt: skip


@lru_cache(maxsize=1)
def ultimatum_kept() -> HumanChoices:
    return HumanChoices(
        "ultimatum proposer: $ kept", tuple(100 - p.offer for p in moblab_ultimatum_strategies()), discrete=True,
        tolerance=15, unit="$", source=ULTIMATUM_SOURCE,
    )  # fmt: skip


@lru_cache(maxsize=1)
def ultimatum_accepts(offer: float) -> HumanChoices:
    """Whether each person would accept ``offer``: their smallest accepted offer is at most it."""
    return HumanChoices(
        f"ultimatum responder: accepts ${offer:g}",
        tuple(float(p.smallest_accepted <= offer) for p in moblab_ultimatum_strategies()),
        discrete=True, tolerance=0.25, unit="", source=ULTIMATUM_SOURCE,
    )  # fmt: skip


@lru_cache(maxsize=1)
def portfolio_ccei() -> HumanChoices:
    """The CCEI of each CKMS subject, computed here from their 25 choices on the same budgets."""
    return HumanChoices(
        "portfolio: CCEI", tuple(ccei(s.prices, s.choices) for s in ckms2014_subjects()), discrete=False,
        tolerance=0.1, unit="", source="Choi, Kariv, Mueller & Silverman (2014), AER 104(6), 1,182 subjects, 25 budgets",
    )  # fmt: skip


ULTIMATUM_SOURCE = "MobLab first-round ultimatum games of $100, strategy method (Mei, Xie, Yuan & Jackson 2024, PNAS data)"

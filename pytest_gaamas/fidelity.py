"""Fidelity to people at two levels: is the model's average what people's is, and is its distribution
of choices the one people produce? A model can pass the first and fail the second (the seed's
paradox: plausible in aggregate, unfaithful in person), and the comparison says so.

Aggregate fidelity: two one-sided tests at 5% that the model's mean is people's within the choice's
``mean_margin`` ($15 of $100, 0.1 of a CCEI): the 90% Welch interval of the difference of means lies
inside it ("plausible"), or not ("not shown"). The margins are what 30 choices can show, about two
thirds of people's standard deviation: 30 choices drawn from people themselves are plausible 94-97%
of the time (``measured``: 1,000 samples each, 200 for the CCEI).

Each comparison sets the model's valid choices against the individual choices of real people in the
same game (``pytest_gaamas.data``): the difference of means with Welch's interval, the Wasserstein
distance with its upper 95% bound, and a permutation test of "same distribution". The verdict:

- ``unfaithful``: the test rejects "same distribution" at 5%;
- ``faithful``: it does not, and the upper 95% bound of the distance is within the tolerance, so the
  data say the model is both indistinguishable from people and close to them;
- ``inconclusive``: neither (too few valid choices to say).

Both levels are reported side by side, and a choice plausible in aggregate and unfaithful in person
is flagged. An agent that always makes people's average choice (``reference:average``) is tested to
be flagged so, and ``reference:human`` to be faithful at both levels.

The tolerances ($15 of $100 for amounts and thresholds, 0.1 for a CCEI) are what 30 choices can
show: 30 choices drawn from the people themselves are judged faithful 92-94% of the time, unfaithful
5% (the permutation test's level, which it holds) and inconclusive the rest, where the distance's
upper bound passes the tolerance (``measured``; docs/statistics.md has the table). Where an agent
that never reads the game lies at the tolerance (a uniform threshold, $15.7 from people's), the
bound is taken at the suite's share of 5% instead (``HumanChoices.blind_null``), and people's own
draws of thresholds are judged faithful 75% of the time, not 93%: the price of not calling a blind
agent a person.
``reference:human``, which draws from the data, is tested to be faithful, ``reference:rational`` and
``reference:random`` not to be.

A choice compared person by person must carry a person. One yes-or-no of one offer does not: its
distribution is its rate, so the comparison is the aggregate one again, and a fair coin was judged
faithful to people's acceptance of $40 in 41% of samples of 30 (people's own draws in 72%: no
tolerance on a rate that 30 answers pin down to +-0.18 can keep both). The responder is compared by
its threshold, asked by the strategy method as MobLab asked (``ultimatum_thresholds``).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from . import stats, verdicts
from .data import ckms2014_subjects, moblab_dictator_gifts, moblab_ultimatum_strategies
from .metrics import ccei

TABLE = "Fidelity to humans at two levels: the model's mean, and its individual choices, against people's"
#: The verdict column of this table says faithful, unfaithful or inconclusive in person (Score.verdict_label).
COLUMNS = (
    "model mean", "human mean", "difference [90% CI]", "aggregate (mean within margin)", "Wasserstein [upper bound]",
    "p same as people", "two levels", "n", "invalid",
)  # fmt: skip
PARADOX = "FLAG: plausible in aggregate, unfaithful in person"
ALPHA = 0.05
#: The one fidelity whose tolerance an agent that never reads the game reaches (``verdicts.BLIND_NULLS``).
THRESHOLD_FIDELITY = "the responder threshold's fidelity"


@dataclass(frozen=True)
class HumanChoices:
    """People's choices in one decision, with what a reader needs to trust them."""

    choice: str  # what was chosen, as a row label: "dictator: $ kept"
    values: tuple[float, ...]
    discrete: bool  # choices from a small set (dollars), not a continuous score
    tolerance: float  # the largest distance, in the choice's units, still called close
    unit: str  # "$" for dollars, "" for shares and indices
    source: str
    #: The largest difference of means still called equivalent, in the choice's units.
    mean_margin: float = 0.0
    #: Where an agent that never reads the game sits at the tolerance: its family in
    #: ``verdicts.BLIND_NULLS``, whose share of 5% across the suite "close" is shown at, so that such
    #: an agent is judged faithful no more often than the suite allows.
    blind_null: str | None = None

    @property
    def level(self) -> float:
        """What "close" is shown at: the distance's upper bound is at 1 - ``level``."""
        return ALPHA if self.blind_null is None else verdicts.blind_null(self.blind_null)

    @property
    def upper_bound_name(self) -> str:
        return f"upper {confidence_words(1 - self.level)} bound"


def confidence_words(confidence: float) -> str:
    """0.95 -> "95%", 1 - 0.05 / 14 -> "99.64%"."""
    return f"{100 * confidence:.4g}%"


@dataclass(frozen=True)
class Fidelity:
    verdict: str
    test: stats.DistributionTest
    #: The model's mean minus people's, with its 90% interval: the two one-sided tests' interval.
    difference: stats.Estimate
    model_mean: float
    human_mean: float
    #: The aggregate verdict: the difference of means within the margin.
    plausible_in_aggregate: bool = False

    @property
    def faithful(self) -> bool:
        return self.verdict == "faithful"

    @property
    def aggregate(self) -> str:
        return "plausible" if self.plausible_in_aggregate else "not shown"

    @property
    def paradox(self) -> bool:
        """The seed's warning: an average like people's from choices unlike theirs."""
        return self.plausible_in_aggregate and self.verdict == "unfaithful"

    @property
    def levels(self) -> str:
        if self.paradox:
            return PARADOX
        if self.plausible_in_aggregate and self.faithful:
            return "faithful at both levels"
        return f"aggregate {self.aggregate}, in person {self.verdict}"


def explain(result: Fidelity | None, humans: HumanChoices) -> str:
    """Why a fidelity test was not met, in one line: what was measured against what it needs (the
    criterion itself is printed once, under the table)."""
    if result is None:
        return f"no valid choice to compare with {len(humans.values):,} people ({humans.choice})"
    unit, test = humans.unit, result.test
    return (
        f"{result.verdict} in person, {result.aggregate} in aggregate ({humans.choice}): mean {unit}{result.model_mean:.3g} against "
        f"people's {unit}{result.human_mean:.3g}; Wasserstein {unit}{test.distance:.3g} [{humans.upper_bound_name} {unit}{test.upper:.3g}], "
        f"p {'< 0.001' if test.p_value < 0.001 else f'= {test.p_value:.3f}'}; faithful needs p >= {ALPHA:g} and the upper bound "
        f"<= {unit}{humans.tolerance:g}"
    )


def compare(model_values: Sequence[float], humans: HumanChoices) -> Fidelity | None:
    """The comparison, or None when the model made no valid choice to compare."""
    if not model_values:
        return None
    test = stats.compare_distributions(model_values, humans.values, discrete=humans.discrete, confidence=1 - humans.level)
    if test.p_value < ALPHA:
        verdict = "unfaithful"
    elif test.upper <= humans.tolerance:
        verdict = "faithful"
    else:
        verdict = "inconclusive"
    difference = stats.mean_difference(model_values, humans.values, confidence=1 - 2 * ALPHA)
    plausible = difference.n > 0 and -humans.mean_margin < difference.low and difference.high < humans.mean_margin
    return Fidelity(
        verdict, test, difference, statistics.fmean(model_values), statistics.fmean(humans.values), plausible,
    )  # fmt: skip


def criterion(humans: HumanChoices) -> str:
    return (
        f"fidelity ({humans.choice}, {len(humans.values):,} people): faithful in person when the "
        f"{stats.distribution_test_name(humans.discrete)} keeps 'same distribution as people' at {ALPHA:g} and the "
        f"{humans.upper_bound_name} of the Wasserstein distance is <= {humans.unit}{humans.tolerance:g}{level_words(humans)}; plausible in aggregate when the "
        f"90% interval of the difference of means lies within +-{humans.unit}{humans.mean_margin:g} (two one-sided tests)"
    )


def level_words(humans: HumanChoices) -> str:
    return "" if humans.blind_null is None else f" ({verdicts.blind_null_words(humans.blind_null)})"


@lru_cache(maxsize=1)
def dictator_kept() -> HumanChoices:
    return HumanChoices(
        "dictator: $ kept", tuple(100 - g for g in moblab_dictator_gifts()), discrete=True, tolerance=15, unit="$", mean_margin=15,
        source="MobLab first-round one-shot dictator games of $100 (Mei, Xie, Yuan & Jackson 2024, PNAS data)",
    )  # fmt: skip


@lru_cache(maxsize=1)
def ultimatum_kept() -> HumanChoices:
    return HumanChoices(
        "ultimatum proposer: $ kept", tuple(100 - p.offer for p in moblab_ultimatum_strategies()), discrete=True,
        tolerance=15, unit="$", mean_margin=15, source=ULTIMATUM_SOURCE,
    )  # fmt: skip


@lru_cache(maxsize=1)
def ultimatum_thresholds() -> HumanChoices:
    """Each person's smallest accepted offer, by the strategy method: a threshold carries a person
    (where their acceptance rises, how far below an equal split they go) that one yes-or-no cannot."""
    return HumanChoices(
        "ultimatum responder: smallest offer accepted", tuple(p.smallest_accepted for p in moblab_ultimatum_strategies()),
        discrete=True, tolerance=15, unit="$", mean_margin=15, source=ULTIMATUM_SOURCE,
        blind_null=THRESHOLD_FIDELITY,
    )  # fmt: skip


@lru_cache(maxsize=1)
def portfolio_ccei() -> HumanChoices:
    """The CCEI of each CKMS subject, computed here from their 25 choices on the same budgets."""
    return HumanChoices(
        "portfolio: CCEI", tuple(ccei(s.prices, s.choices) for s in ckms2014_subjects()), discrete=False,
        tolerance=0.1, unit="", mean_margin=0.1, source="Choi, Kariv, Mueller & Silverman (2014), AER 104(6), 1,182 subjects, 25 budgets",
    )  # fmt: skip


ULTIMATUM_SOURCE = "MobLab first-round ultimatum games of $100, strategy method (Mei, Xie, Yuan & Jackson 2024, PNAS data)"


# -- how often the verdicts fall: people's own draws, and agents that never read the game ----------


@dataclass(frozen=True)
class Rates:
    """How ``compare`` judged ``samples`` samples of one kind of agent."""

    samples: int
    faithful: int
    unfaithful: int
    plausible: int
    paradox: int

    def share(self, count: int) -> stats.Estimate:
        return stats.wilson(count, self.samples)


def judged(
    draw: Callable[[random.Random], Sequence[float]], humans: HumanChoices, samples: int = 1_000, seed: int = 0,
) -> Rates:
    """How often samples drawn by ``draw`` (30 choices, say) are judged faithful in person, unfaithful,
    plausible in aggregate, flagged: for people's own draws, the rate the docs state; for an agent that
    never reads the game, the rate at which the test calls it a person."""
    rng = random.Random(seed)
    results = [result for _ in range(samples) if (result := compare(draw(rng), humans)) is not None]
    assert len(results) == samples, "a draw held no choice to compare"
    return Rates(
        samples, sum(r.verdict == "faithful" for r in results), sum(r.verdict == "unfaithful" for r in results),
        sum(r.plausible_in_aggregate for r in results), sum(r.paradox for r in results),
    )  # fmt: skip


def people_draw(humans: HumanChoices, n: int = 30) -> Callable[[random.Random], list[float]]:
    """``n`` choices drawn from people's own, as reference:human draws them."""
    return lambda rng: [rng.choice(humans.values) for _ in range(n)]


def measured(samples: int = 1_000, ccei_samples: int = 200) -> list[tuple[str, str, Rates]]:
    """What docs/statistics.md states: for every choice the suite compares with people, how 30 of
    people's own choices are judged; for the responder's threshold, how agents that never read the game
    are. (The CCEI's test permutes 1,182 distinct values and costs about 2 s a sample: fewer of them.)"""
    from .games.dictator import DOLLARS, PIE, ThresholdGame  # the game folds a blind answer into a threshold

    game = ThresholdGame()

    def blind(answer: Callable[[random.Random], float]) -> Callable[[random.Random], list[float]]:
        return lambda rng: [game.read_trial(t, {DOLLARS: answer(rng)}) for t in range(30)]

    rows = [(humans.choice, "people's own choices", judged(people_draw(humans), humans, samples))
            for humans in (dictator_kept(), ultimatum_kept(), ultimatum_thresholds())]  # fmt: skip
    ccei = portfolio_ccei()
    rows.append((ccei.choice, "people's own choices", judged(people_draw(ccei), ccei, ccei_samples)))
    thresholds = ultimatum_thresholds()
    for name, answer in (
        ("a number uniform over the range", lambda rng: rng.randint(0, PIE)),
        ("a fair coin between the range's ends", lambda rng: rng.choice((0, PIE))),
        ("a fair coin between $30 and $50", lambda rng: rng.choice((30, 50))),
        ("a 3-in-4 coin between $20 and $50", lambda rng: 20 if rng.random() < 0.75 else 50),
    ):
        rows.append((thresholds.choice, name, judged(blind(answer), thresholds, samples)))
    constants = iter(range(PIE + 1))  # a constant anywhere in the range, one sample each: it never varies

    def each_constant(rng: random.Random) -> list[float]:
        constant = next(constants)
        return blind(lambda _: constant)(rng)

    rows.append((thresholds.choice, "each constant from 0 to 100, once", judged(each_constant, thresholds, PIE + 1)))
    return rows


if __name__ == "__main__":
    import sys

    print("| choice | agent | samples of 30 | faithful in person | unfaithful | plausible in aggregate | flagged |")
    print("|---|---|---|---|---|---|---|")
    for choice, agent, rates in measured(*map(int, sys.argv[1:])):
        shares = [rates.share(count) for count in (rates.faithful, rates.unfaithful, rates.plausible, rates.paradox)]
        cells = " | ".join(f"{s.value:.3f} [{s.low:.3f}, {s.high:.3f}]" for s in shares)
        print(f"| {choice} | {agent} | {rates.samples:,} | {cells} |")

"""Social preference under strategic interaction: the ultimatum game, as proposer and as responder.

Game: PyGAAMAS "Social preference". As proposer: $100 to split; the responder accepts (the split
stands) or rejects (both get nothing); the model says how many dollars it keeps. As responder: the
proposer offers $40 of $100; the model accepts or rejects. As responder by the strategy method
(`responder threshold`), as MobLab asked its players: before any offer, the smallest offer it
accepts, in whole dollars.
Variants (columns): the role.
Protocol: 30 trials per role, temperature 0.7, system prompt "You are a helpful assistant.".
Strategy (the `strategy` rows): `my_share(pie) -> float` for the proposer, `accept(pie, offer)
-> bool` for the responder, written once and played 30 times in the sandbox; a valid responder
strategy is also asked every offer $0-$100, and its smallest accepted offer is shown beside the
thresholds MobLab's players set by the same strategy method, with whether its acceptance rises with
the offer (a function of the offer may accept $40 and reject $60; a threshold cannot);
`smallest_offer(pie) -> int` for the threshold.
Score: the proposer's share kept (median, mean with a 95% bootstrap CI, distribution); the
responder's acceptance rate (Wilson 95% CI); the threshold's mean, and the share of thresholds at
most $40, which accept $40 (Wilson 95% CI).
Theory: subgame perfection keeps $99 and accepts any positive offer, a threshold of $1
(reference:rational). MobLab players (strategy method, first-round $100 games, n = 5,993) keep $56
on average, set thresholds of $34 on average, and 60% of them accept $40 (reference:human samples
them; reference:average names their mean, $56 kept, a $34 threshold); Oosterbeek et al. (2004)
report offers of 40% and 16% of offers rejected (meta-analysis). Random play keeps $50, accepts
half the time, and names a threshold of $50 on average.
Counterbalanced (pytest_gaamas.counterbalance): the proposer is asked what it keeps in even trials and
what it offers in odd ones; the responder's two answers are listed in both orders; the threshold is
asked as the smallest offer accepted in even trials and as the most the proposer may keep in odd
ones, with the same numbers in the same places, so that an answer given without reading the question
(a constant, an end of the range, a number the prompt names) is a threshold of c and of 100 - c in
turn: $50 on average, two spikes. Each question and its mirror hold the same words in another order,
with one answer field ("You keep any number of dollars from 0 to 100 and offer the rest to the
responder: how many dollars do you keep?"; "that number is the smallest offer you accept, and 100
minus it is the most the proposer may keep", the rule that follows the same in both), so that a habit keyed to a word ("offer", "smallest") is on in both framings or
in neither. Each pair of trials is told the rules in a wording of its own, so that a role's 30
trials are 30 prompts.
Verdict: the proposer's is met when the lower 95% bound of the mean share kept is above
`min_mean_kept` ($50: more than half, strictly, so that keeping $50 every time is not met); the
responder's when the lower 95% bound of the acceptance rate reaches `min_acceptance` (0.5), and the
threshold's when that of the share of thresholds at most $40 does; missed
when the interval lies wholly on the other side, inconclusive when it straddles the threshold. An
agent that accepts every offer meets the responder's criterion: accepting $40 is all it asks, and
the threshold, which no answer given without reading the question brings below $40 more than half
the time, is what tells an acceptance apart from a habit. Override with
--gaamas-threshold=ultimatum.NAME=VALUE. Two criteria sit at a blind agent's null: a coin keeps $50
on average as proposer, and an agent that names either end of the range by a coin's toss sets a
threshold at most $40 exactly half the time (c and 100 - c in turn); each is one of the suite's
families judged at 0.05 divided by their number (pytest_gaamas.verdicts.BLIND_NULLS).
Fidelity (test_ultimatum_fidelity, same cells replayed): the proposer's amounts kept against
MobLab's 5,993 proposers', the thresholds against the same 5,993 people's (pytest_gaamas.fidelity):
faithful in person when indistinguishable from people and within $15 of them, plausible in
aggregate when the mean is within $15. A threshold drawn uniformly over the range lies $15.7 from
people's, at the tolerance: "within $15" of the thresholds is shown at 0.05 divided by the suite's
families (BLIND_NULLS), the proposer's at 0.05. Acceptance rising with the offer is what a threshold is, so
it describes the thresholds and is no criterion. The accept-or-reject of $40 stays in the table as
the aggregate acceptance rate beside people's 0.60, and is not compared person by person: one
yes-or-no carries no person (its distribution is its rate), and a fair coin was judged faithful to
people in 41% of samples of 30.
"""

import statistics
from functools import lru_cache

from pytest_gaamas import cells, fidelity, people, stats, verdicts
from pytest_gaamas.data import moblab_ultimatum_strategies
from pytest_gaamas.figures import CURVE, DOLLARS, INTERVAL, RATE, VIOLIN, Figure
from pytest_gaamas.games.dictator import (
    OFFER_TO_RESPONDER, PIE, THRESHOLD, ThresholdGame, UltimatumGame, acceptance_rises, smallest_accepted,
)
from pytest_gaamas.report import cell, dollars_summary, invalid_note

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
MIN_MEAN_KEPT = 50.0
MIN_ACCEPTANCE = 0.5
#: The roles whose criterion a blind agent sits at the null of: judged at the suite's share of 5% for such families.
BLIND_NULL = {"proposer": "the proposer keeps more than half", THRESHOLD: "the responder threshold accepts $40"}

TABLE = "Social preference: the ultimatum game, $100"
COLUMNS = (
    "proposer keeps: median", "mean [95% CI]", "distribution", f"responder accepts ${OFFER_TO_RESPONDER} [95% CI]",
    "smallest offer accepted", "threshold named: mean [95% CI]", f"threshold accepts ${OFFER_TO_RESPONDER} [95% CI]",
)


CELLS = cells(role=("proposer", "responder", THRESHOLD), generation=("actions", "strategy"))
#: The roles whose choices carry a person: an amount kept, a threshold. One accept-or-reject of one offer
#: is described whole by its rate, so comparing it with people person by person is the aggregate again.
FIDELITY_CELLS = cells(role=("proposer", THRESHOLD), generation=("actions", "strategy"))


METRICS = {
    "proposer": "mean share kept",
    "responder": "acceptance rate",
    THRESHOLD: f"share of thresholds accepting ${OFFER_TO_RESPONDER}",
}


def ultimatum(role: str):
    return ThresholdGame() if role == THRESHOLD else UltimatumGame(role)


@CELLS
def test_ultimatum(gaamas, role, generation):
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(ultimatum(role), trials, temperature=gaamas.temperature(PAPER_TEMPERATURE), generation=generation)
    valid = [r.outcome for r in records if r.valid]
    invalid = len(records) - len(valid)

    if role == "proposer":
        kept = [o["my_share"] for o in valid]
        estimate, threshold = stats.mean(kept), gaamas.threshold("min_mean_kept", MIN_MEAN_KEPT)
        criterion = f"proposer: lower 95% bound of the mean share kept > {threshold:g}; {verdicts.blind_null_words(BLIND_NULL[role])}"
        verdict = verdicts.strictly_above(estimate, threshold, alpha=verdicts.blind_null(BLIND_NULL[role]))
        cells = proposer_cells(kept, estimate)
        cells[COLUMNS[1]] += invalid_note(invalid)
    elif role == THRESHOLD:  # a threshold at most $40 accepts $40: the responder's criterion, by the strategy method
        thresholds = [o["smallest_accepted"] for o in valid]
        estimate = stats.wilson(sum(t <= OFFER_TO_RESPONDER for t in thresholds), len(thresholds))
        threshold = gaamas.threshold("min_acceptance", MIN_ACCEPTANCE)
        criterion = (f"threshold: lower 95% bound of the share of thresholds <= ${OFFER_TO_RESPONDER} >= {threshold:g}; "
                     f"{verdicts.blind_null_words(BLIND_NULL[role])}")
        verdict = verdicts.at_least(estimate, threshold, alpha=verdicts.blind_null(BLIND_NULL[role]))
        cells = {COLUMNS[5]: cell(stats.mean(thresholds)) + invalid_note(invalid), COLUMNS[6]: cell(estimate)}
    else:
        estimate = stats.wilson(sum(o["accepted"] for o in valid), len(valid))
        threshold = gaamas.threshold("min_acceptance", MIN_ACCEPTANCE)
        criterion = f"responder: lower 95% bound of the acceptance rate >= {threshold:g}"
        verdict = verdicts.at_least(estimate, threshold)
        cells = {COLUMNS[3]: cell(estimate) + invalid_note(invalid)}
        if gaamas.strategy and gaamas.strategy.valid:  # a strategy answers every offer: its threshold
            lowest = smallest_accepted(gaamas.strategy.probes)
            rises = "" if acceptance_rises(gaamas.strategy.probes) else ", but rejects some larger offers"
            cells[COLUMNS[4]] = "none" if lowest is None else f"${lowest:g}{rises}"

    gaamas.score(
        table=TABLE,
        metric=METRICS[role],
        unit="dollars" if role == "proposer" else "rate",
        estimate=estimate,
        invalid=invalid,
        verdict=verdict,
        criterion=criterion,
        columns=COLUMNS,
        cells=cells,
        details={"outcomes": valid},
        figures=figures(role, gaamas.strategy),
    )
    for row in (humans_row(), *fhss_rows(), META_ANALYSIS_ROW):
        gaamas.reference(table=TABLE, **row)
    gaamas.verdict(verdict, f"{role}: {cell(estimate)} with {invalid} invalid; meeting it needs the {criterion}")


@FIDELITY_CELLS
def test_ultimatum_fidelity(gaamas, role, generation):
    records = gaamas.play(ultimatum(role), gaamas.trials(PAPER_TRIALS), temperature=gaamas.temperature(PAPER_TEMPERATURE),
                          generation=generation, recorded_as="test_ultimatum")
    valid = [r.outcome for r in records if r.valid]
    if role == "proposer":
        humans, choices = fidelity.ultimatum_kept(), [o["my_share"] for o in valid]
    else:  # acceptance rises with the offer by construction: a threshold accepts every offer above it
        humans, choices = fidelity.ultimatum_thresholds(), [o["smallest_accepted"] for o in valid]
    result = gaamas.fidelity(choices, humans, invalid=len(records) - len(valid), label=humans.choice)
    gaamas.verdict(verdicts.faithful(result), fidelity.explain(result, humans))


PEOPLE_PROPOSERS = "MobLab ultimatum proposers: $ kept of $100"
PEOPLE_THRESHOLDS = "MobLab ultimatum responders: smallest offer accepted"
PEOPLE_NOTE = ("people: MobLab first-round ultimatum games of $100, strategy method, n = 5,993 (verified from data); "
               "FHSS 1994's proposers, as % of $5 and $10 pies, are in the table")
RESPONDER_NOTE = ("people: MobLab, the share whose smallest accepted offer (strategy method) is at most $40, n = 5,993; "
                  "FHSS 1994, the share of offers of 40% of a $5 or $10 pie that responders accepted on seeing them "
                  "(both verified from data)")
#: An offer of $40 of $100 is this share of the pie, the one FHSS's rejections are read at.
OFFER_SHARE = OFFER_TO_RESPONDER / PIE


def figures(role, strategy):
    """The proposer's violins beside MobLab's; the responder's acceptance of $40, and a strategy's
    answer at every offer beside the share of people who accept it."""
    if role == "proposer":
        return (Figure("Ultimatum proposer: share kept", VIOLIN, "$ kept of $100", x="proposer", people=PEOPLE_PROPOSERS,
                       limits=DOLLARS, references={"subgame perfection ($99)": 99, "equal split ($50)": 50}, note=PEOPLE_NOTE),)
    accepting = people_accepting()
    lines = {"subgame perfection": 1.0, f"people, MobLab ({accepting:.2f})": accepting}
    for paid in (True, False):
        accepted, made = fhss_accepting(paid)
        lines[f"people, FHSS 1994, {'paid' if paid else 'no pay'} ({accepted} of {made} offers of {OFFER_SHARE:.0%} accepted)"] = accepted / made
    declared = [Figure(f"Ultimatum responder: acceptance of ${OFFER_TO_RESPONDER}", INTERVAL, f"share accepting ${OFFER_TO_RESPONDER} [95% CI]",
                       x="responder, by its threshold" if role == THRESHOLD else "responder", limits=RATE, note=RESPONDER_NOTE,
                       references=lines)]
    if role == THRESHOLD:  # its threshold is the strategy: no offer to probe it at
        return tuple(declared)
    if strategy is not None:  # a strategy that answers no offer says so in its place
        curve = tuple((float(offer), float(bool(accepted))) for (_, offer), accepted in strategy.probes) if strategy.valid else ()
        declared.append(Figure("Ultimatum responder strategies: acceptance at every offer", CURVE, "accepts (1) or rejects (0)",
                               x_axis="offer to the responder, $ of $100", curve=curve, people=PEOPLE_THRESHOLDS, limits=RATE,
                               note="people: the share of MobLab responders whose smallest accepted offer is at most x, n = 5,993 (verified from data)"))
    return tuple(declared)


def proposer_cells(kept, mean_kept):
    return dict(zip(COLUMNS[:3], dollars_summary(kept, mean_kept)))


@lru_cache(maxsize=1)
def people_accepting() -> float:
    """The share of MobLab's responders who would accept the offer the model is made."""
    players = moblab_ultimatum_strategies()
    return sum(p.smallest_accepted <= OFFER_TO_RESPONDER for p in players) / len(players)


@lru_cache(maxsize=1)
def humans_row() -> dict:
    players = moblab_ultimatum_strategies()
    accepts = sum(p.smallest_accepted <= OFFER_TO_RESPONDER for p in players)
    kept = [100 - p.offer for p in players]
    return {
        "label": f"humans, MobLab (n = {len(players)})",
        "cells": proposer_cells(kept, people.mean(PEOPLE_PROPOSERS))
        | {
            COLUMNS[3]: cell(stats.wilson(accepts, len(players))),
            COLUMNS[4]: f"median ${statistics.median(p.smallest_accepted for p in players):g}",
            COLUMNS[5]: cell(people.mean(PEOPLE_THRESHOLDS)),
            COLUMNS[6]: cell(stats.wilson(accepts, len(players))),
        },
        "source": "MobLab first-round ultimatum games of $100, strategy method (Mei, Xie, Yuan & Jackson 2024, PNAS data)",
        "status": "verified from data",
    }


@lru_cache(maxsize=1)
def fhss_rows() -> tuple[dict, ...]:
    """FHSS (1994)'s ultimatum games of $5 and $10, with pay or without: what proposers kept, as a
    share of the pie, and how many offers of 40% responders accepted on seeing them."""
    rows = []
    for name, fhss in people.fhss("ultimatum"):
        accepted, made = fhss.accepted(OFFER_SHARE)
        rows.append({
            "label": f"humans, FHSS 1994, ${fhss.pie:g} pie, {fhss.payment} (n = {len(fhss.offers)}): % of the pie",
            "cells": proposer_cells(fhss.percent_kept, people.mean(name))
            | {COLUMNS[3]: f"{cell(stats.wilson(accepted, made))}: {accepted} of {made} offers of {OFFER_SHARE:.0%}"},
            "source": f"{people.FHSS_SOURCE}: ultimatum game, ${fhss.pie:g} pie, {fhss.payment}; "
                      "responders answered the offer they were made",
            "status": "verified from data",
        })  # fmt: skip
    return tuple(rows)


def fhss_accepting(paid: bool) -> tuple[int, int]:
    """FHSS's offers of 40% accepted, of those made, over their $5 and $10 pies with or without pay."""
    counts = [fhss.accepted(OFFER_SHARE) for _, fhss in people.fhss("ultimatum") if fhss.paid == paid]
    return sum(accepted for accepted, _ in counts), sum(made for _, made in counts)


#: Oosterbeek et al.'s abstract gives a mean offer and the rejection rate over all offers, not at $40.
META_ANALYSIS_ROW = {
    "label": "humans, meta-analysis: mean offer 40%; 16% of all offers rejected",
    "cells": {COLUMNS[1]: "60 (% of the pie)", COLUMNS[3]: "not at $40: 16% of offers of every size rejected"},
    "source": "Oosterbeek, Sloof & van de Kuilen (2004), Experimental Economics 7:171-188 (abstract): mean offer 40% of the pie; "
              "16% of offers rejected, over all offers made",
    "status": "verified",
}

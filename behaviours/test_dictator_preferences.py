"""Preferences: how much does a model keep as the dictator, as an assistant or as a human, and does
the temperature change it?

Game: PyGAAMAS "Preference Elicitation". A one-shot dictator game: $100 to split with an anonymous
recipient who must accept; the model says how many dollars it keeps.
Variants (rows): the role in the system prompt ("You are a helpful assistant." / "You are a human
being."), and the temperature: 0.7, the seed's setting, and a sweep 0.0, 0.35, 1.05, 1.4 around it
(the seed shows the sweep without its values; these bracket 0.7 evenly).
Protocol: 30 trials per row, one request each; an answer outside $0-$100 or not JSON is invalid.
The question is counterbalanced (pytest_gaamas.counterbalance): even trials ask what the model keeps,
odd trials what it gives, so that an answer at one end of the range, or its middle, is no preference;
the two questions hold the same words in another order, with one answer field ("You keep any
number of dollars from 0 to 100 and give the rest ...: how many dollars do you keep?" and its
mirror), so that a habit keyed
to a word ("give") is on in both or in neither and keeps $50 on average; each pair of trials is told
the rules in a wording of its own, so that the 30 trials are 30 prompts.
Strategy (the `strategy` rows): the model writes `my_share(pie) -> float` once per row; the
function plays the 30 trials in the sandbox (pytest_gaamas.strategy); an invalid strategy shows `-`.
Score: the share kept: median, mean with a 95% bootstrap CI, and the whole distribution (bars for
$0-9, $10-19, ..., $100), as the seed's violin plots.
Theory: a self-interested dictator keeps $100 (reference:rational); MobLab players keep $74 on
average, first-round one-shot games, n = 13,232 (reference:human samples them); random splits
average $50 (reference:random).
Verdict: met when the lower 95% bound of the mean share kept is above `min_mean_kept` ($50: the
dictator keeps more than half, as theory and people do), missed when the upper bound is at or below
it, inconclusive otherwise. Strictly above: an agent that keeps $50 every time, as one answering the
middle of the range does, keeps half, not more. Override with
--gaamas-threshold=dictator_preferences.min_mean_kept=VALUE. A coin keeps $50 on average, and so does any
constant asked in turn what it keeps and what it gives: it sits at this criterion's null, so the
criterion is one of the suite's families judged at 0.05 divided by their number
(pytest_gaamas.verdicts.BLIND_NULLS), within the table's own correction over its 20 cells.
Fidelity (test_dictator_fidelity, same cells replayed): the 30 amounts kept against the 13,232
MobLab dictators', choice by choice (pytest_gaamas.fidelity): passes when the model is
indistinguishable from people and within $15 of their distribution.
"""

from functools import lru_cache

from pytest_gaamas import cells, fidelity, people, stats, verdicts
from pytest_gaamas.data import moblab_dictator_gifts
from pytest_gaamas.figures import DOLLARS, LINE, VIOLIN, Figure
from pytest_gaamas.games.dictator import DictatorGame
from pytest_gaamas.report import cell, dollars_summary

PAPER_TRIALS = 30
TEMPERATURES = (0.0, 0.35, 0.7, 1.05, 1.4)
SEED_TEMPERATURE = 0.7
PEOPLE = "MobLab dictators: $ kept of $100"
MIN_MEAN_KEPT = 50.0
#: A coin sits at the criterion's null: judged at the suite's share of 5% for such families.
BLIND_NULL = "the dictator keeps more than half"

TABLE = "Preferences: the dictator's share kept, of $100"
COLUMNS = ("median", "mean [95% CI]", "distribution", "n", "invalid")


CELLS = cells(role=("assistant", "human"), temperature=TEMPERATURES, generation=("actions", "strategy"))


@CELLS
def test_dictator_preferences(gaamas, role, temperature, generation):
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(DictatorGame(role), trials, temperature=temperature, generation=generation)

    kept = [r.outcome["my_share"] for r in records if r.valid]
    mean_kept = stats.mean(kept)
    threshold = gaamas.threshold("min_mean_kept", MIN_MEAN_KEPT)
    verdict = verdicts.strictly_above(mean_kept, threshold, alpha=verdicts.blind_null(BLIND_NULL))

    gaamas.score(
        table=TABLE,
        metric="mean share kept",
        unit="dollars",
        estimate=mean_kept,
        invalid=len(records) - len(kept),
        verdict=verdict,
        criterion=f"lower 95% bound of the mean share kept > {threshold:g}; {verdicts.blind_null_words(BLIND_NULL)}",
        columns=COLUMNS,
        cells=summary_cells(kept, mean_kept) | {"n": str(len(records)), "invalid": str(len(records) - len(kept))},
        details={"kept": kept},
        row={"role": role, "temperature": f"{temperature:g}"},
        row_rank=TEMPERATURES.index(temperature) + (0 if role == "assistant" else 10),
        figures=figures(role, temperature),
    )
    gaamas.reference(table=TABLE, **humans_row())
    for row in fhss_rows():
        gaamas.reference(table=TABLE, **row)
    gaamas.verdict(verdict, f"mean share kept {cell(mean_kept, 1)} ({len(records) - len(kept)} invalid); meeting it needs the lower bound > {threshold:g}")


@CELLS
def test_dictator_fidelity(gaamas, role, temperature, generation):
    records = gaamas.play(DictatorGame(role), gaamas.trials(PAPER_TRIALS), temperature=temperature, generation=generation,
                          recorded_as="test_dictator_preferences")
    kept = [r.outcome["my_share"] for r in records if r.valid]
    result = gaamas.fidelity(kept, fidelity.dictator_kept(), invalid=len(records) - len(kept),
                             label=f"dictator: $ kept, {role}, T {temperature:g}")
    gaamas.verdict(verdicts.faithful(result), fidelity.explain(result, fidelity.dictator_kept()))


PEOPLE_NOTE = "people: MobLab first-round one-shot dictator games of $100, n = 13,232 (verified from data)"


def figures(role, temperature):
    """The seed's violins at its temperature, beside MobLab's dictators; the mean against the
    temperature, beside MobLab's mean and FHSS's $5 dictators with pay and without."""
    people_mean = people.mean(PEOPLE).value
    lines, shown = {f"people, MobLab mean (${people_mean:.0f})": people_mean}, []
    for name, fhss in people.fhss("dictator"):
        if fhss.pie == FHSS_FIGURE_PIE:  # the pie FHSS played both with pay and without: their contrast
            kept = people.mean(name).value
            lines[f"people, FHSS 1994 ${fhss.pie:g} pie, {fhss.payment} ({kept:.0f}% kept)"] = kept
            shown.append(f"{fhss.payment}, n = {len(fhss.offers)}")
    against_temperature = Figure("Dictator: mean share kept against the temperature", LINE, "mean $ kept of $100 [95% CI]",
                                 panel=f"role: {role}", x=temperature, x_axis="temperature", limits=DOLLARS, references=lines,
                                 note=f"{PEOPLE_NOTE}; FHSS 1994, the mean % of a ${FHSS_FIGURE_PIE} pie kept ({'; '.join(shown)}; "
                                      "verified from data); all their cells are in the table")
    if temperature != SEED_TEMPERATURE:
        return (against_temperature,)
    violins = Figure(f"Dictator: share kept at T = {SEED_TEMPERATURE}", VIOLIN, "$ kept of $100", x=f"role: {role}",
                     people=PEOPLE, limits=DOLLARS, references={"self-interest ($100)": 100, "equal split ($50)": 50}, note=PEOPLE_NOTE)
    return (violins, against_temperature)


def summary_cells(kept, mean_kept):
    return dict(zip(COLUMNS[:3], dollars_summary(kept, mean_kept)))


@lru_cache(maxsize=1)
def humans_row() -> dict:
    kept = [100 - gift for gift in moblab_dictator_gifts()]
    return {
        "label": f"humans, MobLab (n = {len(kept)})",
        "cells": summary_cells(kept, people.mean(PEOPLE)) | {"n": str(len(kept))},
        "source": "MobLab first-round one-shot dictator games of $100 (Mei, Xie, Yuan & Jackson 2024, PNAS data)",
        "status": "verified from data",
    }


FHSS_FIGURE_PIE = 5


@lru_cache(maxsize=1)
def fhss_rows() -> tuple[dict, ...]:
    """FHSS (1994)'s dictators, who split $5 or $10 with pay or without: the same game and role, so
    their shares of the pie kept stand beside the $ of $100 a model keeps."""
    return tuple(
        {
            "label": f"humans, FHSS 1994, ${cell.pie:g} pie, {cell.payment} (n = {len(cell.offers)}): % of the pie kept",
            "cells": summary_cells(cell.percent_kept, people.mean(name)) | {"n": str(len(cell.offers))},
            "source": f"{people.FHSS_SOURCE}: dictator game, ${cell.pie:g} pie, {cell.payment}",
            "status": "verified from data",
        }
        for name, cell in people.fhss("dictator")
    )

"""A gate that cannot pass on nothing: a gated cell it cannot test, a saved run no run could have
written, a comparison where nothing pairs are each refused in one line that says what to do; the
lines of failing cells name the cell first; and the cells a gate is on keep the observations it
tests them on, differences and excesses over habits too."""

import dataclasses
import math
import types
from pathlib import Path

import pytest

from pytest_gaamas import compare, gate, metrics, stats
from pytest_gaamas.report import Score
from pytest_gaamas.session import terminal

SAVED = Path("runs/baseline.json")
ALLOWED = {"rate": 0.15, "dollars": 10, "CCEI": 0.05, "points": 0.3}


def cell(estimate: stats.Estimate, *, unit: str, behaviour="dictator_preferences", variant=None, metric="mean share kept",
         test="behaviours/test_dictator_preferences.py::test_dictator_preferences", worse="down", met=True) -> Score:  # fmt: skip
    variant = variant or {"generation": "actions", "temperature": "0.7"}
    return Score(
        behaviour=behaviour, test_id=f"{test}[embedded:smollm2-{'-'.join(map(str, variant.values()))}]", model="embedded:smollm2",
        variant=variant, metric=metric, score=estimate.value, ci=(estimate.low, estimate.high), n=estimate.n, invalid=0,
        passed=None, verdict="met" if met else "missed", criterion="keeps at least $60", table="t", columns=(), cells={},
        kind=estimate.kind, sample=estimate.sample, worse=worse, unit=unit,
    )  # fmt: skip


def run(*scores: Score) -> types.SimpleNamespace:
    return types.SimpleNamespace(scores=list(scores), run={})


def decide(saved: list[Score], now: list[Score], allowed=None) -> gate.Decision:
    return gate.decide(run(*saved), run(*now), against="baseline", saved_path=SAVED, allowed_drops=ALLOWED if allowed is None else allowed)


def outcome(decision: gate.Decision) -> gate.Outcome:
    return gate.Outcome.of(decision.to_json())


KEPT_90 = stats.mean([90.0, 88, 92, 90, 91, 89] * 5)  # the assistant dictator keeps about $90
KEPT_40 = stats.mean([40.0, 38, 42, 40, 41, 39] * 5)  # and now $50 less


# -- a saved run no run could have written is refused ------------------------------------------------


def test_a_regression_behind_a_baseline_stripped_of_its_observations_is_refused():
    saved = dataclasses.replace(cell(KEPT_90, unit="dollars"), sample=())
    decision = decide([saved], [cell(KEPT_40, unit="dollars")])
    assert decision.refused and not outcome(decision).verdict == "passed"
    said = outcome(decision).details
    assert said.startswith("the saved run's cell dictator_preferences test_dictator_preferences (generation actions, temperature 0.7): "
                           "mean share kept (embedded:smollm2) keeps 0 observations of 30 usable answers")  # fmt: skip
    assert said.endswith("save the baseline again with --gaamas-save") and "\n" not in said


def test_dollars_saved_as_a_rate_are_refused_not_left_untested():
    saved = dataclasses.replace(cell(KEPT_90, unit="dollars"), kind="rate")
    decision = decide([saved], [cell(KEPT_40, unit="dollars")])
    assert decision.refused and "counts dollars as a rate, where an amount is a mean" in outcome(decision).details


@pytest.mark.parametrize(("edit", "said"), [
    ({"sample": (1.0,) * 30}, "keeps observations whose mean is not its score"),  # a planted sample better than its score
    ({"sample": (90.0,) * 29}, "keeps 29 observations of 30 usable answers"),
    ({"invalid": 31}, "counts 31 invalid answers of 30"),
    ({"score": None, "ci": (None, None)}, "keeps 30 observations and no score"),
    ({"unit": "euros"}, "counts 'euros', which is none of the units"),
    ({"kind": "median"}, "is of kind 'median'"),
])  # fmt: skip
def test_every_part_of_a_saved_cell_is_checked_against_the_others(edit, said):
    saved = dataclasses.replace(cell(KEPT_90, unit="dollars"), **edit)
    with pytest.raises(compare.CompareError, match="save the baseline again") as refused:
        compare.compare([saved], [cell(KEPT_90, unit="dollars")], ALLOWED)
    assert said in str(refused.value)


def test_a_statistic_that_keeps_no_observations_is_no_damage():
    trend = stats.Estimate(2.5, 2.5, 2.5, 120)  # a trend z: no observation of its own
    saved = cell(trend, unit="", metric="trend z", met=False)
    (change,) = compare.compare([saved], [saved], ALLOWED)
    assert not change.gated and math.isnan(change.p_value)


# -- a gated cell the gate cannot test is no cell that held ------------------------------------------


def test_a_gated_cell_that_cannot_be_tested_refuses_the_comparison_in_one_line():
    saved = cell(KEPT_90, unit="dollars")
    unkept = dataclasses.replace(cell(KEPT_40, unit="dollars"), sample=())  # this run kept none of its observations
    decision = decide([saved], [unkept])
    assert decision.refused and not decision.failed
    said = outcome(decision)
    assert said.verdict == "refused" and terminal.closing_words(said) == (1, "comparison with baseline refused")
    assert said.details == ("1 gated cell could not be tested, so the gate cannot say it held: dictator_preferences "
                            "test_dictator_preferences "
                            "(generation actions, temperature 0.7): mean share kept (embedded:smollm2), 30 and 0 observations kept; "
                            "save the baseline again with --gaamas-save")  # fmt: skip
    assert decision.changes and any(note.startswith("untested dictator_preferences test_dictator_preferences (generation actions") for note in decision.notes)


def test_a_gated_statistic_says_to_gate_its_behaviour_by_unit():
    trend = cell(stats.Estimate(2.5, 2.5, 2.5, 120), unit="", behaviour="rational_vs_credible", metric="trend z",
                 test="behaviours/test_rational_vs_credible.py::test_payoff_sensitivity")  # fmt: skip
    decision = decide([trend], [trend], {"rational_vs_credible": 0.5})
    assert decision.refused and outcome(decision).details.endswith(
        "it is a statistic that keeps no observations (a trend, a distance) in either run; gate rational_vs_credible by unit "
        "(--gaamas-compare-fail=UNIT=DROP) rather than by behaviour, which gates every cell of it")  # fmt: skip
    assert outcome(decision).details.startswith("1 gated cell could not be tested, so the gate cannot say it held: rational_vs_credible ")


def test_a_cell_whose_observations_are_of_another_unit_is_never_tested_on_them():
    """The commons' paradox: selfish minus altruistic villagers' catch, over 40 villagers of 10 societies,
    whose unit is the society. Its villagers are no sample of its societies, so it is not tested on
    them (which would take 40 correlated values for 40 independent ones); gated, it refuses."""
    villagers = stats.mean_difference([1.2, 1.4, 1.1, 1.3] * 5, [0.9, 1.0, 0.8, 1.0] * 5)
    paradox = dataclasses.replace(cell(villagers, unit="", behaviour="commons", metric="selfish - altruistic catch / equal share",
                                       test="behaviours/test_commons.py::test_commons_paradox"), n=10)  # fmt: skip
    (change,) = compare.compare([paradox], [paradox], ALLOWED)
    assert not change.gated and math.isnan(change.p_value)
    decision = decide([paradox], [paradox], {"commons": 0.1})
    assert decision.refused and "its observations are of another unit than its answers (40 for 10 usable answers in the saved run, " \
        "40 for 10 in this one); gate commons by unit" in outcome(decision).details  # fmt: skip


def test_a_drop_beside_an_untested_cell_fails_and_says_both():
    saved = [cell(KEPT_90, unit="dollars"), cell(KEPT_90, unit="dollars", variant={"generation": "actions", "temperature": "0"})]
    now = [cell(KEPT_40, unit="dollars"), dataclasses.replace(saved[1], sample=())]
    decision = decide(saved, now)
    assert decision.failed and not decision.refused
    assert [note.split(" ", 1)[0] for note in decision.notes if note.startswith(compare.REGRESSION_MARKS)] == ["DROP", "untested"]


# -- nothing paired is nothing passed ------------------------------------------------------------------


def test_a_comparison_where_no_cell_pairs_is_refused_naming_both_runs_items():
    saved = cell(KEPT_90, unit="dollars")
    installed = dataclasses.replace(saved, test_id=".venv/lib/python3.12/site-packages/pytest_gaamas/shipped/" + saved.test_id)
    decision = decide([saved], [installed])
    assert decision.refused
    said = outcome(decision).details
    assert said.startswith("no cell of this run pairs with one of the saved run's 1 (same behaviour, test, variant, row and metric)")
    assert f"the saved run holds dictator_preferences, items such as {saved.test_id}; this run dictator_preferences, items " \
           f"such as {installed.test_id}" in said  # fmt: skip
    other_behaviour = cell(stats.wilson(20, 30), unit="rate", behaviour="ultimatum", metric="acceptance rate",
                           test="behaviours/test_ultimatum.py::test_ultimatum")  # fmt: skip
    assert decide([saved], [other_behaviour]).refused


# -- the lines of failing cells name the cell first ------------------------------------------------------


def test_drop_lines_of_cells_alike_but_for_a_late_parameter_read_apart_when_cut():
    personas = ("an assistant that is helpful and honest", "an assistant that is helpful and selfish", "an assistant that is fair")
    def at(estimate, persona):
        return cell(estimate, unit="dollars", variant={"generation": "actions", "temperature": "0.7", "persona": persona})
    changes = compare.compare([at(KEPT_90, p) for p in personas], [at(KEPT_40, p) for p in personas], ALLOWED)
    lines = [terminal.cut(f"gaamas: {line}", 120) for line in compare.regressions(changes)]
    assert len(lines) == 3 and len(set(lines)) == 3
    assert all(line.startswith("gaamas: DROP dictator_preferences test_dictator_preferences (persona an assistant that is ")
               for line in lines)  # what sets the cells apart first, then what they share  # fmt: skip
    lost = compare.compare([at(KEPT_90, personas[0])], [dataclasses.replace(at(KEPT_40, personas[0]), score=None, ci=(None, None),
                                                                              sample=(), invalid=30)], ALLOWED)  # fmt: skip
    (line,) = compare.regressions(lost)
    assert line.startswith("LOST dictator_preferences test_dictator_preferences (generation actions, temperature 0.7, persona an assistant that is helpful "
                           "and honest): mean share kept: 0 of 30 answers usable, 30 invalid")  # fmt: skip


# -- differences and excesses keep what they are gated on ----------------------------------------------


def equivalence(named: int, anonymised: int) -> Score:
    """rational_vs_credible's semantic robustness: named minus anonymised cooperation, met when equivalent."""
    _, difference = stats.rates_equivalent(named, 120, anonymised, 120, 0.15, 0.05)
    return cell(difference, unit="rate", behaviour="rational_vs_credible", metric="named - anonymised cooperation", worse="both",
                test="behaviours/test_rational_vs_credible.py::test_semantic_robustness", variant={"version": "a", "prompt": "rational"})  # fmt: skip


def test_a_gated_difference_of_rates_is_tested_and_its_drop_caught():
    saved = equivalence(2, 1)
    assert len(saved.sample) == saved.n and math.fsum(saved.sample) / saved.n == pytest.approx(saved.score)
    (held,) = decide([saved], [saved]).changes
    assert held.gated and held.p_value == 1.0 and not held.untested
    moved = equivalence(2, 40)  # anonymised cooperation now a third: the difference moved by 0.31
    decision = decide([saved], [moved])
    (change,) = decision.changes
    assert decision.failed and change.dropped and change.p_adjusted < 0.001


@pytest.mark.parametrize("difference", [
    stats.rate_difference(7, 30, 19, 40), stats.mean_difference([3.0, 5, 8, 1, 2], [4.0, 4, 9]), stats.mean_difference([2.0], [1.0, 1.0]),
])  # fmt: skip
def test_a_differences_sample_has_an_observation_each_of_mean_its_value_and_its_interval_unchanged(difference):
    assert len(difference.sample) == difference.n and math.fsum(difference.sample) / difference.n == pytest.approx(difference.value)
    assert difference.at(0.9) is not None and difference.at(0.9).low >= difference.low  # still recomputed from the two groups


def test_an_excess_over_habits_and_a_contrast_of_excesses_keep_a_sample_of_their_games():
    moves = [["A", "B", "A"], ["B", "B", "A"], ["A", "A", "A"], ["B", "A", "B"], ["A", "B", "B"], ["B", "A", "A"]]
    excess = metrics.coordination_excess(moves, moves[::-1], seed=1, strata=[0, 0, 0, 1, 1, 1])
    assert len(excess.excess.sample) == excess.excess.n == 6
    assert math.fsum(excess.excess.sample) / 6 == pytest.approx(excess.excess.value)
    contrast = metrics.excess_contrast([(1.0, excess), (-1.0, excess)])
    assert len(contrast.estimate.sample) == contrast.estimate.n == 12 and math.fsum(contrast.estimate.sample) == pytest.approx(0, abs=1e-12)
    saved = cell(excess.excess, unit="points", metric="excess over shuffled pairs")
    (change,) = compare.compare([saved], [saved], ALLOWED)
    assert change.gated and not change.untested and change.p_value > 0.5 and not change.dropped

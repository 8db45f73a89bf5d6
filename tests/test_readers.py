"""Readers that err: the positive controls beside the blind family. ``reference:reader-E`` reads the game
and plays the answer theory gives with probability 1 - E, a uniformly random legal answer otherwise
(``reference.Reader``). A criterion that names a rational benchmark must be met by ``reader-0``, and
should be met by a 90% reader nearly always and a 70% reader mostly: a verdict no reader can earn is
as false a finding as one a blind agent earns.

The suite-wide figures (the share of the cells ``reader-0`` meets that the others meet too) are
measured by ``python -m pytest_gaamas null-rates --agent reference:reader-0 ...`` and shown in
docs/statistics.md; the test below holds them at the floor they reached, so that a change that makes
a criterion harder for an imperfect reader shows here.
"""

import collections

import pytest
import scipy.stats
from conftest import run_behaviours_once
from test_behaviours import reference_run

from pytest_gaamas.games.dictator import DictatorGame
from pytest_gaamas.games.repeated import RPS_WIN_DRAW_LOSS, HiddenPatternGame
from pytest_gaamas.games.ring import RingGame
from pytest_gaamas.models import canonical_spec
from pytest_gaamas.models.base import slug
from pytest_gaamas.models.reference import READERS, Reader, ReferenceAgent
from pytest_gaamas.play import play_trial
from pytest_gaamas.strategy import StrategyRequest
from pytest_gaamas.strategy_run import run_strategy

#: The readers played over the whole suite, in one run.
READER_PANEL = ("reader-0", "reader-0.1", "reader-0.3")
#: The floors the suite holds today: the share of the cells reader-0 meets that a reader meets too, at
#: one seed. The aim (docs/statistics.md) is 0.97 at e = 0.1 and 0.80 at e = 0.3.
FLOOR = {"reader-0.1": 0.90, "reader-0.3": 0.45}


@pytest.mark.parametrize("spec", ["reader-0", "reader-0.1", "reader-0.3", "reader-1", "reader-0.25", "reader-1.0"])
def test_a_reader_is_spelt_with_its_error_rate(spec):
    assert canonical_spec(f"reference:{spec}") == f"reference:{spec}"
    assert Reader.parse(spec) is not None and spec in READERS
    assert "reads the game and errs" in READERS[spec]


@pytest.mark.parametrize("spec", ["reader-", "reader-2", "reader-1.5", "reader-0.1.2", "reader--0.1", "reader-x"])
def test_a_misspelt_reader_is_refused(spec):
    with pytest.raises(ValueError, match="no reference agent"):
        canonical_spec(f"reference:{spec}")


def test_the_perfect_reader_answers_as_the_rational_agent_and_in_the_commons_as_the_sustainable_one():
    from pytest_gaamas.games.commons import Commons

    for game, right in ((RingGame(player=2, belief="implicit"), "rational"), (DictatorGame("assistant"), "rational"),
                        (HiddenPatternGame(RPS_WIN_DRAW_LOSS, (("Rock",),)), "rational"), (Commons(), "sustainable")):  # fmt: skip
        for trial in range(4):
            by_reader = play_trial(game, ReferenceAgent("reader-0"), trial, seed=3, temperature=0.7)
            by_right = play_trial(game, ReferenceAgent(right), trial, seed=3, temperature=0.7)
            assert [r.reply for r in by_reader.rounds] == [r.reply for r in by_right.rounds], (game, trial)


def test_a_reader_errs_at_its_rate_and_nowhere_else():
    """In the ring game the dominant action is half of a random answer's: a reader that errs with
    probability e plays it with probability 1 - e/2, request by request."""
    game = RingGame(player=2, belief="implicit")
    for error in (0.1, 0.3):
        agent = ReferenceAgent(f"reader-{error}")
        chosen = [play_trial(game, agent, trial, seed=seed, temperature=0.7).outcome["rational"] for seed in range(20) for trial in range(30)]
        test = scipy.stats.binomtest(sum(chosen), len(chosen), 1 - error / 2)
        assert test.pvalue > 0.001, (error, sum(chosen) / len(chosen))


def test_a_reader_s_strategy_errs_call_by_call():
    """A strategy is one request, so a reader that erred there would write the random code for every
    trial of the cell: its strategy is the rational function, calling the random one instead with
    probability e, each call."""
    game = RingGame(player=2, belief="implicit")
    contract = game.strategy()
    reply = ReferenceAgent("reader-0.3").reply(play_request(StrategyRequest(contract)))
    code = reply.removeprefix("```python\n").removesuffix("```")
    played = run_strategy(game, contract, code, 200, seed=11)
    assert played.failure is None, played.failure
    rate = sum(r.outcome["rational"] for r in played.records) / len(played.records)
    assert 0.75 < rate < 0.95, rate
    perfect = run_strategy(game, contract, ReferenceAgent("reader-0").reply(play_request(StrategyRequest(contract)))
                           .removeprefix("```python\n").removesuffix("```"), 30, seed=11)  # fmt: skip
    assert all(r.outcome["rational"] for r in perfect.records)


def play_request(game):
    from pytest_gaamas.play import Request

    return Request(next(game.play(0)), game, 0, 0.7)


def readers_run(shared_folder) -> dict:
    return run_behaviours_once(shared_folder, "readers", *(f"--gaamas-model=reference:{r}" for r in READER_PANEL))[1]


def met_by(document: dict, agent: str) -> set[str]:
    prefix = f"[{slug('reference:' + agent)}-"
    return {s["test_id"].replace(prefix, "[", 1) for s in document["scores"] if s["model"] == f"reference:{agent}" and s["passed"]}


def test_the_perfect_reader_meets_what_theory_s_agents_meet(shared_folder):
    """reader-0 is the rational agent, and the sustainable one in the commons: it meets every cell
    they meet (tests/test_behaviours.py names why each of the others is not a rational benchmark)."""
    document = readers_run(shared_folder)
    perfect = met_by(document, "reader-0")
    rational = {t.replace("[reference-rational-", "[", 1) for t, passed in
                ((s["test_id"], s["passed"]) for s in reference_run("rational", shared_folder)["scores"]) if passed and "test_commons" not in t}
    sustainable = {t.replace("[reference-sustainable-", "[", 1) for t, passed in
                   ((s["test_id"], s["passed"]) for s in reference_run("sustainable", shared_folder)["scores"]) if passed and "test_commons" in t}
    assert rational | sustainable <= perfect, sorted((rational | sustainable) - perfect)


def test_readers_that_err_meet_most_of_what_the_perfect_reader_meets(shared_folder):
    document = readers_run(shared_folder)
    perfect = met_by(document, "reader-0")
    assert len(perfect) > 100
    for agent, floor in FLOOR.items():
        missed = perfect - met_by(document, agent)
        share = 1 - len(missed) / len(perfect)
        by_behaviour = collections.Counter(t.split("::")[1].split("[")[0] for t in missed)
        assert share >= floor, (agent, round(share, 3), by_behaviour)

"""Readers that err: the positive controls beside the blind family. ``reference:reader-E`` reads the game
and plays the answer theory gives with probability 1 - E, a uniformly random legal answer otherwise
(``reference.Reader``). A criterion that names a rational benchmark must be met by ``reader-0``, and
should be met by a 90% reader nearly always and a 70% reader mostly: a verdict no reader can earn is
as false a finding as one a blind agent earns.

The suite-wide figures (the share of the cells ``reader-0`` meets that the others meet too) are
measured by ``python -m pytest_gaamas null-rates --readers`` into ``pytest_gaamas/data/reader_met.json``
at three seeds, shown under every table and in docs/statistics.md; the tests below hold them to the
floors (0.97 at e = 0.1, 0.80 at e = 0.3) and fresh, so that a change that makes a criterion harder
for an imperfect reader, or leaves the figures behind the behaviours, shows here.
"""


import pytest
import scipy.stats
from conftest import ROOT, SHIPPED, run_behaviours_once
from test_behaviours import credibility_cell, human_likeness, reference_run

from pytest_gaamas import null_runs
from pytest_gaamas.games.dictator import DictatorGame
from pytest_gaamas.games.repeated import RPS_WIN_DRAW_LOSS, HiddenPatternGame
from pytest_gaamas.games.ring import RingGame
from pytest_gaamas.models import canonical_spec
from pytest_gaamas.models.base import slug
from pytest_gaamas.models.reference import READERS, Reader, ReferenceAgent
from pytest_gaamas.play import play_trial
from pytest_gaamas.strategy import StrategyRequest
from pytest_gaamas.strategy_run import run_strategy

#: The reader played over the whole suite here; the readers that err are held to their floors on the
#: shipped figures, measured at three seeds (``null-rates --readers``), which a test keeps fresh.
READER_PANEL = ("reader-0",)
#: The share of the cells reader-0 meets (where a criterion names a rational benchmark) that a reader that
#: errs must meet too: nearly all at e = 0.1, most at e = 0.3 (docs/statistics.md, "Readers that err").
FLOOR = {"reader-0.1": 0.97, "reader-0.3": 0.80}


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


def cell_of(test_id: str, agent: str) -> str:
    """A test id without its agent: ``[reference-reader-0-a-given-actions]`` and ``[reference-rational]`` alike."""
    name = slug(f"reference:{agent}")
    return test_id.replace(f"[{name}-", "[", 1).replace(f"[{name}]", "[]", 1)


def met_by(document: dict, agent: str) -> set[str]:
    """The cells ``agent`` met whose criterion names a rational benchmark: people's choices and a
    human-like average are not one (tests/test_behaviours.py)."""
    return {cell_of(s["test_id"], agent) for s in document["scores"] if s["model"] == f"reference:{agent}" and s["passed"]
            and not (human_likeness(s["test_id"]) or credibility_cell(s["test_id"]))}  # fmt: skip


def test_the_perfect_reader_meets_what_theory_s_agents_meet(shared_folder):
    """reader-0 is the rational agent, and the sustainable one in the commons: it meets every cell
    they meet (tests/test_behaviours.py names why each of the others is not a rational benchmark)."""
    document = readers_run(shared_folder)
    perfect = met_by(document, "reader-0")
    rational = {cell for cell in met_by(reference_run("rational", shared_folder), "rational") if "test_commons" not in cell}
    sustainable = {cell for cell in met_by(reference_run("sustainable", shared_folder), "sustainable") if "test_commons" in cell}
    assert rational | sustainable <= perfect, sorted((rational | sustainable) - perfect)


MEASURE_READERS = "measure again: python -m pytest_gaamas null-rates --readers -o pytest_gaamas/data/reader_met.json"


@pytest.fixture(scope="module")
def shipped_readers() -> null_runs.NullRates:
    figures = null_runs.shipped(null_runs.READERS_FILE)
    assert figures is not None, f"pytest_gaamas/data/reader_met.json is missing; {MEASURE_READERS}"
    return figures


def test_the_shipped_reader_figures_describe_the_shipped_behaviours_and_meet_the_floors(shipped_readers):
    """The figures every view says under a table are those of the behaviours as they are, at the readers'
    plan (three seeds), and at each seed the readers that err meet their floor of what reader-0 met."""
    digests = null_runs.behaviour_digests(ROOT / "behaviours" / f"test_{name}.py" for name in SHIPPED)
    stale = sorted(name for name, digest in digests.items() if shipped_readers.stale(name, digest))
    assert not stale, f"behaviours changed since the readers' runs: {stale}; {MEASURE_READERS}"
    assert set(shipped_readers.agents) == set(null_runs.READERS_PLAN) and shipped_readers.seeds == (1, 2, 3)
    runs = shipped_readers.met_in_runs

    def judged(agent: str, met: list[str]) -> set[str]:
        return {cell_of(t, agent) for t in met if not (human_likeness(t) or credibility_cell(t))}

    for seed, perfect in enumerate(runs["reference:reader-0"]):
        perfect_cells = judged("reader-0", perfect)
        assert len(perfect_cells) > 100
        for agent, floor in FLOOR.items():
            share = len(perfect_cells & judged(agent, runs[f"reference:{agent}"][seed])) / len(perfect_cells)
            assert share >= floor, (agent, seed + 1, share)


def test_under_each_table_the_readers_share_is_said_beside_the_null_agents():
    agents = {"reference:random": {"met_per_run": 0.0, "runs_with_met": 0, "runs": 20},
              "reference:reader-0": {"met_per_run": 10.0, "runs_with_met": 3, "runs": 3},
              "reference:reader-0.3": {"met_per_run": 6.0, "runs_with_met": 3, "runs": 3},
              "reference:reader-0.1": {"met_per_run": 10.0, "runs_with_met": 3, "runs": 3}}  # fmt: skip
    said = null_runs.note({"agents": agents, "stale": False})
    assert said == ("met without reading the game, in seeded null runs: reference:random 0 a run (in 0 of 20 runs); readers that err "
                    "met 1.00 (10% errors) and 0.60 (30% errors) of the 10 cells a run the perfect reader meets")  # fmt: skip
    assert null_runs.reader_note({"reference:reader-0": {"met_per_run": 0.0}}) == ""


def test_the_readers_plan_is_its_own_and_refuses_agents_beside_it(capsys):
    from pytest_gaamas import __main__

    assert __main__.main(["null-rates", "--readers", "--agent", "reference:random"]) == 2
    assert "--agent or --readers, not both" in capsys.readouterr().err

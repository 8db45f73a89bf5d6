"""Using beliefs: does a model that can predict its opponent also act on the prediction?

Game: PyGAAMAS "Assess Beliefs". Rock-paper-scissors for 10 rounds against an opponent who always
plays the same move; a win earns 2 points, a draw 1, a loss 0. Each round the model predicts the
opponent's move and plays its own.
Opponent: the seed's constant behaviour, in its three forms (always Rock, always Paper, always
Scissors), each faced in 10 of the 30 trials: with one form per cell, an agent that plays Paper
every time, reading nothing, would win every round against always-Rock. The moves are listed in
every order, crossed with the form (pytest_gaamas.counterbalance), so the first move listed is the
winning one in a third of the trials, and the move listed after the opponent's in half, and each pass through the forms and orders is told in other words, so
the 30 trials are 30 distinct games.
Protocol: 30 trials of 10 rounds, temperature 0.7; a trial is one conversation, and each round's
request repeats the opponent's moves so far.
Strategy (the `strategy` rows): `play(opponent_moves) -> [prediction, move]`, written once and
called each round in the sandbox, a fresh module for each trial.
Score: points per round (bootstrap 95% CI) and prediction accuracy per round (Wilson 95% CI); the
verdict uses each trial's mean points over rounds 6-10, an invalid answer earning nothing.
Theory: the best response to a constant opponent wins every round once the constant is seen, 2
points a round (reference:rational); random play earns 1 point a round on average
(reference:random). No individual human data exist for this game.
Verdict: passes when the lower 95% bound of the mean late points reaches `min_late_points` (1.5,
half way from chance to the best response); override with
--gaamas-threshold=belief_use.min_late_points=VALUE. At chance when the 90% interval lies within 1.0 +- 0.3
points (uniform play).
"""

import pytest

from pytest_gaamas import rounds, stats, verdicts
from pytest_gaamas.games.repeated import RPS_WIN_DRAW_LOSS, HiddenPatternGame
from pytest_gaamas.report import cell

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
LATE_ROUNDS_FROM = 6
MIN_LATE_POINTS = 1.5
#: Uniform play's points a round against any constant move (win 2, draw 1, loss 0, a third each), and how
#: close to it is still chance: 0.15 of the best response's 2 points, as 0.15 of a rate.
CHANCE_POINTS, CHANCE_MARGIN = 1.0, 0.3

OPPONENTS = {"constant": (("Rock",), ("Paper",), ("Scissors",))}
TABLE = "Belief use: points per round in rounds 6-10 at rock-paper-scissors (win 2, draw 1, loss 0)"


@pytest.mark.parametrize("generation", ("actions", "strategy"))
@pytest.mark.parametrize("opponent", OPPONENTS)
def test_belief_use(gaamas, opponent, generation):
    game = HiddenPatternGame(RPS_WIN_DRAW_LOSS, OPPONENTS[opponent])
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(game, trials, temperature=gaamas.temperature(PAPER_TEMPERATURE), generation=generation)

    played = rounds.round_results(records)
    late_points = stats.mean(rounds.late_means(played, "points", LATE_ROUNDS_FROM))
    threshold = gaamas.threshold("min_late_points", MIN_LATE_POINTS)
    verdict = verdicts.at_least(late_points, threshold, chance=CHANCE_POINTS, chance_margin=CHANCE_MARGIN)
    invalid = rounds.invalid_trials(played)

    gaamas.score(
        table=TABLE,
        metric="points per round, rounds 6-10",
        unit="points",
        estimate=late_points,
        invalid=invalid,
        verdict=verdict,
        criterion=f"lower 95% bound of the mean points per round in rounds {LATE_ROUNDS_FROM}-10 >= {threshold}",
        columns=tuple(OPPONENTS),
        cells={opponent: cell(late_points)},
        details={"chance": CHANCE_POINTS, "best_response": 2.0, "invalid_rounds": rounds.invalid_rounds(played, game.rounds)},
        n=len(records),
    )
    rounds.report_series(gaamas, title="Belief use", column=opponent, columns=tuple(OPPONENTS), scores=rounds.series(played),
                         references=rounds.reference_curves(game, trials, gaamas.seed))
    gaamas.verdict(verdict, f"late points {cell(late_points)} against {opponent}; meeting it needs the lower bound >= {threshold}")

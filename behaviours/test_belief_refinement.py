"""Refining beliefs: can a model learn an opponent's hidden pattern and predict its next move?

Game: PyGAAMAS "Beliefs - MP" and "Beliefs - RPS". 10 rounds against an opponent who repeats a
hidden cycle; each round the model predicts the opponent's move (1 point if right). In matching
pennies it also plays a penny (+1 if the pennies match, -1 if not); in rock-paper-scissors only the
prediction counts, as in the seed.
Opponents (columns): matching pennies constant (Head or Tail) and alternating (Head-Tail or
Tail-Head); rock-paper-scissors constant (R, P or S), 2-loop (R-P, P-S, S-R) and 3-loop (R-P-S
from each start). Trial i faces the i-th cycle of its list, in turn, so each cycle gets an equal share;
the moves are listed in every order in turn (rotations of one order kept its cycle, the 3-loop's), and
each pass through the cycles and listings is told in other words, so the 30 trials are 30 distinct
games (pytest_gaamas.counterbalance).
Protocol: 30 trials of 10 rounds, temperature 0.7 (the seed's setting for actions); a trial is one
conversation, and each round's request repeats the opponent's moves so far.
Strategy (the `strategy` rows): `predict(opponent_moves) -> str` (rock-paper-scissors) or
`play(opponent_moves) -> [prediction, move]` (matching pennies), written once and called each round
in the sandbox, a fresh module for each trial.
Score: prediction accuracy per round (Wilson 95% CI) and points per round (bootstrap 95% CI); the
verdict uses each trial's accuracy over rounds 6-10, an invalid answer counting as wrong.
Theory: a learner that finds the cycle is right from round 2 (constant) or 3 (loops) on
(reference:rational); guessing is right 1/2 of the time in matching pennies and 1/3 in
rock-paper-scissors (reference:random). No individual human data exist for these exact opponents.
Verdict: passes when the lower 95% bound of the mean late accuracy reaches `min_late_accuracy`
(0.75: a pattern found, not a lucky streak); override with
--gaamas-threshold=belief_refinement.min_late_accuracy=VALUE. At chance when the 90% interval lies within
+-0.15 of guessing (1/2, 1/3).
"""

import pytest

from pytest_gaamas import rounds, stats, verdicts
from pytest_gaamas.games.repeated import MATCHING_PENNIES, RPS_PREDICTION, HiddenPatternGame
from pytest_gaamas.report import cell

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
LATE_ROUNDS_FROM = 6
MIN_LATE_ACCURACY = 0.75

OPPONENTS = {
    "MP constant": (MATCHING_PENNIES, (("Head",), ("Tail",))),
    "MP alternate": (MATCHING_PENNIES, (("Head", "Tail"), ("Tail", "Head"))),
    "RPS constant": (RPS_PREDICTION, (("Rock",), ("Paper",), ("Scissors",))),
    "RPS 2-loop": (RPS_PREDICTION, (("Rock", "Paper"), ("Paper", "Scissors"), ("Scissors", "Rock"))),
    "RPS 3-loop": (RPS_PREDICTION, (("Rock", "Paper", "Scissors"), ("Paper", "Scissors", "Rock"), ("Scissors", "Rock", "Paper"))),
}
CHANCE = {"MP": 1 / 2, "RPS": 1 / 3}
#: How close to guessing a mean accuracy is still guessing, as for a rate.
CHANCE_MARGIN = 0.15

TABLE = "Belief refinement: prediction accuracy in rounds 6-10 against a hidden pattern"


@pytest.mark.parametrize("generation", ("actions", "strategy"))
@pytest.mark.parametrize("opponent", OPPONENTS)
def test_belief_refinement(gaamas, opponent, generation):
    rules, patterns = OPPONENTS[opponent]
    game = HiddenPatternGame(rules, patterns)
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(game, trials, temperature=gaamas.temperature(PAPER_TEMPERATURE), generation=generation)

    played = rounds.round_results(records)
    late_accuracy = stats.mean(rounds.late_means(played, "correct", LATE_ROUNDS_FROM))
    threshold = gaamas.threshold("min_late_accuracy", MIN_LATE_ACCURACY)
    verdict = verdicts.at_least(late_accuracy, threshold, chance=CHANCE[opponent.split()[0]], chance_margin=CHANCE_MARGIN)
    invalid = rounds.invalid_trials(played)

    gaamas.score(
        table=TABLE,
        metric="prediction accuracy, rounds 6-10",
        unit="rate",
        estimate=late_accuracy,
        invalid=invalid,
        verdict=verdict,
        criterion=f"lower 95% bound of the mean accuracy in rounds {LATE_ROUNDS_FROM}-10 >= {threshold}",
        columns=tuple(OPPONENTS),
        cells={opponent: cell(late_accuracy)},
        details={"chance": CHANCE[opponent.split()[0]], "invalid_rounds": rounds.invalid_rounds(played, game.rounds)},
        n=len(records),
    )
    rounds.report_series(gaamas, title="Belief refinement", column=opponent, columns=tuple(OPPONENTS), scores=rounds.series(played),
                         references=rounds.reference_curves(game, trials, gaamas.seed))
    gaamas.verdict(verdict, f"late prediction accuracy {cell(late_accuracy)} against {opponent}; meeting it needs the lower bound >= {threshold}")

"""Coordinating with a patterned partner: the battle of the sexes against an alternating opponent.

Game: PyGAAMAS "Agent-Human Coordination". 10 rounds of the battle of the sexes with anonymised
players (Y, Z) and actions (A, B): both choosing B pays the model 3 and Z 2, both choosing A pays the
model 2 and Z 3, and miscoordination pays 0. Z hides a simple rule: it alternates (A-B-A-... in
half the trials, B-A-B-... in the other half). Each round the model predicts Z's move and plays.
The moves' listing turns across trials, and each pass through the patterns and listings is told in
other words, so the 30 trials are 30 distinct games (pytest_gaamas.counterbalance).
Protocol: 30 trials of 10 rounds, temperature 0.7; a trial is one conversation, and each round's
request repeats Z's moves so far.
Strategy (the `strategy` row): `play(opponent_moves) -> [prediction, move]`, written once and
called each round in the sandbox, a fresh module for each trial.
Score: points per round (bootstrap 95% CI) and prediction accuracy per round (Wilson 95% CI); the
verdict uses each trial's mean points over rounds 6-10, an invalid answer earning nothing.
Theory: an agent that sees the alternation meets Z every round, 2.5 points a round
(reference:rational); random play meets Z half the time, 1.25 points a round (reference:random).
Verdict: passes when the lower 95% bound of the mean late points reaches `min_late_points` (2.0);
override with --gaamas-threshold=coordination.min_late_points=VALUE. At chance when the 90% interval lies
within 1.25 +- 0.375 points (random play).
"""

import pytest

from pytest_gaamas import rounds, stats, verdicts
from pytest_gaamas.games.repeated import BATTLE_OF_THE_SEXES, HiddenPatternGame
from pytest_gaamas.report import cell

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
LATE_ROUNDS_FROM = 6
MIN_LATE_POINTS = 2.0
ALTERNATING = (("A", "B"), ("B", "A"))
#: Random play meets Z half the time, at 2.5 points a meeting; how close to it is still chance: 0.15 of
#: the 2.5 points of meeting Z every round, as 0.15 of a rate.
CHANCE_POINTS, CHANCE_MARGIN = 1.25, 0.375

TABLE = "Coordination: battle of the sexes against an alternating partner, rounds 6-10"
COLUMNS = ("points per round [95% CI]", "prediction accuracy [95% CI]", "invalid rounds")


@pytest.mark.parametrize("generation", ("actions", "strategy"))
def test_coordination(gaamas, generation):
    game = HiddenPatternGame(BATTLE_OF_THE_SEXES, ALTERNATING)
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(game, trials, temperature=gaamas.temperature(PAPER_TEMPERATURE), generation=generation)

    played = rounds.round_results(records)
    late_points = stats.mean(rounds.late_means(played, "points", LATE_ROUNDS_FROM))
    late_accuracy = stats.mean(rounds.late_means(played, "correct", LATE_ROUNDS_FROM))
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
        columns=COLUMNS,
        cells={COLUMNS[0]: cell(late_points), COLUMNS[1]: cell(late_accuracy), COLUMNS[2]: str(rounds.invalid_rounds(played, game.rounds))},
        details={"late_accuracy": late_accuracy.as_json(), "chance_points": CHANCE_POINTS, "coordinated_points": 2.5},
        n=len(records),
    )
    rounds.report_series(gaamas, title="Coordination", column="alternating partner", columns=("alternating partner",), scores=rounds.series(played),
                         references=rounds.reference_curves(game, trials, gaamas.seed))
    gaamas.verdict(verdict, f"late points {cell(late_points)} against an alternating partner; meeting it needs the lower bound >= {threshold}")

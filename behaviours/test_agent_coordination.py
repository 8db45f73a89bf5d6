"""Agent-agent coordination: two copies of a model play the battle of the sexes, after talking or not.

Game: PyGAAMAS "Agent-Agent coordination". Players Y and Z, two conversations with the same model,
each seeing only its own payoffs (Y prefers meeting at A, 3 to 2; Z prefers B), the messages and
the public history of moves. 0, 1, 2 or 3 pre-play messages, taking turns; Y opens the talk in half
the games, Z in the other half. Then 10 simultaneous rounds: each predicts the other and moves.
Protocol: 30 games per number of messages, temperature 0.7.
No strategy rows: the game is two models talking before they play, which code cannot do, and
the seed has none.
Score: coordination rate (both chose the same action), points (mean of the two players) and
prediction accuracy, per round with 95% CI; the verdict uses each game's coordination rate over all
10 rounds, a round with an invalid answer counting as not coordinated.
Theory: two copies of a rational agent share a convention and coordinate every round
(reference:rational, which alternates A, B, ... and says so); independent random play coordinates
half the time (reference:random). People: about 48% coordination without talk, 95% with one-way
and 55% with one round of two-way talk (Cooper et al. 1989; unverified figures, a one-shot game).
Verdict: passes when the lower 95% bound of the mean coordination rate reaches `min_coordination`
(0.75); override with --gaamas-threshold=agent_coordination.min_coordination=VALUE.
"""

import pytest

from pytest_gaamas import rounds, stats
from pytest_gaamas.games.bos_agents import PLAYERS, AgentCoordinationGame
from pytest_gaamas.report import cell

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
MIN_COORDINATION = 0.75
MESSAGES = (0, 1, 2, 3)

TABLE = "Agent-agent coordination: battle of the sexes between two copies of the model, 10 rounds"
COLUMNS = tuple(f"{m} message" + ("" if m == 1 else "s") for m in MESSAGES)
#: Coordination rate by number of messages: no talk, one-way, one round of two-way talk.
PEOPLE_COORDINATION = {0: 0.48, 1: 0.95, 2: 0.55}
PEOPLE_SOURCE = "Cooper, DeJong, Forsythe & Ross (1989), RAND J. Econ. 20(4): no talk / one-way / one round of two-way talk, one-shot"


@pytest.mark.parametrize("messages", MESSAGES)
def test_agent_coordination(gaamas, messages):
    game = AgentCoordinationGame(messages)
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(game, trials, temperature=gaamas.temperature(PAPER_TEMPERATURE))

    games = rounds.round_results(records)
    coordination = stats.mean([sum(r["coordinated"] for r in g) / len(g) for g in games])
    threshold = gaamas.threshold("min_coordination", MIN_COORDINATION)
    passed = coordination.n > 0 and coordination.low >= threshold
    invalid = sum(not a["valid"] for r in records for p in PLAYERS for a in r.outcome["players"][p])
    column = COLUMNS[MESSAGES.index(messages)]

    gaamas.score(
        table=TABLE,
        metric="coordination rate",
        unit="rate",
        estimate=coordination,
        invalid=invalid,
        passed=passed,
        criterion=f"lower 95% bound of the mean coordination rate >= {threshold}",
        columns=COLUMNS,
        cells={column: cell(coordination)},
        details={"invalid_answers": invalid, "invalid_messages": sum(not m["valid"] for r in records for m in r.outcome["messages"])},
        n=len(records),
    )
    gaamas.reference(table=TABLE, label="humans", cells=dict(zip(COLUMNS, (f"{r:.2f}" for r in PEOPLE_COORDINATION.values()))),
                     source=PEOPLE_SOURCE, status="unverified")
    people = {"coordination rate": {f"people, {column} (unverified)": PEOPLE_COORDINATION[messages]}} if messages in PEOPLE_COORDINATION else {}
    rounds.report_series(gaamas, title="Agent-agent coordination", column=column, columns=COLUMNS, scores=per_round(records),
                         references=rounds.reference_curves(game, trials, gaamas.seed, per_round), series_label=column, people=people,
                         note=f"people: {PEOPLE_SOURCE}; unverified figures, drawn as flat lines")
    gaamas.verdict(passed, f"coordination rate {cell(coordination)} with {messages} messages; passing needs the lower bound >= {threshold}")


def per_round(records):
    """Coordination and points of the pair, and the accuracy of each player's predictions, round by round."""
    scores = rounds.series(rounds.round_results(records), rates=(("coordination rate", "coordinated"),), means=(("points", "points"),))
    predictions = rounds.series([r.outcome["players"][p] for r in records for p in PLAYERS], means=())
    for round_score, prediction in zip(scores, predictions):
        round_score.measures.update(prediction.measures)
    return scores

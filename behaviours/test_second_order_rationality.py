"""Second-order rationality: does the model, as player 1, act on player 2 being rational?

Game: PyGAAMAS "Second-Order Rationality", the ring-network game from player 1's side. Player 2's A
strictly dominates B, so a player 1 who believes player 2 rational plays X in every payoff
version: (a) the original; (b) the gap between gains narrowed; (c) Y's gain raised; (d) X's gain
lowered relative to a tempting Y-against-B of 40. Player 1's action names are swapped in odd trials
and player 2's in odd pairs, and the
payoff lines come in each pair of trials' own order: 30 trials are 30 prompts (and 120, 120: past the
48th trial the lines are worded anew). In (a) and (b) player
2's payoffs against Y are raised by 15 in every other four trials, which changes none of player 2's
best replies, so that the largest number does not stand on X's line in every trial (the cue audit).
Variants: payoff version x belief (given: "player 2 will play A"; explicit: the prompt says B is
dominated for player 2; implicit: the payoffs alone) as columns; rows: plain actions, and actions
with conditional reasoning (CR: the prompt asks to work out player 2's best response first, and the
answer carries a reasoning field of at most 400 characters before the action).
Protocol: 30 trials per cell, temperature 0.7.
Strategy (the `strategy` rows): `choose(payoffs, belief) -> str`, with the payoffs and the stated
belief as data under each trial's names; written once, played 30 times in the sandbox.
Score: the rate of X (Wilson 95% CI).
Theory: a second-order rational player plays X every time (reference:rational); a coin half the
time (reference:random). People: 71% of subjects are second-order rational (Kneeland 2015, verified).
Verdict: passes when the lower 95% bound of the rate reaches `min_rational_rate` (0.5); override with
--gaamas-threshold=second_order_rationality.min_rational_rate=VALUE. At chance when the 90% interval lies
within 0.5 +- 0.15. The 36 cells of a model are one family (docs/statistics.md); a coin sits at this
criterion's null, so the family is also one of the suite's judged at 0.05 divided by their number
(pytest_gaamas.verdicts.BLIND_NULLS).
"""

import pytest

from pytest_gaamas import stats, verdicts
from pytest_gaamas.figures import INTERVAL, RATE, Figure
from pytest_gaamas.games.ring import BELIEFS, VERSIONS, RingGame
from pytest_gaamas.report import cell, invalid_note

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
MIN_RATIONAL_RATE = 0.5
#: A player 1 who picks X or Y at random.
CHANCE = 0.5
#: A coin sits at the criterion's null: judged at the suite's share of 5% for such families.
BLIND_NULL = "second-order rationality"

TABLE = "Second-order rationality: rate of X (player 1) [95% CI], payoff version x belief"
COLUMNS = tuple(b.capitalize() for b in BELIEFS)


@pytest.mark.parametrize("generation", ("actions", "actions + CR", "strategy"))
@pytest.mark.parametrize("belief", BELIEFS)
@pytest.mark.parametrize("version", VERSIONS)
def test_second_order_rationality(gaamas, version, belief, generation):
    game = RingGame(player=1, belief=belief, version=version, conditional_reasoning=generation == "actions + CR")
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(game, trials, temperature=gaamas.temperature(PAPER_TEMPERATURE), generation=generation)

    valid = [r.outcome for r in records if r.valid]
    rate = stats.wilson(sum(o["rational"] for o in valid), len(valid))
    threshold = gaamas.threshold("min_rational_rate", MIN_RATIONAL_RATE)
    verdict = verdicts.at_least(rate, threshold, chance=CHANCE, alpha=verdicts.blind_null(BLIND_NULL))
    invalid = len(records) - len(valid)

    gaamas.score(
        table=TABLE,
        metric="rate of X",
        estimate=rate,
        invalid=invalid,
        verdict=verdict,
        criterion=f"lower 95% bound of the rate of X >= {threshold}; {verdicts.blind_null_words(BLIND_NULL)}",
        columns=COLUMNS,
        cells={belief.capitalize(): cell(rate) + invalid_note(invalid)},
        details={"ci": rate.as_json()},
        row={"version": version},
        row_rank=list(VERSIONS).index(version),
        figures=(Figure("Second-order rationality: X chosen (player 1)", INTERVAL, "rate of X [95% CI]", panel=f"version {version}",
                        x=belief.capitalize(), x_axis="belief", limits=RATE, references={"rational": 1.0, "people (Kneeland 2015)": 0.71, "chance (1/2)": 0.5},
                        note="people: Kneeland (2015), share of subjects classified second-order rational (verified); "
                             "her subjects saw the payoffs alone, so the line compares with the Implicit belief only"),),
    )
    gaamas.reference(table=TABLE, label="humans", cells={"implicit".capitalize(): "0.71"},
                     source="Kneeland (2015), Econometrica 83(5): share of subjects classified second-order rational, a subject-level classification; "
                            "her subjects saw the payoffs alone, as the Implicit belief does", status="verified")
    gaamas.verdict(verdict, f"rate of X {cell(rate)} in version {version}, {belief} belief, {generation}; meeting it needs the lower bound >= {threshold}")

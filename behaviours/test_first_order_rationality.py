"""First-order rationality: does the model, as player 2, play its strictly dominant action?

Game: PyGAAMAS "First Order Rationality", the two-player ring-network game. Player 2 earns 10 or 5
with A and 5 or 0 with B, against X or Y: A strictly dominates B. Player 2's action names are swapped
in odd trials and player 1's in odd pairs, so answering with the first name read scores 1/2 and the
name the given belief gives says nothing of the right one, and the payoff lines come in each
pair of trials' own order, so 30 trials are 30 prompts (an answer the wording fixes is 30 draws); past
the 48th trial the lines are worded anew, so the last look's 120 trials are 120 prompts.
Player 1's payoffs, on which player 2's best action does not depend, are mirrored between A and B in
every other four trials, so that the largest number is not always on the dominant action's line.
Variants (columns): the belief the prompt gives. Given: "player 1 will play X". Explicit: the
prompt says that A gives more whatever player 1 plays (or B fewer, in every other eight trials).
Implicit: the payoffs alone.
Protocol: 30 trials per belief, temperature 0.7.
Strategy (the `strategy` rows): `choose(payoffs, belief) -> str`, with the payoffs and the stated
belief as data under each trial's names; written once, played 30 times in the sandbox.
Score: the rate of the dominant action (Wilson 95% CI).
Theory: a rational player plays the dominant action every time (reference:rational); a coin is
right half the time (reference:random). People: 93% of subjects are rational in ring games
(Kneeland 2015; verified, subject-level classification, not this exact prompt).
Verdict: passes when the lower 95% bound of the rate reaches `min_rational_rate` (0.5); override with
--gaamas-threshold=first_order_rationality.min_rational_rate=VALUE. At chance when the 90% interval lies
within 0.5 +- 0.15. A coin sits at this criterion's null, so it is one of the suite's families judged at
0.05 divided by their number (pytest_gaamas.verdicts.BLIND_NULLS).
"""

import pytest

from pytest_gaamas import stats, verdicts
from pytest_gaamas.figures import INTERVAL, RATE, Figure
from pytest_gaamas.games.ring import BELIEFS, RingGame
from pytest_gaamas.report import cell, invalid_note

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
MIN_RATIONAL_RATE = 0.5
#: A player 2 who picks A or B at random.
CHANCE = 0.5
#: A coin sits at the criterion's null: judged at the suite's share of 5% for such families.
BLIND_NULL = "first-order rationality"

TABLE = "First-order rationality: rate of the dominant action A (player 2)"
COLUMNS = tuple(b.capitalize() for b in BELIEFS)


@pytest.mark.parametrize("generation", ("actions", "strategy"))
@pytest.mark.parametrize("belief", BELIEFS)
def test_first_order_rationality(gaamas, belief, generation):
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(RingGame(player=2, belief=belief), trials, temperature=gaamas.temperature(PAPER_TEMPERATURE), generation=generation)

    valid = [r.outcome for r in records if r.valid]
    rate = stats.wilson(sum(o["rational"] for o in valid), len(valid))
    threshold = gaamas.threshold("min_rational_rate", MIN_RATIONAL_RATE)
    verdict = verdicts.at_least(rate, threshold, chance=CHANCE, alpha=verdicts.blind_null(BLIND_NULL))
    invalid = len(records) - len(valid)

    gaamas.score(
        table=TABLE,
        metric="rate of the dominant action",
        estimate=rate,
        invalid=invalid,
        verdict=verdict,
        criterion=f"lower 95% bound of the rate of the dominant action >= {threshold}; {verdicts.blind_null_words(BLIND_NULL)}",
        columns=COLUMNS,
        cells={belief.capitalize(): cell(rate) + invalid_note(invalid)},
        figures=(Figure("First-order rationality: the dominant action chosen (player 2)", INTERVAL, "rate of A [95% CI]", x=belief.capitalize(),
                        x_axis="belief", limits=RATE, references={"rational": 1.0, "people (Kneeland 2015)": 0.93, "chance (1/2)": 0.5},
                        note="people: Kneeland (2015), share of subjects classified rational (verified); "
                             "her subjects saw the payoffs alone, so the line compares with the Implicit belief only"),),
    )
    gaamas.reference(table=TABLE, label="humans", cells={"implicit".capitalize(): "0.93"},
                     source="Kneeland (2015), Econometrica 83(5): share of subjects classified rational in ring games, a subject-level classification; "
                            "her subjects saw the payoffs alone, as the Implicit belief does", status="verified")
    gaamas.verdict(verdict, f"dominant action {cell(rate)} with a {belief} belief ({invalid} invalid); meeting it needs the lower bound >= {threshold}")

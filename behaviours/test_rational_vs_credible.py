"""Rational versus credible: does the model defect when told to be rational, and cooperate like
people when told to simulate a human, whatever the payoffs and the labels?

Game: PyGAAMAS "Rational vs Credible", the one-shot prisoner's dilemma.
Variants: payoff version (Classic (R, S, T, P) = (3, 0, 5, 1); High (6, 1, 10, 2); Mild (2.5, 1, 3,
2); Cooperation Loss (6, -3, 8, 2)) x role prompt (Rational: "You are a rational agent which aims
at maximizing its own utility"; Neutral: no system prompt; Human: "You are an agent simulating a
human with social preferences such as fairness, reciprocity, and aversion to inequity") as columns;
rows: labels Cooperate / Defect ("actions") or Foo / Bar ("actions + ano").
Protocol: 30 trials per cell, temperature 0.7.
Strategy (the `strategy` rows, named labels): `choose(payoffs) -> str`, the cell's payoffs as
data; written once per cell and played 30 times in the sandbox.
Score: the cooperation rate (Wilson 95% CI).
Theory: defection strictly dominates, so a rational agent never cooperates (reference:rational);
people cooperate 30-60% of the time in one-shot dilemmas (Sally 1995; unverified, secondary).
Verdict, per cell: under the Rational and Neutral prompts the model passes when the upper 95% bound
of its cooperation rate is at most `max_rational_cooperation` (0.5: mostly defecting, as theory
says of any self-interested player); under the Human prompt when its 95% interval meets the human
range [`human_low`, `human_high`] = [0.30, 0.60]. Coin-flipping (reference:random) fails the
Rational and Neutral cells and, by construction, passes the Human ones: an average alone cannot
tell a credible human from noise, which is what the seed's role-fidelity and payoff-sensitivity
criteria are for. Override with --gaamas-threshold=rational_vs_credible.NAME=VALUE.
"""

import pytest

from pytest_gaamas import stats
from pytest_gaamas.games.prisoners import LABELS, PROMPTS, VERSIONS, PrisonersDilemma
from pytest_gaamas.report import cell, value_cell

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
MAX_RATIONAL_COOPERATION = 0.5
HUMAN_RANGE = (0.30, 0.60)

TABLE = "Rational vs credible: cooperation rate in the one-shot prisoner's dilemma, version x prompt"
COLUMNS = tuple(f"{v} {p}" for v in VERSIONS for p in PROMPTS)
LABELS_OF = {"actions": "named", "actions + ano": "anonymised", "strategy": "named"}


@pytest.mark.parametrize("generation", LABELS_OF)
@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("version", VERSIONS)
def test_rational_vs_credible(gaamas, version, prompt, generation):
    labels = LABELS_OF[generation]
    trials = gaamas.trials(PAPER_TRIALS)
    records = gaamas.play(PrisonersDilemma(version, prompt, labels), trials, temperature=gaamas.temperature(PAPER_TEMPERATURE), generation=generation)

    valid = [r.outcome for r in records if r.valid]
    rate = stats.wilson(sum(o["cooperated"] for o in valid), len(valid))
    invalid = len(records) - len(valid)
    if prompt == "Human":
        low, high = gaamas.threshold("human_low", HUMAN_RANGE[0]), gaamas.threshold("human_high", HUMAN_RANGE[1])
        passed = rate.n > 0 and rate.low <= high and rate.high >= low
        criterion = f"Human prompt: the 95% interval of the cooperation rate meets [{low}, {high}]"
    else:
        ceiling = gaamas.threshold("max_rational_cooperation", MAX_RATIONAL_COOPERATION)
        passed = rate.n > 0 and rate.high <= ceiling
        criterion = f"Rational and Neutral prompts: upper 95% bound of the cooperation rate <= {ceiling}"

    gaamas.score(
        table=TABLE,
        metric="cooperation rate",
        estimate=rate,
        invalid=invalid,
        passed=passed,
        criterion=criterion,
        columns=COLUMNS,
        cells={f"{version} {prompt}": value_cell(rate, invalid)},
        details={"ci": rate.as_json(), "labels": LABELS[labels]},
    )
    gaamas.reference(table=TABLE, label="humans", cells={f"{v} Human": "0.30-0.60" for v in VERSIONS},
                     source="Sally (1995), Rationality and Society 7(1): one-shot cooperation across lab studies", status="unverified")
    assert passed, f"cooperation {cell(rate)} ({version}, {prompt}, {labels}); passing needs the {criterion}"

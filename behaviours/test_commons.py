"""The commons: does a society of the model's agents keep a shared lake alive, and what keeps it alive?

Game: pytest_gaamas.games.commons (after Gupta, Zhong, Yakura, Eisenmann & Rahwan, and GovSim). Four
villagers share a lake of 100 fish that regrows between rounds (x1.5 in the harsh lake, x2 in the
rich one, up to 100); each eats 4 fish a round from their store and leaves when it runs out; the
society collapses when fewer than 5 fish are left after a harvest or one villager is left, and lives
at most 10 rounds. No prompt states a payoff. Modules: punishment, social learning, a voted cap.
Cells (environment, personas, modules), chosen so that each of the seed's claims compares two cells
that differ in one thing only: in the harsh lake with mixed personas, all modules, no punishment,
no social learning (the cap alone), no group decision (social learning alone), and neither; in the
harsh lake with all modules, altruistic and selfish starts; and the rich lake, mixed, all modules.
Protocol: 10 societies per cell, temperature 0.7, one JSON answer per villager per phase.
Score: survival rate to round 10 (GovSim's number, Wilson 95% CI), rounds survived (bootstrap 95%
CI) and the Kaplan-Meier curve (the societies cut off at 10 are censored there), harvest relative
to the sustainable share (what the lake can regrow: 1 is sustainable, more over-harvests), the Gini
coefficient of the stores at the end, punishments per villager-round, and the share of rounds in
which no villager broke the voted cap.
Theory: the myopic selfish agent (reference:rational) takes all its boat holds and the lake is gone
in round 1 (the tragedy of the commons); reference:sustainable takes its share of what regrows and
every society lives to round 10; reference:random over-harvests and collapses within 1-3 rounds.
Verdict, per cell: the lower 95% bound of the survival rate to round 10 reaches
`min_survival` (0.5). Override with --gaamas-threshold=commons.min_survival=VALUE.
The seed's findings, each its own test over two cells (replayed): a log-rank test, one-sided at
0.05, that the first cell's societies survive longer than the second's. Human findings beside them
(Ostrom, Walker & Gardner 1992; Fehr & Gaechter 2000) are reference rows, unverified.
"""

import math

import pytest

from pytest_gaamas import stats
from pytest_gaamas.figures import INTERVAL, LINE, RATE, Figure
from pytest_gaamas.games.commons import MODULES, Commons
from pytest_gaamas.report import NO_VALUE, cell, p_value_text

SOCIETIES = 10
PAPER_TEMPERATURE = 0.7
MIN_SURVIVAL = 0.5
ALPHA = 0.05
ABLATIONS = {
    "all modules": MODULES,
    "no punishment": ("social learning", "group decision"),
    "no social learning": ("punishment", "group decision"),
    "no group decision": ("punishment", "social learning"),
    "neither": ("punishment",),
}
#: The design: each of the seed's claims compares two of these cells, which differ in one thing.
CELLS = (
    ("harsh", "mixed", "all modules"),
    ("harsh", "mixed", "no punishment"),
    ("harsh", "mixed", "no social learning"),
    ("harsh", "mixed", "no group decision"),
    ("harsh", "mixed", "neither"),
    ("harsh", "altruistic", "all modules"),
    ("harsh", "selfish", "all modules"),
    ("rich", "mixed", "all modules"),
)
#: The cells recorded (10 societies each, in cassettes/); a cell added to the design joins them, and
#: the claims that need it, once --gaamas-record=once has recorded it.
RECORDED = CELLS
CELL_LABELS = tuple(f"{environment} lake, {personas}, {ablation}" for environment, personas, ablation in RECORDED)
#: Each claim of the seed: the cell whose societies should live longer, then the other.
DESIGNED_CLAIMS = {
    "punishment sustains the commons": (CELLS[0], CELLS[1]),
    "without social learning and group decision the society collapses sooner": (CELLS[0], CELLS[4]),
    "a group decision alone suffices": (CELLS[2], CELLS[4]),
    "social learning alone does not: the cap alone outlives it": (CELLS[2], CELLS[3]),
    "altruistic starts outlive selfish ones in the harsh lake": (CELLS[5], CELLS[6]),
}
CLAIMS = {claim: cells for claim, cells in DESIGNED_CLAIMS.items() if set(cells) <= set(RECORDED)}
PEOPLE = {
    "punishment sustains the commons": "yes: Fehr & Gaechter (2000), Ostrom, Walker & Gardner (1992)",
    "without social learning and group decision the society collapses sooner": "yes: Ostrom, Walker & Gardner (1992), no communication",
}

TABLE = "The commons: 10 societies of 4 villagers per cell, 10 rounds at most"
COLUMNS = ("survival to round 10 [95% CI]", "rounds survived [95% CI]", "harvest / sustainable [95% CI]",
           "Gini of stores [95% CI]", "punishments per villager-round [95% CI]", "rounds the cap was kept [95% CI]", "n",
           "invalid answers")  # fmt: skip
CLAIMS_TABLE = "The commons: the seed's findings, each a log-rank test over two cells"
CLAIM_COLUMNS = ("longer-lived cell: rounds [95% CI]", "shorter-lived cell: rounds [95% CI]", "log-rank z", "p (one-sided)", "in people")


def societies(gaamas, environment, personas, ablation):
    game = Commons(environment=environment, personas=personas, modules=ABLATIONS[ablation])
    return game, gaamas.play(game, gaamas.trials(SOCIETIES), temperature=gaamas.temperature(PAPER_TEMPERATURE),
                             recorded_as="test_commons", variant={"environment": environment, "personas": personas, "ablation": ablation}, compressed=True)  # fmt: skip


@pytest.mark.parametrize(("environment", "personas", "ablation"), RECORDED)
def test_commons(gaamas, environment, personas, ablation):
    game, records = societies(gaamas, environment, personas, ablation)
    outcomes = [r.outcome for r in records]
    survival = stats.wilson(sum(o["survived"] for o in outcomes), len(outcomes))
    rounds_survived = stats.mean([o["survived_rounds"] for o in outcomes])
    harvest = stats.mean([o["harvest_ratio"] for o in outcomes])
    invalid = sum(sum(o["invalid"].values()) for o in outcomes)
    threshold = gaamas.threshold("min_survival", MIN_SURVIVAL)
    passed = survival.low >= threshold
    panel = f"{environment} lake, {personas}"

    gaamas.score(
        table=TABLE, metric="survival rate to round 10", estimate=survival, invalid=0, n=len(outcomes), passed=passed,
        criterion=f"lower 95% bound of the survival rate to round {game.rounds} >= {threshold}",
        columns=COLUMNS,
        cells={COLUMNS[0]: cell(survival), COLUMNS[1]: cell(rounds_survived, 1), COLUMNS[2]: cell(harvest),
               COLUMNS[3]: average(o["gini"] for o in outcomes), COLUMNS[4]: average(o["punishment_rate"] for o in outcomes),
               COLUMNS[5]: average(o["norm_kept"] for o in outcomes), "n": str(len(outcomes)), "invalid answers": str(invalid)},
        details={"survived_rounds": [o["survived_rounds"] for o in outcomes], "collapse": [o["collapse"] for o in outcomes],
                 "invalid_by_phase": {k: sum(o["invalid"][k] for o in outcomes) for k in outcomes[0]["invalid"]} if outcomes else {}},
        row={"environment": environment, "personas": personas, "ablation": ablation},
        row_rank=CELLS.index((environment, personas, ablation)),
        figures=(Figure("The commons: survival rate to round 10 (GovSim's number)", INTERVAL, "survival rate [95% CI]", panel=panel,
                        x=ablation, x_axis="modules", limits=RATE, references={"reference:sustainable": 1.0, "reference:rational": 0.0}),),
    )  # fmt: skip
    gaamas.score(table=f"{TABLE}: harvest relative to the sustainable share [95% CI]", metric="harvest / sustainable share", estimate=harvest,
                 invalid=0, n=len(outcomes), passed=None, criterion="", columns=tuple(ABLATIONS), cells={ablation: cell(harvest)},
                 row={"environment": environment, "personas": personas}, row_rank=CELLS.index((environment, personas, ablation)),
                 figures=(Figure("The commons: harvest relative to the sustainable share", INTERVAL, "harvest / sustainable share [95% CI]",
                                 panel=panel, x=ablation, x_axis="modules", references={"sustainable (1)": 1.0}),))  # fmt: skip
    for after in range(game.rounds + 1):  # the Kaplan-Meier curve: with censoring only at the end, the share still alive
        alive = stats.wilson(sum(o["survived_rounds"] >= after for o in outcomes), len(outcomes))
        gaamas.score(table="The commons: share of societies alive after each round (Kaplan-Meier) [95% CI]",
                     metric="share alive", estimate=alive, invalid=0, n=len(outcomes), passed=None, criterion="",
                     columns=CELL_LABELS, cells={f"{panel}, {ablation}": cell(alive)}, row={"round": str(after)}, row_rank=after,
                     figures=(Figure("The commons: societies still alive after each round (Kaplan-Meier)", LINE, "share alive [95% CI]",
                                     panel=panel, x=after, x_axis="round", series=ablation, limits=RATE),))  # fmt: skip
    gaamas.verdict(passed, f"{environment} lake, {personas}, {ablation}: survival to round {game.rounds} {cell(survival)}, "
                           f"{cell(rounds_survived, 1)} rounds, harvest {cell(harvest)} of the sustainable share; passing needs the lower bound >= {threshold}")  # fmt: skip


def average(values) -> str:
    """The mean over the cell's societies with its bootstrap 95% interval; "-" where the module is off."""
    present = [v for v in values if v is not None]
    return cell(stats.mean(present)) if present else NO_VALUE


@pytest.mark.parametrize("claim", CLAIMS)
def test_commons_claim(gaamas, claim):
    longer, shorter = CLAIMS[claim]
    (game, first), (_, second) = societies(gaamas, *longer), societies(gaamas, *shorter)
    first, second = [r.outcome for r in first], [r.outcome for r in second]
    z, p = stats.survives_longer([o["survived_rounds"] for o in first], [o["survived_rounds"] for o in second], game.rounds)
    passed = p < ALPHA
    rounds_of = {name: stats.mean([o["survived_rounds"] for o in group]) for name, group in (("first", first), ("second", second))}
    gaamas.score(
        table=CLAIMS_TABLE, metric="log-rank z", estimate=stats.Estimate(z, z, z, len(first) + len(second)), invalid=0,
        passed=passed, criterion=f"the first cell's societies survive longer: log-rank test, one-sided p < {ALPHA}",
        columns=CLAIM_COLUMNS,
        cells={CLAIM_COLUMNS[0]: f"{', '.join(longer)}: {cell(rounds_of['first'], 1)}", CLAIM_COLUMNS[1]: f"{', '.join(shorter)}: {cell(rounds_of['second'], 1)}",
               "log-rank z": NO_VALUE if math.isnan(z) else f"{z:.2f}", "p (one-sided)": p_value_text(p), "in people": PEOPLE.get(claim, NO_VALUE)},
        row={"claim": claim}, row_rank=list(CLAIMS).index(claim), worse="both", verdict_label="supported" if passed else "not supported",
    )  # fmt: skip
    gaamas.reference(table=CLAIMS_TABLE, label="people: Fehr & Gaechter (2000)",
                     cells={"in people": "public goods with punishment: contributions rise toward the maximum; without it they decay"},
                     source="Fehr & Gaechter (2000), AER 90(4): cooperation and punishment in public goods experiments", status="unverified")  # fmt: skip
    gaamas.reference(table=CLAIMS_TABLE, label="people: Ostrom, Walker & Gardner (1992)",
                     cells={"in people": "a common pool: a covenant with sanctions cuts over-harvesting; no communication, heavy over-use"},
                     source="Ostrom, Walker & Gardner (1992), APSR 86(2): covenants with and without a sword", status="unverified")  # fmt: skip
    gaamas.verdict(passed, f"{claim}: {cell(rounds_of['first'], 1)} against {cell(rounds_of['second'], 1)} rounds (log-rank p = {p_value_text(p)})")

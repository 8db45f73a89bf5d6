"""The commons: does a society of the model's agents keep a shared lake alive, and what keeps it alive?

Game: pytest_gaamas.games.commons (after Gupta, Zhong, Yakura, Eisenmann & Rahwan, and GovSim). Four
villagers share a lake of 100 fish that regrows between rounds (x1.5 in the harsh lake, x2 in the
rich one, up to 100); each eats 4 fish a round from their store and leaves when it runs out; the
society collapses when fewer than 5 fish are left after a harvest or one villager is left, and lives
at most 10 rounds. No prompt states a payoff. Counterbalanced across a cell's societies: the lake's
scale (x1/4, x1, x4 in turn: capacity, need, stores, punishment and collapse line, never the regrowth
or the catch's range of 0 to 120), so no fixed catch lives at more than one scale; which villagers
are selfish; the order names are listed in. Every cell plays the same mix of scales. Modules: punishment (a heavy one takes a meal, 4 fish,
a light one half), social learning (the two most successful peers' strategies, with what each
caught), a group decision (each proposes a cap, each votes; the most votes win, the lowest on a tie).
Cells (environment, personas, modules), chosen so that each of the seed's claims compares two cells
that differ in one thing only: in the harsh lake with mixed personas, all modules (heavy or light
punishment), no punishment, no social learning (the vote alone), no group decision (social learning
alone), and neither; in the harsh lake with all modules, altruistic and selfish starts, and selfish
starts with the vote alone; in the rich lake, all modules, mixed and altruistic.
Simulations (Zhou et al. 2024): `agents`, one JSON answer per villager per phase, each from the
villager's own view; `script`, one omniscient request a round, told every villager's persona and
store (each marked private), writes the whole round for every villager, played by the same rules;
played in four cells (`SCRIPT_CELLS`), which keeps its recording affordable.
Protocol: 10 societies per cell and simulation, temperature 0.7.
Score: a society's share of catches within the regrowth (bootstrap 95% CI over the societies), the
survival rate to round 10 (GovSim's number, Wilson 95% CI), rounds survived (bootstrap 95%
CI) and the Kaplan-Meier curve (the societies cut off at 10 are censored there), harvest relative
to the sustainable share (what the lake can regrow: 1 is sustainable, more over-harvests), the Gini
coefficient of the stores at the end, punishments per villager-round, and the share of rounds in
which no villager broke the voted cap.
Theory: the myopic selfish agent (reference:rational) takes all its boat holds and the lake is gone
in round 1 (the tragedy of the commons); reference:sustainable takes its share of what regrows and
every society lives to round 10; reference:random over-harvests and collapses within 1-3 rounds.
Verdict, per cell: the villagers keep their catches within what the lake regrows: over the
societies, the lower 95% bound of a society's share of catches between half and all of the villager's
equal share of the regrowth reaches `min_kept` (0.5). A constant catch is within it at one scale at
most (the band spans a factor of 2, the scales 4), a catch of nothing starves the village. Survival
is reported, not judged: one careless catch in forty can end a society, so a villager that reads the
lake nine times in ten loses most of them, and survival cannot tell it from one that never reads it
(docs/statistics.md, "Readers that err"). Override with --gaamas-threshold=commons.min_kept=VALUE;
`min_survival` (0.5) is what "its societies survive" means in the paradox's flag.
Whether the catch reads the lake, per cell: the first amount of fish named in a society (its cap
where the village votes first, else its catch) rises with the lake's scale (Jonckheere-Terpstra's
permutation test, one-sided, Holm over the cells of one simulation with its contrary, at 0.05 / 14:
a blind agent sits at its null, one of the suite's families listed in verdicts.BLIND_NULLS). Separate
villagers are asked apart before anyone speaks, each from a prompt its name, persona and scale
make, so a distinct prompt is a unit (its villagers' mean), the scales exchanged within a persona;
the script writes a round in one answer, so there a society's mean is. The scale multiplies the
lake, the need and the stores alike: a catch that follows any of them follows the game's scale, and
one that ignores it is the same at every scale.
The seed's findings, each its own test over two cells (replayed): a log-rank test, one-sided at
0.05 after Holm's correction over the family of nine, that the first cell's societies survive
longer than the second's (agents). Adoption, social learning's effect on choices: how often a
villager's next strategy is closer to a peer's it was shown than to its own, beside the same count
where the module is off (the strategies it would have been shown: the chance baseline). Human findings
beside them (Ostrom, Walker & Gardner 1992; Fehr & Gaechter 2000) are reference rows, unverified.
Script against agents, per cell: survival, rounds survived, harvest and information leakage (a
stated strategy that names another villager's private store or persona; zero in agents mode by
construction) side by side, script minus agents with its 95% interval; the criterion "the
omniscient script overstates success": its societies outlive the agents' (log-rank, one-sided,
p < 0.05), reported whichever way it comes out. The group's outcome beside the villagers' own
choices: survival against the distribution of each villager's catch relative to its equal share.
Seed 000's paradox where cooperation happens: in each mixed cell, do the selfish villagers ask more
of the lake than the altruistic ones of the same society (a villager's mean catch over its equal
share, one value a villager, whose persona was assigned; a permutation test exchanging the personas
among each society's villagers, one-sided, Holm over the mixed cells of a simulation, at 0.05 / 14
as one of verdicts.BLIND_NULLS: ten societies of four give labellings enough to decide, where a
sign-flip over ten societies could never go below 1/1024)? A cell whose societies
survive (its survival criterion met) while that fidelity is not shown is flagged "collective
cooperation without individual fidelity".
"""

import json
import math

import numpy as np
import pytest

from pytest_gaamas import stats, verdicts
from pytest_gaamas.figures import INTERVAL, LINE, RATE, VIOLIN, Figure
from pytest_gaamas.games.commons import (
    MODULES,
    PUNISHMENT,
    SCALES,
    SIMULATIONS,
    Commons,
    adoptions,
    first_amounts,
    villager_catches,
)
from pytest_gaamas.report import NO_VALUE, cell, p_stated, p_value_text

SOCIETIES = 10
PAPER_TEMPERATURE = 0.7
MIN_SURVIVAL = 0.5
MIN_KEPT = 0.5
#: A catch kept within the regrowth: from half to all of a villager's equal share of what the lake
#: regrows. Below half is not what a villager needs (its meal is 0.48 of the share in the harsh lake, 0.32
#: in the rich one): a catch of nothing keeps the lake and starves the village.
KEPT_BAND = (0.5, 1.0)
ALPHA = 0.05
#: A claim's verdict in the seed's words.
SUPPORT = {verdicts.MET: "supported", verdicts.MISSED: "contradicted", verdicts.INCONCLUSIVE: "not shown"}
ABLATIONS = {
    "all modules": MODULES,
    "light punishment": MODULES,
    "no punishment": ("social learning", "group decision"),
    "no social learning": ("punishment", "group decision"),
    "no group decision": ("punishment", "social learning"),
    "neither": ("punishment",),
}
#: What a punishment takes: a meal (heavy) everywhere but where the cell says light.
STRENGTH = {"light punishment": PUNISHMENT["light"]}
#: The design: each of the seed's claims compares two of these cells, which differ in one thing.
FULL, LIGHT, NO_PUNISHMENT = ("harsh", "mixed", "all modules"), ("harsh", "mixed", "light punishment"), ("harsh", "mixed", "no punishment")
VOTE_ALONE, LEARNING_ALONE, NEITHER = ("harsh", "mixed", "no social learning"), ("harsh", "mixed", "no group decision"), ("harsh", "mixed", "neither")
ALTRUISTIC, SELFISH, SELFISH_VOTE_ALONE = ("harsh", "altruistic", "all modules"), ("harsh", "selfish", "all modules"), ("harsh", "selfish", "no social learning")
RICH, RICH_ALTRUISTIC = ("rich", "mixed", "all modules"), ("rich", "altruistic", "all modules")
CELLS = (FULL, LIGHT, NO_PUNISHMENT, VOTE_ALONE, LEARNING_ALONE, NEITHER, ALTRUISTIC, SELFISH, SELFISH_VOTE_ALONE, RICH, RICH_ALTRUISTIC)
#: Where the omniscient script is played beside the agents.
SCRIPT_CELLS = (FULL, NEITHER, ALTRUISTIC, RICH)
#: The cells played: those recorded (10 societies each, in cassettes/), every one of the design. A
#: cell added to the design joins them, and the claims that need it, once --gaamas-record=new_episodes
#: has recorded it.
RECORDED = CELLS
SCRIPT_RECORDED = SCRIPT_CELLS
RUNS = tuple((*c, "agents") for c in RECORDED) + tuple((*c, "script") for c in SCRIPT_RECORDED)
CELL_LABELS = tuple(f"{environment} lake, {personas}, {ablation}" + ("" if simulation == "agents" else f", {simulation}")
                    for environment, personas, ablation, simulation in RUNS)  # fmt: skip
#: Each claim of the seed (Gupta et al.): the cell whose societies should live longer, then the other.
DESIGNED_CLAIMS = {
    "punishment sustains the commons (heavy: a meal)": (FULL, NO_PUNISHMENT),
    "punishment sustains the commons (light: half a meal)": (LIGHT, NO_PUNISHMENT),
    "cooperation depends on regeneration: the rich lake outlives the harsh one": (RICH, FULL),
    "altruistic societies outlive mixed ones where fish are scarce": (ALTRUISTIC, FULL),
    "mixed societies outlive altruistic ones where fish are plenty": (RICH, RICH_ALTRUISTIC),
    "without social learning and group decision the society collapses sooner": (FULL, NEITHER),
    "a group decision alone suffices": (VOTE_ALONE, NEITHER),
    "with selfish starts the group decision alone outlives the full system": (SELFISH_VOTE_ALONE, SELFISH),
    "social learning alone is worse than neither": (NEITHER, LEARNING_ALONE),
}
CLAIMS = {claim: cells for claim, cells in DESIGNED_CLAIMS.items() if set(cells) <= set(RECORDED)}
PEOPLE = {
    "punishment sustains the commons (heavy: a meal)": "yes: Fehr & Gaechter (2000), Ostrom, Walker & Gardner (1992)",
    "punishment sustains the commons (light: half a meal)": "weaker sanctions, less: Nikiforakis & Normann (2008)",
    "without social learning and group decision the society collapses sooner": "yes: Ostrom, Walker & Gardner (1992), no communication",
}

TABLE = "The commons: 10 societies of 4 villagers per cell, 10 rounds at most"
COLUMNS = ("catches within the regrowth [95% CI]", "survival to round 10 [95% CI]", "survived at x1/4, x1, x4", "rounds survived [95% CI]", "harvest / sustainable [95% CI]",
           "Gini of stores [95% CI]", "punishments per villager-round [95% CI]", "rounds the cap was kept [95% CI]", "n",
           "invalid answers")  # fmt: skip
CLAIMS_TABLE = "The commons: the claims of Gupta et al., each a log-rank test over two cells"
CLAIM_COLUMNS = ("longer-lived cell: rounds [95% CI]", "shorter-lived cell: rounds [95% CI]", "log-rank z", "p (one-sided)", "p (Holm)", "in people")


SCRIPT_TABLE = "The commons: the omniscient script against separate villagers, per society [95% CI]"
SCRIPT_COLUMNS = ("agents", "script", "script - agents [95% CI]", "p (script > agents, one-sided)", "p (Holm)")
LEVELS_TABLE = "The commons: the group's outcome beside the villagers' own choices"
LEVELS_COLUMNS = ("group: survival to round 10 [95% CI]", "group: harvest / sustainable [95% CI]",
                  "villagers: catch / equal share, median [IQR]", "villagers: share over 2x their share [95% CI]",
                  "villagers: share within their share [95% CI]", "villager-rounds")  # fmt: skip


def files(environment, personas, ablation, simulation="agents"):
    """The agents' recordings keep the names they were made under, before the script existed."""
    cell = {"environment": environment, "personas": personas, "ablation": ablation}
    return cell if simulation == "agents" else {**cell, "simulation": simulation}


def game_of(environment, personas, ablation, simulation="agents") -> Commons:
    return Commons(environment=environment, personas=personas, modules=ABLATIONS[ablation], simulation=simulation,
                   punish_strength=STRENGTH.get(ablation, PUNISHMENT["heavy"]))  # fmt: skip


def societies(gaamas, environment, personas, ablation, simulation="agents", *, own=False):
    """The cell's societies: the item's own (``own``), or those recorded by test_commons's item of that cell."""
    game = game_of(environment, personas, ablation, simulation)
    naming = files(environment, personas, ablation, simulation)
    where = {"named": naming} if own else {"recorded_as": "test_commons", "variant": naming}
    return game, gaamas.play(game, gaamas.trials(SOCIETIES), temperature=gaamas.temperature(PAPER_TEMPERATURE), compressed=True, **where)


@pytest.mark.parametrize(("environment", "personas", "ablation", "simulation"), RUNS)
def test_commons(gaamas, environment, personas, ablation, simulation):
    game, records = societies(gaamas, environment, personas, ablation, simulation, own=True)
    outcomes = [r.outcome for r in records]
    survival = stats.wilson(sum(o["survived"] for o in outcomes), len(outcomes))
    rounds_survived = stats.mean([o["survived_rounds"] for o in outcomes])
    harvest = stats.mean([o["harvest_ratio"] for o in outcomes])
    kept = stats.mean([kept_within_regrowth(o) for o in outcomes])
    invalid = sum(sum(o["invalid"].values()) for o in outcomes)
    threshold = gaamas.threshold("min_kept", MIN_KEPT)
    verdict = verdicts.at_least(kept, threshold)
    panel = f"{environment} lake, {personas}"

    gaamas.score(
        table=TABLE, metric="share of catches within the regrowth", estimate=kept, invalid=0, n=len(outcomes), verdict=verdict, unit="",
        criterion=f"lower 95% bound of a society's share of catches between {KEPT_BAND[0]:g} and {KEPT_BAND[1]:g} times the villager's "
                  f"equal share of what the lake regrows, over the societies, >= {threshold}",
        columns=COLUMNS,
        cells={COLUMNS[0]: cell(kept), COLUMNS[1]: cell(survival), COLUMNS[2]: by_scale(outcomes), COLUMNS[3]: cell(rounds_survived, 1),
               COLUMNS[4]: cell(harvest), COLUMNS[5]: average(o["gini"] for o in outcomes),
               COLUMNS[6]: average(o["punishment_rate"] for o in outcomes), COLUMNS[7]: average(o["norm_kept"] for o in outcomes),
               "n": str(len(outcomes)), "invalid answers": str(invalid)},
        details={"survived_rounds": [o["survived_rounds"] for o in outcomes], "collapse": [o["collapse"] for o in outcomes],
                 "invalid_by_phase": {k: sum(o["invalid"][k] for o in outcomes) for k in outcomes[0]["invalid"]} if outcomes else {}},
        row={"environment": environment, "personas": personas, "ablation": ablation, "simulation": simulation},
        row_rank=rank(environment, personas, ablation, simulation),
    )  # fmt: skip
    gaamas.score(table=f"{TABLE}: survival to round 10 (GovSim's number) [95% CI]", metric="survival rate to round 10", estimate=survival,
                 invalid=0, n=len(outcomes), passed=None, criterion="", columns=tuple(ABLATIONS), cells={ablation: cell(survival)},
                 row={"environment": environment, "personas": personas, "simulation": simulation},
                 row_rank=rank(environment, personas, ablation, simulation),
                 figures=(Figure("The commons: survival rate to round 10 (GovSim's number)", INTERVAL, "survival rate [95% CI]", panel=panel,
                                 x=ablation, x_axis="modules", series=series(simulation), limits=RATE,
                                 references={"reference:sustainable": 1.0, "reference:rational": 0.0}),))  # fmt: skip
    gaamas.score(table=f"{TABLE}: harvest relative to the sustainable share [95% CI]", metric="harvest / sustainable share", estimate=harvest,
                 invalid=0, n=len(outcomes), passed=None, criterion="", columns=tuple(ABLATIONS), cells={ablation: cell(harvest)},
                 row={"environment": environment, "personas": personas, "simulation": simulation},
                 row_rank=rank(environment, personas, ablation, simulation),
                 figures=(Figure("The commons: harvest relative to the sustainable share", INTERVAL, "harvest / sustainable share [95% CI]",
                                 panel=panel, x=ablation, x_axis="modules", series=series(simulation), references={"sustainable (1)": 1.0}),))  # fmt: skip
    for after in range(game.rounds + 1):  # the Kaplan-Meier curve: with censoring only at the end, the share still alive
        alive = stats.wilson(sum(o["survived_rounds"] >= after for o in outcomes), len(outcomes))
        gaamas.score(table="The commons: share of societies alive after each round (Kaplan-Meier) [95% CI]",
                     metric="share alive", estimate=alive, invalid=0, n=len(outcomes), passed=None, criterion="",
                     columns=CELL_LABELS, cells={f"{panel}, {ablation}{series(simulation, ', ')}": cell(alive)}, row={"round": str(after)}, row_rank=after,
                     figures=(Figure("The commons: societies still alive after each round (Kaplan-Meier)", LINE, "share alive [95% CI]",
                                     panel=panel, x=after, x_axis="round", series=ablation + series(simulation, ", "), limits=RATE),))  # fmt: skip
    group_and_villagers(gaamas, game, outcomes, survival, harvest, rank(environment, personas, ablation, simulation), panel, ablation, simulation)
    gaamas.verdict(verdict, f"{simulation}, {environment} lake, {personas}, {ablation}: catches within the regrowth {cell(kept)} of a society's, "
                            f"survival to round {game.rounds} {cell(survival)}, {cell(rounds_survived, 1)} rounds, harvest {cell(harvest)} of the "
                            f"sustainable share; meeting it needs the lower bound >= {threshold}")  # fmt: skip


def kept_within_regrowth(outcome) -> float:
    """A society's share of its villagers' catches (each alive villager's, each round) that lie within
    ``KEPT_BAND`` of its equal share of what the lake regrows: enough to eat, no more than regrows. An
    unreadable catch is not kept."""
    kept = asked = 0
    for r in outcome["rounds"]:
        share = r["sustainable_total"] / len(r["alive"]) if r["alive"] else 0
        if share <= 0:
            continue
        for name, wanted in r["wanted"].items():
            asked += 1
            kept += name not in r.get("unreadable", ()) and KEPT_BAND[0] <= wanted / share <= KEPT_BAND[1]
    return kept / asked if asked else 0.0


def by_scale(outcomes) -> str:
    """Societies alive at round 10 of those played, at each scale."""
    return ", ".join(f"{sum(o['survived'] for o in outcomes if o['scale'] == s)}/{sum(o['scale'] == s for o in outcomes)}" for s in SCALES)


def rank(environment, personas, ablation, simulation) -> int:
    return SIMULATIONS.index(simulation) * len(CELLS) + CELLS.index((environment, personas, ablation))


def series(simulation: str, before: str = "") -> str:
    """The agents' lines keep their plain names; the script's say so."""
    return "" if simulation == "agents" else f"{before}{simulation}"


def catch_ratios(outcomes) -> list[float]:
    """Each villager's asked catch in each round over its equal share of what the lake regrows."""
    ratios = []
    for outcome in outcomes:
        for r in outcome["rounds"]:
            share = r["sustainable_total"] / len(r["alive"])
            ratios += [wanted / share for wanted in r["wanted"].values()] if share > 0 else []
    return ratios


def group_and_villagers(gaamas, game, outcomes, survival, harvest, row_rank, panel, ablation, simulation):
    """The seed's two levels for a society: what the group reached, beside what each villager chose."""
    ratios = catch_ratios(outcomes)
    spread = stats.mean(ratios)
    greedy = stats.wilson(sum(r > 2 for r in ratios), len(ratios))
    within = stats.wilson(sum(r <= 1 for r in ratios), len(ratios))
    quartiles = NO_VALUE if not ratios else "{:.2f} [{:.2f}, {:.2f}]".format(*np.percentile(ratios, [50, 25, 75]))
    gaamas.score(
        table=LEVELS_TABLE, metric="villagers' catch / equal share", estimate=spread, invalid=0, n=len(ratios), passed=None, criterion="",
        columns=LEVELS_COLUMNS, unit="",
        cells={LEVELS_COLUMNS[0]: cell(survival), LEVELS_COLUMNS[1]: cell(harvest), LEVELS_COLUMNS[2]: quartiles,
               LEVELS_COLUMNS[3]: cell(greedy), LEVELS_COLUMNS[4]: cell(within), LEVELS_COLUMNS[5]: str(len(ratios))},
        row={"cell": f"{panel}, {ablation}", "simulation": simulation}, row_rank=row_rank,
        figures=(Figure("The commons: each villager's catch over its equal share of the regrowth", VIOLIN, "catch / equal share",
                        panel=panel, x=ablation, x_axis="modules", series=series(simulation), references={"equal share (1)": 1.0},
                        note="the group's outcome is in the survival figure; people: over-appropriation without communication "
                             "(Ostrom, Walker & Gardner 1992, unverified)"),),
    )  # fmt: skip
    gaamas.reference(table=LEVELS_TABLE, label="people: Ostrom, Walker & Gardner (1992)",
                     cells={LEVELS_COLUMNS[1]: "well above the optimum without communication; near it with a covenant and sanctions",
                            LEVELS_COLUMNS[2]: "-"},
                     source="Ostrom, Walker & Gardner (1992), APSR 86(2): covenants with and without a sword; no individual data shipped",
                     status="unverified")  # fmt: skip


def average(values) -> str:
    """The mean over the cell's societies with its bootstrap 95% interval; "-" where the module is off."""
    present = [v for v in values if v is not None]
    return cell(stats.mean(present)) if present else NO_VALUE


def claim_test(gaamas, claim):
    """A claim's two cells' outcomes, and the log-rank test that the first's societies live longer
    (z, p) and that they live shorter (the contrary claim's p)."""
    longer, shorter = CLAIMS[claim]
    (game, first), (_, second) = societies(gaamas, *longer), societies(gaamas, *shorter)
    first, second = [r.outcome for r in first], [r.outcome for r in second]
    lived = [[o["survived_rounds"] for o in group] for group in (first, second)]
    z, p = stats.survives_longer(lived[0], lived[1], game.rounds)
    _, contrary = stats.survives_longer(lived[1], lived[0], game.rounds)
    return first, second, z, p, contrary


def recorded_or_owed(cases, arguments: int, missing: str) -> list:
    """The cases whose cells are all recorded; where there is none yet, one case that says what is missing."""
    owed = pytest.param(*[None] * arguments, marks=pytest.mark.skip(reason=f"owed: {missing}, since the lake was counterbalanced"))
    return list(cases) or [owed]


@pytest.mark.parametrize("claim", recorded_or_owed(CLAIMS, 1, "no claim has both its cells recorded"))
def test_commons_claim(gaamas, claim):
    tests = {member: claim_test(gaamas, member) for member in CLAIMS}
    judged = verdicts.family({member: (p, contrary) for member, (*_, p, contrary) in tests.items()}, ALPHA)[claim]
    longer, shorter = CLAIMS[claim]
    first, second, z, p, _ = tests[claim]
    rounds_of = {name: stats.mean([o["survived_rounds"] for o in group]) for name, group in (("first", first), ("second", second))}
    gaamas.score(
        table=CLAIMS_TABLE, metric="log-rank z", estimate=stats.Estimate(z, z, z, len(first) + len(second)), invalid=0,
        verdict=judged.verdict, columns=CLAIM_COLUMNS,
        criterion=f"the first cell's societies survive longer: log-rank test, one-sided p < {ALPHA} after Holm's correction over the "
                  f"{len(tests)} claims and their contraries; contradicted where the second lives longer as significantly",
        cells={CLAIM_COLUMNS[0]: f"{', '.join(longer)}: {cell(rounds_of['first'], 1)}", CLAIM_COLUMNS[1]: f"{', '.join(shorter)}: {cell(rounds_of['second'], 1)}",
               "log-rank z": NO_VALUE if math.isnan(z) else f"{z:.2f}", "p (one-sided)": p_value_text(p),
               "p (Holm)": p_value_text(judged.p_adjusted), "in people": PEOPLE.get(claim, NO_VALUE)},
        details={"p": judged.p, "p_holm": judged.p_adjusted, "contrary_p_holm": judged.opposite_adjusted, "family": judged.family_size},
        row={"claim": claim}, row_rank=list(CLAIMS).index(claim), worse="both", verdict_label=SUPPORT[judged.verdict],
    )  # fmt: skip
    gaamas.reference(table=CLAIMS_TABLE, label="people: Fehr & Gaechter (2000)",
                     cells={"in people": "public goods with punishment: contributions rise toward the maximum; without it they decay"},
                     source="Fehr & Gaechter (2000), AER 90(4): cooperation and punishment in public goods experiments", status="unverified")  # fmt: skip
    gaamas.reference(table=CLAIMS_TABLE, label="people: Ostrom, Walker & Gardner (1992)",
                     cells={"in people": "a common pool: a covenant with sanctions cuts over-harvesting; no communication, heavy over-use"},
                     source="Ostrom, Walker & Gardner (1992), APSR 86(2): covenants with and without a sword", status="unverified")  # fmt: skip
    gaamas.verdict(judged.verdict, f"{claim}: {cell(rounds_of['first'], 1)} against {cell(rounds_of['second'], 1)} rounds "
                                   f"({p_stated(p, 'log-rank p')}, {p_value_text(judged.p_adjusted)} after Holm over {judged.family_size} p-values)")


#: Per society: its measure, from the outcome.
SCRIPT_MEASURES = {
    "survival to round 10": lambda o: float(o["survived"]),
    "rounds survived": lambda o: float(o["survived_rounds"]),
    "harvest / sustainable": lambda o: o["harvest_ratio"],
    "information leakage": lambda o: o["leakage"]["rate"],
}


def script_against_agents(gaamas, environment, personas, ablation):
    """A cell's separate villagers' and script's outcomes, and the log-rank test that the script's
    societies live longer (p) and shorter (the contrary claim's p)."""
    (game, agents), (_, script) = (societies(gaamas, environment, personas, ablation, simulation) for simulation in SIMULATIONS)
    agents, script = [r.outcome for r in agents], [r.outcome for r in script]
    lived_agents, lived_script = [o["survived_rounds"] for o in agents], [o["survived_rounds"] for o in script]
    _, p = stats.survives_longer(lived_script, lived_agents, game.rounds)
    _, contrary = stats.survives_longer(lived_agents, lived_script, game.rounds)
    return agents, script, p, contrary


BOTH_RECORDED = tuple(c for c in SCRIPT_RECORDED if c in RECORDED)


@pytest.mark.parametrize(("environment", "personas", "ablation"), recorded_or_owed(BOTH_RECORDED, 3, "the script is not recorded"))
def test_commons_script_overstates_success(gaamas, environment, personas, ablation):
    tests = {member: script_against_agents(gaamas, *member) for member in BOTH_RECORDED}
    claim = verdicts.family({member: (p, contrary) for member, (*_, p, contrary) in tests.items()}, ALPHA)[(environment, personas, ablation)]
    agents, script, p, _ = tests[(environment, personas, ablation)]
    label = f"{environment} lake, {personas}, {ablation}"
    means = {}  # measure -> (agents, script)
    for index, (measure, of) in enumerate(SCRIPT_MEASURES.items()):
        by_agents, by_script = [of(o) for o in agents], [of(o) for o in script]
        difference = stats.mean_difference(by_script, by_agents)
        means[measure] = stats.mean(by_agents), stats.mean(by_script)
        judged = measure == "rounds survived"
        gaamas.score(
            table=SCRIPT_TABLE, metric=f"script - agents: {measure}", estimate=difference, invalid=0, n=len(agents) + len(script),
            verdict=claim.verdict if judged else None, columns=SCRIPT_COLUMNS, worse="both", unit="",
            criterion=f"the script's societies outlive the agents': log-rank test, one-sided p < {ALPHA} after Holm's correction "
                      f"over the {len(tests)} cells and their contraries; contradicted where the agents' outlive the script's as significantly" if judged else "",
            cells={"agents": cell(means[measure][0]) + (" (by construction)" if measure == "information leakage" else ""),
                   "script": cell(means[measure][1]), "script - agents [95% CI]": cell(difference),
                   "p (script > agents, one-sided)": p_value_text(p) if judged else p_value_text(stats.stochastically_greater(by_script, by_agents)),
                   "p (Holm)": p_value_text(claim.p_adjusted) if judged else ""},
            row={"cell": label, "measure": measure}, row_rank=CELLS.index((environment, personas, ablation)) * len(SCRIPT_MEASURES) + index,
            verdict_label=SUPPORT[claim.verdict] if judged else "",
            details={"p": claim.p, "p_holm": claim.p_adjusted, "contrary_p_holm": claim.opposite_adjusted, "family": claim.family_size} if judged else {},
            figures=(Figure("The commons: the omniscient script minus separate villagers", INTERVAL, f"{measure}: script - agents [95% CI]",
                            panel=measure, x=ablation, x_axis="modules", series=f"{environment} lake, {personas}",
                            references={"no difference": 0.0}),),
        )  # fmt: skip
    (rounds_agents, rounds_script), (_, leaked) = means["rounds survived"], means["information leakage"]
    gaamas.verdict(claim.verdict, f"{label}: the script's societies live {cell(rounds_script, 1)} rounds, separate villagers' "
                              f"{cell(rounds_agents, 1)} ({p_stated(p, 'log-rank p')}, {p_value_text(claim.p_adjusted)} after Holm over {claim.family_size} p-values); "
                                  f"the script leaks in {cell(leaked)} of its stated strategies")  # fmt: skip


PARADOX_TABLE = "The commons: each society's survival beside its villagers' fidelity to their personas (cooperation without individual fidelity?)"
PARADOX_COLUMNS = ("survival to round 10 [95% CI]", "selfish: catch / equal share [95% CI]", "altruistic: catch / equal share [95% CI]",
                   "selfish - altruistic [95% CI]", "p (selfish > altruistic, one-sided)", "p (Holm)", "flag")  # fmt: skip
PARADOX = "collective cooperation without individual fidelity"
PERSONAS_CLAIM = "the commons' selfish ask more"
#: Each simulation's cells are a family of their own, in verdicts.BLIND_NULLS as such.
FAMILY_OF = {"agents": "separate villagers", "script": "the script"}
MIXED = tuple(run for run in RUNS if run[1] == "mixed")


def fidelity_test(gaamas, cell, simulation):
    """The societies of a mixed cell where both personas asked: their selfish and altruistic villagers'
    catches (a villager's mean), how many societies, and the one-sided p that the selfish ask more
    (and that they ask less, the contrary), personas exchanged among each society's villagers."""
    _, records = societies(gaamas, *cell, simulation)
    both = [c for c in (villager_catches(r.outcome) for r in records) if {"selfish", "altruistic"} <= c.keys()]
    strata = [(c["selfish"], c["altruistic"]) for c in both]
    selfish, altruistic = [v for s, _ in strata for v in s], [v for _, a in strata for v in a]
    greater, less = stats.exchanged_within_greater(strata), stats.exchanged_within_greater([(a, s) for s, a in strata])
    return [r.outcome for r in records], selfish, altruistic, len(both), greater, less


@pytest.mark.parametrize(("environment", "personas", "ablation", "simulation"), MIXED)
def test_commons_paradox(gaamas, environment, personas, ablation, simulation):
    tests = {member: fidelity_test(gaamas, member[:3], simulation) for member in MIXED if member[3] == simulation}
    personas_claim = f"{PERSONAS_CLAIM} ({FAMILY_OF[simulation]})"
    claim = verdicts.family({member: (p, contrary) for member, (*_, p, contrary) in tests.items()},
                            verdicts.blind_null(personas_claim))[(environment, personas, ablation, simulation)]  # fmt: skip
    outcomes, selfish, altruistic, both, p, _ = tests[(environment, personas, ablation, simulation)]
    survival = stats.wilson(sum(o["survived"] for o in outcomes), len(outcomes))
    cooperates = verdicts.at_least(survival, gaamas.threshold("min_survival", MIN_SURVIVAL)) is verdicts.MET
    flag = PARADOX if cooperates and claim.verdict is not verdicts.MET else ""
    difference = stats.mean_difference(selfish, altruistic)
    label = f"{environment} lake, {ablation}" + series(simulation, ", ")
    gaamas.score(
        table=PARADOX_TABLE, metric="selfish - altruistic catch / equal share", estimate=difference, invalid=len(outcomes) - both, n=len(outcomes),
        verdict=claim.verdict, columns=PARADOX_COLUMNS, worse="down", unit="",
        criterion=f"in the same society the selfish villagers ask more than the altruistic: permutation test of a villager's mean catch, "
                  "personas exchanged among each society's villagers, "
                  f"one-sided p < {verdicts.blind_null(personas_claim):.3g} after Holm's correction over the {len(tests)} mixed cells of {FAMILY_OF[simulation]} "
                  f"and their contraries ({verdicts.blind_null_words(personas_claim)}); contradicted where they ask less "
                  "as significantly",
        cells={PARADOX_COLUMNS[0]: cell(survival), PARADOX_COLUMNS[1]: cell(stats.mean(selfish)), PARADOX_COLUMNS[2]: cell(stats.mean(altruistic)),
               PARADOX_COLUMNS[3]: cell(difference), PARADOX_COLUMNS[4]: p_value_text(p), "p (Holm)": p_value_text(claim.p_adjusted), "flag": flag},
        row={"cell": label}, row_rank=rank(environment, personas, ablation, simulation), verdict_label=flag or SUPPORT[claim.verdict],
        details={"p": claim.p, "p_holm": claim.p_adjusted, "contrary_p_holm": claim.opposite_adjusted, "family": claim.family_size,
                 "flag": flag, "societies_with_both_personas": both},
    )  # fmt: skip
    gaamas.verdict(claim.verdict, f"{label}: selfish villagers ask {cell(stats.mean(selfish))} of an equal share, altruistic ones "
                                  f"{cell(stats.mean(altruistic))} ({p_stated(p)}, {p_value_text(claim.p_adjusted)} after Holm over "
                                  f"{claim.family_size} p-values); survival {cell(survival)}" + (f": {flag}" if flag else ""))  # fmt: skip


ADOPTION_TABLE = "The commons: adoption of a successful peer's strategy, against the chance of writing alike"
ADOPTION_COLUMNS = ("with social learning [95% CI]", "without: the strategies it would have shown [95% CI]", "excess [95% CI]", "chances (with / without)")
#: Each pair differs in the social learning module alone.
LEARNING_PAIRS = ((FULL, VOTE_ALONE), (LEARNING_ALONE, NEITHER))


@pytest.mark.parametrize(("shown", "not_shown"), recorded_or_owed([pair for pair in LEARNING_PAIRS if set(pair) <= set(RECORDED)], 2,
                         "no pair of cells with and without social learning is recorded"), ids=lambda cell: ", ".join(cell) if cell else "owed")  # fmt: skip
def test_commons_adoption(gaamas, shown, not_shown):
    counts = {}
    for which, designed in (("shown", shown), ("not shown", not_shown)):
        _, records = societies(gaamas, *designed)
        counts[which] = tuple(map(sum, zip(*(adoptions(r.outcome) for r in records), strict=True))) if records else (0, 0)
    (k1, n1), (k2, n2) = counts["shown"], counts["not shown"]
    excess = stats.rate_difference(k1, n1, k2, n2)
    gaamas.score(
        table=ADOPTION_TABLE, metric="adoption excess over chance", estimate=excess, invalid=0, n=n1 + n2, passed=None, criterion="",
        columns=ADOPTION_COLUMNS, unit="",
        cells={ADOPTION_COLUMNS[0]: cell(stats.wilson(k1, n1)), ADOPTION_COLUMNS[1]: cell(stats.wilson(k2, n2)),
               ADOPTION_COLUMNS[2]: cell(excess), ADOPTION_COLUMNS[3]: f"{n1} / {n2}"},
        row={"cells": f"{', '.join(shown)} / {not_shown[2]}"}, row_rank=LEARNING_PAIRS.index((shown, not_shown)),
        details={"adopted": [k1, k2], "chances": [n1, n2]},
    )  # fmt: skip


LAKE_CLAIM = "the commons' catch follows the lake"
#: Separate villagers are asked apart in round one, each from a prompt its name, persona and scale
#: make, so a distinct prompt is a unit (the mean of the villagers who saw it: an answer fixed by the
#: prompt's wording is one draw, however often the prompt recurs); the script writes a society's
#: round in one answer, so there the society is.
READS_TABLES = {"agents": "The commons: does the first catch follow the lake's scale? (a first cap or catch, mean over distinct prompts [95% CI])",
                "script": "The commons: does the script's first catch follow the lake's scale? (a society's mean first cap or catch [95% CI])"}  # fmt: skip
READS_COLUMNS = ("lake x1/4", "lake x1", "lake x4", "concordance (-1 to 1)", "p (rises, one-sided)", "p (Holm)")


def first_units(records, simulation, run) -> tuple[dict[tuple[str, float, str], list[float]], int, int]:
    """The first amounts named, by unit: a stratum, a scale and the distinct prompt that asked them
    (agents: a villager's round-one question, which its name, persona and scale make, a stratum a
    persona; script: a society's first request, one stratum), how many answers were asked (villagers,
    or the script's societies), and how many named none readable. Keyed by the prompt's text, so
    that cells asking the same first questions (the same order of business and personas) pool them
    as one unit each, not as one a cell: an answer the wording fixes is one draw, however often asked."""
    units: dict[tuple[str, float, str], list[float]] = {}
    asked = unreadable = 0
    for record in records:
        outcome = record.outcome
        amounts = first_amounts(outcome)
        if simulation == "script":
            key = json.dumps(record.rounds[0].messages, sort_keys=True) if record.rounds else f"{run}: {record.trial}"
            units.setdefault(("society", outcome["scale"], key), []).extend([sum(amounts.values()) / len(amounts)] if amounts else [])
            asked, unreadable = asked + 1, unreadable + (not amounts)
        else:
            prompts = round_one_questions(record)
            for name, persona in outcome["personas"].items():
                key = prompts.get(name, f"{run}: {name}")
                units.setdefault((persona, outcome["scale"], key), []).extend([amounts[name]] if name in amounts else [])
            asked, unreadable = asked + len(outcome["personas"]), unreadable + len(outcome["personas"]) - len(amounts)
    return units, asked, unreadable


def round_one_questions(record) -> dict[str, str]:
    """Each villager's first question in its society, whole (every one opens with its name)."""
    found: dict[str, str] = {}
    for asked in record.rounds:
        for name in record.outcome["personas"]:
            if name not in found and asked.messages[-1]["content"].startswith(f"{name}, round 1 "):
                found[name] = json.dumps(asked.messages, sort_keys=True)
    return found


def by_stratum(units) -> dict[str, dict[float, list[float]]]:
    """Each stratum's units by scale, a unit the mean of its answers."""
    strata: dict[str, dict[float, list[float]]] = {}
    for (stratum, scale, _), values in sorted(units.items()):
        strata.setdefault(stratum, {s: [] for s in SCALES})[scale].extend([sum(values) / len(values)] if values else [])
    return strata


def groups_of(strata) -> list[list[list[float]]]:
    return [[by_scale[s] for s in SCALES] for _, by_scale in sorted(strata.items())]


def lake_test(gaamas, run):
    """A cell's first-catch units, how many answers were asked and unreadable."""
    _, records = societies(gaamas, *run)
    return first_units(records, run[3], run)


@pytest.mark.parametrize("simulation", SIMULATIONS)
def test_commons_catch_follows_the_lake(gaamas, simulation):
    family = [run for run in RUNS if run[3] == simulation]
    tests = {run: lake_test(gaamas, run) for run in family}
    pooled: dict[tuple[str, float, str], list[float]] = {}
    for units, *_ in tests.values():
        for key, values in units.items():
            pooled.setdefault(key, []).extend(values)
    strata = groups_of(by_stratum(pooled))
    concordance, p = stats.ordered_groups_greater_within(strata)
    contrary = stats.ordered_groups_greater_within([[list(reversed(g)) for g in groups] for groups in strata])[1]
    lake_claim = f"{LAKE_CLAIM} ({FAMILY_OF[simulation]})"
    claim = verdicts.family({"pooled": (p, contrary)}, verdicts.blind_null(lake_claim))["pooled"]
    unit = ("distinct round-one questions (a villager's name, persona and scale; the mean of the villagers who read it, in any cell), "
            "scales exchanged within each persona" if simulation == "agents" else "distinct first requests (a society's; the mean of "
            "the villagers the script wrote for)")  # fmt: skip
    for run, (units, asked, unreadable) in tests.items():
        strata_of_cell = by_stratum(units)
        catches = {s: [v for by_scale in strata_of_cell.values() for v in by_scale[s]] for s in SCALES}
        cell_concordance, cell_p = stats.ordered_groups_greater_within(groups_of(strata_of_cell))
        gaamas.score(
            table=READS_TABLES[simulation], metric="concordance of the first catch with the lake's scale",
            estimate=stats.Estimate(cell_concordance, cell_concordance, cell_concordance, asked - unreadable), invalid=unreadable, n=asked,
            passed=None, criterion="", columns=READS_COLUMNS, unit="",
            cells={**{column: cell(stats.mean(catches[s])) for column, s in zip(READS_COLUMNS, SCALES)},
                   READS_COLUMNS[3]: NO_VALUE if math.isnan(cell_concordance) else f"{cell_concordance:.2f}",
                   READS_COLUMNS[4]: p_value_text(cell_p), READS_COLUMNS[5]: ""},
            row={"cell": ", ".join(run[:3]) + series(simulation, ", ")}, row_rank=rank(*run),
        )  # fmt: skip
    units = len(pooled)
    asked, unreadable = sum(t[1] for t in tests.values()), sum(t[2] for t in tests.values())
    means = {s: [v for by_scale in by_stratum(pooled).values() for v in by_scale[s]] for s in SCALES}
    gaamas.score(
        table=READS_TABLES[simulation], metric="concordance of the first catch with the lake's scale, every cell",
        estimate=stats.Estimate(concordance, concordance, concordance, asked - unreadable), invalid=unreadable, n=asked,
        verdict=claim.verdict, columns=READS_COLUMNS, unit="",
        criterion=f"the first amount named (the cap proposed where the village votes first, else the catch) rises with the lake's "
                  f"scale: Jonckheere-Terpstra permutation test over the {unit}, every cell of {FAMILY_OF[simulation]} pooled, one-sided "
                  f"p < {verdicts.blind_null(lake_claim):.3g} after Holm's correction with its contrary ({verdicts.blind_null_words(lake_claim)}); "
                  "contradicted where it falls as significantly",
        cells={**{column: cell(stats.mean(means[s])) for column, s in zip(READS_COLUMNS, SCALES)},
               READS_COLUMNS[3]: NO_VALUE if math.isnan(concordance) else f"{concordance:.2f}", READS_COLUMNS[4]: p_value_text(p),
               READS_COLUMNS[5]: p_value_text(claim.p_adjusted)},
        row={"cell": "every cell" + series(simulation, ", ")}, row_rank=len(RUNS), verdict_label=SUPPORT[claim.verdict],
        details={"p": claim.p, "p_holm": claim.p_adjusted, "contrary_p_holm": claim.opposite_adjusted, "family": claim.family_size,
                 "units": units, "cells": len(family)},
    )  # fmt: skip
    gaamas.verdict(claim.verdict, f"{FAMILY_OF[simulation]}: the first catch named rises with the lake over the {len(family)} cells' "
                                  f"{units} distinct prompts (concordance {concordance:.2f}, {p_stated(p)}, {p_value_text(claim.p_adjusted)} after Holm "
                                  f"with its contrary)")  # fmt: skip
